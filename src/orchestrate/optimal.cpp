// The optimal strategy: partition, candidates, costs, BLP per subgraph (optimal.h).
#include "orchestrate/optimal.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "ir/stats.h"
#include "support/error.h"
#include "target/roofline.h"

namespace orchid::orchestrate {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// A subgraph's priced candidates as BLP items; values are indices into LocalGraph::values.
struct Priced {
  std::vector<Candidate> candidates;  // sorted by (nodes, outputs)
  std::vector<double> costs;
  BlpProblem problem;
};

int32_t local_value(const LocalGraph& lg, ir::ValueId v) {
  auto it = std::lower_bound(lg.values.begin(), lg.values.end(), v,
                             [](const LocalValue& a, ir::ValueId b) { return a.id < b; });
  ORCHID_CHECK(it != lg.values.end() && it->id == v) << "value " << v.v << " is not produced in the subgraph";
  return static_cast<int32_t>(it - lg.values.begin());
}

// One kernel per primitive, each writing all its possible outputs (the candidate of a
// single node with the most outputs), when every node that has candidates has one.
std::vector<int32_t> per_primitive_choice(const Priced& pr, int32_t num_nodes) {
  std::vector<int32_t> best(static_cast<size_t>(num_nodes), -1);
  std::vector<bool> seen(static_cast<size_t>(num_nodes), false);
  for (size_t i = 0; i < pr.candidates.size(); ++i) {
    const NodeSet& s = pr.candidates[i].set;
    for (size_t n = s._Find_first(); n < s.size(); n = s._Find_next(n)) seen[n] = true;
    if (s.count() != 1) continue;
    int32_t& b = best[s._Find_first()];
    if (b < 0 || pr.candidates[i].kernel.outputs.size() > pr.candidates[static_cast<size_t>(b)].kernel.outputs.size())
      b = static_cast<int32_t>(i);
  }
  std::vector<int32_t> out;
  for (int32_t n = 0; n < num_nodes; ++n) {
    if (!seen[static_cast<size_t>(n)]) continue;
    if (best[static_cast<size_t>(n)] < 0) return {};
    out.push_back(best[static_cast<size_t>(n)]);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Priced price(const LocalGraph& lg, const Subgraph& sg, CandidateSet cs, const CostOracle& cost, PruneRow& finite) {
  std::sort(cs.candidates.begin(), cs.candidates.end(), [](const Candidate& a, const Candidate& b) {
    if (a.kernel.nodes != b.kernel.nodes) return a.kernel.nodes < b.kernel.nodes;
    return a.kernel.outputs < b.kernel.outputs;
  });
  Priced pr;
  pr.problem.num_values = static_cast<int32_t>(lg.values.size());
  for (Candidate& c : cs.candidates) {
    ++finite.before;
    double seconds = cost(c.kernel);
    ORCHID_CHECK(!std::isnan(seconds) && seconds >= 0) << "cost oracle gave " << seconds << " seconds";
    if (std::isinf(seconds)) continue;
    ++finite.after;
    BlpItem item{seconds, {}, {}};
    for (ir::ValueId v : c.reads) item.reads.push_back(local_value(lg, v));
    for (ir::ValueId v : c.kernel.outputs) item.writes.push_back(local_value(lg, v));
    pr.problem.items.push_back(std::move(item));
    pr.costs.push_back(seconds);
    pr.candidates.push_back(std::move(c));
  }
  for (ir::ValueId v : sg.required) pr.problem.required.push_back(local_value(lg, v));
  pr.problem.fallback = per_primitive_choice(pr, lg.size());
  return pr;
}

// The extra candidates whose nodes all lie in the subgraph, as candidates of it.
std::vector<Candidate> extra_candidates(const ir::Graph& g, const LocalGraph& lg, const std::vector<tile::Kernel>& extra) {
  std::vector<Candidate> out;
  for (const tile::Kernel& k : extra) {
    Candidate c;
    c.kernel = tile::sorted(k);
    bool inside = !k.nodes.empty();
    for (ir::NodeId n : c.kernel.nodes) {
      auto it = std::lower_bound(lg.nodes.begin(), lg.nodes.end(), n);
      if (it == lg.nodes.end() || *it != n) {
        inside = false;
        break;
      }
      c.set.set(static_cast<size_t>(it - lg.nodes.begin()));
    }
    if (!inside) continue;
    for (ir::ValueId v : tile::kernel_inputs(g, c.kernel)) {
      const ir::Value& val = g.value(v);
      bool local = val.origin == ir::ValueOrigin::Node &&
                   std::binary_search(lg.nodes.begin(), lg.nodes.end(), val.node);
      if (local) c.reads.push_back(v);
    }
    out.push_back(std::move(c));
  }
  return out;
}

struct SubgraphPlan {
  std::vector<tile::Kernel> kernels;
  std::vector<double> costs;
  SubgraphStats stats;
  std::vector<PruneRow> pruning;
};

SubgraphPlan solve_subgraph(const ir::Graph& g, const Subgraph& sg, const CostOracle& cost, const OptimalOptions& o) {
  auto start = std::chrono::steady_clock::now();
  SubgraphPlan plan;
  SubgraphStats& st = plan.stats;
  st.first = sg.nodes.front();
  st.nodes = static_cast<int32_t>(sg.nodes.size());
  LocalGraph lg = local_graph(g, sg.nodes);
  ExecutionStates states = execution_states(lg, o.partition.max_states);
  ORCHID_CHECK(states.complete) << "subgraph at node " << st.first.v << " has more than " << o.partition.max_states
                                << " execution states";
  st.states = static_cast<int64_t>(states.states.size());
  CandidateSet cs = enumerate_candidates(lg, states.states, o.candidates);
  st.node_sets = cs.node_sets;
  plan.pruning = cs.pruning;
  std::vector<Candidate> extra = extra_candidates(g, lg, o.extra);
  st.extra = static_cast<int32_t>(extra.size());
  for (Candidate& c : extra) cs.candidates.push_back(std::move(c));
  PruneRow finite{"finite-cost", "the cost oracle can price the kernel", 0, 0};
  Priced pr = price(lg, sg, std::move(cs), cost, finite);
  plan.pruning.push_back(finite);
  st.candidates = static_cast<int64_t>(pr.candidates.size());
  st.enumerate_seconds = seconds_since(start);
  BlpResult r = solve_blp(pr.problem, o.blp);
  ORCHID_CHECK(r.feasible) << "no orchestration of the subgraph at node " << st.first.v << " (" << st.nodes
                           << " nodes): some required value has no kernel the cost oracle can price";
  for (int32_t i : r.order) {
    plan.kernels.push_back(pr.candidates[static_cast<size_t>(i)].kernel);
    plan.costs.push_back(pr.costs[static_cast<size_t>(i)]);
  }
  st.columns = r.columns, st.rows = r.rows, st.rounds = r.rounds, st.cycle_cuts = r.cycle_cuts;
  st.solver_failures = r.solver_failures;
  st.kernels = static_cast<int32_t>(r.order.size());
  st.cost = r.objective, st.bound = r.bound, st.optimal = r.optimal, st.used_fallback = r.used_fallback;
  st.solve_seconds = r.seconds;
  return plan;
}

}  // namespace

CostOracle roofline_cost(const ir::Graph& g, const target::Target& t, double launch_seconds) {
  return [&g, t, launch_seconds](const tile::Kernel& k) {
    int64_t flops = 0, bytes = 0;
    for (ir::NodeId n : k.nodes) flops += ir::primitive_flops(g.node(n));
    for (ir::ValueId v : tile::kernel_inputs(g, k)) bytes += g.type(v).bytes();
    for (ir::ValueId v : k.outputs) bytes += g.type(v).bytes();
    return launch_seconds + target::roofline_seconds(t, flops, bytes);
  };
}

OptimalResult orchestrate_optimal(const ir::Graph& g, const CostOracle& cost, const OptimalOptions& o) {
  auto start = std::chrono::steady_clock::now();
  OptimalResult res;
  Partition part = partition_graph(g, o.partition);
  res.cuts = std::move(part.cuts);
  res.optimal = true;
  for (const Subgraph& sg : part.subgraphs) {
    SubgraphPlan plan = solve_subgraph(g, sg, cost, o);
    for (size_t k = 0; k < plan.kernels.size(); ++k) {
      res.kernels.push_back(std::move(plan.kernels[k]));
      res.kernel_costs.push_back(plan.costs[k]);
      res.cost += plan.costs[k];
    }
    res.bound += plan.stats.bound;
    res.optimal = res.optimal && plan.stats.optimal;
    add_pruning(res.pruning, plan.pruning);
    res.extra_left_out -= plan.stats.extra;
    res.subgraphs.push_back(plan.stats);
  }
  res.extra_left_out += static_cast<int32_t>(o.extra.size());
  check_plan(g, res.kernels);
  res.seconds = seconds_since(start);
  return res;
}

}  // namespace orchid::orchestrate
