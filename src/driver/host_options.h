// Compile options for this machine, as `orchid compile` and the Python package make them.
#pragma once

#include <filesystem>
#include <string>

#include "driver/pipeline.h"

namespace orchid::driver {

// Options for compiling `model_path` into `out_dir` here, for this CPU or (cuda) for NVIDIA
// GPUs: the host's target — measured once and cached in `cache_root`/target.json where the
// rewrite search or the optimal strategy price candidates with it, else detected — its ISA
// and cores, the kernel object cache in `cache_root`/objects. Nothing is measured while
// choosing implementations (MeasureOptions stays empty: oneDNN is preferred where it can run).
CompileOptions host_compile_options(const std::string& model_path, const std::string& out_dir, bool cuda,
                                    orchestrate::Strategy strategy, bool rewrite, const std::filesystem::path& cache_root);

}  // namespace orchid::driver
