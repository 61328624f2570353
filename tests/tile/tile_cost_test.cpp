// The analytic cost of a kernel run as a grid of tasks (src/tile/cost.h): transactions,
// best-fit footprints, exact task sampling, the levels traffic is served from, and the
// parallelism penalty.
#include <gtest/gtest.h>

#include "ir/parser.h"
#include "tile/cost.h"
#include "testlib/tile_fixtures.h"
#include "tile/grid.h"

namespace orchid::tile {
namespace {

ir::ValueId val(const ir::Graph& g, const std::string& name) { return *g.find_value(name); }

const std::string kWelderExample = testlib::matmul_softmax(98304);
constexpr auto whole_graph = testlib::whole_graph_kernel;
target::Target toy(int64_t dram_transaction = 64) { return testlib::toy_cpu_target(dram_transaction); }

// y = x · x over f32[rows, cols].
ir::Graph squares(int64_t rows, int64_t cols) {
  std::string t = "f32[" + std::to_string(rows) + "," + std::to_string(cols) + "]";
  return ir::parse_graph("graph @g {\n  input %x : " + t + "\n  %y : " + t +
                         " = elementwise(%x) { mul(%x[i0, i1], %x[i0, i1]) }\n  output %y\n}\n");
}

CostConfig config(TaskGrid grid, std::set<ir::NodeId> inlined = {}, int lanes = 0) {
  CostConfig c;
  c.grid = std::move(grid);
  c.inlined = std::move(inlined);
  c.vector_lanes = lanes;
  return c;
}

TEST(TileCost, TransactionsCountWholeLinesOfEachContiguousRun) {
  ir::Dims shape{8, 32};  // rows of 128 bytes in f32
  EXPECT_EQ(transaction_bytes(Region{{0, 0}, {8, 32}}, shape, 4, 64), 8 * 32 * 4);  // one run, aligned
  EXPECT_EQ(transaction_bytes(Region{{2, 0}, {4, 32}}, shape, 4, 64), 2 * 32 * 4);  // whole rows are one run
  EXPECT_EQ(transaction_bytes(Region{{0, 0}, {8, 8}}, shape, 4, 64), 8 * 64);       // 32 bytes of each row: a line
  EXPECT_EQ(transaction_bytes(Region{{0, 12}, {8, 20}}, shape, 4, 64), 8 * 128);    // 32 bytes across a line end
  EXPECT_EQ(transaction_bytes(Region{{0, 0}, {0, 0}}, shape, 4, 64), 0);
  EXPECT_EQ(transaction_bytes(Region{{}, {}}, ir::Dims{}, 4, 64), 64);  // a scalar moves a line
  EXPECT_EQ(transaction_bytes(Region{{0, 12}, {8, 20}}, shape, 4, 4), 8 * 32);  // element-sized transactions
}

TEST(TileCost, FootprintIsBestFitWithRegionsFreedAfterTheirLastUse) {
  ir::Graph g = ir::parse_graph(kWelderExample);
  Kernel k = whole_graph(g);
  TileStats st = propagate_kernel(g, k, {{Region{{0, 0}, {16, 128}}}, {}});
  // a [16×64] and b [64×128] are freed once c [16×128] is computed; m, e, s and d then fit in
  // the holes and beside c: the peak is a + b + c, not the sum of every region.
  EXPECT_EQ(task_footprint(g, k, st, {}), (16 * 64 + 64 * 128 + 16 * 128) * 4);
  EXPECT_LT(task_footprint(g, k, st, {}), st.footprint_bytes);
  // With exp inlined into the division, e is never stored: nothing changes at the peak.
  EXPECT_EQ(task_footprint(g, k, st, {g.value(val(g, "e")).node}), (16 * 64 + 64 * 128 + 16 * 128) * 4);
}

TEST(TileCost, SampledTasksGiveTheExactGridTraffic) {
  ir::Graph g = ir::parse_graph(kWelderExample);
  Kernel k = whole_graph(g);
  target::Target t = toy(4);  // element-sized transactions: bytes as propagate_grid counts them
  for (ir::Dims tile : {ir::Dims{16, 128}, ir::Dims{5, 128}, ir::Dims{4096, 128}}) {
    Estimate e = estimate_kernel(g, k, config(uniform_grid(g, k, {tile})), t);
    GridStats exact = propagate_grid(g, k, {tile});
    EXPECT_EQ(e.grid_bytes, exact.traffic_bytes()) << ir::dims_str(tile);
    EXPECT_EQ(e.flops, exact.flops) << ir::dims_str(tile);
    EXPECT_EQ(e.tasks, exact.tasks) << ir::dims_str(tile);
  }
}

TEST(TileCost, MainMemoryMovesEachByteOnceAndReReadsComeFromTheLevelHoldingThem) {
  ir::Graph g = ir::parse_graph(kWelderExample);
  Kernel k = whole_graph(g);
  target::Target t = toy();
  Estimate small = estimate_kernel(g, k, config(uniform_grid(g, k, {{4, 128}})), t);
  Estimate big = estimate_kernel(g, k, config(uniform_grid(g, k, {{16, 128}})), t);
  const int64_t unique = (98304 * 64 + 64 * 128 + 98304 * 128) * 4;
  EXPECT_EQ(small.unique_bytes, unique);
  EXPECT_EQ(big.unique_bytes, unique);
  EXPECT_EQ(small.grid_bytes, 880803840);  // Welder §2, in whole lines (rows of 256 and 512 bytes)
  EXPECT_EQ(big.grid_bytes, 276824064);
  // b (32 KiB), read again by every task, stays in each core's L1d.
  ASSERT_EQ(small.levels.size(), 4u);
  EXPECT_EQ(small.levels[0].level, "L1d");
  EXPECT_EQ(small.levels[3].level, "DRAM");
  EXPECT_EQ(small.levels[3].bytes, unique);
  EXPECT_EQ(small.levels[0].bytes - big.levels[0].bytes, (24576 - 6144) * 64 * 128 * 4);
  EXPECT_LT(big.seconds, small.seconds);
  // Both are bound by DRAM (75.5 MB at 20 GB/s), with every core busy, plus the tasks.
  EXPECT_DOUBLE_EQ(big.utilization, 1.0);
  EXPECT_NEAR(big.seconds, double(unique) / 20e9 + 6144 * CostOptions{}.task_overhead_seconds / 2, 1e-9);
}

TEST(TileCost, IntermediatesLiveInTheLevelHoldingATasksFootprint) {
  ir::Graph g = ir::parse_graph(kWelderExample);
  Kernel k = whole_graph(g);
  target::Target t = toy();
  // A task of [16×128] holds 44 KiB: L1d. One of [512×128] holds 416 KiB: L2.
  Estimate fits = estimate_kernel(g, k, config(uniform_grid(g, k, {{16, 128}})), t);
  Estimate spills = estimate_kernel(g, k, config(uniform_grid(g, k, {{512, 128}})), t);
  EXPECT_LE(fits.footprint_bytes, 48 << 10);
  EXPECT_GT(spills.footprint_bytes, 48 << 10);
  EXPECT_EQ(fits.intermediate_bytes, spills.intermediate_bytes);  // the same values, written and read
  // c, e (written once, read twice each) and m, s (written once, read once each).
  EXPECT_EQ(fits.intermediate_bytes, (98304 * 128 * 3 * 2 + 98304 * 2 * 2) * 4);
  EXPECT_GT(spills.levels[1].bytes, fits.levels[1].bytes);  // L2 now carries them
  // Inlining exp into the division keeps e in registers: two reads and a write fewer of it.
  Estimate inlined = estimate_kernel(g, k, config(uniform_grid(g, k, {{16, 128}}), {g.value(val(g, "e")).node}), t);
  EXPECT_EQ(fits.intermediate_bytes - inlined.intermediate_bytes, int64_t{98304} * 128 * 3 * 4);
}

TEST(TileCost, TooFewTasksAndNarrowVectorsArePenalised) {
  ir::Graph g = squares(3, 1024);
  Kernel k = whole_graph(g);
  target::Target t = toy();
  t.peak_gflops_f32 = 0.001;  // compute bound, to see the lanes
  Estimate three = estimate_kernel(g, k, config(uniform_grid(g, k, {{1, 1024}})), t);
  EXPECT_EQ(three.tasks, 3);
  // 24 KiB in and out: the cores' L1d together hold them, so main memory moves nothing.
  EXPECT_EQ(three.levels[0].bytes, 2 * 3 * 1024 * 4);
  EXPECT_EQ(three.levels[3].bytes, 0);
  EXPECT_DOUBLE_EQ(three.utilization, 0.75);  // two waves on two cores, one of them half idle
  Estimate one = estimate_kernel(g, k, config(uniform_grid(g, k, {{3, 1024}})), t);
  EXPECT_DOUBLE_EQ(one.utilization, 0.5);
  EXPECT_GT(one.seconds, three.seconds);
  Estimate scalar = estimate_kernel(g, k, config(uniform_grid(g, k, {{1, 1024}}), {}, 1), t);
  EXPECT_DOUBLE_EQ(scalar.compute_seconds, 16 * three.compute_seconds);
}

TEST(TileCost, ElementsPastTheLastWholeVectorRunOneAtATime) {
  ir::Graph g = squares(4, 56);
  Kernel k = whole_graph(g);
  target::Target t = toy();
  // Rows of 56: three vectors of 16 and 8 scalar iterations, or seven vectors of 8.
  Estimate by16 = estimate_kernel(g, k, config(uniform_grid(g, k, {{4, 56}}), {}, 16), t);
  Estimate by8 = estimate_kernel(g, k, config(uniform_grid(g, k, {{4, 56}}), {}, 8), t);
  EXPECT_DOUBLE_EQ(by16.narrow_work, 4 * 56 * (16.0 * (3 + 8) / 56));
  EXPECT_DOUBLE_EQ(by8.narrow_work, 4 * 56);
  EXPECT_NEAR(by16.compute_seconds / by8.compute_seconds, (3 + 8) / 7.0, 1e-12);
}

TEST(TileCost, RegisterBlocksArePaidWhole) {
  ir::Graph g = ir::parse_graph(R"(
graph @g {
  input %a : f32[8,64]
  input %b : f32[64,40]
  %c : f32[8,40] = matmul(%a, %b) {trans_a=false, trans_b=false}
  output %c
})");
  Kernel k = whole_graph(g);
  target::Target t = toy();
  CostConfig plain = config(uniform_grid(g, k, {{4, 20}}));
  plain.full_width = {ir::NodeId(0)};
  CostConfig blocked = plain;
  blocked.blocks[ir::NodeId(0)] = RegisterBlock{0, 1, 6, 16};
  // Every task's [4×20] is covered by blocks of 6 × 16: [6×32], 2.4 times the work.
  EXPECT_NEAR(estimate_kernel(g, k, blocked, t).compute_seconds / estimate_kernel(g, k, plain, t).compute_seconds,
              6.0 / 4 * 32 / 20, 1e-12);
}

TEST(TileCost, ShortRunsStreamSlowerFromMainMemory) {
  ir::Graph g = ir::parse_graph(R"(
graph @g {
  input %x : f32[4096,768]
  %y : f32[4096,768] = elementwise(%x) { mul(%x[i0, i1], %x[i0, i1]) }
  output %y
})");
  Kernel k = whole_graph(g);
  target::Target t = toy();
  // 24 MiB in and out, more than L3: main memory serves them. Strips of 16 columns read and
  // write runs of 64 bytes, each as slow as 256; whole rows stream.
  Estimate strips = estimate_kernel(g, k, config(uniform_grid(g, k, {{4096, 16}})), t);
  Estimate rows = estimate_kernel(g, k, config(uniform_grid(g, k, {{16, 768}})), t);
  EXPECT_EQ(strips.levels[3].bytes, rows.levels[3].bytes);
  EXPECT_DOUBLE_EQ(strips.levels[3].seconds, 4 * rows.levels[3].seconds);
}

}  // namespace
}  // namespace orchid::tile
