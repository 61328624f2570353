// The optimal strategy against an exact search: on hundreds of seeded random DAGs of at most
// 8 primitives, with random costs per candidate, the BLP optimum equals a shortest path over
// sets of materialised values (each step one candidate whose reads are present), and every
// plan is valid (plan_problems). The cyclic example of blp.h, at the BLP and on a graph. A
// 600-primitive graph of transformer blocks is partitioned and solved; the sizes and times of
// its largest subgraph are printed (never asserted).
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <map>
#include <queue>
#include <sstream>

#include "ir/parser.h"
#include "orchestrate/optimal.h"
#include "support/random.h"
#include "target/presets.h"
#include "testlib/random_graph.h"

namespace orchid::orchestrate {
namespace {

using tile::Kernel;

uint64_t mix(uint64_t h, uint64_t x) {
  h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 31);
}

// A deterministic random number in [0, 1) per kernel (its nodes and outputs) and seed.
double kernel_random(const Kernel& k, uint64_t seed) {
  uint64_t h = mix(seed, 17);
  for (ir::NodeId n : k.nodes) h = mix(h, static_cast<uint64_t>(n.v));
  h = mix(h, 1000003);
  for (ir::ValueId v : k.outputs) h = mix(h, static_cast<uint64_t>(v.v));
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

// Four kinds of costs: uniform per candidate; a launch cost plus per-node and per-output
// costs with noise (fusion pays, and sometimes recomputation); kernels writing several values
// cheap and kernels of more than two primitives dear (cyclic choices tempt the solver); the roofline of an H100.
CostOracle random_oracle(const ir::Graph& g, uint64_t seed) {
  switch (seed % 4) {
    case 0:
      return [seed](const Kernel& k) { return 1 + 9 * kernel_random(k, seed); };
    case 1:
      return [seed](const Kernel& k) {
        return 3 + static_cast<double>(k.nodes.size()) + 1.5 * static_cast<double>(k.outputs.size()) +
               kernel_random(k, seed);
      };
    case 2:
      return [seed](const Kernel& k) {
        double size = static_cast<double>(k.nodes.size());
        return (k.outputs.size() > 1 ? 1.0 : 4.0) + (size > 2 ? 3 * size : 0.0) + kernel_random(k, seed);
      };
    default:
      return roofline_cost(g, target::cuda_preset("h100"));
  }
}

// The optimum by Dijkstra over sets of materialised values of a graph small enough to be one
// subgraph, over the same candidates the BLP sees: a step runs a candidate whose reads are
// present and whose writes are not (each value has one writer).
double exact_optimum(const ir::Graph& g, const CostOracle& cost, const CandidateOptions& co) {
  std::vector<ir::NodeId> all;
  for (int32_t n = 0; n < g.num_nodes(); ++n) all.push_back(ir::NodeId(n));
  LocalGraph lg = local_graph(g, all);
  EXPECT_LE(lg.values.size(), 64u);
  auto bit = [&](ir::ValueId v) {
    for (size_t k = 0; k < lg.values.size(); ++k)
      if (lg.values[k].id == v) return uint64_t{1} << k;
    return uint64_t{0};
  };
  struct Step {
    uint64_t reads = 0, writes = 0;
    double cost = 0;
  };
  std::vector<Step> steps;
  for (const Candidate& c : enumerate_candidates(lg, execution_states(lg, 1 << 20).states, co).candidates) {
    Step s{0, 0, cost(c.kernel)};
    if (std::isinf(s.cost)) continue;
    for (ir::ValueId v : c.reads) s.reads |= bit(v);
    for (ir::ValueId v : c.kernel.outputs) s.writes |= bit(v);
    steps.push_back(s);
  }
  uint64_t goal = 0;
  for (ir::ValueId v : g.outputs()) goal |= bit(v);
  std::map<uint64_t, double> dist = {{0, 0.0}};
  using Entry = std::pair<double, uint64_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
  queue.push({0.0, 0});
  while (!queue.empty()) {
    auto [d, state] = queue.top();
    queue.pop();
    if (d > dist[state]) continue;
    if ((goal & ~state) == 0) return d;
    for (const Step& s : steps) {
      if ((s.reads & ~state) != 0 || (s.writes & state) != 0) continue;  // one writer per value
      uint64_t next = state | s.writes;
      auto it = dist.find(next);
      if (it == dist.end() || d + s.cost < it->second) {
        dist[next] = d + s.cost;
        queue.push({d + s.cost, next});
      }
    }
  }
  return INFINITY;
}

// A random DAG of elementwise primitives over f32[4] (and Welford moments, which write two
// f32[1] values), each reading one or two of the last three values; unread values and a few
// others are outputs.
ir::Graph random_dag(uint64_t seed) {
  Rng rng(seed);
  int n = static_cast<int>(rng.range(2, 9));
  std::vector<std::string> vec = {"x", "y"}, scalar;
  std::map<std::string, int> reads;
  std::ostringstream os;
  os << "graph @dag {\n  input %x : f32[4]\n  input %y : f32[4]\n";
  std::vector<std::string> produced;
  for (int i = 0; i < n; ++i) {
    auto recent = [&](const std::vector<std::string>& from) {  // one of the last three
      return from[from.size() - 1 - static_cast<size_t>(rng.range(0, std::min<int64_t>(3, static_cast<int64_t>(from.size()))))];
    };
    std::string a = recent(vec);
    std::string name = "n" + std::to_string(i);
    ++reads[a];
    if (rng.coin(0.2)) {
      os << "  %" << name << "m, %" << name << "v : f32[1], f32[1] = reduce welford(%" << a << ") over [4] { %" << a
         << "[r0] }\n";
      scalar.push_back(name + "m"), scalar.push_back(name + "v");
      produced.push_back(name + "m"), produced.push_back(name + "v");
      continue;
    }
    bool two = rng.coin(0.6);
    bool use_scalar = two && !scalar.empty() && rng.coin(0.4);
    std::string b = use_scalar ? recent(scalar) : recent(vec);
    if (two && b == a) two = false;
    os << "  %" << name << " : f32[4] = elementwise(%" << a << (two ? ", %" + b : "") << ") { ";
    if (two) {
      ++reads[b];
      os << "add(%" << a << "[i0], %" << b << (use_scalar ? "[0]" : "[i0]") << ") }\n";
    } else {
      os << "exp(%" << a << "[i0]) }\n";
    }
    vec.push_back(name), produced.push_back(name);
  }
  std::string outs;
  for (const std::string& v : produced)
    if (reads[v] == 0 || rng.coin(0.2)) outs += (outs.empty() ? "%" : ", %") + v;
  os << "  output " << outs << "\n}\n";
  return ir::parse_graph(os.str());
}

struct Tally {
  int graphs = 0, multi_output = 0, redundant = 0, cut_graphs = 0, cycle_cuts = 0;
  int64_t candidates = 0;
};

// orchestrate_optimal on g equals the exact optimum, and its plan is valid.
void expect_optimal(const ir::Graph& g, uint64_t seed, Tally& t) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  CostOracle cost = random_oracle(g, seed);
  OptimalOptions o;
  OptimalResult r = orchestrate_optimal(g, cost, o);
  ASSERT_EQ(r.subgraphs.size(), g.num_nodes() > 0 ? 1u : 0u);
  std::vector<std::string> problems = plan_problems(g, r.kernels);
  EXPECT_TRUE(problems.empty()) << problems.front();
  EXPECT_TRUE(r.optimal);
  double exact = exact_optimum(g, cost, o.candidates);
  EXPECT_NEAR(r.cost, exact, 1e-6 * exact) << "BLP " << r.cost << " exact " << exact;
  std::map<int32_t, int> computed;
  for (const Kernel& k : r.kernels) {
    t.multi_output += k.outputs.size() > 1;
    for (ir::NodeId n : k.nodes) ++computed[n.v];
  }
  for (auto [n, times] : computed) t.redundant += times > 1;
  ++t.graphs;
  if (!r.subgraphs.empty()) {
    t.candidates += r.subgraphs[0].candidates;
    t.cycle_cuts += r.subgraphs[0].cycle_cuts;
    t.cut_graphs += r.subgraphs[0].cycle_cuts > 0;
  }
}

TEST(Optimal, EqualsExactSearchOnRandomGraphs) {
  Tally t;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    testlib::RandomGraphOptions opts;
    opts.max_nodes = 8;
    opts.min_nodes = 1 + static_cast<int>(seed % 4);
    expect_optimal(testlib::random_graph(seed, opts), seed, t);
  }
  for (uint64_t seed = 1000; seed < 1600; ++seed) expect_optimal(random_dag(seed), seed, t);
  std::cout << t.graphs << " graphs, " << t.candidates << " candidates: " << t.multi_output
            << " kernels with several outputs, " << t.redundant << " primitives computed more than once, "
            << t.cycle_cuts << " cycle cuts in " << t.cut_graphs << " graphs\n";
  EXPECT_GE(t.graphs, 900);
  EXPECT_GT(t.multi_output, 0);
  EXPECT_GT(t.redundant, 0);
  EXPECT_GT(t.cycle_cuts, 0);
}

// blp.h's example: edges a1→a2, b1→b2, a1→b2, b1→a2. Values 0..3 are a1, a2, b1, b2.
TEST(Blp, CyclicChoiceIsCut) {
  BlpProblem p;
  p.num_values = 4;
  p.items = {
      {1, {2}, {0, 1}},  // 0: {a1, a2} reads b1, writes a1 and a2
      {1, {0}, {2, 3}},  // 1: {b1, b2} reads a1, writes b1 and b2
      {5, {}, {0}},      // 2: {a1}
      {5, {}, {2}},      // 3: {b1}
      {5, {0, 2}, {1}},  // 4: {a2}
      {5, {0, 2}, {3}},  // 5: {b2}
      {1, {2}, {1}},     // 6: {a1, a2} reads b1, writes a2
  };
  p.required = {1, 3};
  BlpResult r = solve_blp(p, {});
  ASSERT_TRUE(r.feasible);
  EXPECT_TRUE(r.optimal);
  EXPECT_GE(r.rounds, 2);
  EXPECT_EQ(r.cycle_cuts, 1);
  // {a1} first, then {b1, b2}, then {a1, a2} writing a2 (a1 computed twice): 7, not the
  // cyclic 2.
  EXPECT_EQ(r.order, (std::vector<int32_t>{2, 1, 6}));
  EXPECT_DOUBLE_EQ(r.objective, 7);
  EXPECT_TRUE(schedule_items(p, {0, 1}).order.empty());
  EXPECT_EQ(schedule_items(p, {0, 1}).blocked, (std::vector<int32_t>{0, 1}));
}

TEST(Optimal, CyclicExampleOnAGraph) {
  ir::Graph g = ir::parse_graph(R"(graph @cyc {
    input %x : f32[4]
    %a1 : f32[4] = elementwise(%x) { exp(%x[i0]) }
    %b1 : f32[4] = elementwise(%x) { neg(%x[i0]) }
    %a2 : f32[4] = elementwise(%a1, %b1) { add(%a1[i0], %b1[i0]) }
    %b2 : f32[4] = elementwise(%b1, %a1) { mul(%b1[i0], %a1[i0]) }
    output %a2, %b2
  })");
  // Kernels of two primitives are cheap, anything larger dear.
  CostOracle cost = [](const Kernel& k) { return k.nodes.size() == 2 ? 1.0 : k.nodes.size() == 1 ? 5.0 : 100.0; };
  OptimalResult r = orchestrate_optimal(g, cost);
  EXPECT_EQ(plan_problems(g, r.kernels), std::vector<std::string>{});
  ASSERT_EQ(r.subgraphs.size(), 1u);
  EXPECT_GE(r.subgraphs[0].cycle_cuts, 1);
  EXPECT_TRUE(r.optimal);
  EXPECT_DOUBLE_EQ(r.cost, exact_optimum(g, cost, {}));
  EXPECT_DOUBLE_EQ(r.cost, 7);  // e.g. {a1}, {a1 b1 -> b1 ...}: one singleton, two pairs
}

// Candidates from another generator (the superoptimizer's μGraph kernels): LoRA's three
// matmuls and their sum as one kernel, which the one-linear rule never enumerates. The BLP
// takes it where it is cheaper than the kernels it covers, and not where it is dearer; a
// candidate across two subgraphs is left out.
TEST(Optimal, ExtraCandidatesJoinTheBlp) {
  ir::Graph g = ir::parse_graph_file("tests/data/superopt/lora_model.oir");  // LoRA, then a tanh
  Kernel lora{{ir::NodeId{0}, ir::NodeId{1}, ir::NodeId{2}, ir::NodeId{3}}, {*g.find_value("O")}};
  auto has = [](const OptimalResult& r, const Kernel& k) {
    for (const Kernel& c : r.kernels)
      if (c.nodes == k.nodes && c.outputs == k.outputs) return true;
    return false;
  };
  for (double price : {0.5, 50.0}) {
    CostOracle cost = [&](const Kernel& k) {
      if (k.nodes == lora.nodes && k.outputs == lora.outputs) return price;
      return static_cast<double>(k.nodes.size());  // 1 per primitive, so fusing gains nothing
    };
    OptimalOptions o;
    o.extra = {lora};
    OptimalResult r = orchestrate_optimal(g, cost, o);
    EXPECT_EQ(plan_problems(g, r.kernels), std::vector<std::string>{});
    ASSERT_EQ(r.subgraphs.size(), 1u);
    EXPECT_EQ(r.subgraphs[0].extra, 1);
    EXPECT_EQ(r.extra_left_out, 0);
    EXPECT_EQ(has(r, lora), price < 4) << price;
    EXPECT_DOUBLE_EQ(r.cost, price < 4 ? price + 1 : 5);
  }
  // Subgraphs of two primitives: LoRA's kernel spans two.
  OptimalOptions small;
  small.partition.max_nodes = 2;
  small.extra = {lora};
  OptimalResult r = orchestrate_optimal(g, [](const Kernel& k) { return static_cast<double>(k.nodes.size()); }, small);
  EXPECT_EQ(r.extra_left_out, 1);
  EXPECT_FALSE(has(r, lora));
}

// One pre-norm transformer block of 20 primitives, from %h_<k> to %h_<k+1>.
std::string transformer_block(int k) {
  std::string text = R"(
  %mu@, %var@ : f32[16,1], f32[16,1] = reduce welford(%h@) over [32] { %h@[i0, r0] }
  %ln@ : f32[16,32] = elementwise(%h@, %mu@, %var@) { div(sub(%h@[i0, i1], %mu@[i0, 0]), sqrt(add(%var@[i0, 0], 0.00001:f32))) }
  %q@ : f32[16,32] = matmul(%ln@, %wq) {trans_a=false, trans_b=false}
  %k@ : f32[16,32] = matmul(%ln@, %wk) {trans_a=false, trans_b=false}
  %v@ : f32[16,32] = matmul(%ln@, %wv) {trans_a=false, trans_b=false}
  %s@ : f32[16,16] = matmul(%q@, %k@) {trans_a=false, trans_b=true}
  %sc@ : f32[16,16] = elementwise(%s@) { mul(%s@[i0, i1], 0.17:f32) }
  %m@ : f32[16,1] = reduce max(%sc@) over [16] { %sc@[i0, r0] }
  %e@ : f32[16,16] = elementwise(%sc@, %m@) { exp(sub(%sc@[i0, i1], %m@[i0, 0])) }
  %z@ : f32[16,1] = reduce sum(%e@) over [16] { %e@[i0, r0] }
  %p@ : f32[16,16] = elementwise(%e@, %z@) { div(%e@[i0, i1], %z@[i0, 0]) }
  %o@ : f32[16,32] = matmul(%p@, %v@) {trans_a=false, trans_b=false}
  %pr@ : f32[16,32] = matmul(%o@, %wo) {trans_a=false, trans_b=false}
  %r@ : f32[16,32] = elementwise(%h@, %pr@) { add(%h@[i0, i1], %pr@[i0, i1]) }
  %mu2@, %var2@ : f32[16,1], f32[16,1] = reduce welford(%r@) over [32] { %r@[i0, r0] }
  %ln2@ : f32[16,32] = elementwise(%r@, %mu2@, %var2@) { div(sub(%r@[i0, i1], %mu2@[i0, 0]), sqrt(add(%var2@[i0, 0], 0.00001:f32))) }
  %f1@ : f32[16,64] = matmul(%ln2@, %w1) {trans_a=false, trans_b=false}
  %g@ : f32[16,64] = elementwise(%f1@) { max(%f1@[i0, i1], 0:f32) }
  %f2@ : f32[16,32] = matmul(%g@, %w2) {trans_a=false, trans_b=false}
  %h# : f32[16,32] = elementwise(%r@, %f2@) { add(%r@[i0, i1], %f2@[i0, i1]) }
)";
  std::string out;
  for (char c : text) out += c == '@' ? "_" + std::to_string(k) : c == '#' ? "_" + std::to_string(k + 1) : std::string(1, c);
  return out;
}

ir::Graph transformer(int blocks) {
  std::string text = "graph @transformer {\n  input %h_0 : f32[16,32]\n";
  for (const char* w : {"wq", "wk", "wv", "wo"}) text += std::string("  input %") + w + " : f32[32,32]\n";
  text += "  input %w1 : f32[32,64]\n  input %w2 : f32[64,32]\n";
  for (int k = 0; k < blocks; ++k) text += transformer_block(k);
  text += "  output %h_" + std::to_string(blocks) + "\n}\n";
  return ir::parse_graph(text);
}

// A 600-primitive graph is cut into subgraphs of bounded size and solved; prints what the
// largest subgraph took (timings are reported, not asserted).
TEST(Optimal, PartitionsAndSolvesALargeGraph) {
  ir::Graph g = transformer(30);
  ASSERT_EQ(g.num_nodes(), 600);
  OptimalOptions o;
  OptimalResult r = orchestrate_optimal(g, roofline_cost(g, target::cuda_preset("h100")), o);
  EXPECT_EQ(plan_problems(g, r.kernels), std::vector<std::string>{});
  ASSERT_GE(r.subgraphs.size(), 2u);
  EXPECT_EQ(r.cuts.size(), r.subgraphs.size() - 1);
  const SubgraphStats* largest = &r.subgraphs[0];
  for (const SubgraphStats& s : r.subgraphs) {
    EXPECT_LE(s.nodes, o.partition.max_nodes);
    EXPECT_LE(s.states, o.partition.max_states);
    if (s.candidates > largest->candidates) largest = &s;
  }
  EXPECT_LT(r.kernels.size(), 600u);  // fusion pays
  std::cout << "600 primitives: " << r.subgraphs.size() << " subgraphs, " << r.kernels.size() << " kernels, cost "
            << r.cost * 1e6 << " us (bound " << r.bound * 1e6 << " us, " << (r.optimal ? "optimal" : "not proven")
            << "), " << r.seconds << " s in all\nlargest subgraph: " << largest->nodes << " nodes, "
            << largest->states << " states, " << largest->node_sets << " node sets, " << largest->candidates
            << " candidates, " << largest->rows << " rows, " << largest->rounds << " rounds, enumerate "
            << largest->enumerate_seconds << " s, solve " << largest->solve_seconds << " s\n";
  for (const PruneRow& row : r.pruning) std::cout << "  " << row.rule << ": " << row.before << " -> " << row.after << "\n";
}

}  // namespace
}  // namespace orchid::orchestrate
