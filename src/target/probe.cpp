#include "target/probe.h"

#include <algorithm>
#include <cmath>

#include "support/error.h"

namespace orchid::target {

namespace {

constexpr int64_t kMiB = 1 << 20;

bool is_registers(const MemoryLevel& l) { return l.name == "registers"; }

// The part of a level one thread may use.
int64_t per_thread_capacity(const MemoryLevel& l, int threads) {
  return l.shared_across_cores ? l.capacity_bytes / threads : l.capacity_bytes;
}

// STREAM's rule: each array 4 × the total last-level cache, at least 64 MiB. At most 1 GiB:
// first-touching larger arrays takes longer than the stream itself (over 15 s for 3 × 2 GiB
// on a VM), and a 3 GiB stream is past any cache a core can use. At most 1/12 of memory.
int64_t default_triad_bytes(const Target& t) {
  int64_t llc = 0;
  for (const MemoryLevel& l : t.levels)
    if (!is_registers(l) && &l != &main_memory(t))
      llc = l.shared_across_cores ? l.capacity_bytes : l.capacity_bytes * t.cores;
  int64_t bytes = std::clamp(4 * llc, 64 * kMiB, 1024 * kMiB);
  int64_t memory = main_memory(t).capacity_bytes;
  return memory > 0 ? std::min(bytes, memory / 12) : bytes;
}

// A working set inside a level and well outside the one above: half the first level, else
// the geometric mean of the two per-thread capacities (levels span orders of magnitude; an
// arithmetic midpoint of L2 and a 480 MiB L3 reads mostly from DRAM).
int64_t working_set(int64_t above, int64_t capacity) {
  if (above <= 0) return capacity / 2;
  return int64_t(std::sqrt(double(above) * double(capacity)));
}

}  // namespace

Measurement measure(const Target& detected, const ProbeOptions& o) {
  ORCHID_USER_CHECK(o.repetitions >= 1) << "probe: repetitions must be at least 1";
  ORCHID_USER_CHECK(o.gemm_size >= 1) << "probe: the GEMM size must be at least 1";
  Measurement m;
  m.threads = o.threads > 0 ? o.threads : detected.cores;
  int64_t above = 0;  // per-thread capacity of the level above
  const MemoryLevel& dram = main_memory(detected);
  for (const MemoryLevel& l : detected.levels) {
    if (is_registers(l) || &l == &dram) continue;
    int64_t capacity = per_thread_capacity(l, m.threads);
    m.bandwidth_gbs[l.name] =
        measure_read_gbs(m.threads, working_set(above, capacity), o.repetitions, o.min_sample_seconds);
    above = capacity;
  }
  int64_t triad = o.triad_bytes_per_array > 0 ? o.triad_bytes_per_array : default_triad_bytes(detected);
  m.bandwidth_gbs[dram.name] = measure_triad_gbs(m.threads, triad, o.repetitions, o.min_sample_seconds);
  m.gemm_gflops = measure_gemm_gflops(m.threads, o.gemm_size, o.repetitions, o.min_sample_seconds);
  return m;
}

Target apply_measurement(Target t, const Measurement& m) {
  t.peak_gflops_f32 = m.gemm_gflops;
  for (MemoryLevel& l : t.levels) {
    if (is_registers(l)) {
      l.bandwidth_gbs = m.gemm_gflops * kRegisterBytesPerFlop;
      continue;
    }
    auto it = m.bandwidth_gbs.find(l.name);
    if (it != m.bandwidth_gbs.end()) l.bandwidth_gbs = it->second;
  }
  return t;
}

bool covers(const Measurement& m, const Target& t) {
  if (!(m.gemm_gflops > 0)) return false;
  for (const MemoryLevel& l : t.levels) {
    if (is_registers(l)) continue;
    auto it = m.bandwidth_gbs.find(l.name);
    if (it == m.bandwidth_gbs.end() || !(it->second > 0)) return false;
  }
  return true;
}

}  // namespace orchid::target
