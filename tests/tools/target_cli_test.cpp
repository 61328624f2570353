// `orchid target`: the host as JSON with the keys scripts read, presets, errors. The host's
// measurement is seeded into a temporary cache with a small probe, so these tests read it
// back rather than spend seconds measuring.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "target/detect.h"
#include "target/host.h"
#include "testlib/subprocess.h"
#include "testlib/temp_dir.h"

namespace orchid {
namespace {

using nlohmann::json;
using testlib::run_process;

testlib::ProcessResult orchid_cli(std::vector<std::string> args) {
  args.insert(args.begin(), ORCHID_BIN);
  return run_process(args);
}

target::HostTarget seed_cache(const std::string& path) {
  target::ProbeOptions small;
  small.repetitions = 1;
  small.triad_bytes_per_array = 2 << 20;
  small.min_sample_seconds = 0.001;
  small.gemm_size = 64;
  return target::host_target(small, path);
}

json parse_output(const testlib::ProcessResult& r) {
  json j = json::parse(r.output, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << r.output;
  return j;
}

TEST(TargetCli, HostJsonHasTheKeysScriptsRead) {
  testlib::TempDir dir("orchid_target_cli");
  std::string cache = dir.file("target.json");
  target::HostTarget seeded = seed_cache(cache);
  auto r = orchid_cli({"target", "--json", "--cache", cache});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json j = parse_output(r);
  for (const char* key : {"cpu_model", "cores", "isa", "caches", "dram_bandwidth_gbs", "gemm_peak_gflops", "levels",
                          "fingerprint", "measured", "cache_file"})
    EXPECT_TRUE(j.contains(key)) << key << " in " << r.output;
  target::Target host = target::detect_host();
  EXPECT_EQ(j["cpu_model"], host.name);
  EXPECT_EQ(j["cores"], host.cores);
  EXPECT_EQ(j["isa"], host.isa);
  EXPECT_EQ(j["caches"].size(), host.levels.size() - 2);  // neither registers nor DRAM
  EXPECT_EQ(j["levels"].size(), host.levels.size());
  EXPECT_EQ(j["measured"], false);
  EXPECT_EQ(j["cache_file"], cache);
  EXPECT_EQ(j["dram_bandwidth_gbs"].get<double>(), seeded.measurement.bandwidth_gbs.at("DRAM"));
  EXPECT_EQ(j["gemm_peak_gflops"].get<double>(), seeded.measurement.gemm_gflops);
  EXPECT_EQ(j.get<target::Target>(), seeded.target);  // the full target reads back
}

TEST(TargetCli, HostTableSaysWhereTheNumbersComeFrom) {
  testlib::TempDir dir("orchid_target_cli");
  std::string cache = dir.file("target.json");
  seed_cache(cache);
  auto r = orchid_cli({"target", "--cache", cache});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("target: " + target::detect_host().name + " (cpu)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("DRAM"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("measurement: cached in " + cache), std::string::npos) << r.output;
}

TEST(TargetCli, DefaultCacheIsUnderHome) {
  testlib::TempDir home("orchid_target_home");
  std::string cache = home.str() + "/.cache/orchid/target.json";
  seed_cache(cache);
  auto r = run_process({"/usr/bin/env", "HOME=" + home.str(), ORCHID_BIN, "target", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json j = parse_output(r);
  EXPECT_EQ(j["cache_file"], cache);
  EXPECT_EQ(j["measured"], false);
  auto no_home = run_process({"/usr/bin/env", "-u", "HOME", ORCHID_BIN, "target"});
  EXPECT_EQ(no_home.exit_code, 1);
  EXPECT_NE(no_home.output.find("HOME is not set"), std::string::npos) << no_home.output;
}

TEST(TargetCli, PresetJson) {
  auto r = orchid_cli({"target", "--preset", "h100", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json j = parse_output(r);
  EXPECT_EQ(j["kind"], "cuda");
  EXPECT_EQ(j["cores"], 132);
  EXPECT_EQ(j["isa"], json::array({"sm_90a"}));
  EXPECT_EQ(j["dram_bandwidth_gbs"], 3350.0);
  EXPECT_EQ(j["gemm_peak_gflops"], 67000.0);
  EXPECT_EQ(j["levels"].size(), 4u);
  EXPECT_FALSE(j.contains("cpu_model"));
}

TEST(TargetCli, PresetTable) {
  auto r = orchid_cli({"target", "--preset", "a100"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("NVIDIA A100"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("HBM"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("2039.0 GB/s"), std::string::npos) << r.output;
}

TEST(TargetCli, BadPresetIsAUserErrorListingTheValidNames) {
  auto r = orchid_cli({"target", "--preset", "v100"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("unknown CUDA target preset 'v100'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("a100, a100-40gb, h100, h200"), std::string::npos) << r.output;
  EXPECT_EQ(orchid_cli({"target", "--preset", "h100", "--refresh"}).exit_code, 1);
}

TEST(TargetCli, ABadCacheFileIsAUserError) {
  testlib::TempDir dir("orchid_target_cli");
  std::string cache = dir.file("target.json", "{ not json");
  auto r = orchid_cli({"target", "--cache", cache});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find(cache), std::string::npos) << r.output;
}

}  // namespace
}  // namespace orchid
