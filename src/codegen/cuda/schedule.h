// A schedule of a generated CUDA kernel: a common part, the tile of the kernel's anchor output
// that one task computes (as on the CPU: codegen/cpu/schedule.h), and a CUDA part, the thread
// block that computes a task. Every schedule is valid for every kernel.
#pragma once

#include <string>

#include "codegen/cpu/schedule.h"
#include "ir/graph.h"
#include "tile/kernel.h"

namespace orchid::codegen::cuda {

struct Schedule {
  // Tile of the anchor output per task (one thread block); 0 or a missing entry: whole dim.
  ir::Dims tile;
  // Threads per block: a multiple of 32 (a warp) from 32 to 1024. The block's threads share
  // each primitive's region in the task, element by element, consecutive threads on
  // consecutive elements of the innermost dim (coalesced loads and stores).
  int threads = 128;
  // A loop of the block's threads with at most this many items per thread (elements of a
  // region, terms of a reduction, a tile's loads) is unrolled whole, its loads issued
  // together; a longer one is unrolled this many times. 1: no unrolling.
  int unroll = 8;
  // As on the CPU: primitives without a reduction that one consumer reads, at most once per
  // element, are computed inside it rather than into memory.
  bool inline_single_use = true;
  // Two levels, as on the CPU (codegen/cpu/schedule.h, Schedule::inner and split): the block
  // computes the kernel's nodes before `split` over its task's tile, then, in a loop over
  // sub-tiles of `inner`, the nodes from `split` on per sub-tile. The sub-tile's values live in
  // shared memory where the task's do not fit beside them (the task's then go to global
  // memory, one area per block). Empty `inner`: one level.
  ir::Dims inner{};
  int split = 0;

  bool operator==(const Schedule&) const = default;
};

// "tile=8x0 threads=256 unroll=8 inline=1", then " inner=2x0 split=1" where `inner` is set:
// canonical.
std::string schedule_str(const Schedule& s);

// The lowering's view of the schedule (codegen/cpu/lower.h): the tile, the two levels and
// inlining, scalar loops, no packed GEMM.
cpu::Schedule lowering_schedule(const Schedule& s);

// Blocks of `threads` threads; tasks of at most `per_thread` elements per thread of the
// anchor output (terms, where a reduction computes it), innermost dims kept whole where they
// fit (tiles halved, outer dims first, until they do; a kernel with a transpose cuts the last
// dim to 32 first): a GPU needs thousands of blocks in flight, where a CPU wants few large
// tasks. A matrix product (an f32 matmul or implicit-GEMM conv) over the anchor's shape gets
// tiles of 64 x 64 of its rows and columns and one index of its other dims instead, halved
// down to 16 x 16 until there is a block per multiprocessor of the GPU (`multiprocessors`);
// one that cannot fill it (few rows, or few outputs over many terms) is a reduction like any
// other. Block size and task size are the fastest of a sweep on an H200 (bench/gpu/kernels.cpp
// --sweep) for elementwise chains and row reductions; unroll=8 took softmax and layernorm
// rows from 0.55 to 0.80 of an H100's copy bandwidth
// (bench/results/2026-11-26-gpu-h100-unrolled.md).
Schedule default_schedule(const ir::Graph& g, const tile::Kernel& k, int multiprocessors = 132, int threads = 128,
                          int per_thread = 8);

}  // namespace orchid::codegen::cuda
