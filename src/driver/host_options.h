// Compile options for this machine, as `orchid compile` and the Python package make them.
#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include "driver/pipeline.h"

namespace orchid::driver {

// Options for compiling `model_path` into `out_dir` here, for this CPU or (cuda) for NVIDIA
// GPUs: the host's target — measured once and cached in `cache_root`/target.json where the
// rewrite search or the optimal strategy price candidates with it, else detected — its ISA
// and cores, the kernel object cache in `cache_root`/objects; for cuda, the GPU target
// (cuda_plan_builder.h, gpu_target: `gpu_preset`, or the GPU present, measured once and kept
// in `cache_root`/gpu-target.json). Nothing is
// measured while choosing implementations (MeasureOptions stays empty: oneDNN is preferred
// where it can run).
CompileOptions host_compile_options(const std::string& model_path, const std::string& out_dir, bool cuda,
                                    orchestrate::Strategy strategy, bool rewrite, const std::filesystem::path& cache_root,
                                    const std::string& gpu_preset = "");

// Compiles with o, choosing between implementations by timing them (o.measure) where o is
// for the CPU and `orchid_exe` (the program that runs candidate artifacts) is given: the
// times are cached in the tuning database at `db_path`, and candidates are written beside
// o.out_dir and removed, also when the compile fails. `warn` receives the database's note (a
// damaged file moved aside). Without orchid_exe, or for CUDA, nothing is measured.
CompileResult compile_measured(CompileOptions o, const std::string& orchid_exe, const std::filesystem::path& db_path,
                               const std::function<void(const std::string&)>& warn);

}  // namespace orchid::driver
