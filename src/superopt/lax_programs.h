// The LAX subprograms of a primitive graph (Mirage Figure 1): what the superoptimizer
// searches when it is given a whole model.
//
// A primitive is in the fragment when the abstraction of Table 1 covers it (abstract_program.h:
// matmuls, sums, add / mul / div / exp, layouts). Primitives in the fragment joined by values
// form components; each value a component hands out (read elsewhere, or a graph output) is one
// program: its ancestors inside the component, where they form a convex set. Programs with no
// matmul or sum, or of a single primitive, are left out; structurally equal programs (the
// layers of a transformer) are kept once, with their count.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace orchid::superopt {

// Where a program lies in the model: its primitives, the values it reads (the program's
// inputs, in order) and the value it computes.
struct LaxSite {
  std::vector<ir::NodeId> nodes;  // increasing
  std::vector<ir::ValueId> inputs;
  ir::ValueId output;
};

struct LaxProgram {
  ir::Graph graph;          // inputs: the values it reads from outside, in first-read order
  std::string output;       // the value of the model it computes (at its first site)
  int64_t occurrences = 1;  // structurally equal programs in the model
  std::vector<LaxSite> sites;  // one per occurrence, in model order
};

// The programs, largest first (by primitives; ties by output name), at most max_programs.
std::vector<LaxProgram> lax_programs(const ir::Graph& g, size_t max_programs);

}  // namespace orchid::superopt
