// The optimal strategy: partition, candidates, costs, BLP per subgraph (optimal.h).
#include "orchestrate/optimal.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <set>

#include "ir/stats.h"
#include "orchestrate/chains.h"
#include "support/error.h"
#include "support/parallel.h"
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

// The order of a subgraph's candidates: by nodes, then outputs.
bool kernel_before(const tile::Kernel& a, const tile::Kernel& b) {
  if (a.nodes != b.nodes) return a.nodes < b.nodes;
  return a.outputs < b.outputs;
}

// `cs`: in kernel_before's order.
Priced price(const LocalGraph& lg, const Subgraph& sg, const CandidateSet& cs, const CostOracle& cost, PruneRow& finite) {
  Priced pr;
  pr.problem.num_values = static_cast<int32_t>(lg.values.size());
  for (const Candidate& c : cs.candidates) {
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
    pr.candidates.push_back(c);
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

// The partition options with the node range of each extra candidate and chain kept whole.
PartitionOptions kept_whole(const OptimalOptions& o, const std::vector<tile::Kernel>& chains) {
  PartitionOptions p = o.partition;
  for (const std::vector<tile::Kernel>* ks : {&o.extra, &chains})
    for (const tile::Kernel& k : *ks)
      if (!k.nodes.empty()) {
        auto [lo, hi] = std::minmax_element(k.nodes.begin(), k.nodes.end());
        p.keep_whole.push_back({lo->v, hi->v});
      }
  return p;
}

// The problem's exact text (costs by their bits): equal keys, equal solves.
std::string problem_key(const BlpProblem& p) {
  std::string key;
  auto put = [&key](auto v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
  auto put_list = [&](const std::vector<int32_t>& l) {
    put(l.size());
    for (int32_t x : l) put(x);
  };
  put(p.num_values);
  put(p.items.size());
  for (const BlpItem& item : p.items) {
    put(item.cost);
    put_list(item.reads);
    put_list(item.writes);
  }
  put_list(p.required);
  put_list(p.fallback);
  return key;
}

}  // namespace

// A subgraph's candidates, found once: its local graph, the enumerated candidates with the
// extra ones, and what finding them took.
struct OptimalSolver::Enumerated {
  LocalGraph lg;
  CandidateSet cs;
  SubgraphStats stats;
  std::vector<PruneRow> pruning;
};

OptimalSolver::Enumerated OptimalSolver::enumerate_subgraph(const ir::Graph& g, const Subgraph& sg,
                                                            const OptimalOptions& o,
                                                            const std::vector<tile::Kernel>& chains) {
  auto start = std::chrono::steady_clock::now();
  Enumerated e;
  SubgraphStats& st = e.stats;
  st.first = sg.nodes.front();
  st.nodes = static_cast<int32_t>(sg.nodes.size());
  e.lg = local_graph(g, sg.nodes);
  ExecutionStates states = execution_states(e.lg, o.partition.max_states);
  ORCHID_CHECK(states.complete) << "subgraph at node " << st.first.v << " has more than " << o.partition.max_states
                                << " execution states";
  st.states = static_cast<int64_t>(states.states.size());
  e.cs = enumerate_candidates(e.lg, states.states, o.candidates);
  st.node_sets = e.cs.node_sets;
  e.pruning = e.cs.pruning;
  std::vector<Candidate> extra = extra_candidates(g, e.lg, o.extra);
  st.extra = static_cast<int32_t>(extra.size());
  for (Candidate& c : extra) e.cs.candidates.push_back(std::move(c));
  std::vector<Candidate> chained = extra_candidates(g, e.lg, chains);
  st.chains = static_cast<int32_t>(chained.size());
  for (Candidate& c : chained) e.cs.candidates.push_back(std::move(c));
  std::sort(e.cs.candidates.begin(), e.cs.candidates.end(),
            [](const Candidate& a, const Candidate& b) { return kernel_before(a.kernel, b.kernel); });
  st.enumerate_seconds = seconds_since(start);
  return e;
}

// A subgraph priced for one solve: its BLP, the key it is solved under, and its statistics so far.
struct OptimalSolver::PricedSubgraph {
  Priced pr;
  std::string key;
  SubgraphStats stats;
  std::vector<PruneRow> pruning;
};

namespace {

// The candidates' indices of a plan of the subgraph, sorted; none where one of its kernels is
// not a priced candidate.
std::optional<std::vector<int32_t>> candidate_indices(const Priced& pr, const std::vector<tile::Kernel>& plan) {
  std::vector<int32_t> out;
  for (const tile::Kernel& k : plan) {
    auto it = std::lower_bound(pr.candidates.begin(), pr.candidates.end(), k,
                               [](const Candidate& c, const tile::Kernel& x) { return kernel_before(c.kernel, x); });
    if (it == pr.candidates.end() || it->kernel.nodes != k.nodes || it->kernel.outputs != k.outputs) return std::nullopt;
    out.push_back(static_cast<int32_t>(it - pr.candidates.begin()));
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

OptimalSolver::PricedSubgraph OptimalSolver::price_subgraph(size_t i, const CostOracle& cost,
                                                            const std::vector<tile::Kernel>* fallback) const {
  auto start = std::chrono::steady_clock::now();
  const Enumerated& e = *enumerated_[i];
  PricedSubgraph ps;
  ps.stats = e.stats;
  ps.pruning = e.pruning;
  PruneRow finite{"finite-cost", "the cost oracle can price the kernel", 0, 0};
  ps.pr = price(e.lg, partition_.subgraphs[i], e.cs, cost, finite);
  if (fallback != nullptr && !fallback->empty())
    if (std::optional<std::vector<int32_t>> plan = candidate_indices(ps.pr, *fallback)) ps.pr.problem.fallback = *plan;
  ps.pruning.push_back(finite);
  ps.stats.candidates = static_cast<int64_t>(ps.pr.candidates.size());
  ps.key = problem_key(ps.pr.problem);
  ps.stats.enumerate_seconds += seconds_since(start);
  return ps;
}

void OptimalSolver::take_solve(PricedSubgraph& ps, const BlpResult& r, bool solved_before, OptimalResult& res) const {
  SubgraphStats& st = ps.stats;
  ORCHID_CHECK(r.feasible) << "no orchestration of the subgraph at node " << st.first.v << " (" << st.nodes
                           << " nodes): some required value has no kernel the cost oracle can price";
  for (int32_t k : r.order) {
    res.kernels.push_back(ps.pr.candidates[static_cast<size_t>(k)].kernel);
    res.kernel_costs.push_back(ps.pr.costs[static_cast<size_t>(k)]);
    res.cost += ps.pr.costs[static_cast<size_t>(k)];
  }
  st.columns = r.columns, st.rows = r.rows;
  if (!solved_before) st.rounds = r.rounds, st.cycle_cuts = r.cycle_cuts, st.solver_failures = r.solver_failures;
  st.kernels = static_cast<int32_t>(r.order.size());
  st.cost = r.objective, st.bound = r.bound, st.optimal = r.optimal, st.used_fallback = r.used_fallback;
  st.solved_before = solved_before;
  st.solve_seconds = solved_before ? 0 : r.seconds;
  res.bound += st.bound;
  res.optimal = res.optimal && st.optimal;
  add_pruning(res.pruning, ps.pruning);
  res.extra_left_out -= st.extra;
  res.chains_left_out -= st.chains;
  res.subgraphs.push_back(st);
}

OptimalSolver::OptimalSolver(const ir::Graph& g, OptimalOptions o)
    : g_(g),
      options_(std::move(o)),
      chains_(options_.chains ? linear_chains(g) : std::vector<tile::Kernel>{}),
      partition_(partition_graph(g, kept_whole(options_, chains_))) {
  subgraph_of_.assign(static_cast<size_t>(g.num_nodes()), -1);
  for (size_t i = 0; i < partition_.subgraphs.size(); ++i) {
    for (ir::NodeId n : partition_.subgraphs[i].nodes) subgraph_of_[static_cast<size_t>(n.v)] = static_cast<int32_t>(i);
    enumerated_.push_back(std::make_unique<Enumerated>(enumerate_subgraph(g, partition_.subgraphs[i], options_, chains_)));
  }
}

OptimalSolver::~OptimalSolver() = default;

int32_t OptimalSolver::subgraph_of(const tile::Kernel& k) const {
  if (k.nodes.empty()) return -1;
  size_t n = static_cast<size_t>(k.nodes.front().v);
  return n < subgraph_of_.size() ? subgraph_of_[n] : -1;
}

OptimalResult OptimalSolver::solve(const CostOracle& cost, const std::vector<std::vector<tile::Kernel>>& fallbacks) {
  auto start = std::chrono::steady_clock::now();
  // Priced one after another (the oracle need not be thread-safe), the problems not met
  // before solved at once (each solve_blp in child processes of its own), then taken in order.
  std::vector<PricedSubgraph> priced;
  for (size_t i = 0; i < partition_.subgraphs.size(); ++i)
    priced.push_back(price_subgraph(i, cost, i < fallbacks.size() ? &fallbacks[i] : nullptr));
  std::vector<size_t> fresh;  // the first subgraph of each problem not solved before
  std::set<std::string> keys;
  for (size_t i = 0; i < priced.size(); ++i)
    if (!solved_.count(priced[i].key) && keys.insert(priced[i].key).second) fresh.push_back(i);
  std::vector<BlpResult> results(fresh.size());
  parallel_for(fresh.size(), options_.solve_jobs,
               [&](size_t j) { results[j] = solve_blp(priced[fresh[j]].pr.problem, options_.blp); });
  for (size_t j = 0; j < fresh.size(); ++j) solved_.emplace(priced[fresh[j]].key, std::move(results[j]));
  OptimalResult res;
  res.cuts = partition_.cuts;
  res.optimal = true;
  for (size_t i = 0, next = 0; i < priced.size(); ++i) {
    bool solved_here = next < fresh.size() && fresh[next] == i;
    next += solved_here;
    take_solve(priced[i], solved_.at(priced[i].key), !solved_here, res);
  }
  // A solve whose solver stopped its process is not kept: the next solve tries again.
  for (size_t i : fresh)
    if (solved_.at(priced[i].key).solver_failures > 0) solved_.erase(priced[i].key);
  res.extra_left_out += static_cast<int32_t>(options_.extra.size());
  res.chains = static_cast<int32_t>(chains_.size());
  res.chains_left_out += res.chains;
  check_plan(g_, res.kernels);
  res.seconds = seconds_since(start);
  return res;
}

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
  OptimalSolver solver(g, o);
  OptimalResult res = solver.solve(cost);
  res.seconds = seconds_since(start);
  return res;
}

}  // namespace orchid::orchestrate
