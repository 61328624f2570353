// The optimal orchestration's plan kept as a decision of the tuning database, so that a
// compile of a graph compiled before (same structure and weights, same measuring settings,
// same code generator and library steps) takes the plan that the cost loop settled on,
// without solving and measuring again: the loop's rounds re-solve every subgraph, and on a
// model of hundreds of primitives they take a minute even when every time is in the database.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "driver/measure.h"
#include "driver/plan_builder.h"
#include "ir/graph.h"
#include "tile/kernel.h"

namespace orchid::driver {

struct PlanDecision {
  std::vector<tile::Kernel> kernels;  // in execution order
  bool greedy_kept = false;           // greedy's plan measured faster whole
  double measured_seconds = 0;        // the kept plan's kernels timed alone, summed
  // > 0: greedy's plan was kept without timing the plans whole, neither plan's kernels summing
  // under the caller's plan to beat (orchestrate_measured's beat_seconds); this is the lesser
  // sum, and the decision holds only for a plan to beat at or under it.
  double untimed_below = 0;
};

// Bump when the orchestration would choose otherwise from the same times (its candidates,
// pruning, BLP, greedy's rules or the whole-plan comparison change): earlier decisions are
// then not taken.
constexpr int kPlanDecisionVersion = 3;

// The decision's key: the graph's canonical signature, the μGraph sites offered (their
// kernels), what the plans are built and measured with (layouts, threads, timing settings,
// whether tuned schedules), the round limit, and the versions of the orchestration, the code
// generator, library steps and timing.
std::string plan_decision_key(const ir::Graph& g, const std::vector<tile::Kernel>& sites, const BuildOptions& build,
                              const MeasureOptions& measure, int max_rounds);

// "optimal", "greedy" or "greedy untimed <seconds>", then per kernel ";n1,n2,..|v1,v2,...":
// what the database keeps.
std::string plan_decision_text(const PlanDecision& d);

// The decision read back for g; none where the text does not parse or is not a plan of g
// (orchestrate::plan_problems), which a compile then treats as no decision.
std::optional<PlanDecision> parse_plan_decision(const ir::Graph& g, const std::string& text, double measured_seconds);

}  // namespace orchid::driver
