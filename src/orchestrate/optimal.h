// The optimal orchestration strategy (Korch §4; DESIGN.md "orchestrate", "Cost loop"):
// partition the primitive graph (partition.h), enumerate each subgraph's execution states and
// candidate kernels with their output sets (states.h), prune them by the rule table, add the
// candidates across linear primitives (chains.h) and other generators' (extra), price
// each with a cost oracle, and choose the cheapest schedulable cover by binary linear
// programming (blp.h). Kernels may write several values, and a primitive may be computed in
// more than one kernel (redundant computation) when that is cheaper.
//
// Pipeline, per subgraph:
//   local_graph → execution_states → enumerate_candidates (pruning table), plus the extra
//   candidates other generators propose (OptimalOptions::extra) → cost oracle
//   (drops candidates priced +inf: the "finite-cost" row) → solve_blp (one writer per value,
//   Eq. 3, aggregated Eq. 4 and lazily added cycle cuts) → chosen kernels in an execution
//   order (repeatedly the first ready kernel, candidates sorted by their nodes).
// The values crossing a cut are required outputs of the subgraph before it (forced to
// memory), so the subgraphs' plans, concatenated, are a plan of the graph.
//
// Plans. A plan is a list of tile::Kernel in an execution order. Unlike the partitions of
// strategies.h, a node may appear in several kernels (it is recomputed), but each value is
// written by one kernel at most. plan_problems states what every plan must meet.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "orchestrate/blp.h"
#include "orchestrate/partition.h"
#include "orchestrate/states.h"
#include "target/target.h"
#include "tile/kernel.h"

namespace orchid::orchestrate {

// Seconds one run of a candidate kernel takes (its nodes and the values it writes, ids of the
// graph being orchestrated), or +infinity where no kernel can be generated for it. Called once
// per candidate; must be deterministic. The driver plugs in analytic or measured costs.
using CostOracle = std::function<double(const tile::Kernel&)>;

// The analytic default: the roofline bound of the kernel — max(its FLOPs / the target's
// peak, the bytes of its inputs and outputs / main-memory bandwidth), see target/roofline.h;
// the target must have both (measured, or a preset) —
// plus a fixed launch overhead per kernel, so that fusion is rewarded. `g` must outlive the
// oracle; the target is copied.
CostOracle roofline_cost(const ir::Graph& g, const target::Target& t, double launch_seconds = 2e-6);

struct OptimalOptions {
  PartitionOptions partition;
  CandidateOptions candidates;
  BlpOptions blp;
  // BLPs solved at once (each solve in child processes of its own, solve_blp); the plan does
  // not depend on it.
  int solve_jobs = 2;
  // Candidates across linear primitives (chains.h: attention's two products with the softmax
  // between), found in the graph and joined to their subgraph's BLP as the extra ones are.
  bool chains = true;
  // Candidates that other generators propose (the superoptimizer's μGraph kernels: convex,
  // each output a value its nodes produce). Each joins the BLP of the subgraph that holds all
  // its nodes, beside the enumerated candidates, priced by the same oracle; no pruning rule
  // applies to it. The partition keeps the node range of each (and of each chain) whole where
  // it can (PartitionOptions::keep_whole); one whose nodes still lie in several subgraphs is
  // left out.
  std::vector<tile::Kernel> extra;
};

// One subgraph's problem and solve, for the report.
struct SubgraphStats {
  ir::NodeId first;            // its first node
  int32_t nodes = 0;
  int64_t states = 0;          // execution states
  int64_t node_sets = 0;       // convex sets that passed the node-set rules
  int64_t candidates = 0;      // priced candidates (node set + output set): BLP variables
  int32_t extra = 0;           // of them, OptimalOptions::extra ones
  int32_t chains = 0;          // of them, chains (chains.h)
  int64_t columns = 0;         // variables left after removing those that can never run
  int64_t rows = 0;            // constraints of the last solve
  int rounds = 0;              // solves
  int cycle_cuts = 0;
  int solver_failures = 0;     // BlpResult::solver_failures
  int32_t kernels = 0;         // chosen
  double cost = 0;             // Σ cost of the chosen kernels
  double bound = 0;            // proven lower bound
  bool optimal = false;
  bool used_fallback = false;  // one kernel per primitive, the solver having found nothing
  double enumerate_seconds = 0;  // states, candidates and costs
  double solve_seconds = 0;
  bool solved_before = false;    // OptimalSolver met this BLP (candidates and prices) before: its solve taken
};

struct OptimalResult {
  std::vector<tile::Kernel> kernels;  // in an execution order; passes plan_problems
  std::vector<double> kernel_costs;   // per kernel, from the oracle
  double cost = 0;                    // Σ kernel_costs
  double bound = 0;                   // Σ of the subgraphs' bounds
  bool optimal = false;               // every subgraph proven optimal
  double gap() const { return cost > bound ? (cost - bound) / cost : 0; }  // relative
  std::vector<Cut> cuts;
  std::vector<SubgraphStats> subgraphs;
  std::vector<PruneRow> pruning;      // summed over subgraphs; "finite-cost" last
  int32_t extra_left_out = 0;         // OptimalOptions::extra candidates in no single subgraph
  int32_t chains = 0;                 // chains found in the graph (chains.h)
  int32_t chains_left_out = 0;        // of them, those in no single subgraph
  double seconds = 0;                 // the whole orchestration (OptimalSolver::solve: its pricing and solves)
};

// Orchestrates g (a verified primitive graph). Throws InternalError if no plan exists (a
// primitive the oracle cannot price even alone).
OptimalResult orchestrate_optimal(const ir::Graph& g, const CostOracle& cost, const OptimalOptions& o = {});

// The optimal orchestration of one graph under costs that change between solves (the driver's
// cost loop): the partition, execution states and candidates are found once, at construction;
// each solve prices the candidates with its oracle and solves the subgraphs' BLPs.
class OptimalSolver {
 public:
  OptimalSolver(const ir::Graph& g, OptimalOptions o);  // g must outlive the solver
  ~OptimalSolver();
  OptimalSolver(const OptimalSolver&) = delete;
  OptimalSolver& operator=(const OptimalSolver&) = delete;

  const Partition& partition() const { return partition_; }
  // The subgraph (an index into partition().subgraphs) holding the kernel's first node; -1
  // for an empty kernel. A candidate's nodes all lie in one subgraph.
  int32_t subgraph_of(const tile::Kernel& k) const;

  // orchestrate_optimal's result under `cost`. A subgraph whose BLP (its candidates, their
  // prices) this solver has solved before — the same subgraph at unchanged prices, or a
  // repeated block numbered alike — takes that solve's result (SubgraphStats::solved_before).
  // `fallbacks` (per subgraph, or empty): a plan of it to take where the solver finds none
  // (BlpProblem::fallback), used where each of its kernels is a candidate the oracle prices;
  // otherwise one kernel per primitive is, where the oracle prices them.
  OptimalResult solve(const CostOracle& cost, const std::vector<std::vector<tile::Kernel>>& fallbacks = {});

 private:
  struct Enumerated;
  struct PricedSubgraph;
  static Enumerated enumerate_subgraph(const ir::Graph& g, const Subgraph& sg, const OptimalOptions& o,
                                       const std::vector<tile::Kernel>& chains);
  PricedSubgraph price_subgraph(size_t i, const CostOracle& cost, const std::vector<tile::Kernel>* fallback) const;
  // Appends the subgraph's chosen kernels and statistics under the solve `r` to `res`.
  void take_solve(PricedSubgraph& ps, const BlpResult& r, bool solved_before, OptimalResult& res) const;

  const ir::Graph& g_;
  OptimalOptions options_;
  std::vector<tile::Kernel> chains_;  // linear_chains(g) where options_.chains
  Partition partition_;
  std::vector<int32_t> subgraph_of_;                   // per node
  std::vector<std::unique_ptr<Enumerated>> enumerated_;  // per subgraph
  std::map<std::string, BlpResult> solved_;             // by the problem's exact text
};

// What keeps `kernels` from being a plan of g, one message per problem (empty when valid):
// an empty kernel; a node that does not exist or is listed twice in one kernel; an output that
// no node of its kernel computes or that is listed twice; a kernel that is not convex; a
// kernel reading a value that no earlier kernel writes (graph inputs and constants are always
// present); a value written by two kernels; a graph output that no kernel writes.
// Recomputation is allowed: a node may be in several kernels. Kernels' outputs need not be
// read by anyone (a plan may write more than it must).
std::vector<std::string> plan_problems(const ir::Graph& g, const std::vector<tile::Kernel>& kernels);

// InternalError listing plan_problems unless there are none.
void check_plan(const ir::Graph& g, const std::vector<tile::Kernel>& kernels);

}  // namespace orchid::orchestrate
