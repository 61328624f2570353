// The analytic cost of a generated CPU kernel under a schedule (src/tune/estimate.h): it sees
// the lowering's grid, its inlined primitives and its vector width, the GEMM micro-kernel at
// full width in register blocks, the serial reductions of scalar schedules, the lines read
// before stores that do not stream, and the inner loop of two-level schedules. The tuner's
// seeds from the hierarchical tile search (src/tune/seeds.h) are schedules of the same model.
#include <gtest/gtest.h>

#include "codegen/cpu/lower.h"
#include "codegen/kernel_graphs.h"
#include "ir/parser.h"
#include "testlib/tile_fixtures.h"
#include "tune/cpu_space.h"
#include "tune/estimate.h"
#include "tune/seeds.h"

namespace orchid::tune {
namespace {

constexpr auto whole = testlib::whole_graph_kernel;

double work_per_point_of(const ir::Graph& g, int32_t node) { return tile::work_per_point(g.node(ir::NodeId(node))); }

target::Target toy() {
  target::Target t = testlib::toy_cpu_target();
  t.peak_gflops_f32 = 0.001;  // compute bound: the lanes show
  return t;
}

TEST(TuneEstimate, SeesTheLoweringsGridAndInlinedPrimitives) {
  ir::Graph g = ir::parse_graph(codegen::softmax_rows(64, 300));
  tile::Kernel k = whole(g);
  codegen::cpu::Schedule s = codegen::cpu::default_schedule(g, k, 2);
  s.tile = {8, 0};
  codegen::cpu::KernelLowering kl = codegen::cpu::lower_kernel(g, k, s);
  tile::CostConfig c = cpu_cost_config(g, k, s);
  EXPECT_EQ(c.grid.grid, kl.grid);
  EXPECT_EQ(c.grid.tasks(), 8);
  size_t inlined = 0;
  for (const codegen::cpu::NodeLowering& n : kl.nodes) inlined += n.inlined ? 1 : 0;
  EXPECT_EQ(c.inlined.size(), inlined);
  EXPECT_EQ(c.vector_lanes, s.vector_width);
  EXPECT_EQ(estimate_cpu_schedule(g, k, s, toy()).tasks, 8);
}

TEST(TuneEstimate, ScalarSchedulesFoldReductionsOnOneLane) {
  ir::Graph g = ir::parse_graph(codegen::softmax_rows(64, 320));  // rows of whole vectors
  tile::Kernel k = whole(g);
  codegen::cpu::Schedule wide = codegen::cpu::default_schedule(g, k, 2), scalar = wide;
  wide.vector_width = 16;
  scalar.vector_width = 1;
  // Without `omp simd` the compiler still vectorizes the elementwise loops, but not the
  // floating-point folds: max and sum run on one lane, waiting on each fold (4 × 16 slots).
  tile::CostConfig sc = cpu_cost_config(g, k, scalar);
  EXPECT_EQ(sc.serial.size(), 2u);
  EXPECT_EQ(sc.vector_lanes, 0);  // the compiler's width
  EXPECT_TRUE(cpu_cost_config(g, k, wide).serial.empty());
  const double folds = 64 * 320 * 2, rate = 0.5e6;  // toy(): 0.001 GFLOP/s, an FMA 2 FLOPs
  EXPECT_NEAR(estimate_cpu_schedule(g, k, scalar, toy()).compute_seconds -
                  estimate_cpu_schedule(g, k, wide, toy()).compute_seconds,
              folds * (4 * 16 - 1) / rate, 1e-6);
}

TEST(TuneEstimate, NarrowLoopsCostMoreExceptInTheGemmMicroKernel) {
  ir::Graph mm = ir::parse_graph(codegen::gemm_graph(1, 64, 64, 64, false, false, false));
  tile::Kernel mk = whole(mm);
  codegen::cpu::Schedule mwide = codegen::cpu::default_schedule(mm, mk, 2), mnarrow = mwide;
  mnarrow.vector_width = 4;
  tile::Estimate a = estimate_cpu_schedule(mm, mk, mwide, toy()), b = estimate_cpu_schedule(mm, mk, mnarrow, toy());
  EXPECT_EQ(cpu_cost_config(mm, mk, mwide).full_width.size(), 1u);  // the matmul, in 6 × 16 blocks
  EXPECT_EQ(cpu_cost_config(mm, mk, mwide).blocks.size(), 1u);
  // Only the epilogue's FLOPs (bias and relu: 2 per element) slow down, to a quarter of the lanes.
  EXPECT_EQ(b.narrow_work, 2 * 64 * 64);
  EXPECT_NEAR(b.compute_seconds - a.compute_seconds, 2.0 * 64 * 64 * (16 / 4 - 1) / 0.5e6, 1e-9);
}

// Without streaming stores, an output served by a shared level (here DRAM) is read before it
// is written: 64 MiB more of DRAM traffic for y = 2x over 4096 x 4096 floats. An output that
// the cores' private levels hold moves once either way.
TEST(TuneEstimate, StoresThroughTheCachesReadTheirLinesFirst) {
  auto scaled = [](int64_t n) {
    std::string t = "f32[" + std::to_string(n) + "," + std::to_string(n) + "]";
    return "graph @g {\n  input %x : " + t + "\n  %y : " + t + " = elementwise(%x) { mul(%x[i0, i1], 2:f32) }\n  output %y\n}\n";
  };
  target::Target t = testlib::toy_cpu_target();
  for (int64_t n : {4096, 128}) {
    ir::Graph g = ir::parse_graph(scaled(n));
    tile::Kernel k = whole(g);
    codegen::cpu::Schedule through = codegen::cpu::default_schedule(g, k, 2), streamed = through;
    through.stream = false;
    streamed.stream = true;
    EXPECT_TRUE(cpu_cost_config(g, k, through).write_allocate);
    EXPECT_FALSE(cpu_cost_config(g, k, streamed).write_allocate);
    tile::Estimate a = estimate_cpu_schedule(g, k, through, t), b = estimate_cpu_schedule(g, k, streamed, t);
    int64_t more = 0;
    for (size_t i = 0; i < a.levels.size(); ++i) more += a.levels[i].bytes - b.levels[i].bytes;
    EXPECT_EQ(more, n == 4096 ? int64_t{64} << 20 : 0) << n;
    if (n == 4096) {
      EXPECT_GT(a.seconds, b.seconds);
    }
  }
}

// Two levels (Schedule::inner): the inner loop's nodes are priced per sub-tile. Rows of a
// softmax cut into sub-tiles of 4 rows cost the same work and move the same intermediate bytes
// as one level, and their intermediates stay within a sub-tile's footprint. A ReLU feeding
// an overlapping 3 × 3 max pool computed per sub-tile computes the rows the sub-tiles share
// again; computed per task, it does not.
TEST(TuneEstimate, TwoLevelKernelsPriceTheInnerLoopPerSubTile) {
  ir::Graph g = ir::parse_graph(testlib::matmul_softmax(256));
  tile::Kernel k = whole(g);
  codegen::cpu::Schedule one = codegen::cpu::default_schedule(g, k, 2);
  one.tile = {64, 128};
  codegen::cpu::Schedule two = one;
  two.inner = {4, 128};
  two.split = 1;
  codegen::cpu::KernelLowering kl = codegen::cpu::lower_kernel(g, k, two);
  tile::CostConfig c = cpu_cost_config(g, k, two);
  ASSERT_TRUE(c.inner.has_value() && kl.inner.has_value());
  EXPECT_EQ(c.inner->grid.grid, kl.inner->grid);
  EXPECT_EQ(c.inner->ratio, (ir::Dims{16, 1}));
  size_t inner = 0;
  for (const codegen::cpu::NodeLowering& n : kl.nodes) inner += n.inner ? 1 : 0;
  EXPECT_EQ(c.inner->nodes.size(), inner);
  EXPECT_GE(inner, 3u);
  tile::Estimate e1 = estimate_cpu_schedule(g, k, one, toy()), e2 = estimate_cpu_schedule(g, k, two, toy());
  EXPECT_DOUBLE_EQ(e2.work, e1.work);
  EXPECT_EQ(e2.intermediate_bytes + e2.sub_intermediate_bytes, e1.intermediate_bytes);
  EXPECT_GT(e2.sub_intermediate_bytes, 0);
  // The matmul's operands and result (16 + 32 + 32 KiB) are the task's peak either way.
  EXPECT_EQ(e2.footprint_bytes, e1.footprint_bytes);
  EXPECT_EQ(e1.footprint_bytes, 80 << 10);
  EXPECT_LT(e2.sub_footprint_bytes, e2.footprint_bytes / 4);

  ir::Graph p = ir::parse_graph(R"(
graph @pool {
  input %x : f32[1,32,19,23]
  input %b : f32[32,1,1]
  %z : f32[1,32,19,23] = elementwise(%x, %b) { max(add(%x[i0, i1, i2, i3], %b[i1, 0, 0]), 0:f32) }
  %p : f32[1,32,9,11] = reduce max(%z) over [3,3] { %z[i0, i1, add(mul(i2, 2), r0), add(mul(i3, 2), r1)] }
  output %p
}
)");
  tile::Kernel pk = whole(p);
  codegen::cpu::Schedule task = codegen::cpu::default_schedule(p, pk, 2);
  task.tile = {1, 32, 9, 11};
  codegen::cpu::Schedule pool_inner = task, relu_inner = task;
  pool_inner.inner = relu_inner.inner = {1, 32, 1, 11};
  pool_inner.split = 1;
  relu_inner.split = 0;
  double w = estimate_cpu_schedule(p, pk, task, toy()).work;
  EXPECT_DOUBLE_EQ(estimate_cpu_schedule(p, pk, pool_inner, toy()).work, w);
  // 9 sub-tiles of 3 ReLU rows each: 27 rows, not 19.
  const double relu_row = 32 * 23 * work_per_point_of(p, 0);
  EXPECT_NEAR(estimate_cpu_schedule(p, pk, relu_inner, toy()).work - w, (27 - 19) * relu_row, 1e-6);
}

TEST(TuneSeeds, AreTheDefaultRetiledAsTheTileSearchFindsCheapest) {
  ir::Graph g = ir::parse_graph(testlib::matmul_softmax(2048));
  tile::Kernel k = whole(g);
  const target::Target t = testlib::toy_cpu_target();
  codegen::cpu::Schedule base = codegen::cpu::default_schedule(g, k, 2);
  tile::HierarchySearchOptions o;
  o.top_k = 60;
  std::vector<codegen::cpu::Schedule> seeds = tile_search_seeds(g, k, base, t, o);
  ASSERT_GT(seeds.size(), 4u);
  CpuSpace space = cpu_space(g, k, 2);
  size_t two = 0;
  double last = 0;
  for (const codegen::cpu::Schedule& s : seeds) {
    // Only the tiling differs from the default.
    codegen::cpu::Schedule retiled = base;
    retiled.tile = s.tile;
    retiled.inner = s.inner;
    retiled.split = s.split;
    EXPECT_EQ(s, retiled) << codegen::cpu::schedule_str(s);
    double cost = estimate_cpu_schedule(g, k, s, t).seconds;
    EXPECT_LE(last, cost) << codegen::cpu::schedule_str(s);
    last = cost;
    if (!s.inner.empty()) {
      ++two;
      // The full lowering runs it with two levels (every sub-tile reads inside its task).
      EXPECT_TRUE(codegen::cpu::lower_kernel(g, k, s).inner.has_value()) << codegen::cpu::schedule_str(s);
    }
    // A point of the tuner's space: its tiles and sub-tiles are on the ladders.
    tune::Point p = space.point_of(s);
    EXPECT_EQ(space.schedule(p), s) << codegen::cpu::schedule_str(s) << " -> "
                                    << codegen::cpu::schedule_str(space.schedule(p));
    EXPECT_TRUE(space.space.contains(p)) << codegen::cpu::schedule_str(s);
  }
  EXPECT_GT(two, 0u);
  EXPECT_EQ(tile_search_seeds(g, k, base, t, o), seeds);
  // A target without a cache level has nothing to tile for.
  target::Target flat = t;
  flat.levels = {t.levels.front(), t.levels.back()};
  EXPECT_TRUE(tile_search_seeds(g, k, base, flat, o).empty());
}

}  // namespace
}  // namespace orchid::tune
