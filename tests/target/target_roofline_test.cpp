// Roofline bounds: the arithmetic, and the bound of an IR primitive.
#include <gtest/gtest.h>

#include "ir/parser.h"
#include "ir/stats.h"
#include "support/error.h"
#include "target/presets.h"
#include "target/roofline.h"

namespace orchid::target {
namespace {

// 100 GFLOP/s, L1 at 100 GB/s, DRAM at 10 GB/s.
Target toy() {
  Target t;
  t.name = "toy";
  t.levels = {{"registers", 512, 32, 800, false}, {"L1d", 32768, 64, 100, false}, {"DRAM", 1 << 30, 64, 10, true}};
  t.peak_gflops_f32 = 100;
  return t;
}

TEST(Roofline, IsTheLargerOfComputeAndMemoryTime) {
  Target t = toy();
  EXPECT_DOUBLE_EQ(roofline_seconds(t, 1'000'000'000, 0), 0.01);             // compute bound
  EXPECT_DOUBLE_EQ(roofline_seconds(t, 0, 1'000'000'000), 0.1);              // memory bound
  EXPECT_DOUBLE_EQ(roofline_seconds(t, 1'000'000'000, 100'000'000), 0.01);   // the ridge: 10 FLOP/byte
  EXPECT_DOUBLE_EQ(roofline_seconds(t, 2'000'000'000, 500'000'000), 0.05);   // below the ridge
  EXPECT_DOUBLE_EQ(roofline_seconds(t, 0, 0), 0.0);
}

TEST(Roofline, TransferTimeUsesTheLevelsBandwidth) {
  Target t = toy();
  EXPECT_DOUBLE_EQ(transfer_seconds(t, 1, 1'000'000'000), 0.01);
  EXPECT_DOUBLE_EQ(transfer_seconds(t, 2, 1'000'000'000), 0.1);
  EXPECT_DOUBLE_EQ(transfer_seconds(t, 0, 8'000'000'000), 0.01);
}

TEST(Roofline, GpuPresetsUseHbm) {
  Target h100 = cuda_preset("h100");
  EXPECT_DOUBLE_EQ(roofline_seconds(h100, 0, 3'350'000'000), 0.001);
  EXPECT_DOUBLE_EQ(roofline_seconds(h100, 67'000'000'000, 0), 0.001);
}

TEST(Roofline, NeedsMeasuredNumbers) {
  Target t = toy();
  t.peak_gflops_f32 = 0;
  EXPECT_THROW(roofline_seconds(t, 1, 1), InternalError);
  t = toy();
  t.levels[2].bandwidth_gbs = 0;
  EXPECT_THROW(roofline_seconds(t, 1, 1), InternalError);
  EXPECT_THROW(transfer_seconds(toy(), 3, 1), InternalError);
  EXPECT_THROW(roofline_seconds(toy(), -1, 0), InternalError);
}

TEST(Roofline, OfAPrimitive) {
  ir::Graph g = ir::parse_graph(
      "graph @mm {\n  input %a : f32[64,32]\n  input %b : f32[32,16]\n"
      "  %c : f32[64,16] = matmul(%a, %b) {trans_a=false, trans_b=false}\n  output %c\n}\n");
  const ir::Primitive& p = g.node(ir::NodeId(0));
  ASSERT_EQ(ir::primitive_flops(p), 2 * 64 * 32 * 16);
  ASSERT_EQ(ir::primitive_bytes(g, p), (64 * 32 + 32 * 16 + 64 * 16) * 4);
  Target t = toy();
  EXPECT_DOUBLE_EQ(primitive_roofline_seconds(t, g, p), (64 * 32 + 32 * 16 + 64 * 16) * 4 / 10e9);
  t.levels[2].bandwidth_gbs = 1e6;  // memory no longer binds
  EXPECT_DOUBLE_EQ(primitive_roofline_seconds(t, g, p), 2.0 * 64 * 32 * 16 / 100e9);
}

}  // namespace
}  // namespace orchid::target
