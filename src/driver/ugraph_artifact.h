// A μGraph (superopt/ugraph.h) as an artifact the runtime runs: the superoptimizer's kernels
// made real on this machine, so that they can be checked against the interpreter and timed.
//
// One plan buffer per kernel tensor, named as in the program (a kernel-level reshape is a
// view: an alias of its operand's buffer, no step; so is a transpose that only blocks read,
// superopt::strided_views); one generated step per other kernel operator, in the kernel
// graph's order: a graph-defined one by codegen/cpu/ugraph_kernel.h (a task per block), a
// pre-defined one (matmul, sum, elementwise, repeat, transpose, scale) lowered to its
// primitive (superopt/lower.h) and generated like any one-primitive kernel, with the default
// schedule. All of them go into one shared object.
#pragma once

#include <functional>

#include "driver/plan_builder.h"
#include "ir/graph.h"
#include "superopt/ugraph.h"

namespace orchid::driver {

// `program` is what u computes (the superoptimizer's input): its inputs and outputs name the
// plan's, and it is the artifact's graph.oir, the reference `orchid verify` checks against.
// u must verify and have the program's inputs and outputs in order, of the same types
// (an InternalError otherwise); non-f32 tensors are an UnsupportedError.
BuiltArtifact build_ugraph_artifact(const superopt::UGraph& u, const ir::Graph& program, const BuildOptions& o);

// The plan buffer of each of u's tensors: its inputs' as given (`inputs`, in u's order), each
// operator's results from `make(tensor, alias)`, where alias is the buffer a reshape's result
// views (its operand's root) and -1 for other results.
std::vector<int32_t> ugraph_buffers(const superopt::UGraph& u, const runtime::Plan& plan,
                                    const std::vector<int32_t>& inputs,
                                    const std::function<int32_t(superopt::TensorId, int32_t)>& make);

// How append_ugraph_steps names what it makes.
struct UGraphStepNames {
  std::string symbol_prefix;  // kernel symbols: the prefix and the kernel's index in `kernels`
  std::string step_prefix;    // plan step names: the prefix, the operator and its output tensor
  int32_t library = 0;        // the plan library the kernels will be compiled into
  StepKind kind = StepKind::Generated;  // for reports
  std::vector<std::string> source_ops;  // of every step (empty: the operator's name)
};

// The plan steps of u's kernel operators, in order, appended to a.plan.steps (and a.steps): a
// graph-defined operator by codegen/cpu/ugraph_kernel.h, a pre-defined one lowered and
// generated with the default schedule, a reshape none (its result must have a view's
// buffer). `buf` is the plan buffer of each of u's tensors. The kernels are appended to
// `kernels`; each step's kernel is its index there.
void append_ugraph_steps(const superopt::UGraph& u, const std::vector<int32_t>& buf, const UGraphStepNames& names,
                         int cores, BuiltArtifact& a, std::vector<codegen::cpu::GeneratedKernel>& kernels);

}  // namespace orchid::driver
