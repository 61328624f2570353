// Sub-graph tiling by Roller-style expansion (src/tile/search.h): the K cheapest tiles under
// the footprint limit, cheapest first, from an aligned start.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace orchid::tile
