// The rewrite search (Korch §3, with TASO's bounded backtracking; DESIGN.md "rewrite/").
//
// A rewrite often pays only once fused, so variants are judged by their *orchestrated* cost:
// the kernels the compile's own orchestration strategy makes of them (the BLP of
// orchestrate/optimal.h over every convex kernel, or greedy's rules), priced by the roofline
// model (analytic, nothing measured).
//
//  1. Sites. Every rule of the table (rules.h) is matched over the graph. Sites that share a
//     primitive or pass a value from one to the other form a cluster.
//  2. Windows. A cluster's primitives, their producers and readers (`radius` steps away), and
//     whatever lies on a path between two of them (so the window is convex), extracted as a
//     graph of its own; overlapping windows are joined; a window larger than
//     `max_window_nodes` is left alone.
//  3. Search, per window: from the window, every rule at every site gives a variant; the
//     `beam` cheapest new variants within `slack` × the best cost so far go on, for at most
//     `max_steps` steps. Constants a rewrite produces from constants (joined weights) are
//     folded before pricing. Variants are told apart by their canonical signature.
//  4. Choice. The cheapest variant replaces the window when it saves at least `min_gain` of
//     its cost, and passes check_rewrite (the finite-field verifier on what changed, the f32
//     differential test on the window); rejected ones are listed with the reason.
//  5. The accepted variants are spliced into the graph at once (their windows are disjoint).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "orchestrate/strategies.h"
#include "rewrite/check_rewrite.h"
#include "target/target.h"

namespace orchid::rewrite {

struct SearchOptions {
  int max_steps = 4;
  int beam = 4;
  double slack = 1.5;
  double min_gain = 0.01;
  int radius = 1;
  int max_window_nodes = 40;
  CheckRewriteOptions check;
};

// A graph's cost: seconds.
using GraphCost = std::function<double(const ir::Graph&)>;

// The orchestrated analytic cost: the kernels strategy `s` makes of the graph, each priced by
// its roofline on `t` (which must have a peak and a main-memory bandwidth); for Optimal, the
// BLP's total with those prices.
GraphCost orchestrated_cost(const target::Target& t, orchestrate::Strategy s = orchestrate::Strategy::Optimal);

// One variant of a window: its graph, cost and the rules applied to reach it, in order.
struct Variant {
  ir::Graph graph;
  double cost = 0;
  std::vector<std::string> rules;
};

// Every variant the search reached from `window` (the window itself first), cheapest first.
std::vector<Variant> search_window(const ir::Graph& window, const GraphCost& cost, const SearchOptions& o);

struct AppliedRewrite {
  std::vector<std::string> rules;  // in the order applied
  std::string where;               // the provenance of the window's first rewritten primitive
  int32_t window_nodes = 0;
  double cost_before = 0, cost_after = 0;  // the window's orchestrated cost, seconds
  bool proven = false;
  std::string verdict;
};

struct RewriteResult {
  ir::Graph graph;
  std::vector<AppliedRewrite> applied;
  std::vector<AppliedRewrite> rejected;  // verdict says why
  std::vector<AppliedRewrite> kept;      // windows left as they were: their best rewritten variant
  int32_t sites = 0;
  int32_t windows = 0;
  int32_t variants = 0;  // priced, over all windows
  double seconds = 0;
  std::vector<std::string> summary() const;  // lines for the report
};

RewriteResult rewrite_graph(const ir::Graph& g, const GraphCost& cost, const SearchOptions& o = {});

}  // namespace orchid::rewrite
