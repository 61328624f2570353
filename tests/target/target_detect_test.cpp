// Detection of the host: plausible values on this machine, and the sysfs, cpuinfo and cpuid
// readers on known inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

#include "target/detect.h"
#include "testlib/temp_dir.h"

namespace orchid::target {
namespace {

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(DetectHost, GivesPlausibleValues) {
  Target t = detect_host();
  EXPECT_EQ(t.kind, TargetKind::Cpu);
  EXPECT_FALSE(t.name.empty());
  EXPECT_FALSE(t.compiler.empty());
  EXPECT_GE(t.cores, 1);
  EXPECT_LE(t.cores, int(std::max(1u, std::thread::hardware_concurrency())));
  EXPECT_TRUE(t.simd_bits == 128 || t.simd_bits == 256 || t.simd_bits == 512) << t.simd_bits;
  EXPECT_TRUE(std::is_sorted(t.isa.begin(), t.isa.end()));
  EXPECT_EQ(std::adjacent_find(t.isa.begin(), t.isa.end()), t.isa.end());
#if defined(__x86_64__)
  EXPECT_TRUE(has(t.isa, "sse2"));
  EXPECT_EQ(t.simd_bits == 512, has(t.isa, "avx512f"));
#endif
  ASSERT_GE(t.levels.size(), 2u);
  EXPECT_EQ(t.levels.front().name, "registers");
  EXPECT_EQ(t.levels.front().transaction_bytes * 8, t.simd_bits);
  EXPECT_EQ(t.levels.back().name, "DRAM");
  EXPECT_GT(t.levels.back().capacity_bytes, 0);
  EXPECT_TRUE(t.levels.back().shared_across_cores);
  for (size_t i = 1; i + 1 < t.levels.size(); ++i) {
    const MemoryLevel& l = t.levels[i];
    EXPECT_GT(l.capacity_bytes, 0) << l.name;
    EXPECT_GT(l.transaction_bytes, 0) << l.name;
    if (i > 1) {
      EXPECT_LT(t.levels[i - 1].capacity_bytes, l.capacity_bytes) << l.name;
    }
  }
  for (const MemoryLevel& l : t.levels) EXPECT_EQ(l.bandwidth_gbs, 0.0) << l.name << " is measured by the probe";
  EXPECT_EQ(t.peak_gflops_f32, 0.0);
}

TEST(DetectHost, NamesCacheLevelsAfterTheirLevel) {
  Target t = detect_host();
  if (t.levels.size() < 3) GTEST_SKIP() << "no caches in sysfs here";
  EXPECT_EQ(t.levels[1].name, "L1d");
  for (size_t i = 2; i + 1 < t.levels.size(); ++i) EXPECT_EQ(t.levels[i].name, "L" + std::to_string(i));
}

void write_index(const testlib::TempDir& dir, int index, const std::string& level, const std::string& type,
                 const std::string& size, const std::string& line, const std::string& shared) {
  std::string d = "index" + std::to_string(index) + "/";
  dir.file(d + "level", level + "\n");
  dir.file(d + "type", type + "\n");
  dir.file(d + "size", size + "\n");
  dir.file(d + "coherency_line_size", line + "\n");
  dir.file(d + "shared_cpu_list", shared + "\n");
}

TEST(ReadCaches, ReadsDataAndUnifiedCachesByLevel) {
  testlib::TempDir dir("orchid_sysfs");
  write_index(dir, 3, "3", "Unified", "32768K", "64", "0-7,16-23");
  write_index(dir, 0, "1", "Data", "48K", "64", "0,16");
  write_index(dir, 1, "1", "Instruction", "32K", "64", "0,16");
  write_index(dir, 2, "2", "Unified", "2M", "64", "0,16");
  write_index(dir, 4, "4", "Unified", "lots", "64", "0-31");  // unparsable: skipped
  dir.file("uevent", "x\n");
  std::vector<CacheInfo> caches = read_caches(dir.str());
  std::vector<CacheInfo> expected = {{1, "Data", 48 << 10, 64, 2},
                                     {2, "Unified", 2 << 20, 64, 2},
                                     {3, "Unified", int64_t(32) << 20, 64, 16}};
  EXPECT_EQ(caches, expected);
  EXPECT_TRUE(read_caches(dir.str() + "/missing").empty());
}

TEST(ReadCaches, ParsesSizesAndCpuLists) {
  EXPECT_EQ(parse_cache_size("48K"), 48 * 1024);
  EXPECT_EQ(parse_cache_size("2M"), 2 * 1024 * 1024);
  EXPECT_EQ(parse_cache_size("1G"), int64_t(1) << 30);
  EXPECT_EQ(parse_cache_size("512"), 512);
  EXPECT_EQ(parse_cache_size(""), -1);
  EXPECT_EQ(parse_cache_size("K"), -1);
  EXPECT_EQ(parse_cache_size("12Q"), -1);
  EXPECT_EQ(count_cpu_list("0-3,8"), 5);
  EXPECT_EQ(count_cpu_list("5"), 1);
  EXPECT_EQ(count_cpu_list("0,2,4-5"), 4);
  EXPECT_EQ(count_cpu_list(""), 0);
  EXPECT_EQ(count_cpu_list("3-1"), 0);
  EXPECT_EQ(count_cpu_list("a-b"), 0);
}

TEST(CpuinfoFlags, ReadsTheFirstFlagsLine) {
  std::string x86 =
      "processor\t: 0\nmodel name\t: Some CPU\nflags\t\t: fpu sse2 pni avx2 sse2\n\n"
      "processor\t: 1\nflags\t\t: fpu avx512f\n";
  EXPECT_EQ(cpuinfo_flags(x86), (std::vector<std::string>{"avx2", "fpu", "sse2", "sse3"}));
  std::string arm = "processor\t: 0\nFeatures\t: fp asimd evtstrm aes\nCPU part\t: 0xd0c\n";
  EXPECT_EQ(cpuinfo_flags(arm), (std::vector<std::string>{"aes", "asimd", "evtstrm", "fp"}));
  EXPECT_TRUE(cpuinfo_flags("processor : 0\n").empty());
}

TEST(HostIsa, AgreesWithProcCpuinfo) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "cpuid is read on x86-64 only";
#else
  std::ifstream in("/proc/cpuinfo");
  if (!in) GTEST_SKIP() << "no /proc/cpuinfo";
  std::stringstream text;
  text << in.rdbuf();
  std::vector<std::string> proc = cpuinfo_flags(text.str()), isa = host_isa();
  // Extensions every kernel since 4.x names; newer ones may be missing from an older kernel.
  for (const char* f : {"sse", "sse2", "sse3", "ssse3", "sse4_1", "sse4_2", "popcnt", "avx", "f16c", "fma",
                        "avx2", "bmi1", "bmi2", "movbe", "avx512f", "avx512dq", "avx512cd", "avx512bw", "avx512vl"})
    EXPECT_EQ(has(isa, f), has(proc, f)) << f;
#endif
}

TEST(SimdBits, FollowsTheWidestVectorExtension) {
  EXPECT_EQ(simd_bits_for({"avx", "avx2", "avx512f", "sse2"}), 512);
  EXPECT_EQ(simd_bits_for({"avx", "avx2", "sse2"}), 256);
  EXPECT_EQ(simd_bits_for({"sse2"}), 128);
  EXPECT_EQ(simd_bits_for({"asimd"}), 128);
}

}  // namespace
}  // namespace orchid::target
