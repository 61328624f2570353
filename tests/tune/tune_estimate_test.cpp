// The analytic cost of a generated CPU kernel under a schedule (src/tune/estimate.h): it sees
// the lowering's grid, its inlined primitives and its vector width, the GEMM micro-kernel at
// full width in register blocks, and the serial reductions of scalar schedules.
#include <gtest/gtest.h>

#include "codegen/cpu/lower.h"
#include "codegen/kernel_graphs.h"
#include "ir/parser.h"
#include "testlib/tile_fixtures.h"
#include "tune/estimate.h"

namespace orchid::tune {
namespace {

constexpr auto whole = testlib::whole_graph_kernel;

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

}  // namespace
}  // namespace orchid::tune
