// Layout assignment: which plan buffers are kept in a layout other than plain (runtime
// layout.h). A buffer is stored in nChw8c, nChw16c or nhwc when every step that writes or reads it
// computes in that one layout anyway: a chain of oneDNN convolutions then hands its activations from one to
// the next in the layout they compute in, where each would otherwise reorder its src in and
// its dst out on every run. Graph inputs and outputs, constants, views and the buffers a
// generated or reference step touches stay plain. Deterministic for a plan and a host: which
// layout a convolution computes in is oneDNN's choice for the host's ISA and the algorithm
// (AVX2: nChw8c; AVX-512: nhwc, Winograd nChw16c).
#pragma once

#include <vector>

#include "runtime/plan.h"

namespace orchid::driver {

struct LayoutSummary {
  int blocked_buffers = 0;  // buffers assigned nChw8c, nChw16c or nhwc
  std::vector<runtime::BufferLayout> blocked_layouts;  // those assigned, each once, in order
  int reorders_avoided = 0; // step arguments that read or write such a buffer in place
  int packed_weights = 0;   // constants stored as GEMM B panels (plan_builder.cpp)
};

LayoutSummary assign_layouts(runtime::Plan& plan);

}  // namespace orchid::driver
