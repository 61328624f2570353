// A part of a graph as a graph of its own: the primitives of a kernel, with the values they
// read from outside as graph inputs (in a given order) and the values the kernel writes as
// graph outputs. Library steps run such graphs, and tests interpret them as the reference of a
// generated kernel. Value names are kept.
#pragma once

#include <vector>

#include "ir/graph.h"

namespace orchid::ir {

// nodes: any order, each once, a convex set; inputs: every value the nodes read that they do
// not produce (graph inputs, constants and other nodes' outputs alike become inputs), in the
// order wanted; outputs: values produced by the nodes.
Graph extract_subgraph(const Graph& g, const std::vector<NodeId>& nodes,
                       const std::vector<ValueId>& inputs, const std::vector<ValueId>& outputs);
// The same, but constants the nodes read stay constants (they must not be listed in inputs).
Graph extract_subgraph_with_constants(const Graph& g, const std::vector<NodeId>& nodes,
                                      const std::vector<ValueId>& inputs, const std::vector<ValueId>& outputs);

}  // namespace orchid::ir
