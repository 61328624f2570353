// Graphviz dot output of a primitive graph: one box per primitive (kind, op, shape), one
// ellipse per graph input/constant, edges labelled with tensor types.
#pragma once

#include <string>

#include "ir/graph.h"

namespace orchid::ir {

std::string to_dot(const Graph& g);

}  // namespace orchid::ir
