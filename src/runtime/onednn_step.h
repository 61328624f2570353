// The "onednn" library step: one oneDNN matmul or convolution (f32, CPU engine) with the
// elementwise primitives after it applied as post-ops (onednn_pattern.h says which graphs
// fit). A leading per-channel add is the primitive's bias argument, and a residual add right
// after it oneDNN's sum post-op (the residual is copied into the output first). Constant
// weights are reordered once, when the step is made, into the layout the primitive prefers.
//
// Activations: a matmul reads and writes them in place, dense row-major (transposes through
// strides, never copies; with no batch in B, the batch folds into M: one GEMM). A conv lets
// oneDNN choose their layouts and reorders src in and dst out (and the residual in) on every
// run where they differ from the buffers' layouts: its fast convolutions want channel-blocked
// activations and run dense row-major ones through im2col and gemm at about half the speed.
// A plan keeps a buffer between two convolutions in nChw8c, nChw16c or nhwc (layout.h) when
// both compute in it; then neither reorders it. It keeps the dense row-major
// layouts where a binary post-op operand other than a scalar or per-channel one would have
// to be read next to a blocked output, and where oneDNN 2.6 has a bug (onednn_step.cpp).
//
// run() is safe to call concurrently: oneDNN primitives are immutable, each run uses its
// own stream, and scratchpads and blocked copies come from a pool where concurrent runs take
// different buffers. The output must not overlap an input (oneDNN may write part of the
// result before it has read all of its operands; the residual is copied over it): an
// InternalError, checked on every run.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/library_step.h"

namespace orchid::runtime {

// How a oneDNN step computes a convolution: oneDNN's direct algorithm (its JIT or brgemm
// kernels), or oneDNN's Winograd (3×3 kernels, stride 1, no dilation or groups; fewer
// multiplications, so 1.5 to 2 times faster on AVX-512 hosts where oneDNN has it). The
// library step "onednn" is direct, "onednn_winograd" Winograd; matmuls have only the first.
enum class ConvAlgorithm : uint8_t { Direct, Winograd };

// UnsupportedError (a UserError) with onednn_step_unsupported's reason when g does not fit;
// a UserError when an argument's layout is not one the step can read or write there.
// layouts: one per argument (inputs, then outputs).
std::unique_ptr<LibraryStep> make_onednn_step(const ir::Graph& g, const std::vector<const void*>& constant_inputs,
                                              const std::vector<BufferLayout>& layouts,
                                              ConvAlgorithm algorithm = ConvAlgorithm::Direct);

// preferred_layouts (library_step.h) for oneDNN: nChw8c, nChw16c or nhwc for a convolution's
// src, dst and residual where the primitive chosen computes in exactly that layout (oneDNN's
// choice for the host's ISA and algorithm: AVX2 nChw8c; AVX-512 nhwc, Winograd nChw16c);
// plain elsewhere.
std::vector<BufferLayout> onednn_preferred_layouts(const ir::Graph& g, const std::vector<bool>& constant_inputs,
                                                   ConvAlgorithm algorithm = ConvAlgorithm::Direct);

// Why g cannot run as a oneDNN step, or empty: the pattern must match and oneDNN must have
// an implementation of it other than its naive reference one. Winograd needs constant
// weights: it is asked as if they were, and the step refuses others when made.
std::string onednn_step_unsupported(const ir::Graph& g, ConvAlgorithm algorithm = ConvAlgorithm::Direct);

// The oneDNN implementation that runs g ("gemm:jit", "brg:avx512_core", ..., followed by
// " (src/dst reordered)" when it runs on blocked copies), with the weights packed or read as
// stored; for logs and benchmarks. UnsupportedError as above.
std::string onednn_implementation(const ir::Graph& g, bool constant_weights,
                                 ConvAlgorithm algorithm = ConvAlgorithm::Direct);

}  // namespace orchid::runtime
