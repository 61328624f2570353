// The probe: measures what detection cannot read from the machine — the bandwidth of every
// memory level and the fp32 GEMM peak — with all cores at once. It takes seconds and the
// numbers are noisy on a shared machine, so host.h runs it once and caches the result.
//
//  - DRAM: a STREAM-like triad a[i] = b[i] + s*c[i] over three arrays of doubles, each larger
//    than the last-level cache; traffic counts write-allocate, 4 arrays' worth per element.
//  - each cache level: a vectorised read-only sum over a private buffer per thread, sized
//    between the level above and this one (per-thread share for a shared cache): half of L1,
//    else the geometric mean of the two capacities.
//  - compute: oneDNN's fp32 matmul primitive, n×n×n (a multiply-add counts 2).
// Every number is the best of `repetitions` timed runs, each at least `min_sample_seconds`.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "target/target.h"

namespace orchid::target {

struct ProbeOptions {
  int threads = 0;      // 0: all cores of the target
  int repetitions = 5;  // best of this many timed runs
  // Bytes of each triad array; 0: STREAM's rule, 4 × the last-level cache, clamped to
  // [64 MiB, 1 GiB] and to 1/12 of physical memory (three arrays: at most a quarter).
  int64_t triad_bytes_per_array = 0;
  double min_sample_seconds = 0.02;  // each timed run repeats its kernel at least this long
  int64_t gemm_size = 1024;          // n of the n×n×n fp32 matmul

  bool operator==(const ProbeOptions&) const = default;
};

struct Measurement {
  std::map<std::string, double> bandwidth_gbs;  // by level name: "L1d", "L2", "L3", "DRAM"
  double gemm_gflops = 0;
  int threads = 0;  // threads the probe ran on

  bool operator==(const Measurement&) const = default;
};

// Measures every level of `detected` below the registers, and the GEMM peak.
Measurement measure(const Target& detected, const ProbeOptions& options);

// `t` with the measured bandwidths and peak filled in; the register bandwidth is derived from
// the peak (kRegisterBytesPerFlop).
Target apply_measurement(Target t, const Measurement& m);
// Whether `m` has a positive number for every level of `t` below the registers and the peak.
bool covers(const Measurement& m, const Target& t);

// The single measurements, in GB/s and GFLOP/s.
double measure_triad_gbs(int threads, int64_t bytes_per_array, int repetitions, double min_seconds);
double measure_read_gbs(int threads, int64_t bytes_per_thread, int repetitions, double min_seconds);
double measure_gemm_gflops(int threads, int64_t n, int repetitions, double min_seconds);

}  // namespace orchid::target
