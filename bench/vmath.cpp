// Micro-benchmark of Orchid's vector math (src/codegen/cpu/vmath.inc) against glibc's scalar
// functions, on one core: elements per second of a `#pragma omp simd` loop over 4096 inputs
// (in L1) drawn from each function's useful range, compiled as generated kernels are (-O3
// -march=native, no -ffast-math, so glibc's calls stay scalar), best of 7 timings of at least
// 50 ms; and the largest distance in ulps from the correctly rounded result over a dense sweep
// of every float whose bit pattern is a multiple of 61 (70 million inputs, every binade of
// both signs; the reference is the f64 function rounded to f32). Sigmoid has no glibc
// function: its column is 1 / (1 + expf(-x)), the scalar code a user would write.
//
// Usage: vmath_bench [--markdown FILE]   (prints the table; FILE gets it too)
#include <stdint.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "../src/codegen/cpu/vmath.inc"

namespace {

using Fn = float (*)(float);
using RefFn = double (*)(double);

// The loops under test: each a separately compiled function so that the timing loop cannot
// hoist or merge them. `noinline` keeps the call boundary; the math inside is inlined.
#define ORCHID_LOOP(name, expr)                                                       \
  __attribute__((noinline)) void name(const float* __restrict__ x, float* __restrict__ y, int64_t n) { \
    _Pragma("omp simd") for (int64_t i = 0; i < n; ++i) y[i] = expr;                   \
  }
ORCHID_LOOP(orc_exp_loop, orc_expf(x[i]))
ORCHID_LOOP(orc_log_loop, orc_logf(x[i]))
ORCHID_LOOP(orc_erf_loop, orc_erff(x[i]))
ORCHID_LOOP(orc_tanh_loop, orc_tanhf(x[i]))
ORCHID_LOOP(orc_sigmoid_loop, orc_sigmoidf(x[i]))
ORCHID_LOOP(libm_exp_loop, expf(x[i]))
ORCHID_LOOP(libm_log_loop, logf(x[i]))
ORCHID_LOOP(libm_erf_loop, erff(x[i]))
ORCHID_LOOP(libm_tanh_loop, tanhf(x[i]))
ORCHID_LOOP(libm_sigmoid_loop, 1.0f / (1.0f + expf(-x[i])))
#undef ORCHID_LOOP

using Loop = void (*)(const float*, float*, int64_t);

float orc_exp(float x) { return orc_expf(x); }
float orc_log(float x) { return orc_logf(x); }
float orc_erf(float x) { return orc_erff(x); }
float orc_tanh(float x) { return orc_tanhf(x); }
float orc_sigmoid(float x) { return orc_sigmoidf(x); }
float libm_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
double sigmoid_d(double x) { return 1.0 / (1.0 + std::exp(-x)); }

struct Case {
  const char* name;
  float lo, hi;  // timing inputs: uniform in [lo, hi] (log: log-uniform)
  bool log_uniform;
  Loop orc_loop, libm_loop;
  Fn orc, libm;
  RefFn reference;
};

std::vector<float> inputs(const Case& c, int64_t n) {
  std::vector<float> x(n);
  uint64_t s = 0x9e3779b97f4a7c15ull;
  for (int64_t i = 0; i < n; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    double u = double(s >> 11) / double(1ull << 53);
    x[i] = c.log_uniform ? float(std::exp(std::log(c.lo) + u * (std::log(c.hi) - std::log(c.lo))))
                         : float(c.lo + u * (c.hi - c.lo));
  }
  return x;
}

// Elements per second of one core: the best of 7 timings, each of whole passes over x for at
// least 50 ms.
double throughput(Loop loop, const std::vector<float>& x) {
  std::vector<float> y(x.size());
  double best = 0;
  for (int rep = 0; rep < 7; ++rep) {
    int64_t passes = 0;
    auto start = std::chrono::steady_clock::now();
    double seconds = 0;
    do {
      loop(x.data(), y.data(), static_cast<int64_t>(x.size()));
      ++passes;
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    } while (seconds < 0.05);
    best = std::max(best, double(passes) * double(x.size()) / seconds);
  }
  return best;
}

// Floats in an order where adjacent values are adjacent integers (-0 and +0 both 0).
int64_t ordered(float f) {
  int32_t i;
  std::memcpy(&i, &f, 4);
  return i < 0 ? -int64_t(i & 0x7fffffff) : int64_t(i);
}

int64_t ulps(float got, double exact) {
  float want = static_cast<float>(exact);
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got) ? 0 : INT32_MAX;
  return std::llabs(ordered(got) - ordered(want));
}

struct Worst {
  int64_t orc = 0, libm = 0;
};

Worst sweep(const Case& c) {
  Worst w;
  for (uint64_t bits = 0; bits < (uint64_t(1) << 32); bits += 61) {
    uint32_t u = static_cast<uint32_t>(bits);
    float x;
    std::memcpy(&x, &u, 4);
    double exact = c.reference(double(x));
    w.orc = std::max(w.orc, ulps(c.orc(x), exact));
    w.libm = std::max(w.libm, ulps(c.libm(x), exact));
  }
  return w;
}

}  // namespace

int main(int argc, char** argv) {
  const char* markdown = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--markdown") == 0 && i + 1 < argc) {
      markdown = argv[++i];
    } else {
      std::fprintf(stderr, "usage: vmath_bench [--markdown FILE]\n");
      return 2;
    }
  }
  const Case cases[] = {
      {"exp", -80.0f, 80.0f, false, orc_exp_loop, libm_exp_loop, orc_exp, expf, [](double x) { return std::exp(x); }},
      {"log", 1e-30f, 1e30f, true, orc_log_loop, libm_log_loop, orc_log, logf, [](double x) { return std::log(x); }},
      {"erf", -5.0f, 5.0f, false, orc_erf_loop, libm_erf_loop, orc_erf, erff, [](double x) { return std::erf(x); }},
      {"tanh", -10.0f, 10.0f, false, orc_tanh_loop, libm_tanh_loop, orc_tanh, tanhf, [](double x) { return std::tanh(x); }},
      {"sigmoid", -20.0f, 20.0f, false, orc_sigmoid_loop, libm_sigmoid_loop, orc_sigmoid, libm_sigmoid, sigmoid_d},
  };
  std::string table =
      "| function | inputs timed | Orchid (M elem/s/core) | glibc (M elem/s/core) | speed-up | Orchid max ulp | glibc max ulp |\n"
      "|---|---|---:|---:|---:|---:|---:|\n";
  for (const Case& c : cases) {
    std::vector<float> x = inputs(c, 4096);
    double orc = throughput(c.orc_loop, x), libm = throughput(c.libm_loop, x);
    Worst w = sweep(c);
    char row[256];
    std::snprintf(row, sizeof row, "| %s | [%g, %g]%s | %.0f | %.0f | %.1fx | %lld | %lld |\n", c.name, c.lo, c.hi,
                  c.log_uniform ? " log-uniform" : "", orc / 1e6, libm / 1e6, orc / libm, (long long)w.orc,
                  (long long)w.libm);
    table += row;
    std::fputs(row, stdout);
    std::fflush(stdout);
  }
  if (markdown) {
    FILE* f = std::fopen(markdown, "w");
    if (!f) {
      std::fprintf(stderr, "vmath_bench: cannot write %s\n", markdown);
      return 1;
    }
    std::fputs(table.c_str(), f);
    std::fclose(f);
  }
  return 0;
}
