// Sub-graph tiling by Roller-style expansion (src/tile/search.h): the K cheapest tiles under
// the footprint limit, cheapest first, from an aligned start.
#include <gtest/gtest.h>

#include "ir/parser.h"
#include "tile/grid.h"
#include "tile/search.h"

namespace orchid::tile {
namespace {

Kernel whole_graph(const ir::Graph& g) {
  Kernel k;
  for (int32_t n = 0; n < g.num_nodes(); ++n) k.nodes.push_back(ir::NodeId(n));
  k.outputs = g.outputs();
  return k;
}

target::Target toy() {
  target::Target t;
  t.name = "toy";
  t.cores = 2;
  t.simd_bits = 512;
  t.peak_gflops_f32 = 1000;
  t.levels = {{"registers", 2048, 64, 8000, false},
              {"L1d", 48 << 10, 64, 400, false},
              {"L2", 1 << 20, 64, 200, false},
              {"DRAM", int64_t{1} << 34, 64, 20, true}};
  return t;
}

constexpr const char* kMatmulSoftmax = R"(
graph @g {
  input %a : f32[8192,64]
  input %b : f32[64,128]
  %c : f32[8192,128] = matmul(%a, %b) {trans_a=false, trans_b=false}
  %m : f32[8192,1] = reduce max(%c) over [128] { %c[i0, r0] }
  %e : f32[8192,128] = elementwise(%c, %m) { exp(sub(%c[i0, i1], %m[i0, 0])) }
  %s : f32[8192,1] = reduce sum(%e) over [128] { %e[i0, r0] }
  %d : f32[8192,128] = elementwise(%e, %s) { div(%e[i0, i1], %s[i0, 0]) }
  output %d
})";

TEST(TileSearch, ReturnsTheCheapestTilesUnderTheFootprintLimit) {
  ir::Graph g = ir::parse_graph(kMatmulSoftmax);
  Kernel k = whole_graph(g);
  auto config = [&](const ir::Dims& tile) { return CostConfig{anchor_grid(g, k, 0, tile), {}, 0, {}}; };
  TileSearchOptions o;
  o.top_k = 5;
  std::vector<TileChoice> found = search_tiles(g, k, 0, config, toy(), o);
  ASSERT_EQ(found.size(), 5u);
  for (size_t i = 0; i < found.size(); ++i) {
    EXPECT_LE(found[i].estimate.footprint_bytes, 1 << 20) << ir::dims_str(found[i].tile);
    if (i > 0) EXPECT_LE(found[i - 1].estimate.seconds, found[i].estimate.seconds);
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
  auto config = [&](const ir::Dims& tile) { return CostConfig{anchor_grid(g, k, 0, tile), {}, 0, {}}; };
  TileSearchOptions o;
  o.footprint_limit = 1024;  // less than b alone
  std::vector<TileChoice> found = search_tiles(g, k, 0, config, toy(), o);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].tile, (ir::Dims{1, 16}));
}

}  // namespace
}  // namespace orchid::tile
