// From a primitive graph and its implemented kernels to an artifact's contents: the plan
// (buffers, steps), the weights, the generated kernels compiled into shared objects, and the
// graph itself (graph.oir, with constants as inputs, for `orchid verify`).
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/cpu/codegen.h"
#include "codegen/cpu/compiler.h"
#include "codegen/cpu/schedule.h"
#include "driver/implement.h"
#include "driver/layouts.h"
#include "ir/graph.h"
#include "runtime/plan.h"

namespace orchid::driver {

struct BuildOptions {
  codegen::cpu::CompilerOptions compiler;
  int cores = 1;
  std::vector<std::string> isa;  // written into the plan: the artifact needs them
  std::string target;            // fingerprint, for the plan and reports
  int kernels_per_library = 16;  // several kernels per shared object save compile time
  // Buffers in other layouts than plain: nChw8c, nChw16c or nhwc between oneDNN convolutions (layouts.h),
  // weights as GEMM B panels (panels16, or panels16t for weights read transposed).
  bool layouts = true;
  // CUDA plans: what library steps may compute f32 products in (runtime/plan.h), and the
  // multiprocessors of the GPU the schedules are for (codegen/cuda/schedule.h).
  runtime::PlanPrecision precision = runtime::PlanPrecision::Fp32;
  int gpu_multiprocessors = 132;
  bool flush_denormals = false;  // CPU plans: Plan::flush_denormals
};

// What one plan step is made of, for reports.
struct StepInfo {
  StepKind kind = StepKind::Generated;
  int primitives = 0;
  std::string schedule;  // generated steps
};

struct BuiltArtifact {
  runtime::Plan plan;                             // weights offsets and checksums filled on write
  std::vector<ir::Tensor> weights;                // per constant buffer, in buffer order
  std::vector<int32_t> weight_buffers;            // the buffer of each weight
  std::vector<std::filesystem::path> libraries;   // compiled objects, per plan library
  std::vector<StepInfo> steps;                    // per plan step
  std::vector<size_t> choice_steps;               // per step choice: its plan step (SIZE_MAX: an alias)
  std::string graph_oir;
  // Sources kept beside the compiled kernels, for reading (CUDA: kernels.cu), by file name.
  std::vector<std::pair<std::string, std::string>> sources;
  LayoutSummary layouts;
};

// `tuned`: the schedule of a generated step where one was tuned (tune.h), per step; the
// default schedule elsewhere.
BuiltArtifact build_artifact(const ir::Graph& g, const std::vector<StepChoice>& steps, const BuildOptions& options,
                             const std::vector<std::optional<codegen::cpu::Schedule>>& tuned = {});

class PlanBuffers;

// The steps and outputs of a plan, for every device: an alias step becomes a view of its
// source's buffer; every other step a base_step (plan_buffers.h) that `implement_step`
// completes, returning the schedule text reports show. Fills a.choice_steps and a.steps.
// A UGraph step is laid out by `ugraph_steps` (a CPU plan's), which appends its plan steps.
void lay_out_plan(const ir::Graph& g, const std::vector<StepChoice>& steps, PlanBuffers& buffers, BuiltArtifact& a,
                  const std::function<std::string(const StepChoice&, runtime::PlanStep&)>& implement_step,
                  const std::function<void(const StepChoice&)>& ugraph_steps = nullptr);

// Compiles each list of kernels into one shared object (with the code generator's flags),
// appended to a.libraries and to the plan's libraries, named by content.
void compile_libraries(const std::vector<std::vector<codegen::cpu::GeneratedKernel>>& libs, const BuildOptions& o,
                       BuiltArtifact& a);

// The graph with its constants turned into inputs (after the real ones), named as before.
ir::Graph constants_as_inputs(const ir::Graph& g);

}  // namespace orchid::driver
