// Sub-graph tiling (Welder §3.2, Figure 7's SubGraphTiling, with §4.1's hardware-aligned
// enumeration): the output tiles of a kernel at one memory level, searched by Roller-style
// expansion and ranked by the analytic cost (cost.h).
//
// The search starts from the smallest aligned tile of the kernel's anchor output (1 along
// every dim but the innermost, which spans one transaction of the main memory, or the whole
// dim) and grows it best-first: the cheapest tile found so far is expanded along each dim in
// turn, to twice its size (rounded to the transaction along the innermost dim) or to the whole
// dim. A tile whose task footprint exceeds the level's capacity is discarded (Welder's
// infinite penalty); every other tile visited is kept, and the K cheapest are returned.
#pragma once

#include <functional>
#include <vector>

#include "target/target.h"
#include "tile/cost.h"

namespace orchid::tile {

struct TileSearchOptions {
  size_t top_k = 8;
  size_t max_visits = 256;      // tiles priced at most
  int64_t footprint_limit = 0;  // bytes a task may hold; 0: the per-core capacity of the level below main memory
};

struct TileChoice {
  ir::Dims tile;  // of the anchor output
  Estimate estimate;
  bool operator<(const TileChoice& o) const;  // cheaper first; ties by tile, lexicographic
};

// `config` turns an anchor tile into what the cost model sees (the grid, and how the kernel
// is computed). Results: cheapest first, at most top_k, never empty for a kernel whose anchor
// has elements (the starting tile is returned even above the limit when nothing fits).
std::vector<TileChoice> search_tiles(const ir::Graph& g, const Kernel& k, size_t anchor,
                                     const std::function<CostConfig(const ir::Dims& tile)>& config,
                                     const target::Target& t, const TileSearchOptions& o = {});

}  // namespace orchid::tile
