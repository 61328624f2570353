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
  // Tile of the kernel's anchor output (its first output) per dimension; one task computes
  // one tile. 0 (or a missing entry) means the whole dimension.
  ir::Dims tile;
  // Lanes the innermost loop is vectorized for (simdlen): 1 (scalar), 4, 8 or 16.
  int vector_width = 8;
  // Unroll factor of the innermost loop: 1, 2, 4 or 8 (vectorized: vector_width x unroll
  // lanes per iteration).
  int unroll = 1;
  // Primitives without a reduction that one consumer reads are computed inside it (inlined)
  // rather than into scratch memory.
  bool inline_single_use = true;

  bool operator==(const Schedule&) const = default;
};

// "tile=8x0 vec=8 unroll=1 inline=1": canonical, parsed back by parse_schedule.
std::string schedule_str(const Schedule& s);
Schedule parse_schedule(const std::string& text);  // UserError on malformed text

// A sensible default: tasks of at least ~16K output elements (or fewer tasks than 4 per
// core), whole innermost rows where the row is not huge, 8 lanes.
Schedule default_schedule(const ir::Graph& g, const tile::Kernel& k, int cores);

}  // namespace orchid::codegen::cpu
