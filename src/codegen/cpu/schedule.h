// A schedule of a generated CPU kernel: a value the tuner searches and the measurement cache
// keys on (canonical text). Every schedule is valid for every kernel: tile sizes larger than
// a dimension are clipped, and a tile that does not divide a dimension leaves a smaller edge
// tile.
#pragma once

#include <cstdint>
#include <string>

#include "ir/dtype.h"
#include "tile/kernel.h"

namespace orchid::codegen::cpu {

struct Schedule {
  // Tile of the kernel's anchor output (its largest: anchor_output, lower.h) per dimension; one task computes
  // one tile. 0 (or a missing entry) means the whole dimension.
  ir::Dims tile;
  // Lanes the innermost loop is vectorized for (simdlen): 1 (scalar), 4, 8 or 16.
  int vector_width = 8;
  // Unroll factor of the innermost loop: 1, 2, 4 or 8 (vectorized: vector_width x unroll
  // lanes per iteration).
  int unroll = 1;
  // Primitives without a reduction that one consumer reads, at most once per element, are
  // computed inside it (inlined) rather than into scratch memory.
  bool inline_single_use = true;
  // Kernel outputs computed by elementwise loops are written with non-temporal (streaming)
  // stores, past the caches: an output much larger than the caches then costs no read of its
  // lines before they are written, nor the eviction of data the kernel still reads. Values go
  // through a small buffer per chunk of a row, copied out with aligned vector stores.
  bool stream = false;
  // Bytes ahead (a multiple of 64, at most 1 MiB; 0: none) at which the loops cut into chunks
  // (streamed rows, reductions over lanes) prefetch the contiguous loads of kernel inputs,
  // a cache line at a time: a loop with much arithmetic per element keeps too few reads in
  // flight to stream from memory at full speed.
  int prefetch = 0;
  // f32 matmuls are computed by the packed GEMM micro-kernel (gemm.inc): a task packs blocks
  // of its operand regions into panels and multiplies them in registers; otherwise they
  // accumulate a row at a time like any sum.
  bool gemm = true;
  // Lowering only, not a tuning knob (schedule_str leaves it out): sum/prod/max/min
  // reductions over rows of at least 2 get a row of accumulators in scratch, which the CPU
  // emitter's vector loops use; the CUDA emitter reduces across threads instead and clears it.
  bool row_accumulators = true;
  // Two-level tiling (Welder's hierarchical tile-graph): each task's tile of the anchor is cut
  // again into sub-tiles of `inner` (per dim; 0 or a missing entry: the task's whole tile; a
  // size that does not divide the task's tile is lowered to the largest that does), and the
  // kernel's nodes from the `split`-th on (topological order) are computed per sub-tile in a
  // loop inside the task, from the values the nodes before them computed over the whole task
  // tile. The task's values then live in the cache level holding a task (L2 or L3), the
  // sub-tile's in L1. Empty `inner`: one level, and `split` is ignored.
  ir::Dims inner{};
  int split = 0;

  bool operator==(const Schedule&) const = default;
};

// Dims as a schedule writes them: "8x0", "-" where there are none.
std::string dims_text(const ir::Dims& dims);
// A two-level schedule's part of its text: " inner=2x0 split=1", "" where `inner` is empty.
std::string levels_text(const ir::Dims& inner, int split);

// "tile=8x0 vec=8 unroll=1 inline=1 stream=0 prefetch=0 gemm=1", then " inner=2x0 split=1"
// where `inner` is set: canonical, parsed back by parse_schedule.
std::string schedule_str(const Schedule& s);
Schedule parse_schedule(const std::string& text);  // UserError on malformed text

// A sensible default: tasks of at least ~16K FLOPs (ir/stats.h, summed over the kernel's
// primitives, so that a row reduction's few outputs count their terms) or fewer tasks than 4
// per core, as many as the cores share evenly where they are few; whole
// innermost rows where the row is not huge, then tiles halved (outer dims first) until what a
// task touches (input regions, output tiles, scratch) fits in 64 KiB (tasks of 4K FLOPs at
// least); 16 lanes unrolled 4 times; streaming stores where the kernel writes 16 MiB or more,
// and where it reads that much, prefetches one task's inputs ahead (4 to 16 KiB).
Schedule default_schedule(const ir::Graph& g, const tile::Kernel& k, int cores);

}  // namespace orchid::codegen::cpu
