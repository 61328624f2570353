// The optimal orchestration with the cost loop of DESIGN.md: the BLP first sees analytic costs
// that are lower bounds (the roofline of the target), every kernel it chooses is implemented
// and measured (in a helper process, through the tuning database), and it is solved again,
// until every chosen kernel has a measured cost (or a round limit). The plan kept is then the
// faster, by measured time, of the last solve's and greedy's, so that `optimal` is never
// measured slower than `greedy`. Without measuring, the roofline costs decide alone.
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

OptimalPlan orchestrate_measured(const ir::Graph& g, const target::Target& target, const BuildOptions& build,
                                 const MeasureOptions& measure, int max_rounds = 12);

}  // namespace orchid::driver
