// The "onednn" library step: one oneDNN matmul or convolution (f32, CPU engine) with the
// elementwise primitives after it applied as post-ops (onednn_pattern.h says which graphs
// fit). Activations and post-op operands are read and written in place, dense row-major
// (matmul transposes through strides, never copies); constant weights are reordered once,
// when the step is made, into the layout the primitive prefers.
//
// run() is safe to call concurrently: oneDNN primitives are immutable, each run uses its
// own stream, and scratchpads come from a pool where concurrent runs take different ones.
// The output must not overlap an input (oneDNN may write part of the result before it has
// read all of its operands): an InternalError, checked on every run.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/library_step.h"

namespace orchid::runtime {

// UnsupportedError (a UserError) with onednn_step_unsupported's reason when g does not fit.
std::unique_ptr<LibraryStep> make_onednn_step(const ir::Graph& g, const std::vector<const void*>& constant_inputs);

// Why g cannot run as a oneDNN step, or empty: the pattern must match and oneDNN must have
// an implementation of it other than its naive reference one.
std::string onednn_step_unsupported(const ir::Graph& g);

// The oneDNN implementation that runs g ("gemm:jit", "brg:avx512_core", ...), with the
// weights packed or read as stored; for logs and benchmarks. UnsupportedError as above.
std::string onednn_implementation(const ir::Graph& g, bool constant_weights);

}  // namespace orchid::runtime
