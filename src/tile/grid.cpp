#include "tile/grid.h"

#include <algorithm>

#include "support/error.h"

namespace orchid::tile {

ir::Dims grid_coords(int64_t task, const ir::Dims& grid) {
  ir::Dims c(grid.size());
  for (size_t d = grid.size(); d-- > 0;) {
    c[d] = task % grid[d];
    task /= grid[d];
  }
  return c;
}

Region output_tile(const OutputTiling& t, const ir::Dims& shape, const ir::Dims& coords) {
  Region r = Region::whole(shape);
  for (size_t a = 0; a < coords.size(); ++a)
    if (coords[a] != 0 && std::find(t.align.begin(), t.align.end(), static_cast<int>(a)) == t.align.end()) {
      std::fill(r.lo.begin(), r.lo.end(), 0);
      std::fill(r.hi.begin(), r.hi.end(), 0);
      return r;
    }
  for (size_t j = 0; j < shape.size(); ++j) {
    if (t.align[j] < 0) continue;
    r.lo[j] = std::min(shape[j], coords[static_cast<size_t>(t.align[j])] * t.tile[j]);
    r.hi[j] = std::min(shape[j], r.lo[j] + t.tile[j]);
  }
  return r;
}

KernelTile task_tile(const ir::Graph& g, const Kernel& k, const TaskGrid& grid, const ir::Dims& coords) {
  ORCHID_CHECK(grid.tilings.size() == k.outputs.size())
      << grid.tilings.size() << " tilings for a kernel of " << k.outputs.size() << " outputs";
  KernelTile kt;
  for (size_t o = 0; o < k.outputs.size(); ++o)
    kt.outputs.push_back(output_tile(grid.tilings[o], g.type(k.outputs[o]).shape, coords));
  return kt;
}

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return b <= 0 ? 0 : (a + b - 1) / b; }

// Dims of an output follow the anchor's dims of equal extent, left to right.
OutputTiling follow_anchor(const ir::Dims& shape, const ir::Dims& anchor, const ir::Dims& grid) {
  OutputTiling t;
  size_t next = 0;
  for (int64_t extent : shape) {
    int a = -1;
    for (size_t d = next; d < anchor.size(); ++d)
      if (anchor[d] == extent) {
        a = static_cast<int>(d);
        next = d + 1;
        break;
      }
    t.align.push_back(a);
    t.tile.push_back(a < 0 ? extent : std::max<int64_t>(1, ceil_div(extent, grid[static_cast<size_t>(a)])));
  }
  return t;
}

}  // namespace

TaskGrid anchor_grid(const ir::Graph& g, const Kernel& k, size_t anchor, const ir::Dims& tile) {
  ORCHID_CHECK(anchor < k.outputs.size()) << "anchor " << anchor << " of a kernel of " << k.outputs.size() << " outputs";
  const ir::Dims& shape = g.type(k.outputs[anchor]).shape;
  TaskGrid tg;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t t = d < tile.size() && tile[d] > 0 ? std::min(tile[d], shape[d]) : shape[d];
    tg.grid.push_back(shape[d] == 0 ? 0 : ceil_div(shape[d], t));
  }
  for (ir::ValueId o : k.outputs) tg.tilings.push_back(follow_anchor(g.type(o).shape, shape, tg.grid));
  return tg;
}

TaskGrid uniform_grid(const ir::Graph& g, const Kernel& k, const std::vector<ir::Dims>& tile_shapes) {
  ORCHID_CHECK(tile_shapes.size() == k.outputs.size() && !k.outputs.empty())
      << tile_shapes.size() << " tile shapes for a kernel of " << k.outputs.size() << " outputs";
  const size_t rank = g.type(k.outputs[0]).shape.size();
  TaskGrid tg;
  for (size_t j = 0; j < k.outputs.size(); ++j) {
    const ir::Dims& shape = g.type(k.outputs[j]).shape;
    const ir::Dims& t = tile_shapes[j];
    ORCHID_CHECK(shape.size() == rank && t.size() == rank)
        << "tile shape " << ir::dims_str(t) << " for %" << g.value(k.outputs[j]).name << " : "
        << ir::dims_str(shape) << " (every output of rank " << rank << ")";
    ir::Dims counts(rank);
    OutputTiling tl;
    for (size_t d = 0; d < rank; ++d) {
      ORCHID_CHECK(t[d] >= 1) << "tile shape " << ir::dims_str(t) << " has a dim below 1";
      counts[d] = (shape[d] + t[d] - 1) / t[d];
      tl.align.push_back(static_cast<int>(d));
    }
    tl.tile = t;
    if (j == 0) tg.grid = counts;
    ORCHID_CHECK(counts == tg.grid) << "tile shape " << ir::dims_str(t) << " of %" << g.value(k.outputs[j]).name
                                    << " gives a grid " << ir::dims_str(counts) << ", not " << ir::dims_str(tg.grid);
    tg.tilings.push_back(std::move(tl));
  }
  return tg;
}

}  // namespace orchid::tile
