#include "tile/region.h"

#include <algorithm>

#include "support/error.h"

namespace orchid::tile {

Region Region::whole(const ir::Dims& shape) { return {ir::Dims(shape.size(), 0), shape}; }

Region Region::at(const ir::Dims& origin, const ir::Dims& shape) {
  ORCHID_CHECK(origin.size() == shape.size()) << "region origin and shape of different ranks";
  Region r{origin, origin};
  for (size_t d = 0; d < shape.size(); ++d) r.hi[d] += shape[d];
  return r;
}

ir::Dims Region::shape() const {
  ir::Dims s(rank());
  for (size_t d = 0; d < rank(); ++d) s[d] = std::max<int64_t>(0, hi[d] - lo[d]);
  return s;
}

int64_t Region::numel() const {
  int64_t n = 1;
  for (size_t d = 0; d < rank(); ++d) {
    if (hi[d] <= lo[d]) return 0;
    n *= hi[d] - lo[d];
  }
  return n;
}

bool Region::empty() const {
  for (size_t d = 0; d < rank(); ++d)
    if (hi[d] <= lo[d]) return true;
  return false;
}

bool Region::contains(const Region& r) const {
  ORCHID_CHECK(r.rank() == rank()) << "regions of ranks " << rank() << " and " << r.rank();
  if (r.empty()) return true;
  for (size_t d = 0; d < rank(); ++d)
    if (r.lo[d] < lo[d] || r.hi[d] > hi[d]) return false;
  return true;
}

bool Region::contains_point(const ir::Dims& index) const {
  ORCHID_CHECK(index.size() == rank()) << "point of rank " << index.size() << " in a region of rank " << rank();
  for (size_t d = 0; d < rank(); ++d)
    if (index[d] < lo[d] || index[d] >= hi[d]) return false;
  return true;
}

Region hull(const Region& a, const Region& b) {
  ORCHID_CHECK(a.rank() == b.rank()) << "hull of regions of ranks " << a.rank() << " and " << b.rank();
  if (a.empty()) return b;
  if (b.empty()) return a;
  Region r = a;
  for (size_t d = 0; d < r.rank(); ++d) {
    r.lo[d] = std::min(a.lo[d], b.lo[d]);
    r.hi[d] = std::max(a.hi[d], b.hi[d]);
  }
  return r;
}

Region intersect(const Region& a, const Region& b) {
  ORCHID_CHECK(a.rank() == b.rank()) << "intersection of regions of ranks " << a.rank() << " and " << b.rank();
  Region r = a;
  for (size_t d = 0; d < r.rank(); ++d) {
    r.lo[d] = std::max(a.lo[d], b.lo[d]);
    r.hi[d] = std::min(a.hi[d], b.hi[d]);
  }
  return r;
}

void unite(std::optional<Region>& acc, const Region& r) {
  if (r.empty()) return;
  acc = acc ? hull(*acc, r) : r;
}

std::string region_str(const Region& r) {
  std::string s = "[";
  for (size_t d = 0; d < r.rank(); ++d) {
    if (d) s += ", ";
    s += std::to_string(r.lo[d]) + ":" + std::to_string(r.hi[d]);
  }
  return s + "]";
}

}  // namespace orchid::tile
