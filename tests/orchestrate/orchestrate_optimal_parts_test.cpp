// The parts of the optimal strategy one by one: execution states and convex sets of small
// graphs counted by hand, the pruning table, the partition's cuts, the plan checker's
// messages, the solver's limits (node limit, rounds, fallback) and determinism.
#include <gtest/gtest.h>

#include <algorithm>

#include "ir/parser.h"
#include "orchestrate/optimal.h"
#include "target/presets.h"
#include "testlib/random_graph.h"

namespace orchid::orchestrate {
namespace {

using tile::Kernel;

std::vector<ir::NodeId> all_nodes(const ir::Graph& g) {
  std::vector<ir::NodeId> all;
  for (int32_t n = 0; n < g.num_nodes(); ++n) all.push_back(ir::NodeId(n));
  return all;
}

const PruneRow& row(const std::vector<PruneRow>& rows, const std::string& rule) {
  for (const PruneRow& r : rows)
    if (r.rule == rule) return r;
  ADD_FAILURE() << "no rule " << rule;
  return rows.front();
}

// a → b, a → c, b → d, c → d.
const char* kDiamond = R"(graph @diamond {
  input %x : f32[4]
  %a : f32[4] = elementwise(%x) { exp(%x[i0]) }
  %b : f32[4] = elementwise(%a) { neg(%a[i0]) }
  %c : f32[4] = elementwise(%a) { abs(%a[i0]) }
  %d : f32[4] = elementwise(%b, %c) { add(%b[i0], %c[i0]) }
  output %d
})";

TEST(States, DiamondHasSixStatesAndTwelveConvexSets) {
  ir::Graph g = ir::parse_graph(kDiamond);
  LocalGraph lg = local_graph(g, all_nodes(g));
  ExecutionStates st = execution_states(lg, 100);
  EXPECT_TRUE(st.complete);
  // {}, {a}, {a,b}, {a,b,c}, {a,b,c,d}, {a,c}: depth-first order.
  ASSERT_EQ(st.states.size(), 6u);
  EXPECT_EQ(st.states[0].to_ulong(), 0u);
  EXPECT_EQ(st.states[1].to_ulong(), 0b0001u);
  EXPECT_EQ(st.states[2].to_ulong(), 0b0011u);
  EXPECT_EQ(st.states[5].to_ulong(), 0b0101u);
  EXPECT_FALSE(execution_states(lg, 3).complete);
  // Convex sets: 4 singletons, ab ac bd cd bc, abc bcd, abcd; bc is not connected.
  CandidateSet cs = enumerate_candidates(lg, st.states, {});
  EXPECT_EQ(row(cs.pruning, "max-primitives").before, 12);
  EXPECT_EQ(row(cs.pruning, "connected").after, 11);
  EXPECT_EQ(cs.node_sets, 11);
  for (const Candidate& c : cs.candidates) {
    // Every output set writes the kernel's sinks; reads are the values entering it.
    EXPECT_FALSE(c.kernel.outputs.empty());
    if (c.set.to_ulong() == 0b0110u) ADD_FAILURE() << "{b, c} is not connected";
    if (c.set.to_ulong() == 0b0111u) {  // {a, b, c}: writes b and c, reads nothing produced
      EXPECT_EQ(c.kernel.outputs.size(), 2u);
      EXPECT_TRUE(c.reads.empty());
    }
  }
}

TEST(States, PruningTableCountsEveryRule) {
  testlib::RandomGraphOptions opts;
  opts.max_nodes = 10;
  ir::Graph g = testlib::random_graph(7, opts);
  LocalGraph lg = local_graph(g, all_nodes(g));
  CandidateSet cs = enumerate_candidates(lg, execution_states(lg, 1 << 20).states, {});
  std::vector<std::string> rules;
  for (const PruneRow& r : cs.pruning) rules.push_back(r.rule);
  EXPECT_EQ(rules, (std::vector<std::string>{"max-primitives", "connected", "opaque-alone", "one-linear", "max-outputs",
                                              "sinks-written"}));
  for (size_t i = 0; i < cs.pruning.size(); ++i) {
    EXPECT_LE(cs.pruning[i].after, cs.pruning[i].before) << cs.pruning[i].rule;
    if (i > 0 && i < 4) {
      EXPECT_EQ(cs.pruning[i].before, cs.pruning[i - 1].after) << cs.pruning[i].rule;
    }
  }
  EXPECT_EQ(row(cs.pruning, "one-linear").after, cs.node_sets);
  EXPECT_EQ(row(cs.pruning, "sinks-written").after, static_cast<int64_t>(cs.candidates.size()));
}

TEST(States, LinearPrimitiveTakesOnlyElementwiseCompany) {
  ir::Graph g = ir::parse_graph(R"(graph @g {
    input %x : f32[8,16]
    input %w : f32[16,4]
    %t : f32[8,16] = elementwise(%x) { exp(%x[i0, i1]) }
    %m : f32[8,4] = matmul(%t, %w) {trans_a=false, trans_b=false}
    %r : f32[8,4] = elementwise(%m) { max(%m[i0, i1], 0:f32) }
    %s : f32[8,1] = reduce sum(%r) over [4] { %r[i0, r0] }
    output %s
  })");
  LocalGraph lg = local_graph(g, all_nodes(g));
  CandidateSet cs = enumerate_candidates(lg, execution_states(lg, 100).states, {});
  // t m r is allowed (prologue and epilogue); anything with m and s is not.
  bool prologue_epilogue = false;
  for (const Candidate& c : cs.candidates) {
    EXPECT_FALSE(c.set.test(1) && c.set.test(3)) << "matmul fused with a reduction";
    prologue_epilogue |= c.set.to_ulong() == 0b0111u;
  }
  EXPECT_TRUE(prologue_epilogue);
}

// A chain of six nodes where two values cross every boundary, then one of four, joined by
// one value (a5).
const char* kTwoChains = R"(graph @g {
  input %x : f32[4]
  %a0 : f32[4] = elementwise(%x) { exp(%x[i0]) }
  %a1 : f32[4] = elementwise(%a0) { exp(%a0[i0]) }
  %a2 : f32[4] = elementwise(%a1, %a0) { add(%a1[i0], %a0[i0]) }
  %a3 : f32[4] = elementwise(%a2, %a1) { add(%a2[i0], %a1[i0]) }
  %a4 : f32[4] = elementwise(%a3, %a2) { add(%a3[i0], %a2[i0]) }
  %a5 : f32[4] = elementwise(%a4, %a3) { add(%a4[i0], %a3[i0]) }
  %b0 : f32[4] = elementwise(%a5) { exp(%a5[i0]) }
  %b1 : f32[4] = elementwise(%b0) { exp(%b0[i0]) }
  %b2 : f32[4] = elementwise(%b1, %b0) { add(%b1[i0], %b0[i0]) }
  %b3 : f32[4] = elementwise(%b2) { exp(%b2[i0]) }
  output %b3, %a4
})";

TEST(Partition, CutsWhereFewestValuesCross) {
  ir::Graph g = ir::parse_graph(kTwoChains);
  Partition p = partition_graph(g, {6, 1000});
  ASSERT_EQ(p.subgraphs.size(), 2u);
  ASSERT_EQ(p.cuts.size(), 1u);
  EXPECT_EQ(p.cuts[0].before, ir::NodeId(6));  // only a5 crosses before b0
  ASSERT_EQ(p.cuts[0].values.size(), 1u);
  EXPECT_EQ(g.value(p.cuts[0].values[0]).name, "a5");
  // The first subgraph must write a4 (a graph output) and a5 (read later).
  std::vector<std::string> required;
  for (ir::ValueId v : p.subgraphs[0].required) required.push_back(g.value(v).name);
  EXPECT_EQ(required, (std::vector<std::string>{"a4", "a5"}));
  EXPECT_EQ(partition_graph(g, {48, 1000}).subgraphs.size(), 1u);
}

// `chains` independent chains of two primitives (exp, then neg) over one input.
ir::Graph wide_chains(int chains) {
  std::string text = "graph @wide {\n  input %x : f32[4]\n";
  std::string outs;
  for (int i = 0; i < chains; ++i) {
    std::string a = "a" + std::to_string(i), b = "b" + std::to_string(i);
    text += "  %" + a + " : f32[4] = elementwise(%x) { exp(%x[i0]) }\n";
    text += "  %" + b + " : f32[4] = elementwise(%" + a + ") { neg(%" + a + "[i0]) }\n";
    outs += (outs.empty() ? "%" : ", %") + b;
  }
  return ir::parse_graph(text + "  output " + outs + "\n}\n");
}

TEST(Partition, StateBudgetSplitsWideRuns) {
  ir::Graph g = wide_chains(8);  // 3^8 states as one run
  Partition p = partition_graph(g, {48, 100});
  EXPECT_GT(p.subgraphs.size(), 1u);
  for (const Subgraph& sg : p.subgraphs)
    EXPECT_TRUE(execution_states(local_graph(g, sg.nodes), 100).complete);
  OptimalOptions o;
  o.partition.max_states = 100;
  OptimalResult r = orchestrate_optimal(g, roofline_cost(g, target::cuda_preset("a100")), o);
  EXPECT_EQ(r.kernels.size(), 8u);  // each chain one kernel
}

std::vector<std::string> problems(const char* text, const std::vector<Kernel>& ks) {
  return plan_problems(ir::parse_graph(text), ks);
}

Kernel kernel(std::vector<int32_t> nodes, std::vector<int32_t> outputs) {
  Kernel k;
  for (int32_t n : nodes) k.nodes.push_back(ir::NodeId(n));
  for (int32_t v : outputs) k.outputs.push_back(ir::ValueId(v));
  return k;
}

TEST(PlanCheck, AcceptsRecomputationAndNamesEachProblem) {
  // Values: x 0, a 1, b 2, c 3, d 4.
  EXPECT_EQ(problems(kDiamond, {kernel({0, 1}, {2}), kernel({0, 2}, {3}), kernel({3}, {4})}),
            std::vector<std::string>{});  // a computed twice
  EXPECT_EQ(problems(kDiamond, {kernel({0, 3}, {4})}),
            (std::vector<std::string>{"kernel 0 is not convex: a path leaves it and re-enters at node 3 through node 1",
                                      "kernel 0 reads %b, which no earlier kernel writes",
                                      "kernel 0 reads %c, which no earlier kernel writes"}));
  EXPECT_EQ(problems(kDiamond, {kernel({1, 2, 3}, {4}), kernel({0}, {1})}),
            (std::vector<std::string>{"kernel 0 reads %a, which no earlier kernel writes"}));
  EXPECT_EQ(problems(kDiamond, {kernel({0}, {1}), kernel({0, 1}, {1, 2}), kernel({2, 3}, {4})}),
            (std::vector<std::string>{"kernel 1 writes %a, which kernel 0 writes already"}));
  EXPECT_EQ(problems(kDiamond, {kernel({0, 1, 2}, {2, 3})}),
            (std::vector<std::string>{"graph output %d is written by no kernel"}));
  EXPECT_EQ(problems(kDiamond, {kernel({}, {}), kernel({0, 1, 2, 3}, {1, 4})}),
            (std::vector<std::string>{"kernel 0 has no nodes"}));
  EXPECT_EQ(problems(kDiamond, {kernel({0, 1, 2, 3}, {0, 4, 4})}),
            (std::vector<std::string>{"kernel 0 outputs value 0, which none of its nodes computes",
                                      "kernel 0 lists output %d twice"}));
}

// The BLP of blp.h's cyclic example (see orchestrate_optimal_test.cpp).
BlpProblem cyclic_problem() {
  BlpProblem p;
  p.num_values = 4;
  p.items = {{1, {2}, {0, 1}}, {1, {0}, {2, 3}}, {5, {}, {0}}, {5, {}, {2}}, {5, {0, 2}, {1}}, {5, {0, 2}, {3}}};
  p.required = {1, 3};
  p.fallback = {2, 3, 4, 5};
  return p;
}

TEST(Blp, FallbackWhenRoundsRunOut) {
  BlpOptions o;
  o.max_rounds = 1;  // the first choice is cyclic, and no round is left
  BlpResult r = solve_blp(cyclic_problem(), o);
  ASSERT_TRUE(r.feasible);
  EXPECT_TRUE(r.used_fallback);
  EXPECT_FALSE(r.optimal);
  EXPECT_EQ(r.order, (std::vector<int32_t>{2, 3, 4, 5}));
  EXPECT_DOUBLE_EQ(r.objective, 20);
  EXPECT_LE(r.bound, r.objective);
  EXPECT_EQ(r.cycle_cuts, 1);
}

TEST(Blp, ItemsThatCanNeverRunAreRemoved) {
  BlpProblem p;
  p.num_values = 3;
  p.items = {{1, {2}, {0}}, {1, {0}, {2}}, {3, {}, {0}}, {9, {1}, {0}}};  // 3 reads 1, never written
  p.required = {0};
  EXPECT_EQ(runnable_items(p), (std::vector<int32_t>{0, 1, 2}));  // 0 and 1 once 2 ran
  BlpResult r = solve_blp(p, {});
  EXPECT_EQ(r.columns, 3);
  EXPECT_EQ(r.order, (std::vector<int32_t>{2}));
  EXPECT_TRUE(r.optimal);
  p.required = {1};  // nothing writes value 1
  EXPECT_FALSE(solve_blp(p, {}).feasible);
}

TEST(Optimal, SameGraphSamePlanOnAnyJobsAndNodeLimitReportsABound) {
  testlib::RandomGraphOptions opts;
  opts.max_nodes = 40;
  opts.min_nodes = 30;
  for (uint64_t seed = 0; seed < 6; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    ir::Graph g = testlib::random_graph(seed, opts);
    CostOracle cost = roofline_cost(g, target::cuda_preset("h200"));
    OptimalOptions o, one_job, four_jobs;
    o.partition.max_states = 64;  // several subgraphs, solved at once
    one_job.partition.max_states = four_jobs.partition.max_states = 64;
    one_job.solve_jobs = 1, four_jobs.solve_jobs = 4;
    OptimalResult a = orchestrate_optimal(g, cost, one_job), b = orchestrate_optimal(g, cost, four_jobs);
    EXPECT_GT(a.subgraphs.size(), 1u);
    ASSERT_EQ(a.kernels.size(), b.kernels.size());
    for (size_t k = 0; k < a.kernels.size(); ++k) {
      EXPECT_EQ(a.kernels[k].nodes, b.kernels[k].nodes);
      EXPECT_EQ(a.kernels[k].outputs, b.kernels[k].outputs);
    }
    o.blp.max_nodes = 0;  // the root node only: a plan and a bound, maybe not proven
    OptimalResult c = orchestrate_optimal(g, cost, o);
    EXPECT_EQ(plan_problems(g, c.kernels), std::vector<std::string>{});
    EXPECT_GE(c.cost, a.cost * (1 - 1e-9));
    EXPECT_LE(c.bound, a.cost * (1 + 1e-9));
    EXPECT_GE(c.gap(), 0);
  }
}

// OptimalSolver: each solve equals orchestrate_optimal under its oracle; a BLP met before (the
// same subgraph at the same prices, or a chain numbered like another) is not solved again;
// every candidate lies in the subgraph subgraph_of names.
TEST(Optimal, SolverSolvesEachProblemOnce) {
  ir::Graph g = wide_chains(24);
  OptimalOptions o;
  o.partition.max_states = 100;
  OptimalSolver solver(g, o);
  size_t n = solver.partition().subgraphs.size();
  ASSERT_GT(n, 2u);
  CostOracle fused = roofline_cost(g, target::cuda_preset("a100"));
  OptimalResult a = solver.solve(fused);
  OptimalResult ref = orchestrate_optimal(g, fused, o);
  ASSERT_EQ(a.kernels.size(), ref.kernels.size());
  for (size_t k = 0; k < a.kernels.size(); ++k) EXPECT_EQ(a.kernels[k].nodes, ref.kernels[k].nodes);
  for (const Kernel& k : a.kernels) {
    int32_t s = solver.subgraph_of(k);
    ASSERT_GE(s, 0);
    const std::vector<ir::NodeId>& nodes = solver.partition().subgraphs[static_cast<size_t>(s)].nodes;
    for (ir::NodeId v : k.nodes) EXPECT_TRUE(std::binary_search(nodes.begin(), nodes.end(), v));
  }
  EXPECT_EQ(solver.subgraph_of(Kernel{}), -1);
  // The middle subgraphs hold the same chains at the same prices: solved once.
  EXPECT_FALSE(a.subgraphs[0].solved_before);
  int again = 0;
  for (const SubgraphStats& s : a.subgraphs) again += s.solved_before;
  EXPECT_GT(again, 0);
  // Kernels of one primitive cost 1, of two 100: one kernel per primitive is then cheaper;
  // in the first subgraph only, so that the others are solved before.
  int32_t first_end = solver.partition().subgraphs[0].nodes.back().v;
  CostOracle split = [&](const Kernel& k) {
    if (k.nodes.front().v > first_end) return fused(k);
    return k.nodes.size() == 1 ? 1.0 : 100.0;
  };
  OptimalResult b = solver.solve(split);
  EXPECT_EQ(plan_problems(g, b.kernels), std::vector<std::string>{});
  EXPECT_FALSE(b.subgraphs[0].solved_before);
  EXPECT_EQ(b.subgraphs[0].kernels, 2 * a.subgraphs[0].kernels);  // split under the new prices
  for (size_t s = 1; s < n; ++s) {
    EXPECT_TRUE(b.subgraphs[s].solved_before);
    EXPECT_EQ(b.subgraphs[s].kernels, a.subgraphs[s].kernels);
  }
  // Where no solve runs (no round left), each subgraph takes the fallback plan given, else
  // one kernel per primitive.
  OptimalOptions none = o;
  none.blp.max_rounds = 0;
  OptimalSolver unsolved(g, none);
  std::vector<std::vector<Kernel>> fallbacks(n);
  for (size_t s = 0, next = 0; s < n; ++s)
    for (int32_t k = 0; k < a.subgraphs[s].kernels; ++k) fallbacks[s].push_back(a.kernels[next++]);
  OptimalResult given = unsolved.solve(fused, fallbacks);
  ASSERT_EQ(given.kernels.size(), a.kernels.size());
  for (size_t k = 0; k < a.kernels.size(); ++k) EXPECT_EQ(given.kernels[k].nodes, a.kernels[k].nodes);
  for (const SubgraphStats& s : given.subgraphs) EXPECT_TRUE(s.used_fallback);
  EXPECT_EQ(unsolved.solve(fused).kernels.size(), 2 * a.kernels.size());
}

}  // namespace
}  // namespace orchid::orchestrate
