// Library steps: plan steps that run a small primitive graph through a library instead of a
// generated kernel — oneDNN for linear primitives (with the post-ops it supports), the
// reference interpreter for opaque routines.
//
// A step's graph has one graph input per step input and one graph output per step output, in
// the plan's argument order. A step is created once when a model loads and is immutable
// afterwards: run() may be called concurrently from several sessions.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "runtime/layout.h"

namespace orchid::runtime {

// Bump when a library step's implementation changes its speed or results: measured times of
// library steps in the tuning database are keyed with it.
constexpr int kLibraryStepVersion = 3;

class LibraryStep {
 public:
  virtual ~LibraryStep() = default;
  // args: the step's inputs, then its outputs, dense row-major, as the plan lists them.
  virtual void run(void* const* args) const = 0;
};

// Implementations by name, as plan.json spells them in a step's "impl".
//   "onednn"    one matmul or conv primitive, optionally followed by elementwise primitives
//               oneDNN can apply as post-ops; f32.
//   "onednn_winograd"  the same for a 3×3 convolution by Winograd's algorithm (onednn_step.h).
//   "reference" any graph, through the interpreter in the graph's own precision (copies its
//               inputs and outputs; used for opaque routines).
// constant_inputs[k] points to input k's data when that input is a weight of the model
// (fixed for the model's lifetime, so the step may pre-pack it now), else nullptr.
// layouts[k] is the layout of argument k (inputs, then outputs; layout.h); empty: all plain.
// A graph the implementation cannot run, or not in those layouts, is a UserError saying why.
std::unique_ptr<LibraryStep> make_library_step(std::string_view impl, const ir::Graph& g,
                                               const std::vector<const void*>& constant_inputs,
                                               const std::vector<BufferLayout>& layouts = {});

// The layout each argument of g (inputs, then outputs) is best kept in for `impl`: plain
// except where the implementation computes in another layout anyway (a oneDNN convolution's
// src, dst and residual in nChw8c, nChw16c or nhwc), so that a buffer between two steps that agree on a layout
// can stay in it. Which implementation runs g is as make_library_step decides with inputs
// constant where constant_inputs says so (one flag per graph input, as make_library_step's
// constant_inputs are non-null). UnsupportedError when impl cannot run g.
std::vector<BufferLayout> preferred_layouts(std::string_view impl, const ir::Graph& g,
                                            const std::vector<bool>& constant_inputs);

// Why `impl` cannot run g (empty when it can): what the driver asks before choosing it.
std::string library_step_unsupported(std::string_view impl, const ir::Graph& g);

}  // namespace orchid::runtime
