// The compiler, end to end: an ONNX file to a verified artifact directory.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "driver/artifact.h"
#include "driver/measure.h"
#include "driver/plan_builder.h"
#include "driver/superopt_kernels.h"
#include "driver/tune.h"
#include "frontend/onnx_loader.h"
#include "orchestrate/strategies.h"
#include "target/target.h"

namespace orchid::driver {

struct CompileOptions {
  std::string model_path;        // also names the model in messages and reports
  frontend::ImportOptions import;
  orchestrate::Strategy strategy = orchestrate::Strategy::Greedy;
  std::string out_dir;
  BuildOptions build;
  MeasureOptions measure;         // choosing between implementations by timing them
  // Tuning the schedules of generated kernels by measuring (tune.h); off by default. Where a
  // budget is given, decisions already in the tuning database are used without measuring.
  PlanTuneOptions tune;
  // Progress of long stages (tuning), a line at a time; empty: none.
  std::function<void(const std::string&)> progress;
  // The machine: the optimal strategy's and the rewrite search's analytic costs (for CUDA, the
  // GPU's: cuda_plan_builder.h, gpu_target).
  target::Target target;
  bool host_target = true;        // false: built for another target, written unverified
  // The device the artifact runs on: the CPU, or an NVIDIA GPU (CUDA code; verified where a
  // GPU is present, else written unverified).
  runtime::PlanDevice device = runtime::PlanDevice::Cpu;
  // CUDA: large matmuls through cuBLASLt where it can run them (implement.h); false: every
  // step generated.
  bool gpu_libraries = true;
  // CUDA: the GPU the schedules are for and where its figures came from, for the report
  // (cuda_plan_builder.h, GpuTarget).
  std::string gpu_description;
  // The rewrite search (rewrite/search.h), priced on `target`; skipped, with a note in the
  // report, where the target has no measured peak and bandwidth.
  bool rewrite = true;
  // μGraph kernels of the superoptimizer where they measure faster (superopt_kernels.h); CPU
  // only, off by default.
  SuperoptCompileOptions superopt;
  uint64_t verify_seed = 1;
  // Relative L2 error of each f32 output; none: runtime::default_tolerance of build.precision.
  std::optional<double> tolerance;
  double verify_tolerance() const { return tolerance.value_or(runtime::default_tolerance(build.precision)); }
  double measure_seconds = 0.2;   // per-step timing for the report (0: none)
  // Models whose values need more memory at once are refused before any work on them
  // (memory_check.h); 0: this machine's physical memory.
  int64_t memory_limit_bytes = 0;
};

// How long each stage took, for the report.
struct StageTime {
  std::string stage;
  double seconds = 0;
};

struct CompileResult {
  std::string out_dir;
  VerifyReport verify;
  bool verified = false;
  std::string not_verified;  // why the artifact was not verified, where it was not
  std::vector<StageTime> stages;
  std::string report_summary;  // the totals of report.md, for the terminal
  std::vector<std::string> choices;  // implementation choices made by measuring
  std::vector<std::string> orchestration;  // the optimal strategy's solve, for the report
  std::vector<std::string> rewrites;       // the rewrite search, for the report
  std::vector<std::string> tuning;         // schedule tuning, for the report
  std::vector<std::string> superopt;       // the superoptimizer's programs and decisions, for the report
};

// UserError for bad input (the model, options) and for an artifact that fails verification
// (nothing is written then).
CompileResult compile_onnx(const CompileOptions& options);
// The same from a primitive graph (fission's output: the reference the artifact is checked
// against); `earlier` are the times of stages already run, for the report.
CompileResult compile_graph(const ir::Graph& reference, const CompileOptions& options,
                            std::vector<StageTime> earlier = {});

// The clean-ups every strategy runs first: primitives of weights folded into constants, affine
// maps folded into convolutions (BatchNorm), dead primitives and constants removed.
ir::Graph clean_up(const ir::Graph& g);

}  // namespace orchid::driver
