// How each kernel of a plan runs: generated code, oneDNN, the reference interpreter (opaque
// routines), or no step at all (a lone view is a zero-copy alias of its input's buffer).
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/plan.h"
#include "tile/kernel.h"

namespace orchid::driver {

enum class StepKind { Generated, OneDnn, Reference, Alias };
std::string_view step_kind_name(StepKind k);

struct StepChoice {
  tile::Kernel kernel;
  StepKind kind = StepKind::Generated;
  std::vector<ir::ValueId> inputs;  // tile::kernel_inputs, in increasing id order
};

// Linear kernels go to oneDNN where it can run them (one matmul or conv and the post-ops it
// supports, f32); a linear kernel oneDNN cannot run whole is split into the linear primitive
// with the post-ops oneDNN takes (oneDNN) and the rest (generated) when that works; kernels
// with an opaque primitive go to the interpreter; a lone view whose output has the input's
// bytes to an alias; all others to generated code. A view a generated kernel would compute as
// an output (of a value it computes, read by nothing else in it) becomes an alias step after
// it instead. One kernel may give several steps.
// For an NVIDIA GPU (device Cuda) every kernel is generated CUDA code (linear ones too), a
// lone view an alias, views a kernel would compute as outputs alias steps after it; a kernel
// with an opaque primitive has no implementation there (UnsupportedError naming the
// primitive and its source node).
std::vector<StepChoice> implement(const ir::Graph& g, const std::vector<tile::Kernel>& kernels,
                                  runtime::PlanDevice device = runtime::PlanDevice::Cpu);

// The kernel as a graph of its own (its inputs, then its outputs), for library steps.
ir::Graph kernel_graph(const ir::Graph& g, const StepChoice& s);

}  // namespace orchid::driver
