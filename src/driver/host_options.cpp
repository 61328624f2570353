#include "driver/host_options.h"

#include <algorithm>

#include "driver/artifact.h"
#include "driver/cuda_plan_builder.h"
#include "target/detect.h"
#include "target/host.h"
#include "tune/db.h"

namespace orchid::driver {

CompileOptions host_compile_options(const std::string& model_path, const std::string& out_dir, bool cuda,
                                    orchestrate::Strategy strategy, bool rewrite, const std::filesystem::path& cache_root,
                                    const std::string& gpu_preset) {
  CompileOptions o;
  o.model_path = model_path;
  o.out_dir = out_dir;
  o.strategy = strategy;
  o.rewrite = rewrite;
  o.build.compiler.cache_dir = cache_root / "objects";
  bool priced = (strategy == orchestrate::Strategy::Optimal || rewrite) && !cuda;
  target::Target host =
      priced ? target::host_target({}, (cache_root / "target.json").string()).target : target::detect_host();
  o.build.cores = std::max(1, host.cores);
  o.build.isa = target::host_isa();
  o.build.target = host.name + " (" + host.fingerprint() + ")";
  o.target = host;
  if (cuda) {
    GpuTarget gpu = gpu_target(gpu_preset, cache_root / "gpu-target.json");
    o.device = runtime::PlanDevice::Cuda;
    o.target = gpu.target;
    o.gpu_description = gpu.description;
    o.build.isa.clear();
    o.build.target = "cuda: " + gpu.target.name + " (" + std::to_string(gpu.target.cores) + " SMs)";
    o.build.gpu_multiprocessors = gpu.target.cores;
  }
  return o;
}

CompileResult compile_measured(CompileOptions o, const std::string& orchid_exe, const std::filesystem::path& db_path,
                               const std::function<void(const std::string&)>& warn) {
  if (orchid_exe.empty() || o.device == runtime::PlanDevice::Cuda) return compile_onnx(o);
  tune::TuningDb db(db_path);
  if (!db.note().empty()) warn(db.note());
  o.measure.orchid_exe = orchid_exe;
  o.measure.work_dir = directory_name(o.out_dir) + ".candidates";
  o.measure.db = &db;
  // Plans that flush subnormals are timed as they run: their times, and the decisions made on
  // them, are kept apart in the database.
  o.measure.target = o.build.target + (o.build.flush_denormals ? " [flush_denormals]" : "");
  o.measure.threads = o.build.cores;
  CompileResult r;
  try {
    r = compile_onnx(o);
  } catch (...) {
    std::filesystem::remove_all(o.measure.work_dir);
    throw;
  }
  std::filesystem::remove_all(o.measure.work_dir);
  return r;
}

}  // namespace orchid::driver
