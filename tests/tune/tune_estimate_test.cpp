// The analytic cost of a generated CPU kernel under a schedule (src/tune/estimate.h): it sees
// the lowering's grid, its inlined primitives and its vector width, the GEMM micro-kernel at
// full width, and the serial reductions of scalar schedules.
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

TEST(TuneEstimate, ScalarLoopsCostMoreExceptInTheGemmMicroKernel) {
  ir::Graph g = ir::parse_graph(codegen::softmax_rows(64, 320));  // rows of whole vectors
  tile::Kernel k = whole(g);
  codegen::cpu::Schedule wide = codegen::cpu::default_schedule(g, k, 2), scalar = wide;
  wide.vector_width = 16;
  scalar.vector_width = 1;
  // Sixteen times the slots, and the reductions, folded into one accumulator, wait on each fold.
  tile::CostConfig sc = cpu_cost_config(g, k, scalar);
  EXPECT_EQ(sc.serial.size(), 2u);  // max and sum
  EXPECT_TRUE(cpu_cost_config(g, k, wide).serial.empty());
  EXPECT_GT(estimate_cpu_schedule(g, k, scalar, toy()).compute_seconds,
            16 * estimate_cpu_schedule(g, k, wide, toy()).compute_seconds);

  ir::Graph mm = ir::parse_graph(codegen::gemm_graph(1, 64, 64, 64, false, false, false));
  tile::Kernel mk = whole(mm);
  codegen::cpu::Schedule mwide = codegen::cpu::default_schedule(mm, mk, 2), mscalar = mwide;
  mscalar.vector_width = 1;
  tile::Estimate a = estimate_cpu_schedule(mm, mk, mwide, toy()), b = estimate_cpu_schedule(mm, mk, mscalar, toy());
  EXPECT_EQ(cpu_cost_config(mm, mk, mwide).full_width.size(), 1u);  // the matmul, in 6 × 16 blocks
  EXPECT_EQ(cpu_cost_config(mm, mk, mwide).blocks.size(), 1u);
  // Only the epilogue's FLOPs (bias and relu: 2 per element) slow down.
  EXPECT_EQ(b.narrow_work, 2 * 64 * 64);
  EXPECT_NEAR(b.compute_seconds - a.compute_seconds, 2.0 * 64 * 64 * (16 - 1) / 0.5e6, 1e-9);
}

}  // namespace
}  // namespace orchid::tune
