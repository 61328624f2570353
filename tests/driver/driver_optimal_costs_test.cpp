// The optimal orchestration's first-pass costs (driver/optimal_costs.h, analytic_cost):
// generated kernels priced by the tile-graph model under their default schedule, kernels a
// library may run by the roofline bound; without measuring, these costs decide the plan.
#include <gtest/gtest.h>

#include <cmath>

#include "codegen/cpu/schedule.h"
#include "codegen/kernel_graphs.h"
#include "driver/optimal_costs.h"
#include "ir/parser.h"
#include "orchestrate/optimal.h"
#include "testlib/tile_fixtures.h"
#include "tune/estimate.h"

namespace orchid::driver {
namespace {

target::Target toy() { return testlib::toy_cpu_target(); }
constexpr auto whole = testlib::whole_graph_kernel;

TEST(OptimalCosts, GeneratedKernelsArePricedByTheTileModelAndLibraryOnesByTheRoofline) {
  ir::Graph soft = ir::parse_graph(codegen::softmax_rows(256, 300));
  tile::Kernel k = whole(soft);
  double tile_model = tune::estimate_cpu_schedule(soft, k, codegen::cpu::default_schedule(soft, k, 2), toy()).seconds;
  EXPECT_DOUBLE_EQ(analytic_cost(soft, toy(), 2, 1e-6)(k), 1e-6 + tile_model);

  ir::Graph mm = ir::parse_graph(codegen::gemm_graph(1, 64, 64, 64, false, false, false));
  tile::Kernel mk = whole(mm);
  EXPECT_DOUBLE_EQ(analytic_cost(mm, toy(), 2, 1e-6)(mk), orchestrate::roofline_cost(mm, toy(), 1e-6)(mk));
}

TEST(OptimalCosts, WithoutMeasuringTheTileModelChoosesAFusedSoftmax) {
  ir::Graph g = ir::parse_graph(codegen::softmax_rows(512, 1000));
  OptimalPlan p = orchestrate_measured(g, toy(), BuildOptions{}, MeasureOptions{});
  EXPECT_EQ(p.measured, 0);
  ASSERT_EQ(p.kernels.size(), 1u);  // four kernels would write and read back three values
  EXPECT_EQ(p.kernels[0].nodes.size(), 4u);
  EXPECT_TRUE(std::isfinite(p.last.cost));
}

}  // namespace
}  // namespace orchid::driver
