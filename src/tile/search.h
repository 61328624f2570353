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
//
// Hierarchical tiling (Figure 7's recursion to the next level, search_hierarchy): for each of
// the cheapest task tiles, the tiles of an inner loop inside the task are searched the same
// way, bounded by the task's tile, with the sub-tile's footprint under the fastest cache's
// capacity, for every choice of the nodes computed per sub-tile (Schedule::split on the CPU).
// One-level and two-level choices are ranked together by the same model.
#pragma once

#include <functional>
#include <optional>
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

struct HierarchySearchOptions {
  TileSearchOptions outer;           // the task tiles; the top_k of them are searched inside
  size_t inner_top_k = 4;            // sub-tiles kept per task tile and split
  size_t inner_max_visits = 32;      // sub-tiles priced at most per task tile and split
  size_t inner_max_splits = 8;       // splits searched at most per task tile: the first, which compute
                                     // the most per sub-tile
  int64_t inner_footprint_limit = 0; // bytes a sub-tile may hold; 0: a core's share of the fastest cache
  size_t top_k = 8;                  // choices returned
};

struct HierarchicalTile {
  ir::Dims tile;    // of the anchor, per task
  ir::Dims sub;     // of the anchor, per sub-tile, as the config cuts it (InnerLevel::ratio); empty: one level
  int split = 0;    // two levels: the kernel's nodes from the split-th on (topological order) run per sub-tile
  Estimate estimate;
  bool operator<(const HierarchicalTile& o) const;  // cheaper first; ties by tile, sub, split
};

// What the cost model sees of a kernel whose tasks compute `tile` and, where `sub` is not
// empty, whose nodes from `split` on run per sub-tile of at most `sub` (the config may cut
// smaller ones: its InnerLevel::ratio says how many per task); nullopt, or a config without
// an inner level, where that kernel would be one level.
using HierarchicalConfig =
    std::function<std::optional<CostConfig>(const ir::Dims& tile, const ir::Dims& sub, int split)>;

// The cheapest one- and two-level tilings: search_tiles for the task tiles (config(tile, {},
// 0), which must give a config), then for each of the outer top_k and each split in
// [0, nodes), the sub-tiles by the same expansion from one aligned line, within the task's
// tile. A split whose inner loop would compute the same nodes as an earlier one's is skipped,
// as is a sub-tile the config cuts like one already found; at most inner_max_splits splits are
// searched per task tile, from split 0 on. Results: cheapest first, at most
// top_k, never empty where search_tiles is not. The target needs a cache level (3 levels at
// least, as search_tiles).
std::vector<HierarchicalTile> search_hierarchy(const ir::Graph& g, const Kernel& k, size_t anchor,
                                               const HierarchicalConfig& config, const target::Target& t,
                                               const HierarchySearchOptions& o = {});

}  // namespace orchid::tile
