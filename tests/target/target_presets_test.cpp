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

}  // namespace
}  // namespace orchid::target
