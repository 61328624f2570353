// The space of CPU schedules (codegen/cpu/schedule.h) of one kernel, as knobs (space.h):
//   tile<d>   ordered: the task's tile along anchor dim d — 1, 2, 4 .. below the dim, the dim
//             itself, and the default schedule's size;
//   vec       ordered: 1, 4, 8, 16 lanes;        unroll    ordered: 1, 2, 4, 8;
//   prefetch  ordered: 0, 1, 4, 16 KiB ahead and the default's;
//   inline, stream, gemm   categorical: off, on;
//   split     categorical: one level, or two levels with the inner loop from node s on;
//   inner<d>  ordered: the sub-tile along anchor dim d (two-level points), the tile<d> ladder.
// The default schedule is a point. A point is valid where its grid has at most 65536 tasks and,
// with two levels, 2^18 sub-tiles, and each sub-tile size is smaller than the task's tile
// somewhere (else it is the one-level point).
#pragma once

#include <cstdint>
#include <vector>

#include "codegen/cpu/schedule.h"
#include "ir/graph.h"
#include "tile/kernel.h"
#include "tune/space.h"

namespace orchid::tune {

struct CpuSpace {
  Space space;
  ir::Dims shape;                           // the anchor's
  std::vector<ir::Dims> tiles;              // per anchor dim, the ladder of tile sizes
  ir::Dims prefetches;                      // bytes ahead
  int nodes = 0;                            // the kernel's nodes (split values)
  codegen::cpu::Schedule base;              // the default, for knobs not in the space
  size_t vec = 0, unroll = 0, prefetch = 0, inline_ = 0, stream = 0, gemm = 0, split = 0, inner = 0;  // knob indices

  codegen::cpu::Schedule schedule(const Point& p) const;
  // The point nearest s: each tile size the largest of its ladder not above it (the smallest
  // where none), other knobs their value or the nearest one.
  Point point_of(const codegen::cpu::Schedule& s) const;
};

CpuSpace cpu_space(const ir::Graph& g, const tile::Kernel& k, int cores);

}  // namespace orchid::tune
