// Kernels written by hand against kernel_abi.h, and the small model the runtime tests build
// from them (see sample_artifact):
//
//   x : f32[64] (input), w : f32[64] (constant, w[i] = 100 + i)
//   t = x + w                       kernel 0 "add": 16 tasks of 4 elements
//   y = 2 * reverse8(t)             kernel 1: 8 tasks, one block of 8, reversed through scratch
//   z = cumsum(y)                   a "reference" library step
//   g = table[idx]                  kernel 2 "gather" (its own plan): bounds-checked, reports
//                                   an index out of range through orchid_args::error
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "artifact_util.h"
#include "testlib/temp_dir.h"

namespace orchid::runtime::testutil {

inline const char* kKernelSource = R"(
#include "orchid/kernel_abi.h"

static void add(const orchid_args* a, int64_t begin, int64_t end, void* scratch) {
  (void)scratch;
  const float* x = (const float*)a->ptrs[0];
  const float* w = (const float*)a->ptrs[1];
  float* t = (float*)a->ptrs[2];
  for (int64_t task = begin; task < end; ++task)
    for (int64_t i = 4 * task; i < 4 * task + 4; ++i) t[i] = x[i] + w[i];
}

static void reverse8(const orchid_args* a, int64_t begin, int64_t end, void* scratch) {
  const float* t = (const float*)a->ptrs[0];
  float* y = (float*)a->ptrs[1];
  float* s = (float*)scratch;
  for (int64_t task = begin; task < end; ++task) {
    for (int j = 0; j < 8; ++j) s[j] = t[8 * task + 7 - j];
    for (int j = 0; j < 8; ++j) y[8 * task + j] = 2 * s[j];
  }
}

static void gather(const orchid_args* a, int64_t begin, int64_t end, void* scratch) {
  (void)scratch;
  const float* table = (const float*)a->ptrs[0];
  const int64_t* idx = (const int64_t*)a->ptrs[1];
  float* g = (float*)a->ptrs[2];
  for (int64_t i = begin; i < end; ++i) {
    int64_t k = idx[i];
    if (k < 0 || k >= 64) {
      int64_t none = 0;
      if (a->error && __atomic_compare_exchange_n(a->error, &none, 1 + 3, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        __atomic_store_n(a->error + 1, k, __ATOMIC_RELAXED);
      k = 0;
    }
    g[i] = table[k];
  }
}

static const int64_t kAddBytes[] = {256, 256, 256};
static const int64_t kReverseBytes[] = {256, 256};
static const int64_t kGatherBytes[] = {256, 64, 32};
static const orchid_kernel_desc kTable[] = {
    {ORCHID_KERNEL_ABI_VERSION, 3, 16, 0, add, kAddBytes},
    {ORCHID_KERNEL_ABI_VERSION, 2, 8, 32, reverse8, kReverseBytes},
    {ORCHID_KERNEL_ABI_VERSION, 3, 8, 0, gather, kGatherBytes},
};

extern "C" const orchid_kernel_desc* orchid_kernel_table(int64_t* count) {
  *count = 3;
  return kTable;
}
)";

inline constexpr const char* kCumsumIr = R"(graph @cumsum {
  input %y : f32[64]
  %z : f32[64] = opaque cumsum(%y) {axis=0, exclusive=0, reverse=0}
  output %z
}
)";

inline std::vector<float> sample_x() {
  std::vector<float> x(64);
  for (int i = 0; i < 64; ++i) x[static_cast<size_t>(i)] = 0.5f * static_cast<float>(i) - 3.25f;
  return x;
}

inline ir::Tensor sample_w() {
  ir::Tensor w(ir::TensorType{ir::DType::F32, {64}});
  for (int i = 0; i < 64; ++i) w.set_f64(i, 100 + i);
  return w;
}

// t, y and z of the sample model, computed as the kernels do.
struct SampleResults {
  std::vector<float> t, y, z;
};

inline SampleResults sample_results(const std::vector<float>& x) {
  SampleResults r{std::vector<float>(64), std::vector<float>(64), std::vector<float>(64)};
  for (size_t i = 0; i < 64; ++i) r.t[i] = x[i] + static_cast<float>(100 + i);
  for (size_t b = 0; b < 8; ++b)
    for (size_t j = 0; j < 8; ++j) r.y[8 * b + j] = 2 * r.t[8 * b + 7 - j];
  double sum = 0;  // the reference step sums in f32 ("own precision"); these sums are exact
  for (size_t i = 0; i < 64; ++i) r.z[i] = static_cast<float>(sum += r.y[i]);
  return r;
}

// The sample plan: buffers x, w, t, y, y_view (a [8,8] view of t), z; outputs as given by
// `outputs` (default: y, the view of t, x, w, z).
inline Plan sample_plan(std::vector<int32_t> outputs = {3, 4, 0, 1, 5}) {
  Plan p;
  p.isa = {};
  p.target = "test";
  p.graph_name = "sample";
  ir::TensorType f32x64{ir::DType::F32, {64}};
  p.buffers = {buffer("x", f32x64, BufferKind::Input), buffer("w", f32x64, BufferKind::Constant),
               buffer("t", f32x64, BufferKind::Intermediate), buffer("y", f32x64, BufferKind::Intermediate),
               buffer("t_view", {ir::DType::F32, {8, 8}}, BufferKind::Intermediate, 2),
               buffer("z", f32x64, BufferKind::Intermediate)};
  for (int32_t b : outputs)
    if (p.buffers[static_cast<size_t>(b)].kind == BufferKind::Intermediate)
      p.buffers[static_cast<size_t>(b)].kind = BufferKind::Output;
  p.inputs = {0};
  p.outputs = std::move(outputs);
  p.libraries = {PlanLibrary{"kernels.so", 0, ""}};
  p.steps = {generated_step("add", {0, 1, 2}, 2, 0, 0, 16),
             generated_step("reverse8", {2, 3}, 1, 0, 1, 8, 32),
             library_step("cumsum", StepImpl::Reference, {3, 5}, 1, kCumsumIr)};
  p.steps[0].source_ops = {"Add_0"};
  p.steps[0].flops = 64;
  p.steps[0].bytes = 768;
  return p;
}

// The kernel library of kKernelSource, compiled once per test program.
inline const std::string& compiled_kernels() {
  static testlib::TempDir dir("orchid_kernels");
  static const std::string path = [] {
    std::string so = dir.file("kernels.so");
    compile_kernel_library(kKernelSource, so);
    return so;
  }();
  return path;
}

// Writes the sample artifact into `dir`, copying the compiled kernel library `so_path`.
inline void write_sample_artifact(Plan plan, const std::string& dir, const std::string& so_path) {
  std::filesystem::copy_file(so_path, dir + "/kernels.so",
                             std::filesystem::copy_options::overwrite_existing);
  std::vector<ir::Tensor> constants{sample_w()};
  write_artifact(plan, dir, constants, {1});
}

}  // namespace orchid::runtime::testutil
