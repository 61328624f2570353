// The verifier: checks every structural rule of a primitive graph (docs/ir.md, "Rules").
// Passes run it before and after themselves; parsers and importers run it on what they build.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace orchid::ir {

// Every violation found, each naming the node (`node 3 (%y = reduce, from "Softmax_1"): ...`)
// and the rule broken. Empty when the graph is well-formed.
std::vector<std::string> verify(const Graph& g);

// Throws UserError with all violations (one per line) when the graph is malformed.
void verify_or_throw(const Graph& g, const std::string& what);

}  // namespace orchid::ir
