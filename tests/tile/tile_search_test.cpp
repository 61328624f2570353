// Sub-graph tiling by Roller-style expansion (src/tile/search.h): the K cheapest tiles under
// the footprint limit, cheapest first, from an aligned start; and its recursion to sub-tiles
// (two-level tiling).
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include "ir/parser.h"
#include "testlib/tile_fixtures.h"
#include "tile/grid.h"
#include "tile/search.h"

namespace orchid::tile {
namespace {

const std::string kMatmulSoftmax = testlib::matmul_softmax(8192);
constexpr auto whole_graph = testlib::whole_graph_kernel;
target::Target toy() { return testlib::toy_cpu_target(); }

// The cost model's view of an anchor tile: the grid alone (nothing inlined, full lanes).
std::function<CostConfig(const ir::Dims&)> grid_only(const ir::Graph& g, const Kernel& k) {
  return [&g, &k](const ir::Dims& tile) {
    CostConfig c;
    c.grid = anchor_grid(g, k, 0, tile);
    return c;
  };
}

TEST(TileSearch, ReturnsTheCheapestTilesUnderTheFootprintLimit) {
  ir::Graph g = ir::parse_graph(kMatmulSoftmax);
  Kernel k = whole_graph(g);
  auto config = grid_only(g, k);
  TileSearchOptions o;
  o.top_k = 5;
  std::vector<TileChoice> found = search_tiles(g, k, 0, config, toy(), o);
  ASSERT_EQ(found.size(), 5u);
  for (size_t i = 0; i < found.size(); ++i) {
    // At most a core's share of L3, the level below main memory.
    EXPECT_LE(found[i].estimate.footprint_bytes, 8 << 20) << ir::dims_str(found[i].tile);
    if (i > 0) {
      EXPECT_LE(found[i - 1].estimate.seconds, found[i].estimate.seconds);
    }
    // A row needs all of its columns: the search keeps whole rows, which cost no recomputation.
    EXPECT_EQ(found[i].tile[1], 128) << ir::dims_str(found[i].tile);
  }
  // Rows of [1×16] (the start: one line) recompute the matmul and softmax per 16 columns; the
  // best is far cheaper.
  Estimate start = estimate_kernel(g, k, config({1, 16}), toy());
  EXPECT_LT(found[0].estimate.seconds * 4, start.seconds);
  // The same search gives the same answer.
  std::vector<TileChoice> again = search_tiles(g, k, 0, config, toy(), o);
  ASSERT_EQ(again.size(), found.size());
  for (size_t i = 0; i < found.size(); ++i) EXPECT_EQ(again[i].tile, found[i].tile);
}

TEST(TileSearch, TheStartIsReturnedWhenNothingFits) {
  ir::Graph g = ir::parse_graph(kMatmulSoftmax);
  Kernel k = whole_graph(g);
  auto config = grid_only(g, k);
  TileSearchOptions o;
  o.footprint_limit = 1024;  // less than b alone
  std::vector<TileChoice> found = search_tiles(g, k, 0, config, toy(), o);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].tile, (ir::Dims{1, 16}));
}

// Two levels as the CPU lowering makes them: sub-tiles of the largest size up to the one asked
// that divides the task's tile, and the kernel's nodes from the split-th on (by id: topological
// in these graphs) computed per sub-tile.
HierarchicalConfig two_level(const ir::Graph& g, const Kernel& k) {
  return [&g, &k](const ir::Dims& tile, const ir::Dims& sub, int split) -> std::optional<CostConfig> {
    CostConfig c = grid_only(g, k)(tile);
    if (sub.empty()) return c;
    InnerLevel in;
    ir::Dims cut = sub;
    for (size_t d = 0; d < tile.size(); ++d) {
      while (tile[d] % cut[d] != 0) --cut[d];
      in.ratio.push_back(tile[d] / cut[d]);
    }
    if (cut == tile) return std::nullopt;
    in.grid = anchor_grid(g, k, 0, cut);
    std::vector<ir::NodeId> order = k.nodes;
    std::sort(order.begin(), order.end());
    for (size_t i = static_cast<size_t>(split); i < order.size(); ++i) in.nodes.insert(order[i]);
    c.inner = in;
    return c;
  };
}

TEST(TileSearch, HierarchySearchesSubTilesInsideTheCheapestTaskTiles) {
  ir::Graph g = ir::parse_graph(kMatmulSoftmax);
  Kernel k = whole_graph(g);
  HierarchicalConfig config = two_level(g, k);
  HierarchySearchOptions o;
  o.outer.top_k = 3;
  o.top_k = 64;
  std::vector<HierarchicalTile> found = search_hierarchy(g, k, 0, config, toy(), o);
  ASSERT_FALSE(found.empty());
  // The one-level choices are search_tiles' own.
  auto one = [&](const ir::Dims& tile) { return *config(tile, {}, 0); };
  std::vector<TileChoice> outer = search_tiles(g, k, 0, one, toy(), o.outer);
  std::vector<ir::Dims> one_level;
  size_t two = 0;
  for (size_t i = 0; i < found.size(); ++i) {
    const HierarchicalTile& h = found[i];
    if (i > 0) {
      EXPECT_LE(found[i - 1].estimate.seconds, h.estimate.seconds);
    }
    if (h.sub.empty()) {
      one_level.push_back(h.tile);
      continue;
    }
    ++two;
    // Inside one of the outer tiles, smaller somewhere, dividing it, the sub-tile's footprint
    // within a core's L1, and priced as its config says.
    EXPECT_TRUE(std::any_of(outer.begin(), outer.end(), [&](const TileChoice& c) { return c.tile == h.tile; }));
    ASSERT_EQ(h.sub.size(), h.tile.size());
    EXPECT_NE(h.sub, h.tile);
    for (size_t d = 0; d < h.sub.size(); ++d) {
      EXPECT_LE(h.sub[d], h.tile[d]) << ir::dims_str(h.sub);
      EXPECT_EQ(h.tile[d] % h.sub[d], 0) << ir::dims_str(h.sub);  // as the config cut it
    }
    for (size_t j = 0; j < i; ++j) {
      EXPECT_FALSE(found[j].tile == h.tile && found[j].sub == h.sub && found[j].split == h.split)
          << "twice: " << ir::dims_str(h.tile) << " / " << ir::dims_str(h.sub);
    }
    EXPECT_LE(h.estimate.sub_footprint_bytes, 48 << 10);
    EXPECT_EQ(h.estimate.seconds, estimate_kernel(g, k, *config(h.tile, h.sub, h.split), toy()).seconds);
  }
  EXPECT_GT(two, 0u);
  ASSERT_EQ(one_level.size(), outer.size());
  for (size_t i = 0; i < outer.size(); ++i) EXPECT_EQ(one_level[i], outer[i].tile);
  // Several splits were searched; with one allowed, only the first (everything per sub-tile).
  EXPECT_TRUE(std::any_of(found.begin(), found.end(), [](const HierarchicalTile& h) { return h.split > 0; }));
  HierarchySearchOptions one_split = o;
  one_split.inner_max_splits = 1;
  for (const HierarchicalTile& h : search_hierarchy(g, k, 0, config, toy(), one_split)) EXPECT_EQ(h.split, 0);
  // Deterministic.
  std::vector<HierarchicalTile> again = search_hierarchy(g, k, 0, config, toy(), o);
  ASSERT_EQ(again.size(), found.size());
  for (size_t i = 0; i < found.size(); ++i) {
    EXPECT_EQ(again[i].tile, found[i].tile);
    EXPECT_EQ(again[i].sub, found[i].sub);
    EXPECT_EQ(again[i].split, found[i].split);
  }
}

TEST(TileSearch, SubTilesWinWhereATasksValuesStreamFromASlowLevel) {
  // A task's values (the matmul's tile, the exponentials) live in the level holding the task;
  // with L2 made as slow as a tenth of main memory, a task tile too large for L1 pays for them
  // there, and the search finds sub-tiles of it whose values stay in L1. With the toy's fast
  // L2, those sub-tiles gain less.
  ir::Graph g = ir::parse_graph(kMatmulSoftmax);
  Kernel k = whole_graph(g);
  target::Target slow = toy();
  slow.levels[2].bandwidth_gbs = 2;
  HierarchySearchOptions o;
  o.outer.top_k = 8;
  o.top_k = 1000;
  auto gain = [&](const target::Target& t) {
    std::vector<HierarchicalTile> found = search_hierarchy(g, k, 0, two_level(g, k), t, o);
    double best = 0;  // the largest ratio one-level / best two-level of a task tile beyond L1
    for (const HierarchicalTile& one : found) {
      if (!one.sub.empty() || one.estimate.footprint_bytes <= (48 << 10)) continue;
      for (const HierarchicalTile& two : found)
        if (two.tile == one.tile && !two.sub.empty())
          best = std::max(best, one.estimate.seconds / two.estimate.seconds);
    }
    return best;
  };
  double slow_gain = gain(slow), fast_gain = gain(toy());
  EXPECT_GT(slow_gain, 1.5) << fast_gain;
  EXPECT_GT(slow_gain, fast_gain);
}

}  // namespace
}  // namespace orchid::tile
