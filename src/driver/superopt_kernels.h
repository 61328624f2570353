// `orchid compile --superopt`: μGraph kernels of the superoptimizer in a model's plan.
//
// 1. Find: the LAX subprograms of the orchestrated graph (superopt/lax_programs.h), largest
//    first. A program is a candidate at a site where the values it computes, other than its
//    output, are read by nothing else in the model.
// 2. Search: a shrunk copy of each program (superopt/shrink.h; the program itself where it has
//    none) is searched within a share of the time budget, cached in the tuning database by
//    its signature (superopt_search.h), and the μGraphs found are instantiated at the model's
//    sizes (superopt/instantiate.h).
// 3. Measure: each instance is built, checked against the interpreter and timed against the
//    program compiled without the superoptimizer, in alternating rounds (ugraph_bench.h). The
//    fastest is used when it beats the compiled program by `min_speedup`.
// 4. Place: at each site, the μGraph becomes one kernel of the plan (StepKind::UGraph). The
//    orchestrated kernels lose the site's primitives; what is left of one is cut in two where
//    part of it depends on the site's result and part does not, and what the site reads they
//    write to memory. A site whose placement would not leave a plan
//    (orchestrate::plan_problems) is left as it was, with a note. Under `--orchestrate
//    optimal` the sites are instead candidates of the BLP at their measured times
//    (optimal_costs.h), and only those it chooses run as μGraphs (mark_ugraph_kernels).
// The whole artifact is then verified against the interpreter like any other.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "driver/implement.h"
#include "ir/graph.h"
#include "superopt/generator.h"
#include "superopt/ugraph.h"
#include "tile/kernel.h"

namespace orchid::driver {

struct CompileOptions;

// The searches run per program, smallest first: one kernel operator of few block operators
// (LoRA's fused kernel), then Mirage's default limits (GQA's block kernel and the sums and
// division after it). Their threads (the compile's cores) and block memory (its target's L2)
// are set by the compile.
std::vector<superopt::SearchOptions> default_superopt_searches();

struct SuperoptCompileOptions {
  bool enabled = false;
  std::vector<superopt::SearchOptions> searches = default_superopt_searches();
  double budget_s = 300;     // search time in all, shared among the programs in order
  size_t max_programs = 4;   // programs searched, largest first
  size_t max_ugraphs = 2;    // μGraphs instantiated and timed per program
  size_t tilings = 3;        // grids and for-loops per μGraph instantiated
  int rounds = 3;            // alternating timing rounds
  double min_speedup = 1.05;
};

// A μGraph as a step of a model's plan.
struct UGraphStep {
  superopt::UGraph ugraph;          // at the model's sizes
  std::vector<ir::ValueId> inputs;  // the model's values it reads, in the order of ugraph.inputs
  std::string key;                  // its text hashed: for plan keys
};

// Where a μGraph runs in the model: the primitives it replaces and its output, as a kernel.
struct UGraphSite {
  tile::Kernel kernel;
  std::shared_ptr<const UGraphStep> step;
  double seconds = 0;  // the μGraph's measured time (fastest run)
};

struct SuperoptKernels {
  std::vector<UGraphSite> sites;
  std::vector<std::string> notes;  // per program: the search, the times, the decision
};

// Steps 1–3 for g (a cleaned-up primitive graph). Needs o.measure (a helper that times
// artifacts); without one nothing is searched and a note says why.
SuperoptKernels find_superopt_kernels(const ir::Graph& g, const CompileOptions& o);

// A plan's kernels with μGraph kernels placed (step 4).
struct PlacedKernels {
  std::vector<tile::Kernel> kernels;                    // an execution order, a plan of g
  std::vector<std::shared_ptr<const UGraphStep>> ugraphs;  // per kernel; null: an orchestrated one
  int placed = 0;
};

// `kernels`: a plan of g (orchestrate::plan_problems); `notes` receives the sites left out.
PlacedKernels place_ugraph_kernels(const ir::Graph& g, const std::vector<tile::Kernel>& kernels,
                                   const std::vector<UGraphSite>& sites, std::vector<std::string>* notes);

// The plan with each kernel that is a site's (the same primitives and outputs) marked as its
// μGraph: where `--orchestrate optimal` chose sites among its candidates.
PlacedKernels mark_ugraph_kernels(const std::vector<tile::Kernel>& kernels, const std::vector<UGraphSite>& sites);

// implement_each (implement.h) for the CPU, with each μGraph kernel one UGraph step.
std::vector<std::vector<StepChoice>> implement_placed(const ir::Graph& g, const PlacedKernels& p);

}  // namespace orchid::driver
