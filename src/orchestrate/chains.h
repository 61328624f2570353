// Candidates across linear primitives (Welder §3: operators connected through their tiles, the
// intermediate kept in the fast memory a task uses). The enumerator's pruning table allows one
// linear primitive per kernel; these candidates join a matrix product to the product that
// reads its result through a row reduction — attention's scores Q Kᵀ, their softmax and
// P V; an output projection, its residual add, a layernorm and the next product — so that
// what passes between them never reaches main memory: a task computes a block of rows of the
// scores, reduces them, and multiplies them by V while they are in its cache. They join the
// BLP beside the enumerated candidates (optimal.h), priced by the same oracle; no pruning rule
// applies to them, and the cost loop measures one before the plan keeps it.
//
// A chain, for a MatMul B and one of its operands X:
//   - X's producers, back through elementwise, reduce and layout primitives (not linear, not
//     opaque), reach exactly one linear primitive A, a MatMul; those of them that depend on
//     A's result (the middle: X's producer among them) include a reduce; the others (a mask
//     every layer reads) stay outside, their results read as inputs;
//   - the kernel is A, the middle and B, then the elementwise primitives after B that read its
//     result (or the last one's) as its only reader, up to max_epilogue, and the primitives on
//     paths between those (none linear or opaque: the row sums a division after P V reads);
//   - closing it over those paths makes it convex; it has at most max_nodes primitives, and
//     writes every value that a node outside it reads or the graph outputs.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "tile/kernel.h"

namespace orchid::orchestrate {

struct ChainOptions {
  int max_nodes = 16;
  int max_epilogue = 4;
};

// The chains of g, each once, in the order of their last product; kernels sorted (tile::sorted).
std::vector<tile::Kernel> linear_chains(const ir::Graph& g, const ChainOptions& o = {});

}  // namespace orchid::orchestrate
