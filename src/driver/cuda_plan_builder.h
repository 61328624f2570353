// From a primitive graph and its implemented kernels to a CUDA artifact's contents (plan.h,
// device cuda): every generated step a CUDA kernel under its default CUDA schedule, all of
// them one module compiled with NVRTC to a CUBIN per architecture (sm_80, sm_90a) — no GPU
// needed. CUBINs are cached by content in the object cache (Nvrtc::compile_cached), so a recompile runs no NVRTC. The
// module's source is kept in the artifact as kernels.cu, for reading.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "driver/implement.h"
#include "driver/plan_builder.h"
#include "ir/graph.h"
#include "target/target.h"

namespace orchid::driver {

// Whether this build of Orchid generates CUDA code (built with the CUDA toolkit's headers).
bool cuda_codegen_built();

// Whether a GPU is present to run CUDA artifacts on (and, if not, why).
bool cuda_device_present(std::string* why);

// The GPU a CUDA compile is for, and how its figures were found ("NVIDIA H100 SXM5 80GB
// (preset h100, datasheet figures: no GPU here)").
struct GpuTarget {
  target::Target target;
  std::string description;
};

// `preset` (target/presets.h) with the datasheet's figures; or, where `preset` is empty, the
// preset of the GPU present with its name, multiprocessors, copy bandwidth and f32 product
// rate (runtime/cuda/measure.h) — measured once per device and kept in `cache_file` (JSON,
// by device name), so that later compiles price alike — or h100's figures where there is
// no GPU, none matches, or measuring failed (the description says which).
GpuTarget gpu_target(const std::string& preset, const std::filesystem::path& cache_file);

// `steps` from implement(..., PlanDevice::Cuda). UserError where this build has no CUDA code generation or
// NVRTC cannot be loaded.
BuiltArtifact build_cuda_artifact(const ir::Graph& g, const std::vector<StepChoice>& steps, const BuildOptions& o);

}  // namespace orchid::driver
