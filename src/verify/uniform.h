// Reducing two graphs along their uniform dims before they are compared (an exact
// reduction, not a sample).
//
// Axes of values are grouped into classes: a load that indexes axis k of an input with a bare
// domain variable i_j joins that axis to axis j of the primitive's outputs; the two graphs'
// inputs and outputs join position by position. A class is *uniform* when every position
// along it is computed by the same expressions from the same positions of the inputs:
//  - its domain variables appear only as bare load indices (never in arithmetic, a
//    predicate, a value or an indirect index), and only into axes of the class;
//  - no reduction variable, literal or other expression indexes an axis of it (a literal 0
//    into an axis of extent 1, a broadcast, indexes nothing);
//  - no constant has an axis of it of extent above 1, no opaque primitive reads or writes
//    one, no value has two axes in it (a transpose compared with the identity, x·xᵀ, a
//    diagonal), and all its axes have one extent.
// Then an output's element at position b of a uniform class is a function of the inputs'
// elements at position b only, by expressions that do not depend on b: the graphs agree at
// every b if they agree at b = 0, with the inputs there free. So every uniform class is cut
// to extent 1. Views and matmuls are read through their derived expressions: a matmul's
// batch dims and its rows and columns are uniform where the rest allows, its contracted dim
// is not; a view's dims are not.
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace orchid::verify {

struct Reduced {
  ir::Graph a, b;
  int32_t classes = 0;  // uniform classes cut to extent 1 (0: a and b unchanged)
  int64_t elements_before = 0, elements_after = 0;  // of the inputs of a, both ways
};

// a and b must have the same inputs and outputs (types, in order).
Reduced reduce_uniform_dims(const ir::Graph& a, const ir::Graph& b);

}  // namespace orchid::verify
