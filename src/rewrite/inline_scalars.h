// Scalar constants into expressions (a clean-up every orchestration runs).
//
// ONNX passes the bounds of a Clip, the exponent of a Pow or the epsilon of a hand-written
// norm as one-element tensors, so fission leaves loads of one-element constants in the
// bodies of generic primitives: min(max(%x[i0..], %lo[]), %hi[]). Such a load at constant
// indices is the constant's one element; it becomes a literal of the same dtype and value
// (bit for bit: the element is already in its dtype), and the input slot it used is dropped
// when nothing else reads it. Code generators then see a literal they can fold, and the
// oneDNN pattern recognises clip(x, lo, hi) and the other post-ops written with literals.
// Only elementwise and reduce primitives are rewritten: the bodies of the other kinds have a
// fixed form (a broadcast or layout body is one load; views and linear ones are derived). Returns whether
// anything changed; the result is verified.
#pragma once

#include "ir/graph.h"

namespace orchid::rewrite {

bool inline_scalar_constants(ir::Graph& g);

}  // namespace orchid::rewrite
