// The probe on a small, fast configuration: every number is positive and finite, and lands on
// the right level. Speed itself is never asserted (STYLE.md: benchmarks measure, tests don't).
#include <gtest/gtest.h>

#include <cmath>

#include "target/detect.h"
#include "target/probe.h"
#include "testlib/errors.h"

namespace orchid::target {
namespace {

ProbeOptions small_probe() {
  ProbeOptions o;
  o.repetitions = 2;
  o.triad_bytes_per_array = 4 << 20;
  o.min_sample_seconds = 0.002;
  o.gemm_size = 96;
  return o;
}

bool positive_finite(double v) { return std::isfinite(v) && v > 0; }

TEST(Probe, MeasuresEveryLevelAndThePeak) {
  Target t = detect_host();
  Measurement m = measure(t, small_probe());
  EXPECT_EQ(m.threads, t.cores);
  EXPECT_TRUE(positive_finite(m.gemm_gflops)) << m.gemm_gflops;
  EXPECT_EQ(m.bandwidth_gbs.size(), t.levels.size() - 1);  // all but the registers
  for (size_t i = 1; i < t.levels.size(); ++i) {
    auto it = m.bandwidth_gbs.find(t.levels[i].name);
    ASSERT_NE(it, m.bandwidth_gbs.end()) << t.levels[i].name;
    EXPECT_TRUE(positive_finite(it->second)) << t.levels[i].name << ": " << it->second;
  }
  EXPECT_TRUE(covers(m, t));
}

TEST(Probe, RunsOnTheThreadsAskedFor) {
  ProbeOptions o = small_probe();
  o.threads = 1;
  Measurement m = measure(detect_host(), o);
  EXPECT_EQ(m.threads, 1);
  EXPECT_TRUE(positive_finite(m.bandwidth_gbs.at("DRAM")));
}

TEST(Probe, SingleMeasurementsArePositive) {
  EXPECT_TRUE(positive_finite(measure_triad_gbs(2, 1 << 20, 1, 0.001)));
  EXPECT_TRUE(positive_finite(measure_read_gbs(1, 16 << 10, 1, 0.001)));
  EXPECT_TRUE(positive_finite(measure_read_gbs(2, 100, 1, 0.001)));  // rounded up to one chunk
  EXPECT_TRUE(positive_finite(measure_gemm_gflops(1, 17, 1, 0.001)));
}

TEST(Probe, RejectsBadOptions) {
  Target t = detect_host();
  ProbeOptions o = small_probe();
  o.repetitions = 0;
  EXPECT_NE(testlib::error_of([&] { measure(t, o); }).find("repetitions"), std::string::npos);
  o = small_probe();
  o.triad_bytes_per_array = 8;
  EXPECT_NE(testlib::error_of([&] { measure(t, o); }).find("too small"), std::string::npos);
}

Measurement fake_measurement(const Target& t) {
  Measurement m;
  for (size_t i = 1; i < t.levels.size(); ++i) m.bandwidth_gbs[t.levels[i].name] = 1000.0 / double(i);
  m.gemm_gflops = 250;
  m.threads = t.cores;
  return m;
}

TEST(ApplyMeasurement, FillsBandwidthsAndDerivesTheRegisters) {
  Target t = detect_host();
  Measurement m = fake_measurement(t);
  Target measured = apply_measurement(t, m);
  EXPECT_EQ(measured.peak_gflops_f32, 250);
  EXPECT_EQ(measured.levels[0].bandwidth_gbs, 250 * kRegisterBytesPerFlop);
  for (size_t i = 1; i < t.levels.size(); ++i) EXPECT_EQ(measured.levels[i].bandwidth_gbs, 1000.0 / double(i));
  // Nothing but the numbers changes.
  Target back = measured;
  back.peak_gflops_f32 = 0;
  for (MemoryLevel& l : back.levels) l.bandwidth_gbs = 0;
  EXPECT_EQ(back, t);
}

TEST(ApplyMeasurement, CoversNeedsEveryLevelAndThePeak) {
  Target t = detect_host();
  Measurement m = fake_measurement(t);
  EXPECT_TRUE(covers(m, t));
  Measurement no_peak = m;
  no_peak.gemm_gflops = 0;
  EXPECT_FALSE(covers(no_peak, t));
  Measurement no_dram = m;
  no_dram.bandwidth_gbs.erase("DRAM");
  EXPECT_FALSE(covers(no_dram, t));
  EXPECT_FALSE(covers(Measurement{}, t));
}

}  // namespace
}  // namespace orchid::target
