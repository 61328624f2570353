// Tile propagation through kernels and the cost of a tile (src/tile/kernel.h): Welder §2's
// matmul + softmax traffic example, the conv → relu → maxpool tile-graph of Welder §3.1,
// unions of what several consumers need, multi-output kernels, reduction splits, and grids.
#include <gtest/gtest.h>

#include "ir/parser.h"
#include "ir/stats.h"
#include "support/error.h"
#include "testlib/tile_fixtures.h"
#include "tile/kernel.h"
#include "tile_oracle.h"

namespace orchid::tile {
namespace {

ir::ValueId val(const ir::Graph& g, const std::string& name) { return *g.find_value(name); }
ir::NodeId node(const ir::Graph& g, const std::string& output) { return g.value(val(g, output)).node; }

constexpr auto whole_graph = testlib::whole_graph_kernel;

// Welder §2: C = A·B with A [98304×64], B [64×128], then D = softmax(C) over rows, fused into
// one kernel; the softmax is fissioned into max, exp(x - max), sum and div.
const std::string kWelderExample = testlib::matmul_softmax(98304);

TEST(TileKernel, WelderMatmulSoftmaxTrafficExample) {
  ir::Graph g = ir::parse_graph(kWelderExample);
  Kernel k = whole_graph(g);
  EXPECT_EQ(kernel_inputs(g, k), (std::vector<ir::ValueId>{val(g, "a"), val(g, "b")}));

  // One [4×128] tile of D loads A [4×64] and B [64×128] and stores D [4×128]: 35 KB.
  TileStats t = propagate_kernel(g, k, {{Region{{8, 0}, {12, 128}}}, {}});
  EXPECT_EQ(t.regions.at(val(g, "a")), (Region{{8, 0}, {12, 64}}));
  EXPECT_EQ(t.regions.at(val(g, "b")), (Region{{0, 0}, {64, 128}}));
  EXPECT_EQ(t.regions.at(val(g, "c")), (Region{{8, 0}, {12, 128}}));
  EXPECT_EQ(t.regions.at(val(g, "m")), (Region{{8, 0}, {12, 1}}));
  EXPECT_EQ(t.input_bytes.at(val(g, "a")), 4 * 64 * 4);
  EXPECT_EQ(t.input_bytes.at(val(g, "b")), 64 * 128 * 4);
  EXPECT_EQ(t.store_bytes, 4 * 128 * 4);
  EXPECT_EQ(t.load_bytes + t.store_bytes, (4 * 64 + 64 * 128 + 4 * 128) * 4);  // 35,840 bytes
  // The intermediates C, max, exp and sum stay on chip: [4×128] + [4×1] twice each.
  EXPECT_EQ(t.intermediate_bytes, (2 * 4 * 128 + 2 * 4) * 4);
  EXPECT_EQ(t.footprint_bytes, t.load_bytes + t.intermediate_bytes + t.store_bytes);
  // FLOPs: matmul 2·4·128·64, max 1 and sum 1 per term, exp(sub) 2 and div 1 per element.
  EXPECT_EQ(t.flops, 2 * 4 * 128 * 64 + 4 * 128 + 2 * 4 * 128 + 4 * 128 + 4 * 128);

  // Over the whole output: 24,576 tiles of [4×128] move 880,803,840 bytes ("840 MB"),
  // 6,144 tiles of [16×128] move 276,824,064 bytes ("264 MB").
  GridStats small = propagate_grid(g, k, {{4, 128}});
  EXPECT_EQ(small.tasks, 24576);
  EXPECT_EQ(small.traffic_bytes(), 880803840);
  GridStats big = propagate_grid(g, k, {{16, 128}});
  EXPECT_EQ(big.tasks, 6144);
  EXPECT_EQ(big.traffic_bytes(), 276824064);
  // Tiles partition the work: no primitive is recomputed, so the FLOPs are the graph's.
  EXPECT_EQ(small.flops, ir::graph_stats(g).flops);
  EXPECT_EQ(big.max_footprint_bytes, (16 * 64 + 64 * 128 + 16 * 128 + 2 * 16 * 128 + 2 * 16) * 4);
}

TEST(TileKernel, ConvReluMaxPoolTileGraph) {
  // Welder Fig. 5: a conv, a relu and a 2×2 max-pool fused; one pooled pixel of every channel
  // needs a 2×2 patch of the relu and of the conv, and a 4×4 patch of the padded input.
  ir::Graph g = ir::parse_graph(R"(
graph @g {
  input %x : f32[1,8,16,16]
  input %w : f32[16,8,3,3]
  %c : f32[1,16,16,16] = conv(%x, %w) {strides=[1,1], dilations=[1,1], pads_begin=[1,1], pads_end=[1,1], groups=1}
  %r : f32[1,16,16,16] = elementwise(%c) { max(%c[i0, i1, i2, i3], 0:f32) }
  %p : f32[1,16,8,8] = reduce max(%r) over [2,2] { %r[i0, i1, add(mul(i2, 2), r0), add(mul(i3, 2), r1)] }
  output %p
})");
  Kernel k = whole_graph(g);
  TileStats t = propagate_kernel(g, k, {{Region{{0, 0, 3, 5}, {1, 16, 4, 6}}}, {}});
  EXPECT_EQ(t.regions.at(val(g, "r")), (Region{{0, 0, 6, 10}, {1, 16, 8, 12}}));
  EXPECT_EQ(t.regions.at(val(g, "c")), (Region{{0, 0, 6, 10}, {1, 16, 8, 12}}));
  EXPECT_EQ(t.regions.at(val(g, "x")), (Region{{0, 0, 5, 9}, {1, 8, 9, 13}}));
  EXPECT_EQ(t.regions.at(val(g, "w")), Region::whole({16, 8, 3, 3}));
  // At the corner the padding is not read: rows and columns -1 are clipped.
  TileStats corner = propagate_kernel(g, k, {{Region{{0, 0, 0, 0}, {1, 16, 1, 1}}}, {}});
  EXPECT_EQ(corner.regions.at(val(g, "x")), (Region{{0, 0, 0, 0}, {1, 8, 3, 3}}));
  // The conv's FLOPs are for its 2×2 patch: 16 channels × 4 pixels × 8·3·3 multiply-adds.
  EXPECT_EQ(corner.flops, 2 * 16 * 4 * 8 * 9 + 16 * 4 + 16 * 4);
}

TEST(TileKernel, ValuesNeededByTwoConsumersGetTheUnion) {
  ir::Graph g = ir::parse_graph(R"(
graph @g {
  input %x : f32[9]
  %a : f32[9] = elementwise(%x) { neg(%x[i0]) }
  %lo : f32[8] = layout(%a) { %a[i0] }
  %hi : f32[8] = layout(%a) { %a[add(i0, 1)] }
  %c : f32[8] = elementwise(%lo, %hi) { add(%lo[i0], %hi[i0]) }
  output %c
})");
  Kernel k = whole_graph(g);
  TileStats t = propagate_kernel(g, k, {{Region{{2}, {5}}}, {}});
  EXPECT_EQ(t.regions.at(val(g, "hi")), (Region{{2}, {5}}));
  EXPECT_EQ(t.regions.at(val(g, "a")), (Region{{2}, {6}}));  // [2, 5) for lo, [3, 6) for hi
  EXPECT_EQ(t.regions.at(val(g, "x")), (Region{{2}, {6}}));
  EXPECT_EQ(t.flops, 4 + 3);  // neg over 4 elements, add over 3
  // The kernel without the first node reads %a from memory instead.
  Kernel tail{{node(g, "c"), node(g, "hi"), node(g, "lo")}, {val(g, "c")}};
  TileStats u = propagate_kernel(g, tail, {{Region{{2}, {5}}}, {}});
  EXPECT_EQ(kernel_inputs(g, tail), std::vector<ir::ValueId>{val(g, "a")});
  EXPECT_EQ(u.input_bytes.at(val(g, "a")), 4 * 4);
  EXPECT_EQ(u.regions.count(val(g, "x")), 0u);
}

TEST(TileKernel, MultipleOutputsAndOutputsReadInside) {
  ir::Graph g = ir::parse_graph(R"(
graph @g {
  input %x : f32[6,10]
  %mean, %var : f32[6,1], f32[6,1] = reduce welford(%x) over [10] { %x[i0, r0] }
  %y : f32[6,10] = elementwise(%x, %mean, %var) { div(sub(%x[i0, i1], %mean[i0, 0]), %var[i0, 0]) }
  output %y, %mean
})");
  Kernel k = whole_graph(g);
  // Task: rows 2..3 of y and rows 2..4 of mean; welford computes both outputs for rows 2..4.
  TileStats t = propagate_kernel(g, k, {{Region{{2, 0}, {4, 10}}, Region{{2, 0}, {5, 1}}}, {}});
  EXPECT_EQ(t.regions.at(val(g, "var")), (Region{{2, 0}, {5, 1}}));
  EXPECT_EQ(t.regions.at(val(g, "x")), (Region{{2, 0}, {5, 10}}));
  EXPECT_EQ(t.store_bytes, (2 * 10 + 3) * 4);
  EXPECT_EQ(t.intermediate_bytes, 3 * 4);  // var only: mean is an output
  EXPECT_EQ(t.footprint_bytes, 3 * 10 * 4 + 3 * 4 + (2 * 10 + 3) * 4);
  // A grid needs the same number of tiles for each output.
  GridStats grid = propagate_grid(g, k, {{2, 10}, {2, 1}});
  EXPECT_EQ(grid.tasks, 3);
  EXPECT_EQ(grid.load_bytes, 6 * 10 * 4);
  EXPECT_THROW(propagate_grid(g, k, {{2, 10}, {3, 1}}), InternalError);
  EXPECT_THROW(propagate_kernel(g, Kernel{{node(g, "y")}, {val(g, "mean")}}, {{Region{{0, 0}, {1, 1}}}, {}}),
               InternalError);  // an output the kernel does not compute
}

TEST(TileKernel, ReductionSplitsShrinkInputsAndFlops) {
  ir::Graph g = ir::parse_graph(R"(
graph @g {
  input %a : f32[32,64]
  input %b : f32[64,48]
  %c : f32[32,48] = matmul(%a, %b) {trans_a=false, trans_b=false}
  %r : f32[32,48] = elementwise(%c) { max(%c[i0, i1], 0:f32) }
  output %r
})");
  Kernel k = whole_graph(g);
  KernelTile tile{{Region{{0, 0}, {16, 16}}}, {{node(g, "c"), Region{{16}, {32}}}}};
  TileStats t = propagate_kernel(g, k, tile);
  EXPECT_EQ(t.regions.at(val(g, "a")), (Region{{0, 16}, {16, 32}}));
  EXPECT_EQ(t.regions.at(val(g, "b")), (Region{{16, 0}, {32, 16}}));
  EXPECT_EQ(t.flops, 2 * 16 * 16 * 16 + 16 * 16);
  EXPECT_THROW(propagate_kernel(g, k, KernelTile{{Region{{0, 0}, {16, 16}}}, {{ir::NodeId(7), Region{{0}, {1}}}}}),
               InternalError);
}

TEST(TileKernel, EdgeTilesAreClippedAndCountedOnce) {
  ir::Graph g = ir::parse_graph(R"(
graph @g {
  input %x : f32[10,7]
  %y : f32[7,10] = layout(%x) { %x[i1, i0] }
  %z : f32[7,10] = elementwise(%y) { mul(%y[i0, i1], %y[i0, i1]) }
  output %z
})");
  GridStats grid = propagate_grid(g, whole_graph(g), {{3, 4}});
  EXPECT_EQ(grid.tasks, 3 * 3);
  EXPECT_EQ(grid.load_bytes, 10 * 7 * 4);  // the tiles cover x exactly once
  EXPECT_EQ(grid.store_bytes, 10 * 7 * 4);
  EXPECT_EQ(grid.flops, 70);
  EXPECT_EQ(grid.max_intermediate_bytes, 3 * 4 * 4);
}

}  // namespace
}  // namespace orchid::tile
