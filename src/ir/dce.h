// Dead-code elimination: a copy of the graph without the primitives and constants that no
// graph output depends on. Inputs are all kept (they are the graph's signature); value names
// and the relative order of the kept nodes are preserved.
#pragma once

#include "ir/graph.h"

namespace orchid::ir {

Graph eliminate_dead(const Graph& g);

}  // namespace orchid::ir
