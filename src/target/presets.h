// CUDA targets as data, so that GPU plans can be made on a machine without a GPU. Numbers
// are NVIDIA's published specifications (sources next to each in presets.cpp); bandwidths
// NVIDIA does not publish are derived from per-clock widths and marked as such. Where a GPU
// is present, measurement refines them, as the probe does for CPUs.
#pragma once

#include <string_view>
#include <vector>

#include "target/target.h"

namespace orchid::target {

// "a100" (SXM4 80GB), "a100-40gb" (SXM4 40GB), "h100" (SXM5 80GB), "h200" (SXM 141GB).
// Levels: registers, shared (per SM), L2, HBM. An unknown name is a UserError listing these.
Target cuda_preset(std::string_view name);
std::vector<std::string_view> cuda_preset_names();

// The preset of a GPU by the name its driver reports ("NVIDIA H100 80GB HBM3" is "h100",
// "NVIDIA A100-SXM4-40GB" is "a100-40gb"); empty where none matches.
std::string_view cuda_preset_for_device(std::string_view device_name);

// `preset` with its main-memory bandwidth and f32 peak replaced by measured figures (each
// where it is positive).
Target refined_cuda_target(Target preset, double hbm_gbs, double fp32_gflops);

}  // namespace orchid::target
