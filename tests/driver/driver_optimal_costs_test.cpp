// The optimal orchestration's first-pass costs (driver/optimal_costs.h, analytic_cost):
// generated kernels priced by the tile-graph model under their default schedule, kernels a
// library may run by the roofline bound; without measuring, these costs decide the plan, also
// of a model-sized graph.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <cmath>
#include <map>
#include <string>
#include <iostream>

#include "codegen/cpu/schedule.h"
#include "codegen/kernel_graphs.h"
#include "driver/optimal_costs.h"
#include "driver/plan_decision.h"
#include "ir/parser.h"
#include "orchestrate/optimal.h"
#include "orchestrate/strategies.h"
#include "testlib/random_graph.h"
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

// Calibration: a class's ratio is the median measured/analytic seen; other classes keep 1; a
// failed measurement (infinite) teaches nothing.
TEST(OptimalCosts, CalibrationScalesByTheMedianRatioOfTheClass) {
  CostCalibration c;
  EXPECT_EQ(c.scale("generated conv"), 1.0);
  c.observe("generated conv", 1e-3, 20e-3);
  EXPECT_DOUBLE_EQ(c.scale("generated conv"), 20.0);
  c.observe("generated conv", 2e-3, 10e-3);
  EXPECT_DOUBLE_EQ(c.scale("generated conv"), 12.5);  // of 5 and 20
  c.observe("generated conv", 1e-3, 30e-3);
  c.observe("onednn conv", 1e-3, 1.25e-3);
  c.observe("onednn matmul", 1e-3, INFINITY);
  EXPECT_DOUBLE_EQ(c.scale("generated conv"), 20.0);
  EXPECT_DOUBLE_EQ(c.scale("onednn conv"), 1.25);
  EXPECT_EQ(c.scale("onednn matmul"), 1.0);
  EXPECT_EQ(c.describe(), "generated conv ×20 (3), onednn conv ×1.25 (1)");
}

// Settling: a subgraph settles once its plan at the solve's prices promises less than the gain
// over its cheapest measured plan, or after `patience` rounds without a plan a quarter of the
// gain cheaper; a failed kernel (infinite) measures nothing cheaper, and a subgraph without a
// plan that ran never settles.
TEST(OptimalCosts, SubgraphsSettleWhereTheirPlansPromiseLessThanTheGain) {
  auto node_kernel = [](int32_t n) {
    tile::Kernel k;
    k.nodes = {ir::NodeId(n)};
    return k;
  };
  orchestrate::OptimalResult r;
  r.kernels = {node_kernel(0), node_kernel(1), node_kernel(2)};
  r.subgraphs.resize(2);
  r.subgraphs[0].kernels = 1, r.subgraphs[0].cost = 1.0;
  r.subgraphs[1].kernels = 2, r.subgraphs[1].cost = 1.0;
  r.cost = 2.0;
  std::map<int32_t, double> times = {{0, 1.01}, {1, 0.8}, {2, 0.5}};
  auto seconds = [&](const tile::Kernel& k) { return times.at(k.nodes.front().v); };
  SettledSubgraphs s(2, 0.02, 2);
  EXPECT_FALSE(s.settled(0));
  EXPECT_FALSE(s.settled(-1));
  s.observe(r, seconds);
  EXPECT_TRUE(s.settled(0));   // 1.0 promised against 1.01 measured: under 2 %
  EXPECT_FALSE(s.settled(1));  // 1.0 against 1.3
  EXPECT_FALSE(s.all());
  EXPECT_NEAR(s.best_seconds(), 2.31, 1e-12);
  ASSERT_EQ(s.best_plans().size(), 2u);
  EXPECT_EQ(s.best_plans()[0].size(), 1u);  // kernel 0
  ASSERT_EQ(s.best_plans()[1].size(), 2u);  // kernels 1 and 2
  EXPECT_EQ(s.best_plans()[1][1].nodes, std::vector<ir::NodeId>{ir::NodeId(2)});
  EXPECT_EQ(s.round_line(1, 3, r),
            "round 1: 3 kernels measured; the plan at its prices 2000.0000 ms, the cheapest measured 2310.0000 ms; "
            "1 of 2 subgraphs settled");

  r.subgraphs[1].cost = 1.25;  // promises 1.25 against 1.3 (and measures 1.28): over 2 % of 1.28
  times = {{0, 1.01}, {1, 0.78}, {2, 0.5}};
  s.observe(r, seconds);
  EXPECT_FALSE(s.settled(1));
  EXPECT_NEAR(s.best_seconds(), 2.29, 1e-12);
  times[2] = INFINITY;  // a failed kernel: the best stays
  r.subgraphs[1].cost = 1.26;
  s.observe(r, seconds);
  EXPECT_TRUE(s.settled(1));  // 1.26 against 1.28
  EXPECT_NEAR(s.best_seconds(), 2.29, 1e-12);
  EXPECT_TRUE(s.all());
  SettledSubgraphs t(1, 0.02, 2);
  EXPECT_FALSE(t.settle_all());  // nothing measured
  times = {{0, INFINITY}};
  orchestrate::OptimalResult failed;
  failed.kernels = {node_kernel(0)};
  failed.subgraphs.resize(1);
  failed.subgraphs[0].kernels = 1;
  for (int round = 0; round < 3; ++round) t.observe(failed, seconds);
  EXPECT_FALSE(t.settled(0));  // stale, but with no plan that ran
  EXPECT_FALSE(t.settle_all());
  times = {{0, 2.0}};
  t.observe(failed, seconds);
  EXPECT_FALSE(t.settled(0));  // the first plan that ran: cheaper, and 0 promised against 2
  failed.subgraphs[0].cost = 1.99;
  t.observe(failed, seconds);
  EXPECT_TRUE(t.settled(0));
  EXPECT_TRUE(t.settle_all());

  // One subgraph whose plan always promises half its measured time: 1.0, then 0.999 and 0.998
  // measured, neither 0.5 % cheaper.
  orchestrate::OptimalResult one;
  one.kernels = {node_kernel(0)};
  one.subgraphs.resize(1);
  one.subgraphs[0].kernels = 1, one.subgraphs[0].cost = 0.4;
  SettledSubgraphs u(1, 0.02, 2);
  for (double m : {1.0, 0.999}) {
    times = {{0, m}};
    u.observe(one, seconds);
    EXPECT_FALSE(u.settled(0)) << m;
  }
  times = {{0, 0.998}};
  u.observe(one, seconds);
  EXPECT_TRUE(u.settled(0));
  EXPECT_DOUBLE_EQ(u.best_seconds(), 0.998);
}

// The classes: how implement() runs the kernel and its linear primitive's op.
TEST(OptimalCosts, CostClassesFollowTheImplementation) {
  ir::Graph soft = ir::parse_graph(codegen::softmax_rows(64, 100));
  EXPECT_EQ(cost_class(soft, whole(soft)), "generated");
  ir::Graph mm = ir::parse_graph(codegen::gemm_graph(1, 64, 64, 64, false, false, false));
  // The bias and relu in one elementwise body are no oneDNN post-op: a generated step after it.
  EXPECT_EQ(cost_class(mm, whole(mm)), "onednn+generated matmul");
}

// Blocks of a transformer's MLP half over [197, 384] tokens: layernorm, a matmul with a bias
// and GELU, a matmul back, the residual.
std::string mlp_blocks(int blocks) {
  std::string t = "graph @mlp {\n  input %h0 : f32[197,384]\n  input %w1 : f32[384,1536]\n  input %w2 : f32[1536,384]\n"
                  "  input %b1 : f32[1536]\n";
  for (int i = 0; i < blocks; ++i) {
    std::string k = std::to_string(i), n = std::to_string(i + 1);
    t += "  %m" + k + ", %v" + k + " : f32[197,1], f32[197,1] = reduce welford(%h" + k + ") over [384] { %h" + k + "[i0, r0] }\n";
    t += "  %n" + k + " : f32[197,384] = elementwise(%h" + k + ", %m" + k + ", %v" + k + ") { div(sub(%h" + k +
         "[i0, i1], %m" + k + "[i0, 0]), sqrt(add(%v" + k + "[i0, 0], 1e-05:f32))) }\n";
    t += "  %a" + k + " : f32[197,1536] = matmul(%n" + k + ", %w1) {trans_a=false, trans_b=false}\n";
    t += "  %g" + k + " : f32[197,1536] = elementwise(%a" + k + ", %b1) { mul(add(%a" + k + "[i0, i1], %b1[i1]), "
         "sigmoid(mul(add(%a" + k + "[i0, i1], %b1[i1]), 1.702:f32))) }\n";
    t += "  %c" + k + " : f32[197,384] = matmul(%g" + k + ", %w2) {trans_a=false, trans_b=false}\n";
    t += "  %h" + n + " : f32[197,384] = elementwise(%c" + k + ", %h" + k + ") { add(%c" + k + "[i0, i1], %h" + k + "[i0, i1]) }\n";
  }
  return t + "  output %h" + std::to_string(blocks) + "\n}\n";
}

// The report's comparison of two plans: one line per place where they cut the graph
// differently, the places where the first plan gains most first.
TEST(OptimalCosts, PlanDifferencesPairTheKernelsOfEachPlace) {
  ir::Graph g = ir::parse_graph(mlp_blocks(2));
  std::vector<tile::Kernel> alone = orchestrate::orchestrate(g, orchestrate::Strategy::Primitive);
  ASSERT_EQ(alone.size(), 12u);
  // Block 0's layernorm (its two primitives) in one kernel, block 1's matmul, GELU and matmul
  // in another; the rest as in `alone`.
  std::vector<tile::Kernel> fused;
  auto join = [&](size_t first, size_t count) {
    tile::Kernel k;
    for (size_t i = first; i < first + count; ++i) k.nodes.insert(k.nodes.end(), alone[i].nodes.begin(), alone[i].nodes.end());
    k.outputs = alone[first + count - 1].outputs;
    fused.push_back(k);
  };
  join(0, 2);
  for (size_t i = 2; i < 8; ++i) fused.push_back(alone[i]);
  join(8, 3);
  fused.push_back(alone[11]);
  // Seconds: a kernel of n primitives costs 1 ms per primitive less 0.4 ms per extra one.
  auto seconds = [](const tile::Kernel& k) { return (1.0 - 0.4 * static_cast<double>(k.nodes.size() - 1) / static_cast<double>(k.nodes.size())) * static_cast<double>(k.nodes.size()) * 1e-3; };
  std::vector<std::string> lines = plan_differences(g, fused, alone, seconds);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "the plans differ in 2 places (optimal's kernels against greedy's):");
  // The three-primitive kernel gains 0.8 ms, the two-primitive one 0.4 ms: that order.
  EXPECT_NE(lines[1].find(" 2.2000 ms; greedy "), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find(" 3.0000 ms"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find(" 1.6000 ms; greedy "), std::string::npos) << lines[2];
  EXPECT_EQ(plan_differences(g, alone, alone, seconds), std::vector<std::string>{"the plans differ in 0 places"});
  for (const std::string& l : lines) std::cout << l << "\n";
}

// Every candidate of a 120-primitive graph priced by the model: the plan is valid (how long
// pricing and solving took is printed, not asserted).
TEST(OptimalCosts, PricesEveryCandidateOfAModelSizedGraph) {
  ir::Graph g = ir::parse_graph(mlp_blocks(20));
  ASSERT_EQ(g.num_nodes(), 120);
  auto start = std::chrono::steady_clock::now();
  OptimalPlan p = orchestrate_measured(g, toy(), BuildOptions{}, MeasureOptions{});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(orchestrate::plan_problems(g, p.kernels), std::vector<std::string>{});
  EXPECT_LT(p.kernels.size(), 120u);
  std::cout << "120 primitives: " << p.kernels.size() << " kernels in " << seconds << " s\n";
}

// Every candidate of random graphs (every primitive kind, odd shapes, dtypes, views, opaque
// routines) is priced without error, and the plans are valid.
TEST(OptimalCosts, PricesEveryCandidateOfRandomGraphs) {
  for (uint64_t seed = 0; seed < 150; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    ir::Graph g = testlib::random_graph(seed);
    OptimalPlan p = orchestrate_measured(g, toy(), BuildOptions{}, MeasureOptions{});
    EXPECT_EQ(orchestrate::plan_problems(g, p.kernels), std::vector<std::string>{});
  }
}

// The analytic oracle estimates kernels alike once: every candidate of repeated blocks and of
// random graphs (gathers with constant indices among them) is priced exactly as the tile-graph
// model prices it alone.
TEST(OptimalCosts, KernelsAlikeAreEstimatedOnceAtTheModelsPrice) {
  // Two gathers alike but for their constant indices: rows 0 to 3, or rows 0 to 63.
  ir::Graph gathers = ir::parse_graph(R"(
graph @gathers {
  input %x : f32[64,256]
  const %near : i64[4] = [0, 1, 2, 3]
  const %far : i64[4] = [0, 21, 42, 63]
  %ga : f32[4,256] = layout(%x, %near) { %x[%near[i0], i1] }
  %ea : f32[4,256] = elementwise(%ga) { exp(%ga[i0, i1]) }
  %gb : f32[4,256] = layout(%x, %far) { %x[%far[i0], i1] }
  %eb : f32[4,256] = elementwise(%gb) { exp(%gb[i0, i1]) }
  output %ea, %eb
})");
  std::vector<ir::Graph> graphs = {ir::parse_graph(mlp_blocks(3)), gathers};
  for (uint64_t seed = 0; seed < 40; ++seed) graphs.push_back(testlib::random_graph(seed));
  for (const ir::Graph& g : graphs) {
    orchestrate::CostOracle cached = analytic_cost(g, toy(), 2, 1e-6);
    orchestrate::CostOracle roofline = orchestrate::roofline_cost(g, toy(), 1e-6);
    int priced = 0;
    orchestrate::CostOracle checked = [&](const tile::Kernel& k) {
      double a = cached(k);
      bool library = false;
      for (ir::NodeId n : k.nodes)
        library = library || g.node(n).kind() == ir::PrimKind::Linear || g.node(n).kind() == ir::PrimKind::Opaque;
      double alone = library ? roofline(k)
                             : 1e-6 + tune::estimate_cpu_schedule(g, k, codegen::cpu::default_schedule(g, k, 2), toy()).seconds;
      EXPECT_DOUBLE_EQ(a, alone) << g.name;
      ++priced;
      return a;
    };
    orchestrate::orchestrate_optimal(g, checked);
    EXPECT_GT(priced, 0);
  }
}

// The plan kept, as the tuning database stores it: read back into the same kernels; text
// that does not parse, or names a plan that is not one of this graph, is no decision. The key
// follows the graph, the sites offered, tuning and the round limit.
TEST(PlanDecision, ReadsBackAPlanOfTheGraphAndNothingElse) {
  ir::Graph g = ir::parse_graph(codegen::softmax_rows(64, 100));
  std::vector<tile::Kernel> plan = orchestrate::orchestrate(g, orchestrate::Strategy::PerOp);
  ASSERT_GT(plan.size(), 1u);
  std::string text = plan_decision_text({plan, true, 0.5});
  std::optional<PlanDecision> back = parse_plan_decision(g, text, 0.25);
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->greedy_kept);
  EXPECT_EQ(back->measured_seconds, 0.25);
  ASSERT_EQ(back->kernels.size(), plan.size());
  for (size_t i = 0; i < plan.size(); ++i) {
    EXPECT_EQ(back->kernels[i].nodes, plan[i].nodes);
    EXPECT_EQ(back->kernels[i].outputs, plan[i].outputs);
  }
  EXPECT_EQ(back->untimed_below, 0);
  // Kept without timing whole: the lesser sum read back exactly.
  PlanDecision untimed{plan, true, 0.5, 0.1 + 0.2};
  std::optional<PlanDecision> u = parse_plan_decision(g, plan_decision_text(untimed), 0.5);
  ASSERT_TRUE(u);
  EXPECT_TRUE(u->greedy_kept);
  EXPECT_EQ(u->untimed_below, 0.1 + 0.2);
  EXPECT_FALSE(parse_plan_decision(g, "greedy untimed x;0|1", 0));           // not a number
  EXPECT_FALSE(parse_plan_decision(g, "greedy untimed 0;0|1", 0));           // not positive
  EXPECT_FALSE(parse_plan_decision(g, "optimal", 0));                        // no kernel
  EXPECT_FALSE(parse_plan_decision(g, "fastest;0|1", 0));                    // no such head
  EXPECT_FALSE(parse_plan_decision(g, "optimal;0,x|1", 0));                  // not a number
  EXPECT_FALSE(parse_plan_decision(g, "optimal;" + std::to_string(g.num_nodes()) + "|1", 0));  // no such node
  std::vector<tile::Kernel> reversed(plan.rbegin(), plan.rend());           // reads before writes
  EXPECT_FALSE(parse_plan_decision(g, plan_decision_text({reversed, false, 0}), 0));
  ir::Graph other = ir::parse_graph(codegen::softmax_rows(64, 101));
  BuildOptions build;
  MeasureOptions measure;
  std::string key = plan_decision_key(g, {}, build, measure, 12);
  EXPECT_EQ(key, plan_decision_key(ir::parse_graph(codegen::softmax_rows(64, 100)), {}, build, measure, 12));
  EXPECT_NE(key, plan_decision_key(other, {}, build, measure, 12));
  EXPECT_NE(key, plan_decision_key(g, {plan[0]}, build, measure, 12));
  EXPECT_NE(key, plan_decision_key(g, {}, build, measure, 3));
  MeasureOptions flushed = measure;
  flushed.flush_bytes = 1 << 22;
  EXPECT_NE(key, plan_decision_key(g, {}, build, flushed, 12));
  BuildOptions plain = build;
  plain.layouts = false;
  EXPECT_NE(key, plan_decision_key(g, {}, plain, measure, 12));
  for (auto change : std::vector<std::function<void(MeasureOptions&)>>{
           [](MeasureOptions& m) { m.tuned = true; }, [](MeasureOptions& m) { m.threads = 3; },
           [](MeasureOptions& m) { m.min_seconds *= 2; }, [](MeasureOptions& m) { m.min_runs += 1; },
           [](MeasureOptions& m) { m.rounds += 1; }}) {
    MeasureOptions other_measure = measure;
    change(other_measure);
    EXPECT_NE(key, plan_decision_key(g, {}, build, other_measure, 12));
  }
}

}  // namespace
}  // namespace orchid::driver
