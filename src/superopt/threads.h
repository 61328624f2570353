// Thread graph construction (Mirage §4.2): rule-based, like operator fusion. In every block
// graph, elementwise operators joined through results that one elementwise operator alone
// reads form an in-tree; each tree of two or more becomes one thread graph, whose inner
// results stay in registers and whose root's result is stored to the block's memory.
#pragma once

#include "superopt/ugraph.h"

namespace orchid::superopt {

// g with its elementwise trees fused into thread graphs (the same function; g must verify).
UGraph with_thread_graphs(const UGraph& g);

}  // namespace orchid::superopt
