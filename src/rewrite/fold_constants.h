// Constant folding of the primitive graph (a clean-up every orchestration runs first).
//
// Fission folds every ONNX node whose inputs are all constants, but a node with one run-time
// input leaves its weights' own primitives behind: the view that gives a Conv's bias its
// broadcast shape, a transpose of a MatMul's weights, a cast of a constant. A primitive is
// folded here when it is not opaque, every input is a constant (or was folded), and its
// outputs are no larger than its inputs together — views, transposes, slices and casts of
// weights, never a broadcast, which would multiply the weights' bytes. The interpreter
// computes it once, in each dtype's own precision (as a kernel would), and its outputs become
// constants with the same names. Returns whether anything changed; the result is verified.
#pragma once

#include "ir/graph.h"

namespace orchid::rewrite {

bool fold_constants(ir::Graph& g);

}  // namespace orchid::rewrite
