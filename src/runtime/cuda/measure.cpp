#include "runtime/cuda/measure.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "runtime/cuda/device.h"
#include "runtime/cuda/library_call.h"
#include "runtime/cuda/lt_step.h"

namespace orchid::runtime::cuda {

namespace {

double median_ms(const Device& dev, const std::function<void()>& work, int runs) {
  for (int i = 0; i < 2; ++i) work();
  dev.synchronize();
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) t.push_back(dev.time_ms(work));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// A plain square product C = A · B of n × n f32 matrices (column-major; the values do not
// matter to its time).
LtMatmul square_product(int64_t n) {
  LtMatmul mm;
  mm.m = mm.n = mm.k = n;
  mm.a = {0, false, n, n, n, 0};
  mm.b = {1, false, n, n, n, 0};
  mm.d = {2, false, n, n, n, 0};
  return mm;
}

}  // namespace

GpuMeasurement measure_gpu() {
  const Device& dev = Device::get();
  GpuMeasurement m;
  {
    DeviceBuffer a = dev.alloc(kCopyBytes), b = dev.alloc(kCopyBytes);
    double ms = median_ms(dev, [&] { dev.copy(b, a, kCopyBytes); }, 10);
    m.copy_gbs = 2.0 * static_cast<double>(kCopyBytes) / (ms * 1e-3) / 1e9;
  }
  if (!cublaslt_available()) return m;
  const int64_t n = kProductSize;
  const size_t bytes = static_cast<size_t>(n * n) * sizeof(float);
  DeviceBuffer a = dev.alloc(bytes), b = dev.alloc(bytes), d = dev.alloc(bytes);
  DeviceBuffer workspace = dev.alloc(kLibraryWorkspaceBytes);
  LtStep step(square_product(n), {a.ptr(), b.ptr(), d.ptr()}, workspace.ptr(), LibraryOptions{},
              "the GPU's f32 product rate");
  double ms = median_ms(dev, [&] { step.enqueue(nullptr); }, 5);
  m.sgemm_gflops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) / (ms * 1e-3) / 1e9;
  return m;
}

}  // namespace orchid::runtime::cuda
