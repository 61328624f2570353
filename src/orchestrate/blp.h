// The kernel orchestration BLP (Korch §4.2, Eq. 2–4), over abstract items, with the
// schedulability constraint that kernels writing several values need.
//
// Values are dense ints 0..num_values-1: those a subgraph's nodes produce (anything else is
// always present). An item is a candidate kernel: a cost, the values it reads and the values
// it writes. A choice u ∈ {0,1}^items minimises Σ cost_i·u_i subject to
//   (W) one writer:   Σ_{i writes v} u_i ≤ 1    for every value v, and = 1 for the required
//                     values (Eq. 3, the output constraints);
//   (D) dependencies: Σ_{k reads v, writes r} u_k ≤ Σ_{i writes v} u_i  for every pair of
//                     values (v, r) that some item reads and writes;
//   (S) schedule:     the chosen items have an order in which each reads only values that
//                     earlier items write.
// A primitive may be computed by several chosen items (redundant computation), but each value
// is written by one kernel at most, so that memory is assigned once. (D) implies Korch's
// Eq. 4 (u_k ≤ Σ_{i writes v} u_i: every item writes something) and, since at most one chosen
// item writes r, is valid; it aggregates the readers of v that exclude each other, which makes
// the LP relaxation far tighter — with Eq. 4 alone, k alternative writers of a value at 1/k
// each need their inputs at 1/k only, and the bound decays along a chain.
//
// With one written value per kernel (Korch's rule), (W)+(D) imply (S) for convex kernels;
// with several they do not: for edges a1→a2, b1→b2, a1→b2, b1→a2 the kernels {a1,a2} and
// {b1,b2}, writing a1,a2 and b1,b2, satisfy (W) and (D), yet each reads a value of the other.
// (S) is enforced lazily. After each solve the chosen items are scheduled (schedule_items);
// if some are blocked, every sink strongly connected component C of the blocked items (k → j
// when j writes r_k, the first read of k that no scheduled item writes) gets the cut
//   Σ_{k∈C} u_k − Σ_{j∉C, j writes r_k for some k∈C} u_j ≤ |C| − 1
// and the problem is solved again. The cut is valid: in any schedule of a choice holding all
// of C, the first member k of C to run reads r_k from an earlier writer, which is not in C.
// The current choice violates it (C's reads r_k have no chosen writer outside C).
//
// Items that no schedule can ever run (one of their reads is written by no item that can
// run) are removed before solving. The dependency rows read availability columns
// y_v = Σ_{i writes v} u_i ∈ {0, 1} so that they stay sparse (and CBC may branch on them). CBC's standard
// driver (CbcMain1: preprocessing, cuts, heuristics) runs with one thread, limited by
// branch-and-bound nodes rather than seconds, so the same problem always gives the same
// choice; it is not known to be reentrant, so solve one problem at a time. Costs are scaled
// so that the largest is 1000, and "optimal" means within an absolute gap of 1e-6 of that
// scale (1e-9 of the dearest item).
#pragma once

#include <cstdint>
#include <vector>

namespace orchid::orchestrate {

struct BlpItem {
  double cost = 0;              // finite, >= 0
  std::vector<int32_t> reads;   // values, each once
  std::vector<int32_t> writes;  // values, each once
};

struct BlpProblem {
  int32_t num_values = 0;
  std::vector<BlpItem> items;
  std::vector<int32_t> required;  // values that must be written
  // A schedulable choice to fall back on when the solver finds none within its limits (or
  // the cuts run out of rounds); may be empty.
  std::vector<int32_t> fallback;
};

struct BlpOptions {
  int64_t max_nodes = 20000;   // branch-and-bound nodes per solve
  int max_rounds = 200;        // solves, each after adding cycle cuts
};

struct BlpResult {
  bool feasible = false;       // a schedulable choice was found (or the fallback taken)
  std::vector<int32_t> order;  // chosen items in an execution order
  double objective = 0;        // Σ cost of the chosen items
  double bound = 0;            // a proven lower bound on the optimum (<= objective)
  bool optimal = false;        // proven optimal (then bound == objective)
  bool used_fallback = false;
  int rounds = 0;              // solves
  int cycle_cuts = 0;          // cuts added
  int solver_failures = 0;     // solves whose solver stopped its (child) process, tried again
  int64_t columns = 0;         // items left after removing those that can never run
  int64_t rows = 0;            // constraints of the last solve
  double seconds = 0;          // wall time of the solves
};

BlpResult solve_blp(const BlpProblem& p, const BlpOptions& o);

// An execution order of the items `chosen`: repeatedly the first of them (in the order
// given) whose reads are all written by items already ordered. Items that never become
// ready are `blocked`, in the order given.
struct Schedule {
  std::vector<int32_t> order;
  std::vector<int32_t> blocked;
};
Schedule schedule_items(const BlpProblem& p, const std::vector<int32_t>& chosen);

// Items of p that some schedule can run: the least fixpoint of "all reads written by
// runnable items", in increasing order.
std::vector<int32_t> runnable_items(const BlpProblem& p);

}  // namespace orchid::orchestrate
