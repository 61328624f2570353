// Classes of the program's dims that one loop index runs along (for the generator's tilings).
//
// A load whose index into axis k of an input is an expression of exactly one loop variable
// (i_j bare, h / g for a shared kv head, …) joins that axis with the variable; a domain
// variable i_j is also axis j of the primitive's outputs. So a matmul joins A's rows with the
// result's rows and its contracted dim with B's, a reduce joins the reduced axis of its input
// with nothing outside, and attention's sequence dim is one class through K, the scores and V.
// Views (reshapes) and indices mixing variables join nothing. A class a reduction variable
// runs along is one the program sums over: only there may a μGraph sum or contract.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace orchid::superopt {

struct DimClasses {
  // Per graph input, per dim: its class (dense ids in order of first appearance).
  std::vector<std::vector<int32_t>> inputs;
  // Per class: whether the program sums along it (a reduction variable runs along it).
  std::vector<bool> reduced;
};

DimClasses input_dim_classes(const ir::Graph& g);

// The class of every axis of every value, and of every reduction variable, by the same rules.
struct AxisClasses {
  std::vector<std::vector<int32_t>> values;  // per value, per dim
  std::vector<std::vector<int32_t>> reduce;  // per node, per reduction dim
  int32_t count = 0;                         // classes: dense ids 0 .. count - 1
};
AxisClasses axis_classes(const ir::Graph& g);

}  // namespace orchid::superopt
