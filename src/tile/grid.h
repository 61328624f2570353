// A kernel run as a grid of tasks (Welder §3.1: the tile-graph is instantiated once per output
// tile): the grid's shape and how each kernel output is cut along it. Task t (row-major in the
// grid) computes one tile of every output; the code generators and the cost model (cost.h)
// share this description, so what is priced is what runs.
#pragma once

#include <vector>

#include "ir/dtype.h"
#include "tile/kernel.h"
#include "tile/region.h"

namespace orchid::tile {

// How an output's tile follows the grid: dim j of the output is cut like grid dim align[j]
// (-1: whole), in pieces of `tile[j]` elements (the last ones may be short or empty).
struct OutputTiling {
  std::vector<int> align;
  ir::Dims tile;
  bool operator==(const OutputTiling&) const = default;
};

struct TaskGrid {
  ir::Dims grid;                       // tasks per grid dim
  std::vector<OutputTiling> tilings;   // per kernel output
  int64_t tasks() const { return ir::numel(grid); }
};

// The coordinates of task `task` in a row-major grid.
ir::Dims grid_coords(int64_t task, const ir::Dims& grid);

// The tile of an output (of `shape`) that the task at `coords` writes. Every element of an
// output is written by exactly one task: the tile along aligned dims, and only by tasks at
// coordinate 0 of the grid dims the output does not follow (others get an empty region; a
// rank-0 output is written by task 0).
Region output_tile(const OutputTiling& t, const ir::Dims& shape, const ir::Dims& coords);

// One task's tiles of every output of k.
KernelTile task_tile(const ir::Graph& g, const Kernel& k, const TaskGrid& grid, const ir::Dims& coords);

// The grid that cuts output `anchor` of k into tiles of `tile` (per dim; 0, a missing entry
// or more than the dim: the whole dim), each other output following the grid along the
// anchor's dims of equal extent, matched left to right, and whole along the rest.
TaskGrid anchor_grid(const ir::Graph& g, const Kernel& k, size_t anchor, const ir::Dims& tile);

// The grid of uniform tiles: output j cut into pieces of tile_shapes[j] along every dim, all
// outputs of one rank and one grid (propagate_grid's convention; InternalError otherwise).
TaskGrid uniform_grid(const ir::Graph& g, const Kernel& k, const std::vector<ir::Dims>& tile_shapes);

}  // namespace orchid::tile
