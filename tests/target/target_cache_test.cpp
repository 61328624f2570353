// The host target's measurement cache: measured once, read back afterwards, refreshed on
// request; other hosts' entries survive; a bad file is an error naming it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "target/detect.h"
#include "target/host.h"
#include "testlib/errors.h"
#include "testlib/temp_dir.h"

namespace orchid::target {
namespace {

using nlohmann::json;

ProbeOptions small_probe() {
  ProbeOptions o;
  o.repetitions = 1;
  o.triad_bytes_per_array = 2 << 20;
  o.min_sample_seconds = 0.001;
  o.gemm_size = 64;
  return o;
}

json read_json(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

void write_json(const std::string& path, const json& j) { std::ofstream(path) << j.dump(2); }

TEST(HostTarget, MeasuresOnceThenReadsTheCache) {
  testlib::TempDir dir("orchid_target_cache");
  std::string path = dir.file("sub/dir/target.json");  // folders are created
  HostTarget first = host_target(small_probe(), path);
  EXPECT_TRUE(first.measured);
  ASSERT_TRUE(std::filesystem::exists(path));
  EXPECT_TRUE(covers(first.measurement, detect_host()));
  EXPECT_EQ(first.target, apply_measurement(detect_host(), first.measurement));

  HostTarget second = host_target(small_probe(), path);
  EXPECT_FALSE(second.measured);
  EXPECT_EQ(second.measurement, first.measurement);  // doubles survive the JSON exactly
  EXPECT_EQ(second.target, first.target);

  HostTarget refreshed = host_target(small_probe(), path, /*refresh=*/true);
  EXPECT_TRUE(refreshed.measured);
  EXPECT_FALSE(host_target(small_probe(), path).measured);
}

TEST(HostTarget, StoresTheEntryUnderTheHostKey) {
  testlib::TempDir dir("orchid_target_cache");
  std::string path = dir.file("target.json");
  HostTarget h = host_target(small_probe(), path);
  json j = read_json(path);
  EXPECT_EQ(j["format"], "orchid-target-cache");
  EXPECT_EQ(j["version"], 1);
  std::string key = cache_key(detect_host());
  EXPECT_NE(key.find(detect_host().fingerprint()), std::string::npos);
  EXPECT_NE(key.find(detect_host().name), std::string::npos);
  ASSERT_TRUE(j["entries"].contains(key)) << j.dump(2);
  EXPECT_EQ(j["entries"][key]["gemm_gflops"].get<double>(), h.measurement.gemm_gflops);
  EXPECT_EQ(j["entries"][key]["probe"]["gemm_size"], 64);
}

TEST(HostTarget, KeepsOtherHostsEntries) {
  testlib::TempDir dir("orchid_target_cache");
  std::string path = dir.file("target.json");
  host_target(small_probe(), path);
  json j = read_json(path);
  j["entries"]["another host"] = {{"bandwidth_gbs", {{"DRAM", 1.5}}}, {"gemm_gflops", 2.5}, {"threads", 3}};
  write_json(path, j);
  EXPECT_TRUE(host_target(small_probe(), path, /*refresh=*/true).measured);
  EXPECT_EQ(read_json(path)["entries"]["another host"]["gemm_gflops"], 2.5);
}

TEST(HostTarget, RemeasuresAnEntryMissingALevel) {
  testlib::TempDir dir("orchid_target_cache");
  std::string path = dir.file("target.json");
  host_target(small_probe(), path);
  json j = read_json(path);
  std::string key = cache_key(detect_host());
  j["entries"][key]["bandwidth_gbs"].erase("DRAM");
  write_json(path, j);
  HostTarget h = host_target(small_probe(), path);
  EXPECT_TRUE(h.measured);
  EXPECT_TRUE(read_json(path)["entries"][key]["bandwidth_gbs"].contains("DRAM"));
}

TEST(HostTarget, ABadFileIsAnErrorNamingIt) {
  testlib::TempDir dir("orchid_target_cache");
  std::string path = dir.file("target.json", "this is not json");
  std::string msg = testlib::error_of([&] { host_target(small_probe(), path); });
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("not an Orchid target cache"), std::string::npos) << msg;
  write_json(path, {{"format", "orchid-target-cache"}, {"version", 99}, {"entries", json::object()}});
  EXPECT_NE(testlib::error_of([&] { host_target(small_probe(), path); }).find(path), std::string::npos);
  // A refresh replaces it.
  EXPECT_TRUE(host_target(small_probe(), path, /*refresh=*/true).measured);
  EXPECT_FALSE(host_target(small_probe(), path).measured);
}

TEST(HostTarget, ABadEntryIsAnErrorNamingTheFileAndKey) {
  testlib::TempDir dir("orchid_target_cache");
  std::string path = dir.file("target.json");
  std::string key = cache_key(detect_host());
  write_json(path, {{"format", "orchid-target-cache"},
                    {"version", 1},
                    {"entries", {{key, {{"bandwidth_gbs", "fast"}, {"gemm_gflops", 1}, {"threads", 1}}}}}});
  std::string msg = testlib::error_of([&] { host_target(small_probe(), path); });
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("bad target cache entry"), std::string::npos) << msg;
}

TEST(HostTarget, WithoutACachePathAlwaysMeasures) {
  EXPECT_TRUE(host_target(small_probe(), "").measured);
  EXPECT_TRUE(host_target(small_probe(), "").measured);
}

}  // namespace
}  // namespace orchid::target
