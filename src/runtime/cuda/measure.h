// The GPU's own numbers, measured where a GPU is present: the device-to-device copy bandwidth
// (what memory-bound kernels can reach) and the f32 matrix-product rate of cuBLASLt without
// TF32 (what a compute-bound step can reach). They refine a CUDA target preset
// (target/presets.h), whose figures are the datasheet's.
#pragma once

#include <cstddef>

namespace orchid::runtime::cuda {

struct GpuMeasurement {
  double copy_gbs = 0;       // bytes read + written per second / 1e9
  double sgemm_gflops = 0;   // 2 m n k per second / 1e9; 0 where cuBLASLt does not load
};

// Sizes measured: a copy of kCopyBytes, a square product of kProductSize.
inline constexpr size_t kCopyBytes = size_t{512} << 20;
inline constexpr int kProductSize = 4096;

// The medians of several timed runs each (CUDA events), after warm-ups. UserError where there
// is no GPU.
GpuMeasurement measure_gpu();

}  // namespace orchid::runtime::cuda
