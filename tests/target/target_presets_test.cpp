// CUDA presets: the published numbers, in the shape the tile model expects.
#include <gtest/gtest.h>

#include "target/presets.h"
#include "testlib/errors.h"

namespace orchid::target {
namespace {

constexpr int64_t kKiB = 1024, kMiB = 1024 * kKiB;

TEST(CudaPreset, AllPresetsHaveTheGpuLevels) {
  EXPECT_EQ(cuda_preset_names(), (std::vector<std::string_view>{"a100", "a100-40gb", "h100", "h200"}));
  for (std::string_view name : cuda_preset_names()) {
    Target t = cuda_preset(name);
    EXPECT_EQ(t.kind, TargetKind::Cuda) << name;
    EXPECT_EQ(t.simd_bits, 1024) << name;
    ASSERT_EQ(t.levels.size(), 4u) << name;
    EXPECT_EQ(t.levels[0].name, "registers");
    EXPECT_EQ(t.levels[1].name, "shared");
    EXPECT_EQ(t.levels[2].name, "L2");
    EXPECT_EQ(t.levels[3].name, "HBM");
    EXPECT_FALSE(t.levels[1].shared_across_cores);
    EXPECT_TRUE(t.levels[2].shared_across_cores);
    EXPECT_LT(t.levels[1].capacity_bytes, t.levels[2].capacity_bytes) << name;
    EXPECT_LT(t.levels[2].capacity_bytes, t.levels[3].capacity_bytes) << name;
    for (size_t i = 0; i + 1 < t.levels.size(); ++i)
      EXPECT_GT(t.levels[i].bandwidth_gbs, t.levels[i + 1].bandwidth_gbs) << name << " " << t.levels[i].name;
    EXPECT_GT(t.peak_gflops_tf32, t.peak_gflops_f32) << name;
  }
}

TEST(CudaPreset, PublishedNumbers) {
  Target a100 = cuda_preset("a100"), a100_40 = cuda_preset("a100-40gb");
  Target h100 = cuda_preset("h100"), h200 = cuda_preset("h200");
  EXPECT_EQ(a100.cores, 108);
  EXPECT_EQ(h100.cores, 132);
  EXPECT_EQ(a100.isa, std::vector<std::string>{"sm_80"});
  EXPECT_EQ(h100.isa, std::vector<std::string>{"sm_90a"});
  EXPECT_EQ(a100.levels[1].capacity_bytes, 164 * kKiB);
  EXPECT_EQ(h100.levels[1].capacity_bytes, 228 * kKiB);
  EXPECT_EQ(a100.levels[2].capacity_bytes, 40 * kMiB);
  EXPECT_EQ(h100.levels[2].capacity_bytes, 50 * kMiB);
  EXPECT_EQ(a100.peak_gflops_f32, 19500);
  EXPECT_EQ(a100.peak_gflops_tf32, 156000);
  EXPECT_EQ(h100.peak_gflops_f32, 67000);
  EXPECT_EQ(a100.levels[3].bandwidth_gbs, 2039);
  EXPECT_EQ(a100_40.levels[3].bandwidth_gbs, 1555);
  EXPECT_EQ(h100.levels[3].bandwidth_gbs, 3350);
  EXPECT_EQ(h200.levels[3].bandwidth_gbs, 4800);
}

TEST(CudaPreset, GenerationsCompareAsPublished) {
  Target a100 = cuda_preset("a100"), a100_40 = cuda_preset("a100-40gb");
  Target h100 = cuda_preset("h100"), h200 = cuda_preset("h200");
  EXPECT_GT(h100.levels.back().bandwidth_gbs, a100.levels.back().bandwidth_gbs);
  EXPECT_GT(a100.levels.back().bandwidth_gbs, a100_40.levels.back().bandwidth_gbs);
  EXPECT_GT(h200.levels.back().bandwidth_gbs, h100.levels.back().bandwidth_gbs);
  EXPECT_GT(h200.levels.back().capacity_bytes, h100.levels.back().capacity_bytes);
  EXPECT_GT(h100.peak_gflops_f32, a100.peak_gflops_f32);
  // H200 is H100's compute with more and faster memory.
  Target h200_compute = h200;
  h200_compute.name = h100.name;
  h200_compute.levels.back() = h100.levels.back();
  EXPECT_EQ(h200_compute, h100);
}

TEST(CudaPreset, NamesAreCaseInsensitive) { EXPECT_EQ(cuda_preset("H100"), cuda_preset("h100")); }

TEST(CudaPreset, AnUnknownNameListsTheValidOnes) {
  std::string msg = testlib::error_of([] { cuda_preset("v100"); });
  EXPECT_NE(msg.find("'v100'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("a100, a100-40gb, h100, h200"), std::string::npos) << msg;
}

// The names the CUDA driver reports for each GPU select its preset; others none.
TEST(CudaPreset, DeviceNamesSelectTheirPreset) {
  EXPECT_EQ(cuda_preset_for_device("NVIDIA H100 80GB HBM3"), "h100");
  EXPECT_EQ(cuda_preset_for_device("NVIDIA H200"), "h200");
  EXPECT_EQ(cuda_preset_for_device("NVIDIA A100-SXM4-80GB"), "a100");
  EXPECT_EQ(cuda_preset_for_device("NVIDIA A100-SXM4-40GB"), "a100-40gb");
  EXPECT_EQ(cuda_preset_for_device("NVIDIA GeForce RTX 4090"), "");
}

// Measured figures replace the main memory's bandwidth and the f32 peak, nothing else; a
// figure of 0 (not measured) leaves the datasheet's.
TEST(CudaPreset, MeasurementsRefineBandwidthAndPeak) {
  Target h100 = cuda_preset("h100");
  Target r = refined_cuda_target(h100, 2980, 51000);
  EXPECT_EQ(main_memory(r).bandwidth_gbs, 2980);
  EXPECT_EQ(r.peak_gflops_f32, 51000);
  Target back = r;
  back.levels.back().bandwidth_gbs = main_memory(h100).bandwidth_gbs;
  back.peak_gflops_f32 = h100.peak_gflops_f32;
  EXPECT_EQ(back, h100);
  EXPECT_EQ(refined_cuda_target(h100, 0, 0), h100);
}

}  // namespace
}  // namespace orchid::target
