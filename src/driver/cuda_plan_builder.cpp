// Building a CUDA artifact's plan (cuda_plan_builder.h).
#include "driver/cuda_plan_builder.h"

#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "driver/plan_buffers.h"
#include "ir/printer.h"
#include "support/error.h"
#include "target/presets.h"

#ifdef ORCHID_HAVE_CUDA
#include "codegen/cuda/codegen.h"
#include "codegen/cuda/nvrtc.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/library_call.h"
#include "runtime/cuda/measure.h"
#endif

namespace orchid::driver {

namespace {

constexpr const char* kDefaultGpuPreset = "h100";

GpuTarget datasheet_target(const std::string& preset, const std::string& why) {
  GpuTarget t{target::cuda_preset(preset), ""};
  t.description = t.target.name + " (preset " + preset + ", datasheet figures" + (why.empty() ? "" : ": " + why) + ")";
  return t;
}

}  // namespace

#ifdef ORCHID_HAVE_CUDA

bool cuda_codegen_built() { return true; }

bool cuda_device_present(std::string* why) { return runtime::cuda::Device::available(why); }

namespace {

// The device's figures from the cache file, or measured now and added to it (a cache that
// cannot be read is measured over; one that cannot be written is left as it is).
runtime::cuda::GpuMeasurement cached_measurement(const std::string& device, const std::filesystem::path& cache_file) {
  nlohmann::json cache = nlohmann::json::object();
  try {
    std::ifstream in(cache_file);
    if (in) cache = nlohmann::json::parse(in);
    const nlohmann::json& d = cache.at(device);
    return {d.at("copy_gbs").get<double>(), d.at("sgemm_gflops").get<double>()};
  } catch (const std::exception&) {
    if (!cache.is_object()) cache = nlohmann::json::object();
  }
  runtime::cuda::GpuMeasurement m = runtime::cuda::measure_gpu();
  cache[device] = {{"copy_gbs", m.copy_gbs}, {"sgemm_gflops", m.sgemm_gflops}};
  std::error_code ec;
  std::filesystem::create_directories(cache_file.parent_path(), ec);
  std::ofstream(cache_file) << cache.dump(2) << "\n";
  return m;
}

}  // namespace

GpuTarget gpu_target(const std::string& preset, const std::filesystem::path& cache_file) {
  if (!preset.empty()) return datasheet_target(preset, "");
  std::string why;
  if (!runtime::cuda::Device::available(&why)) return datasheet_target(kDefaultGpuPreset, "no GPU here");
  const runtime::cuda::Device& dev = runtime::cuda::Device::get();
  std::string_view match = target::cuda_preset_for_device(dev.name());
  if (match.empty()) return datasheet_target(kDefaultGpuPreset, "no preset for the " + dev.name() + " here");
  runtime::cuda::GpuMeasurement m;
  try {
    m = cached_measurement(dev.name(), cache_file);
  } catch (const UserError& e) {
    return datasheet_target(kDefaultGpuPreset, std::string("measuring the GPU failed: ") + e.what());
  }
  GpuTarget t{target::refined_cuda_target(target::cuda_preset(match), m.copy_gbs, m.sgemm_gflops), ""};
  t.target.name = dev.name();
  t.target.cores = dev.multiprocessors();
  char figures[160];
  std::snprintf(figures, sizeof figures, "%d SMs, copy bandwidth %.0f GB/s, f32 products %.0f GFLOP/s measured",
                dev.multiprocessors(), m.copy_gbs, m.sgemm_gflops);
  t.description = dev.name() + " (preset " + std::string(match) + ", " + figures + ")";
  return t;
}

BuiltArtifact build_cuda_artifact(const ir::Graph& g, const std::vector<StepChoice>& steps, const BuildOptions& o) {
  std::string why;
  ORCHID_USER_CHECK(codegen::cuda::Nvrtc::available(&why)) << "--target cuda: " << why;
  BuiltArtifact a;
  a.plan.device = runtime::PlanDevice::Cuda;
  a.plan.precision = o.precision;
  a.plan.target = o.target;
  a.plan.graph_name = g.name;
  PlanBuffers buffers(g, a.plan, a.weights, a.weight_buffers);
  std::vector<codegen::cuda::CudaKernel> kernels;
  lay_out_plan(g, steps, buffers, a, [&](const StepChoice& s, runtime::PlanStep& step) {
    if (s.kind == StepKind::CublasLt || s.kind == StepKind::Cudnn) {
      ir::Graph kg = kernel_graph(g, s);
      step.impl = s.kind == StepKind::CublasLt ? runtime::StepImpl::CublasLt : runtime::StepImpl::Cudnn;
      step.ir = ir::print_graph(kg);
      return runtime::cuda::describe(runtime::cuda::library_spec(step.impl, kg, "step " + step.name));
    }
    ORCHID_CHECK(s.kind == StepKind::Generated) << "a " << step_kind_name(s.kind) << " step in a CUDA plan";
    codegen::cuda::Schedule sched = codegen::cuda::default_schedule(g, s.kernel, o.gpu_multiprocessors);
    auto index = static_cast<int32_t>(kernels.size());
    kernels.push_back(codegen::cuda::generate_kernel(g, s.kernel, sched, runtime::cuda_function_name(index)));
    const codegen::cuda::CudaKernel& k = kernels.back();
    step.impl = runtime::StepImpl::Cuda;
    step.kernel = index;
    step.tasks = k.blocks;
    step.threads = k.threads;
    step.shared_bytes = k.shared_bytes;
    step.scratch_bytes = k.global_scratch_bytes;
    step.checks = k.checks;
    return codegen::cuda::schedule_str(sched);
  });
  std::string source = codegen::cuda::module_source(kernels);
  a.sources.push_back({"kernels.cu", source});
  for (const std::string& arch : codegen::cuda::cuda_architectures()) {
    a.libraries.push_back(codegen::cuda::Nvrtc::get().compile_cached(source, arch, o.compiler.cache_dir));
    a.plan.libraries.push_back({"kernels." + arch + ".cubin", 0, arch});
  }
  a.graph_oir = ir::print_graph(constants_as_inputs(g));
  return a;
}

#else

bool cuda_codegen_built() { return false; }

bool cuda_device_present(std::string* why) {
  if (why) *why = "this build of Orchid has no CUDA runtime";
  return false;
}

GpuTarget gpu_target(const std::string& preset, const std::filesystem::path&) {
  return datasheet_target(preset.empty() ? kDefaultGpuPreset : preset, preset.empty() ? "no CUDA runtime in this build" : "");
}

BuiltArtifact build_cuda_artifact(const ir::Graph&, const std::vector<StepChoice>&, const BuildOptions&) {
  ORCHID_USER_ERROR() << "--target cuda: this build of Orchid has no CUDA code generation (it was built without "
                         "the CUDA toolkit)";
  return {};
}

#endif

}  // namespace orchid::driver
