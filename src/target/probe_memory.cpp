// Memory bandwidth kernels: the DRAM triad and the read-only sum for cache levels.
#include <algorithm>
#include <memory>
#include <vector>

#include "support/error.h"
#include "target/probe.h"
#include "target/probe_internal.h"

namespace orchid::target {

namespace {

using detail::AlignedBuffer;

// The widest vector the compiler may use here (Orchid is built with -march=native by default).
#if defined(__AVX512F__)
constexpr int kVecBytes = 64;
#elif defined(__AVX__)
constexpr int kVecBytes = 32;
#else
constexpr int kVecBytes = 16;
#endif
typedef float Vec __attribute__((vector_size(kVecBytes)));
constexpr int64_t kUnroll = 8;  // independent accumulators: enough to cover the add latency
constexpr int64_t kChunkBytes = kUnroll * kVecBytes;

// Sums `chunks` chunks of 8 vectors `passes` times; the result keeps the loads alive.
__attribute__((noinline)) float read_passes(const Vec* v, int64_t chunks, int64_t passes) {
  Vec a0{}, a1{}, a2{}, a3{}, a4{}, a5{}, a6{}, a7{};
  for (int64_t p = 0; p < passes; ++p) {
    __asm__ volatile("" : : "r"(v) : "memory");  // each pass really reads memory
    for (int64_t i = 0; i < chunks * kUnroll; i += kUnroll) {
      a0 += v[i], a1 += v[i + 1], a2 += v[i + 2], a3 += v[i + 3];
      a4 += v[i + 4], a5 += v[i + 5], a6 += v[i + 6], a7 += v[i + 7];
    }
  }
  Vec s = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));
  float r = 0;
  for (int k = 0; k < kVecBytes / 4; ++k) r += s[k];
  return r;
}

__attribute__((noinline)) void triad(double* __restrict a, const double* __restrict b,
                                     const double* __restrict c, double s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

// Thread t's share [begin, end) of n elements, in multiples of 8 (one 64-byte line).
std::pair<int64_t, int64_t> share(int64_t n, int threads, int t) {
  int64_t lines = n / 8;
  return {lines * t / threads * 8, lines * (t + 1) / threads * 8};
}

}  // namespace

double measure_triad_gbs(int threads, int64_t bytes_per_array, int repetitions, double min_seconds) {
  int64_t n = bytes_per_array / int64_t(sizeof(double)) / 8 * 8;
  ORCHID_USER_CHECK(n >= 8 * threads) << "probe: triad arrays of " << bytes_per_array
                                      << " bytes are too small for " << threads << " threads";
  AlignedBuffer a(n * 8), b(n * 8), c(n * 8);
  double *pa = a.as<double>(), *pb = b.as<double>(), *pc = c.as<double>();
  // First touch by the thread that will stream each share (pages land on its NUMA node).
  detail::time_parallel(threads, [&](int t) {
    auto [lo, hi] = share(n, threads, t);
    std::fill(pa + lo, pa + hi, 0.0), std::fill(pb + lo, pb + hi, 1.0), std::fill(pc + lo, pc + hi, 2.0);
  });
  auto run = [&](int64_t passes) {
    return detail::time_parallel(threads, [&](int t) {
      auto [lo, hi] = share(n, threads, t);
      for (int64_t p = 0; p < passes; ++p) triad(pa + lo, pb + lo, pc + lo, 3.0, hi - lo);
    });
  };
  double seconds = detail::best_seconds_per_pass(run, min_seconds, repetitions);
  return 4.0 * double(n) * sizeof(double) / seconds / 1e9;  // read b, c; read and write a
}

double measure_read_gbs(int threads, int64_t bytes_per_thread, int repetitions, double min_seconds) {
  int64_t chunks = std::max<int64_t>(1, bytes_per_thread / kChunkBytes);
  std::vector<std::unique_ptr<AlignedBuffer>> buffers;
  for (int t = 0; t < threads; ++t) buffers.push_back(std::make_unique<AlignedBuffer>(chunks * kChunkBytes));
  detail::time_parallel(threads, [&](int t) {  // each thread touches its own first
    std::fill_n(buffers[size_t(t)]->as<float>(), chunks * kChunkBytes / 4, 1.0f);
  });
  std::vector<float> sink(size_t(threads) * 16);  // one cache line per thread
  auto run = [&](int64_t passes) {
    return detail::time_parallel(threads, [&](int t) {
      sink[size_t(t) * 16] += read_passes(buffers[size_t(t)]->as<Vec>(), chunks, passes);
    });
  };
  double seconds = detail::best_seconds_per_pass(run, min_seconds, repetitions);
  volatile float keep = sink[0];
  (void)keep;
  return double(threads) * double(chunks * kChunkBytes) / seconds / 1e9;
}

}  // namespace orchid::target
