#include "tune/cpu_space.h"

#include <algorithm>
#include <set>

#include "codegen/cpu/lower.h"

namespace orchid::tune {

namespace {

constexpr int64_t kMaxTasks = 1 << 16, kMaxSubTiles = 1 << 18;
const std::vector<int64_t> kVec = {1, 4, 8, 16}, kUnroll = {1, 2, 4, 8};

// 1, 2, 4 .. below n, n, and `also` where it is in [1, n].
ir::Dims ladder(int64_t n, int64_t also) {
  std::set<int64_t> v{std::max<int64_t>(n, 1)};
  for (int64_t t = 1; t < n; t *= 2) v.insert(t);
  if (also >= 1 && also <= n) v.insert(also);
  return ir::Dims(v.begin(), v.end());
}

// The index of the largest value not above x (0 where none is).
int nearest(const std::vector<int64_t>& values, int64_t x) {
  int at = 0;
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i] <= x) at = static_cast<int>(i);
  return at;
}


}  // namespace

codegen::cpu::Schedule CpuSpace::schedule(const Point& p) const {
  codegen::cpu::Schedule s = base;
  for (size_t d = 0; d < shape.size(); ++d) s.tile[d] = tiles[d][static_cast<size_t>(p[d])];
  s.vector_width = static_cast<int>(kVec[static_cast<size_t>(p[vec])]);
  s.unroll = static_cast<int>(kUnroll[static_cast<size_t>(p[unroll])]);
  s.prefetch = static_cast<int>(prefetches[static_cast<size_t>(p[prefetch])]);
  s.inline_single_use = p[inline_] == 1;
  s.stream = p[stream] == 1;
  s.gemm = p[gemm] == 1;
  s.inner.clear();
  s.split = 0;
  if (p[split] < nodes) {
    s.split = p[split];
    for (size_t d = 0; d < shape.size(); ++d) s.inner.push_back(tiles[d][static_cast<size_t>(p[inner + d])]);
  }
  return s;
}

Point CpuSpace::point_of(const codegen::cpu::Schedule& s) const {
  Point p(space.knobs.size(), 0);
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t t = d < s.tile.size() && s.tile[d] > 0 ? s.tile[d] : shape[d];
    p[d] = nearest(tiles[d], t);
  }
  p[vec] = nearest(kVec, s.vector_width);
  p[unroll] = nearest(kUnroll, s.unroll);
  p[prefetch] = nearest(prefetches, s.prefetch);
  p[inline_] = s.inline_single_use ? 1 : 0;
  p[stream] = s.stream ? 1 : 0;
  p[gemm] = s.gemm ? 1 : 0;
  bool two = !s.inner.empty() && s.split < nodes;
  p[split] = two ? s.split : nodes;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t t = two && d < s.inner.size() && s.inner[d] > 0 ? s.inner[d] : shape[d];
    p[inner + d] = nearest(tiles[d], t);
  }
  return space.canon(p);
}

CpuSpace cpu_space(const ir::Graph& g, const tile::Kernel& k, int cores) {
  CpuSpace c;
  c.base = codegen::cpu::default_schedule(g, k, cores);
  c.shape = g.type(k.outputs[codegen::cpu::anchor_output(g, k)]).shape;
  c.nodes = static_cast<int>(k.nodes.size());
  const size_t rank = c.shape.size();
  for (size_t d = 0; d < rank; ++d) {
    c.tiles.push_back(ladder(c.shape[d], d < c.base.tile.size() ? c.base.tile[d] : 0));
    c.space.knobs.push_back({"tile" + std::to_string(d), static_cast<int>(c.tiles[d].size()), true});
  }
  auto add = [&](const std::string& name, size_t values, bool ordered) {
    c.space.knobs.push_back({name, static_cast<int>(values), ordered});
    return c.space.knobs.size() - 1;
  };
  c.vec = add("vec", kVec.size(), true);
  c.unroll = add("unroll", kUnroll.size(), true);
  std::set<int64_t> ahead{0, 1024, 4096, 16384, c.base.prefetch};
  c.prefetches.assign(ahead.begin(), ahead.end());
  c.prefetch = add("prefetch", c.prefetches.size(), true);
  c.inline_ = add("inline", 2, false);
  c.stream = add("stream", 2, false);
  c.gemm = add("gemm", 2, false);
  c.split = add("split", static_cast<size_t>(c.nodes) + 1, false);
  c.inner = c.space.knobs.size();
  for (size_t d = 0; d < rank; ++d) add("inner" + std::to_string(d), c.tiles[d].size(), true);
  std::vector<ir::Dims> tiles = c.tiles;
  ir::Dims shape = c.shape;
  int nodes = c.nodes;
  size_t split = c.split, inner = c.inner;
  c.space.valid = [tiles, shape, nodes, split, inner](const Point& p) {
    int64_t tasks = 1, subs = 1;
    bool finer = false;
    for (size_t d = 0; d < shape.size(); ++d) {
      int64_t t = tiles[d][static_cast<size_t>(p[d])];
      tasks *= codegen::cpu::ceil_div(shape[d], t);
      if (p[split] < nodes) {
        int64_t s = tiles[d][static_cast<size_t>(p[inner + d])];
        subs *= codegen::cpu::ceil_div(shape[d], std::min(s, t));
        finer = finer || s < t;
      }
    }
    if (tasks > kMaxTasks) return false;
    return p[split] == nodes || (finer && subs <= kMaxSubTiles);
  };
  // One level: the sub-tile knobs stand at the task's tile but one step less along its first
  // dim cut in more than one piece, so that turning two levels on halves the tasks there.
  c.space.canonical = [rank, nodes, split, inner](Point p) {
    if (p[split] != nodes) return p;
    bool halved = false;
    for (size_t d = 0; d < rank; ++d) {
      p[inner + d] = p[d];
      if (!halved && p[d] > 0) p[inner + d] = p[d] - 1, halved = true;
    }
    return p;
  };
  return c;
}

}  // namespace orchid::tune
