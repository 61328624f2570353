// Regions: boxes of a tensor's index space, the unit in which tiles are described.
//
// A Region is HALF-OPEN: dimension d covers [lo[d], hi[d]). It is empty when some
// lo[d] >= hi[d]; a region of rank 0 (a scalar) holds its one element. Functions that may
// find nothing to read return std::optional<Region> (nullopt: nothing), so that "no element"
// is expressible for scalars too; the regions they return are never empty.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ir/dtype.h"
#include "tile/interval.h"

namespace orchid::tile {

struct Region {
  ir::Dims lo;
  ir::Dims hi;

  // The whole index space of a tensor of this shape.
  static Region whole(const ir::Dims& shape);
  // The box origin + [0, shape) per dim.
  static Region at(const ir::Dims& origin, const ir::Dims& shape);
  size_t rank() const { return lo.size(); }
  ir::Dims shape() const;  // hi - lo per dim (0 where empty)
  int64_t numel() const;   // 0 when empty; 1 at rank 0
  bool empty() const;
  // Every element of r is in this region (true for an empty r). Same rank.
  bool contains(const Region& r) const;
  bool contains_point(const ir::Dims& index) const;
  // Dimension d as an inclusive interval [lo, hi - 1].
  Interval dim(size_t d) const { return {lo[d], hi[d] - 1}; }
  bool operator==(const Region&) const = default;
};

// The bounding box of both (an empty operand is ignored). Same rank.
Region hull(const Region& a, const Region& b);
Region intersect(const Region& a, const Region& b);
// acc := hull(acc, r); acc stays nullopt for an empty r.
void unite(std::optional<Region>& acc, const Region& r);
// "[0:4, 0:128]" (each dim lo:hi), "[]" at rank 0.
std::string region_str(const Region& r);

}  // namespace orchid::tile
