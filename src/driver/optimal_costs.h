// The optimal orchestration with the cost loop of DESIGN.md: the BLP first sees analytic costs
// (analytic_cost: the tile-graph model, or the roofline bound of what a library runs), every
// kernel it chooses is implemented and measured (in a helper process, through the tuning
// database), and it is solved again,
// until every chosen kernel has a measured cost (or a round limit). The last solve's plan and
// greedy's are then built whole and timed in alternating rounds, and the BLP's is kept only
// where it is faster with significance (Welch's test), so that `optimal` does not trade
// greedy's plan for one that only measured faster by chance. The plan kept is the tuning
// database's decision for the graph (plan_decision.h): a later compile of the same graph with
// the same settings takes it without solving or measuring. Without measuring, the analytic
// costs decide alone.
#pragma once

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "driver/measure.h"
#include "driver/plan_builder.h"
#include "driver/superopt_kernels.h"
#include "orchestrate/optimal.h"
#include "target/target.h"

namespace orchid::driver {

struct OptimalPlan {
  std::vector<tile::Kernel> kernels;
  orchestrate::OptimalResult last;  // the last solve
  int rounds = 0;
  int measured = 0;                 // kernels measured (or found in the tuning database)
  double solve_seconds = 0;         // the solves of all rounds, pricing included (OptimalSolver::solve)
  double measured_seconds = 0;      // the kept plan's kernels timed alone, summed (0: nothing measured)
  bool greedy_kept = false;         // greedy's plan measured faster whole: it has no μGraph sites
  double untimed_below = 0;         // PlanDecision::untimed_below
  std::vector<std::string> notes;   // for the report
  std::vector<std::string> round_notes;  // one line per round of the cost loop (SettledSubgraphs)
};

// The first-pass cost of a candidate kernel: a kernel of generated code only, the tile-graph
// model's latency (tile/cost.h) of it under its default schedule for `cores` cores
// (tune/estimate.h); a kernel with a linear or opaque primitive, which a library may run, the
// roofline bound. Both plus `launch_seconds`. The oracle estimates kernels alike once (the
// same graph in canonical form, weights aside: the repeated blocks of a model).
orchestrate::CostOracle analytic_cost(const ir::Graph& g, const target::Target& t, int cores,
                                      double launch_seconds = 2e-6);

// Where two plans of g cut it differently, for the report: the kernels of one that the other
// lacks, grouped where they share a primitive, one line per group with each side's kernels
// (named by their model nodes) and summed `seconds`; the groups where `optimal` gains most
// first, at most 12 lines, after a line that counts them.
std::vector<std::string> plan_differences(const ir::Graph& g, const std::vector<tile::Kernel>& optimal,
                                          const std::vector<tile::Kernel>& greedy,
                                          const orchestrate::CostOracle& seconds);

// The cost loop's calibration. Analytic costs can lie far from what a kernel measures: a
// convolution with a prologue runs as generated code, priced by the roofline at the GEMM
// peak and measured 5 to 60 times slower; an elementwise kernel priced at DRAM bandwidth is
// timed on inputs the cache holds. The BLP would then choose, measure and drop such kernels
// one round at a time. Kernels of one class (cost_class) share the median ratio of measured
// to analytic seconds among those of the class measured so far, and a kernel not measured
// yet is priced at its analytic cost times its class's ratio (1 until one of the class is
// measured): each measurement re-prices its class.
class CostCalibration {
 public:
  double scale(const std::string& cls) const;  // the pricing hot path: a lookup
  void observe(const std::string& cls, double analytic_seconds, double measured_seconds);
  bool empty() const { return medians_.empty(); }
  std::string describe() const;  // "class ×ratio (count), ..." in class order

 private:
  std::map<std::string, std::vector<double>> ratios_;  // by class
  std::map<std::string, double> medians_;              // of ratios_, updated as they come
};

// The cost loop's subgraphs (OptimalSolver's partition). A subgraph *settles* once the BLP's
// plan for it, at the prices of its solve, promises less than `gain` (a fraction) over the
// cheapest plan of it measured so far — each round's plan, once its kernels are measured, is
// such a plan — or once `patience` rounds in a row measured no plan of it cheaper by more than
// a quarter of `gain` (the estimates of candidates not measured yet are optimistic: the BLP
// keeps proposing some that measure no better). A settled subgraph's unmeasured candidates are priced +inf (the caller's
// oracle asks `settled`), so its BLP chooses among measured kernels; its prices then no longer
// move, and OptimalSolver takes its solve again instead of solving. The loop thus measures where the
// estimates still promise a gain, instead of every subgraph until the round limit.
class SettledSubgraphs {
 public:
  SettledSubgraphs(size_t subgraphs, double gain, int patience);
  bool settled(int32_t subgraph) const;  // false for -1 (no subgraph)
  bool all() const;
  // After a solve's kernels are measured (`seconds`: a kernel's measured time, +inf where it
  // failed): each subgraph's measured plan, the cheapest so far, and whether it settles.
  void observe(const orchestrate::OptimalResult& r, const std::function<double(const tile::Kernel&)>& seconds);
  // Settles every subgraph, where each has a measured plan that ran (a subgraph whose measured
  // plans all hold a failed kernel never settles); false, settling none, where one has not.
  bool settle_all();
  // "round N: K kernels measured; the plan at its prices X ms, the cheapest measured Y ms;
  // S of T subgraphs settled".
  std::string round_line(int round, size_t measured, const orchestrate::OptimalResult& r) const;
  double best_seconds() const;           // Σ of the subgraphs' cheapest measured plans
  // Per subgraph, its cheapest measured plan that ran (empty before one): OptimalSolver's
  // fallbacks, where a solve finds nothing.
  const std::vector<std::vector<tile::Kernel>>& best_plans() const { return best_plans_; }

 private:
  double gain_;
  int patience_;
  std::vector<bool> settled_;
  std::vector<double> best_;  // per subgraph, seconds
  std::vector<std::vector<tile::Kernel>> best_plans_;
  std::vector<int> stale_;    // per subgraph: rounds in a row without a cheaper plan
};

// A kernel's calibration class: the step kinds implement() makes of it and the op of its
// linear primitive, if any ("onednn conv", "generated conv", "generated").
std::string cost_class(const ir::Graph& g, const tile::Kernel& k);

// Whether two plans have the same kernels (in any order).
bool same_plan(const std::vector<tile::Kernel>& a, const std::vector<tile::Kernel>& b);

// `beat_seconds`: where neither the BLP's plan nor greedy's measures (kernels alone, summed)
// under it, the caller has a better plan (pipeline.cpp: the rewritten graph's, against which
// the graph without rewrites is orchestrated); the two are then not timed whole, and greedy's
// is kept.
// `sites`: μGraph kernels of the superoptimizer (superopt_kernels.h), candidates of the BLP at
// their measured times (never measured again); plans are built and timed with them as μGraphs.
OptimalPlan orchestrate_measured(const ir::Graph& g, const target::Target& target, const BuildOptions& build,
                                 const MeasureOptions& measure, int max_rounds = 12,
                                 const std::vector<UGraphSite>& sites = {}, double beat_seconds = INFINITY);

// The BLP's plan `ours` against greedy's plan `greedy` (steps of g, under their tuned
// schedules), both built whole and timed in alternating rounds: ours faster with significance
// (compare_tuned_plans at α = 0.05, more rounds where ours leads without significance).
ScheduleComparison compare_with_greedy(const ir::Graph& g, const std::vector<StepChoice>& ours,
                                       const std::vector<StepChoice>& greedy, const BuildOptions& build,
                                       const MeasureOptions& measure);

// Whether the rewritten graph's plan `p` (with the superoptimizer's `sites`, where the BLP kept
// it) goes on rather than the plan `q` of the graph without rewrites: both are timed whole in
// 18 alternating rounds, and the one with the lower mean goes on (Welch's t at α = 0.5; the
// decision is kept in the tuning database). Neither graph is the default here, as greedy's plan
// is against the BLP's: requiring significance dropped a rewrite whose plan ran 45.95 ms
// against 49.55 ms (medians of 18 rounds). Kernels timed alone cannot decide this:
// where the rewrite split a kernel into small ones (greedy's plan of attention with the
// division after P V), their sum came to 35.1 ms against 36.8 ms, and whole runs to 52 ms
// against 43. Where the two could not be timed, the lesser sum decides. `line` receives the
// report's line.
bool rewritten_plan_kept(const ir::Graph& rewritten, const OptimalPlan& p, const std::vector<UGraphSite>& sites,
                         const ir::Graph& original, const OptimalPlan& q, const BuildOptions& build,
                         const MeasureOptions& measure, std::string* line);

}  // namespace orchid::driver
