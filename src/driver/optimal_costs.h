// The optimal orchestration with the cost loop of DESIGN.md: the BLP first sees analytic costs
// (analytic_cost: the tile-graph model, or the roofline bound of what a library runs), every
// kernel it chooses is implemented and measured (in a helper process, through the tuning
// database), and it is solved again,
// until every chosen kernel has a measured cost (or a round limit). The plan kept is then the
// faster, by measured time, of the last solve's and greedy's, so that `optimal` is never
// measured slower than `greedy`. Without measuring, the analytic costs decide alone.
#pragma once

#include <string>
#include <vector>

#include "driver/measure.h"
#include "driver/plan_builder.h"
#include "orchestrate/optimal.h"
#include "target/target.h"

namespace orchid::driver {

struct OptimalPlan {
  std::vector<tile::Kernel> kernels;
  orchestrate::OptimalResult last;  // the last solve
  int rounds = 0;
  int measured = 0;                 // kernels measured (or found in the tuning database)
  double measured_seconds = 0;      // the kept plan's measured time (0: nothing measured)
  std::vector<std::string> notes;   // for the report
};

// The first-pass cost of a candidate kernel: a kernel of generated code only, the tile-graph
// model's latency (tile/cost.h) of it under its default schedule for `cores` cores
// (tune/estimate.h); a kernel with a linear or opaque primitive, which a library may run, the
// roofline bound. Both plus `launch_seconds`.
orchestrate::CostOracle analytic_cost(const ir::Graph& g, const target::Target& t, int cores,
                                      double launch_seconds = 2e-6);

OptimalPlan orchestrate_measured(const ir::Graph& g, const target::Target& target, const BuildOptions& build,
                                 const MeasureOptions& measure, int max_rounds = 12);

}  // namespace orchid::driver
