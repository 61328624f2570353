#include "target/presets.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "support/error.h"

namespace orchid::target {

namespace {

constexpr int64_t kKiB = 1024, kMiB = 1024 * kKiB, kGiB = 1024 * kMiB;
// Shared memory: 32 banks of 4 bytes per SM per clock (CUDA C++ Programming Guide, "Shared
// Memory"); a warp's register operand is 32 lanes × 4 bytes.
constexpr int64_t kSharedBytesPerClock = 128;
constexpr int64_t kWarpBytes = 128;
// A100 L2 read bandwidth: 5120 bytes per clock, 2.3× V100's (NVIDIA A100 Tensor Core GPU
// Architecture whitepaper, "L2 cache"). NVIDIA publishes no per-clock figure for Hopper: its
// L2 is assumed as wide as A100's (an estimate, to be replaced by measurement).
constexpr int64_t kL2BytesPerClock = 5120;

struct Preset {
  const char* key;
  const char* name;
  const char* isa;
  int sms;
  double clock_ghz;             // the boost clock at which the FP32 peak is quoted
  int64_t register_file_bytes;  // per SM
  int64_t shared_bytes;         // per SM, the largest shared-memory carveout
  int64_t l2_bytes;
  int64_t hbm_bytes;
  double hbm_gbs;
  double fp32_gflops;
  double tf32_gflops;  // dense tensor-core
};

// A100: NVIDIA A100 datasheet (nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf): FP32
//   19.5 TFLOP/s, TF32 tensor 156 TFLOP/s dense, HBM2e 80GB at 2,039 GB/s, HBM2 40GB at
//   1,555 GB/s; A100 whitepaper: 108 SMs, 1410 MHz boost, 256 KB register file per SM, 40 MB
//   L2; Ampere Tuning Guide 1.4.2.3: shared memory up to 164 KB per SM (of 192 KB
//   L1/shared).
// H100 SXM5: NVIDIA H100 datasheet and Hopper whitepaper: 132 SMs, FP32 67 TFLOP/s
//   (16,896 lanes × 2 × 1.98 GHz), TF32 tensor 989 TFLOP/s with sparsity (494.7 dense),
//   HBM3 80GB at 3.35 TB/s, 50 MB L2, 256 KB register file per SM; Hopper Tuning Guide,
//   "Unified Shared Memory/L1/Texture Cache": shared memory up to 228 KB per SM.
// H200 SXM: NVIDIA H200 datasheet: the H100's GH100 compute with 141 GB HBM3e at 4.8 TB/s.
constexpr Preset kPresets[] = {
    {"a100", "NVIDIA A100 SXM4 80GB", "sm_80", 108, 1.41, 256 * kKiB, 164 * kKiB, 40 * kMiB, 80 * kGiB,
     2039, 19500, 156000},
    {"a100-40gb", "NVIDIA A100 SXM4 40GB", "sm_80", 108, 1.41, 256 * kKiB, 164 * kKiB, 40 * kMiB, 40 * kGiB,
     1555, 19500, 156000},
    {"h100", "NVIDIA H100 SXM5 80GB", "sm_90a", 132, 1.98, 256 * kKiB, 228 * kKiB, 50 * kMiB, 80 * kGiB,
     3350, 67000, 494700},
    {"h200", "NVIDIA H200 SXM 141GB", "sm_90a", 132, 1.98, 256 * kKiB, 228 * kKiB, 50 * kMiB, 141 * kGiB,
     4800, 67000, 494700},
};

Target from_preset(const Preset& p) {
  Target t;
  t.kind = TargetKind::Cuda;
  t.name = p.name;
  t.cores = p.sms;
  t.simd_bits = 32 * 32;
  t.isa = {p.isa};
  t.compiler = "nvrtc";
  t.peak_gflops_f32 = p.fp32_gflops;
  t.peak_gflops_tf32 = p.tf32_gflops;
  double per_clock_gbs = p.clock_ghz;  // bytes per clock × GHz = GB/s
  t.levels = {
      {"registers", p.register_file_bytes, kWarpBytes, p.fp32_gflops * kRegisterBytesPerFlop, false},
      {"shared", p.shared_bytes, kSharedBytesPerClock, double(kSharedBytesPerClock * p.sms) * per_clock_gbs, false},
      {"L2", p.l2_bytes, 32, double(kL2BytesPerClock) * per_clock_gbs, true},
      {"HBM", p.hbm_bytes, 64, p.hbm_gbs, true},
  };
  return t;
}

}  // namespace

std::vector<std::string_view> cuda_preset_names() {
  std::vector<std::string_view> names;
  for (const Preset& p : kPresets) names.push_back(p.key);
  return names;
}

std::string_view cuda_preset_for_device(std::string_view device_name) {
  auto has = [&](std::string_view s) { return device_name.find(s) != std::string_view::npos; };
  if (has("H200")) return "h200";
  if (has("H100")) return "h100";
  if (has("A100")) return has("40GB") ? "a100-40gb" : "a100";
  return {};
}

Target refined_cuda_target(Target preset, double hbm_gbs, double fp32_gflops) {
  if (hbm_gbs > 0)
    for (MemoryLevel& l : preset.levels)
      if (&l == &main_memory(preset)) l.bandwidth_gbs = hbm_gbs;
  if (fp32_gflops > 0) preset.peak_gflops_f32 = fp32_gflops;
  return preset;
}

Target cuda_preset(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const Preset& p : kPresets)
    if (lower == p.key) return from_preset(p);
  std::string valid;
  for (std::string_view n : cuda_preset_names()) valid += (valid.empty() ? "" : ", ") + std::string(n);
  ORCHID_USER_ERROR() << "unknown CUDA target preset '" << name << "' (valid presets: " << valid << ")";
  return {};
}

}  // namespace orchid::target
