// Targets as values: JSON round trip, checked reading, a stable fingerprint.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "target/detect.h"
#include "target/presets.h"
#include "target/target.h"
#include "testlib/errors.h"

namespace orchid::target {
namespace {

using nlohmann::json;

Target sample() {
  Target t;
  t.name = "Sample CPU";
  t.cores = 4;
  t.simd_bits = 256;
  t.isa = {"avx2", "sse2"};
  t.levels = {{"registers", 512, 32, 800.0, false},
              {"L1d", 32 << 10, 64, 400.125, false},
              {"DRAM", int64_t(16) << 30, 64, 20.0 / 3.0, true}};
  t.peak_gflops_f32 = 100.0 / 7.0;  // not exact in decimal: the round trip must still be
  t.compiler = "gcc 12.2.0";
  return t;
}

Target round_trip(const Target& t) { return json::parse(json(t).dump()).get<Target>(); }

TEST(TargetJson, RoundTrips) {
  EXPECT_EQ(round_trip(sample()), sample());
  EXPECT_EQ(round_trip(detect_host()), detect_host());
  for (std::string_view name : cuda_preset_names()) EXPECT_EQ(round_trip(cuda_preset(name)), cuda_preset(name)) << name;
}

TEST(TargetJson, WritesEveryField) {
  json j = sample();
  for (const char* key : {"kind", "name", "cores", "simd_bits", "isa", "levels", "peak_gflops_f32",
                          "peak_gflops_tf32", "compiler", "fingerprint"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["kind"], "cpu");
  EXPECT_EQ(j["levels"][1]["name"], "L1d");
  EXPECT_EQ(j["levels"][1]["capacity_bytes"], 32 << 10);
  EXPECT_EQ(j["levels"][2]["shared_across_cores"], true);
  EXPECT_EQ(j["fingerprint"], sample().fingerprint());
  EXPECT_EQ(json(cuda_preset("h100"))["kind"], "cuda");
}

std::string read_error(json j) {
  return testlib::error_of([&] { j.get<Target>(); });
}

TEST(TargetJson, ReadingChecksKeysAndTypes) {
  json j = sample();
  j.erase("cores");
  EXPECT_NE(read_error(j).find("missing key 'cores'"), std::string::npos) << read_error(j);
  j = sample();
  j["simd_bits"] = "wide";
  EXPECT_NE(read_error(j).find("key 'simd_bits' has the wrong type"), std::string::npos) << read_error(j);
  j = sample();
  j["levels"][0].erase("bandwidth_gbs");
  EXPECT_NE(read_error(j).find("memory level: missing key 'bandwidth_gbs'"), std::string::npos) << read_error(j);
  j = sample();
  j["kind"] = "tpu";
  EXPECT_NE(read_error(j).find("unknown kind 'tpu'"), std::string::npos) << read_error(j);
  j = sample();
  j["isa"] = {"sse2", "avx2"};
  EXPECT_NE(read_error(j).find("sorted and unique"), std::string::npos) << read_error(j);
  j = sample();
  j["cores"] = 0;
  EXPECT_NE(read_error(j).find("cores must be at least 1"), std::string::npos) << read_error(j);
  j = sample();
  j["levels"] = json::array();
  EXPECT_NE(read_error(j).find("no memory levels"), std::string::npos) << read_error(j);
  j = sample();
  j["levels"][1]["bandwidth_gbs"] = -1.0;
  EXPECT_NE(read_error(j).find("level 'L1d'"), std::string::npos) << read_error(j);
  EXPECT_NE(testlib::error_of([] { json(42).get<Target>(); }).find("expected a JSON object"), std::string::npos);
}

TEST(Fingerprint, IsAStableHashOfDeviceIsaCompilerAndCodegenVersion) {
  ASSERT_EQ(kCodegenVersion, 1) << "bumping the codegen version changes every fingerprint: update this value";
  std::string base = sample().fingerprint();
  EXPECT_EQ(base.size(), 16u);
  EXPECT_EQ(sample().fingerprint(), base);
  Target t = sample();
  t.cores = 64, t.levels[2].bandwidth_gbs = 1, t.peak_gflops_f32 = 1;
  EXPECT_EQ(t.fingerprint(), base) << "measured numbers are not part of it";
  t.name = "Other";
  EXPECT_NE(t.fingerprint(), base) << "the device is";
  t = sample();
  t.isa.push_back("fma");
  EXPECT_NE(t.fingerprint(), base);
  t = sample();
  t.compiler = "gcc 13.1.0";
  EXPECT_NE(t.fingerprint(), base);
  EXPECT_NE(cuda_preset("a100").fingerprint(), cuda_preset("h100").fingerprint());
  EXPECT_NE(cuda_preset("h100").fingerprint(), cuda_preset("h200").fingerprint());
}

TEST(TargetHelpers, FindLevelsByName) {
  Target t = sample();
  EXPECT_EQ(level_index(t, "L1d"), 1u);
  EXPECT_EQ(level_index(t, "L3"), std::nullopt);
  EXPECT_EQ(main_memory(t).name, "DRAM");
  EXPECT_EQ(target_kind_name(TargetKind::Cuda), "cuda");
}

}  // namespace
}  // namespace orchid::target
