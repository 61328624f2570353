// Orchid's vectorizable math for generated code (src/codegen/cpu/vmath.inc):
//  - every f32 function against the C library in double precision rounded to float, over a
//    dense sample of all floats (every exponent, subnormals, zeros, infinities, NaNs), checking
//    the error bound stated in vmath.inc, in both of its builds: with FMA (as this machine
//    compiles generated code) and without (as a target without FMA does);
//  - the special values the functions promise;
//  - the f16 / bf16 conversions against support/half.h (and the F16C instructions where the
//    build has them) on every half and bfloat16, and on floats around every rounding boundary;
//  - the embedded texts (vmath_source(), kernel_abi_source()) against their files;
//  - vmath_source() compiled as generated code is: the loops vectorize, call nothing, and
//    compute the same bits as the functions tested here.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdint.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/cpu/codegen.h"
#include "codegen/cpu/compiler.h"
#include "codegen/cpu/vmath.h"
#include "support/half.h"
#include "testlib/subprocess.h"
#include "testlib/temp_dir.h"

#if defined(__F16C__)
#include <immintrin.h>
#endif

// The functions as this build compiles them: with FMA where the target has it.
namespace fma_build {
#include "codegen/cpu/vmath.inc"
}  // namespace fma_build

// The functions as a target without FMA computes them: ORC_FMA is a multiply and an add, and
// the compiler must not fuse them back (ORC_VM functions are always inlined, so the wrappers
// that the tests call live inside the same options).
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#else
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#endif
#define ORC_VMATH_NO_FMA
namespace plain_build {
#include "codegen/cpu/vmath.inc"
float expf_(float x) { return orc_expf(x); }
float logf_(float x) { return orc_logf(x); }
float erff_(float x) { return orc_erff(x); }
float tanhf_(float x) { return orc_tanhf(x); }
float sigmoidf_(float x) { return orc_sigmoidf(x); }
}  // namespace plain_build
#undef ORC_VMATH_NO_FMA
#if defined(__clang__)
#pragma STDC FP_CONTRACT ON
#else
#pragma GCC pop_options
#endif

namespace fma_build {
float expf_(float x) { return orc_expf(x); }
float logf_(float x) { return orc_logf(x); }
float erff_(float x) { return orc_erff(x); }
float tanhf_(float x) { return orc_tanhf(x); }
float sigmoidf_(float x) { return orc_sigmoidf(x); }
}  // namespace fma_build

namespace orchid::codegen::cpu {
namespace {

using UnaryF = float (*)(float);
using UnaryD = double (*)(double);

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

uint32_t to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// Floats as integers in value order (-0 and +0 both 0): the difference of two is their
// distance in ulps.
int64_t ordered(float f) {
  uint32_t u = to_bits(f);
  return (u & 0x80000000u) ? -int64_t(u & 0x7fffffffu) : int64_t(u);
}

// The spacing of floats at the exact value `v`: 2^-149 in the subnormal range.
double float_ulp(double v) {
  double a = std::fabs(v);
  if (a < 0x1p-126) return 0x1p-149;
  int e;
  std::frexp(a, &e);  // a = m 2^e, m in [0.5, 1)
  return std::ldexp(1.0, e - 24);
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double exp_d(double x) { return std::exp(x); }
double log_d(double x) { return std::log(x); }
double erf_d(double x) { return std::erf(x); }
double tanh_d(double x) { return std::tanh(x); }

// The largest errors of one build of one function against the reference.
struct Accuracy {
  int64_t max_ulps = 0;  // distance from the correctly rounded result
  float max_ulps_at = 0;
  double max_error = 0;  // |result - exact| in ulps at the exact value
  float max_error_at = 0;
  int64_t wrong_specials = 0;  // NaN or infinity unlike the correctly rounded result
  float wrong_special_at = 0;

  void add(float x, float y, double exact) {
    float rounded = static_cast<float>(exact);
    if (std::isnan(rounded) || std::isnan(y) || std::isinf(rounded) || std::isinf(y)) {
      bool same = std::isnan(rounded) ? std::isnan(y) : y == rounded;
      if (!same && wrong_specials++ == 0) wrong_special_at = x;
      return;
    }
    int64_t ulps = std::llabs(ordered(y) - ordered(rounded));
    if (ulps > max_ulps) max_ulps = ulps, max_ulps_at = x;
    double error = std::fabs(double(y) - exact) / float_ulp(exact);
    if (error > max_error) max_error = error, max_error_at = x;
  }
};

std::string describe(const char* name, const char* build, const Accuracy& a) {
  char line[300];
  std::snprintf(line, sizeof line,
                "%s (%s): %lld ulp from the correctly rounded result at most (x = %a); "
                "%.3f ulp from the exact value at most (x = %a)",
                name, build, (long long)a.max_ulps, a.max_ulps_at, a.max_error, a.max_error_at);
  return line;
}

// Floats on either side of the places where the functions change method or range, and of
// the ends of the float range, and every kind of NaN.
std::vector<float> edge_inputs() {
  const float centres[] = {0.0f,      0x1p-149f,    0x1p-126f,    1.0f,      0.5f,
                           2.0f,      0x1.fffffep127f, 88.72283935546875f, 89.0f,
                           87.33654f, 103.97208f,   104.0f,       100.0f,    0.921875f,
                           4.0f,      0.75f,        9.1f,         10.0f,     0x1p-25f,
                           0.34657359f, 1e-20f,     0x1.6a09e6p-1f, 0x1.6a09e6p0f};
  std::vector<float> xs;
  for (float c : centres)
    for (int sign = 0; sign < 2; ++sign)
      for (int d = -4; d <= 4; ++d) {
        int64_t bits = int64_t(to_bits(c)) + d;
        if (bits < 0 || bits > 0x7f800000) continue;
        xs.push_back(from_bits(uint32_t(bits) | (sign ? 0x80000000u : 0u)));
      }
  for (uint32_t nan : {0x7fc00000u, 0x7f800001u, 0x7fbfffffu, 0xffc00000u, 0xff800001u})
    xs.push_back(from_bits(nan));
  xs.push_back(std::numeric_limits<float>::infinity());
  xs.push_back(-std::numeric_limits<float>::infinity());
  return xs;
}

// Every float whose bits are a multiple of the stride (17 million for 251: some 33,000 in
// every binade), then the edge inputs, each offered to `visit(x)`.
template <class Visit>
void for_sample(uint64_t stride, Visit visit) {
  for (uint64_t bits = 0; bits < (uint64_t(1) << 32); bits += stride)
    visit(from_bits(uint32_t(bits)));
  for (float x : edge_inputs()) visit(x);
}

constexpr uint64_t kStride = 251;

struct MathCase {
  const char* name;
  UnaryF fma_fn;
  UnaryF plain_fn;
  UnaryD reference;
  // Distance from the correctly rounded result, as stated above the function in vmath.inc.
  int64_t fma_bound_ulps;
  int64_t plain_bound_ulps;
};

void check_accuracy(const MathCase& c, uint64_t stride) {
  Accuracy fma, plain;
  for_sample(stride, [&](float x) {
    double exact = c.reference(double(x));
    fma.add(x, c.fma_fn(x), exact);
    plain.add(x, c.plain_fn(x), exact);
  });
  struct Build {
    const char* name;
    const Accuracy* accuracy;
    int64_t bound_ulps;
  };
  for (auto [build, a, bound] : {Build{"FMA", &fma, c.fma_bound_ulps},
                                 Build{"no FMA", &plain, c.plain_bound_ulps}}) {
    std::printf("%s\n", describe(c.name, build, *a).c_str());
    EXPECT_LE(a->max_ulps, bound) << describe(c.name, build, *a);
    EXPECT_EQ(a->wrong_specials, 0) << c.name << " (" << build << ") wrong at x = "
                                    << std::hexfloat << a->wrong_special_at;
  }
}

const MathCase kExp{"orc_expf", fma_build::expf_, plain_build::expf_, exp_d, 1, 1};
const MathCase kLog{"orc_logf", fma_build::logf_, plain_build::logf_, log_d, 1, 1};
const MathCase kErf{"orc_erff", fma_build::erff_, plain_build::erff_, erf_d, 1, 1};
const MathCase kTanh{"orc_tanhf", fma_build::tanhf_, plain_build::tanhf_, tanh_d, 1, 1};
const MathCase kSigmoid{"orc_sigmoidf", fma_build::sigmoidf_, plain_build::sigmoidf_, sigmoid,
                        1, 2};

TEST(VmathAccuracy, Exp) { check_accuracy(kExp, kStride); }
TEST(VmathAccuracy, Log) { check_accuracy(kLog, kStride); }
TEST(VmathAccuracy, Erf) { check_accuracy(kErf, kStride); }
TEST(VmathAccuracy, Tanh) { check_accuracy(kTanh, kStride); }
TEST(VmathAccuracy, Sigmoid) { check_accuracy(kSigmoid, kStride); }

// Every float (about 30 minutes for the five): run with --gtest_also_run_disabled_tests.
TEST(VmathAccuracy, DISABLED_EveryFloat) {
  for (const MathCase* c : {&kExp, &kLog, &kErf, &kTanh, &kSigmoid}) check_accuracy(*c, 1);
}

// ---- Special values, bit for bit (signed zeros included) ----

struct Special {
  const MathCase* fn;
  float x;
  float expected;  // NaN: any NaN
};

void check_special(const Special& s, UnaryF f, const char* build) {
  float y = f(s.x);
  if (std::isnan(s.expected)) {
    EXPECT_TRUE(std::isnan(y)) << s.fn->name << "(" << std::hexfloat << s.x << ") (" << build
                               << ") = " << y << ", not NaN";
    return;
  }
  EXPECT_EQ(to_bits(y), to_bits(s.expected))
      << s.fn->name << "(" << std::hexfloat << s.x << ") (" << build << ") = " << y
      << ", expected " << s.expected;
}

TEST(VmathSpecialValues, AsTheCLibraryGivesThem) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float snan = from_bits(0x7f800001u);
  const Special cases[] = {
      {&kExp, nan, nan},        {&kExp, snan, nan},          {&kExp, inf, inf},
      {&kExp, -inf, 0.0f},      {&kExp, 88.8f, inf},         {&kExp, 0.0f, 1.0f},
      {&kExp, -0.0f, 1.0f},     {&kExp, -104.0f, 0.0f},      {&kExp, -103.0f, 0x1p-149f},
      {&kLog, nan, nan},        {&kLog, 0.0f, -inf},         {&kLog, -0.0f, -inf},
      {&kLog, -1.0f, nan},      {&kLog, -inf, nan},          {&kLog, inf, inf},
      {&kLog, 1.0f, 0.0f},      {&kLog, 0x1p-149f, -0x1.9d1da0p+6f},
      {&kErf, nan, nan},        {&kErf, inf, 1.0f},          {&kErf, -inf, -1.0f},
      {&kErf, 0.0f, 0.0f},      {&kErf, -0.0f, -0.0f},       {&kErf, 0x1p-149f, 0x1p-149f},
      {&kErf, 5.0f, 1.0f},      {&kErf, -5.0f, -1.0f},
      {&kTanh, nan, nan},       {&kTanh, inf, 1.0f},         {&kTanh, -inf, -1.0f},
      {&kTanh, 0.0f, 0.0f},     {&kTanh, -0.0f, -0.0f},      {&kTanh, 0x1p-149f, 0x1p-149f},
      {&kTanh, -0x1p-149f, -0x1p-149f}, {&kTanh, 20.0f, 1.0f},
      {&kSigmoid, nan, nan},    {&kSigmoid, inf, 1.0f},      {&kSigmoid, -inf, 0.0f},
      {&kSigmoid, 0.0f, 0.5f},  {&kSigmoid, -0.0f, 0.5f},    {&kSigmoid, 20.0f, 1.0f},
      {&kSigmoid, -105.0f, 0.0f},
  };
  for (const Special& s : cases) {
    check_special(s, s.fn->fma_fn, "FMA");
    check_special(s, s.fn->plain_fn, "no FMA");
  }
}

// Far in the negative tail, sigmoid(x) is e^x / (1 + e^x): tiny, with its relative accuracy.
TEST(VmathSpecialValues, SigmoidOfLargeNegativeIsTinyAndAccurate) {
  for (float x : {-20.0f, -50.0f, -87.0f, -88.5f, -95.0f, -100.0f, -103.5f}) {
    double exact = sigmoid(double(x));
    for (UnaryF f : {kSigmoid.fma_fn, kSigmoid.plain_fn}) {
      float y = f(x);
      EXPECT_GT(y, 0.0f) << x;
      EXPECT_LE(std::fabs(double(y) - exact), float_ulp(exact)) << std::hexfloat << x;
    }
  }
}

// ---- f16 and bf16 ----

bool is_f16_nan(uint16_t h) { return (h & 0x7fffu) > 0x7c00u; }
bool is_bf16_nan(uint16_t b) { return (b & 0x7fffu) > 0x7f80u; }

TEST(VmathHalf, EveryHalfConvertsExactlyAndRoundTrips) {
  for (uint32_t i = 0; i < 65536; ++i) {
    uint16_t h = uint16_t(i);
    float f = fma_build::orc_f16_to_f32(h);
    if (is_f16_nan(h)) {
      // NaN stays NaN, quiet, sign and payload kept.
      uint32_t expected =
          (uint32_t(h & 0x8000u) << 16) | 0x7fc00000u | (uint32_t(h & 0x3ffu) << 13);
      EXPECT_EQ(to_bits(f), expected) << std::hex << h;
      EXPECT_EQ(fma_build::orc_f32_to_f16(f), h | 0x200u) << std::hex << h;
    } else {
      EXPECT_EQ(to_bits(f), to_bits(f16_bits_to_f32(h))) << std::hex << h;
      EXPECT_EQ(fma_build::orc_f32_to_f16(f), h) << std::hex << h;
    }
#if defined(__F16C__)
    EXPECT_EQ(to_bits(f), to_bits(_cvtsh_ss(h))) << "F16C differs at " << std::hex << h;
#endif
  }
}

TEST(VmathHalf, EveryBfloat16ConvertsExactlyAndRoundTrips) {
  for (uint32_t i = 0; i < 65536; ++i) {
    uint16_t b = uint16_t(i);
    float f = fma_build::orc_bf16_to_f32(b);
    EXPECT_EQ(to_bits(f), to_bits(bf16_bits_to_f32(b))) << std::hex << b;
    uint16_t back = fma_build::orc_f32_to_bf16(f);
    EXPECT_EQ(back, is_bf16_nan(b) ? uint16_t(b | 0x40u) : b) << std::hex << b;
  }
}

// Floats around every rounding decision of a conversion that keeps `kept` mantissa bits for
// normal results: for each sign and exponent, every value of the kept bits (at most 2^10
// of them) with the dropped bits at 0, 1, just below, at and above the half-way point, and
// all ones. For f16 the number of dropped bits grows where the result is subnormal.
template <class Visit>
void for_rounding_boundaries(int kept, int min_normal_exponent, Visit visit) {
  for (uint32_t sign = 0; sign < 2; ++sign)
    for (uint32_t e = 0; e < 256; ++e) {
      int dropped = 23 - kept + std::max(0, min_normal_exponent - int(e));
      dropped = std::min(dropped, 23);
      uint32_t half = 1u << (dropped - 1), all = (1u << dropped) - 1;
      for (uint32_t upper = 0; upper < (1u << (23 - dropped)); ++upper)
        for (uint32_t low : {0u, 1u, half - 1, half, half + 1, all})
          visit(from_bits((sign << 31) | (e << 23) | (upper << dropped) | low));
    }
}

void check_f32_to_f16(float f) {
  uint16_t h = fma_build::orc_f32_to_f16(f);
  uint32_t u = to_bits(f);
  if (std::isnan(f)) {  // quiet, sign and the payload's top 10 bits kept
    uint16_t expected = uint16_t(((u >> 16) & 0x8000u) | 0x7e00u | ((u >> 13) & 0x3ffu));
    EXPECT_EQ(h, expected) << std::hex << u;
  } else {
    EXPECT_EQ(h, f32_to_f16_bits(f)) << std::hex << u;
  }
#if defined(__F16C__)
  EXPECT_EQ(h, _cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT)) << "F16C differs at " << std::hex << u;
#endif
}

TEST(VmathHalf, FloatToHalfRoundsToNearestEven) {
  // 112 + 1: the exponent of 2^-14, the smallest normal half.
  for_rounding_boundaries(10, 113, check_f32_to_f16);
  for_sample(kStride * 4, check_f32_to_f16);
}

void check_f32_to_bf16(float f) {
  EXPECT_EQ(fma_build::orc_f32_to_bf16(f), f32_to_bf16_bits(f)) << std::hex << to_bits(f);
}

TEST(VmathHalf, FloatToBfloat16RoundsToNearestEven) {
  for_rounding_boundaries(7, 0, check_f32_to_bf16);
  for_sample(kStride * 4, check_f32_to_bf16);
}

// ---- The embedded texts ----

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot read " << path << " (tests run from the source tree)";
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(VmathEmbedding, TextsAreTheirFilesByteForByte) {
  EXPECT_EQ(std::string(vmath_source()), read_file("src/codegen/cpu/vmath.inc"));
  EXPECT_EQ(std::string(kernel_abi_source()), read_file("include/orchid/kernel_abi.h"));
}

// ---- Compiled as generated code is ----

struct LoopKernel {
  const char* name;  // the kernel is orc_test_<name>
  const char* in;    // element types
  const char* out;
  const char* body;  // y[i] = body, of x[i]
};

const LoopKernel kKernels[] = {
    {"expf", "float", "float", "orc_expf(x[i])"},
    {"logf", "float", "float", "orc_logf(x[i])"},
    {"erff", "float", "float", "orc_erff(x[i])"},
    {"tanhf", "float", "float", "orc_tanhf(x[i])"},
    {"sigmoidf", "float", "float", "orc_sigmoidf(x[i])"},
    {"f16_to_f32", "uint16_t", "float", "orc_f16_to_f32(x[i])"},
    {"f32_to_f16", "float", "uint16_t", "orc_f32_to_f16(x[i])"},
    {"bf16_to_f32", "uint16_t", "float", "orc_bf16_to_f32(x[i])"},
    {"f32_to_bf16", "float", "uint16_t", "orc_f32_to_bf16(x[i])"},
    // Several in one loop, as a fused kernel has them.
    {"mixed", "float", "float",
     "orc_sigmoidf(x[i]) * orc_tanhf(x[i]) + orc_erff(orc_logf(orc_expf(x[i]) + 1.0f))"},
    {"f16_mixed", "uint16_t", "uint16_t", "orc_f32_to_f16(orc_expf(orc_f16_to_f32(x[i])))"},
};

// A source as the kernel library's (library.cpp): <stdint.h>, the ABI, vmath.inc, then one
// `#pragma omp simd` loop per kernel, and whether ORC_FMA fused.
std::string kernels_source() {
  std::string s = "#include <stdint.h>\n";
  s += kernel_abi_source();
  s += "\n";
  s += vmath_source();
  s += "\nextern \"C\" int orc_test_fma(void) {\n#if defined(__FP_FAST_FMAF)\n  return 1;\n"
       "#else\n  return 0;\n#endif\n}\n";
  for (const LoopKernel& k : kKernels)
    s += std::string("extern \"C\" void orc_test_") + k.name + "(const " + k.in + "* x, " + k.out +
         "* y, int64_t n) {\n#pragma omp simd\n  for (int64_t i = 0; i < n; ++i) y[i] = " +
         k.body + ";\n}\n";
  return s;
}

// Compiles the kernels with the flags of generated code (compiler.h, codegen.h) into a shared
// object or, with `assembly`, into assembly text; fails the test on a compiler error.
bool compile_kernels(const testlib::TempDir& dir, bool assembly, const std::string& output) {
  std::vector<std::string> argv = {"g++"};
  for (const std::string& f : base_compile_flags())
    if (!(assembly && f == "-shared")) argv.push_back(f);
  for (const std::string& f : codegen_flags()) argv.push_back(f);
  if (assembly) argv.push_back("-S");
  for (const std::string& a : {std::string("-o"), output, dir.file("k.cpp", kernels_source())})
    argv.push_back(a);
  testlib::ProcessResult r = testlib::run_process(argv);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.exit_code == 0;
}

// The assembly of one function: from its label to its end.
std::string function_asm(const std::string& all, const std::string& symbol) {
  size_t begin = all.find("\n" + symbol + ":");
  if (begin == std::string::npos) return "";
  return all.substr(begin, all.find(".cfi_endproc", begin) - begin);
}

TEST(VmathCompiled, LoopsVectorizeAndCallNothing) {
  testlib::TempDir dir("orchid_vmath");
  if (!compile_kernels(dir, true, dir.file("k.s"))) return;
  std::string all = read_file(dir.file("k.s"));
  for (const LoopKernel& k : kKernels) {
    std::string symbol = std::string("orc_test_") + k.name;
    std::string text = function_asm(all, symbol);
    ASSERT_FALSE(text.empty()) << "no " << symbol << " in the assembly";
    EXPECT_EQ(text.find("call"), std::string::npos) << symbol << " calls:\n" << text;
    for (const char* libm : {"expf", "logf", "erff", "tanhf"})
      EXPECT_EQ(text.find(std::string(libm) + "@"), std::string::npos)
          << symbol << " uses " << libm;
#if defined(__AVX2__)
    // GCC's preferred vector width for -march=native on AVX2 and AVX-512 machines is 256.
    EXPECT_NE(text.find("ymm"), std::string::npos) << symbol << " is not vectorized:\n" << text;
#elif defined(__x86_64__)
    EXPECT_NE(text.find("ps\t"), std::string::npos) << symbol << " is not vectorized:\n" << text;
#endif
  }
}

// Runs kernel orc_test_<name> of the shared object on `x`.
template <class In, class Out>
std::vector<Out> run_kernel(void* so, const std::string& name, const std::vector<In>& x) {
  using Fn = void (*)(const In*, Out*, int64_t);
  auto fn = reinterpret_cast<Fn>(dlsym(so, ("orc_test_" + name).c_str()));
  EXPECT_NE(fn, nullptr) << name;
  std::vector<Out> y(x.size());
  if (fn) fn(x.data(), y.data(), int64_t(x.size()));
  return y;
}

// Bits equal, or both NaN.
bool same_float(float a, float b) { return to_bits(a) == to_bits(b) || (a != a && b != b); }

void compare_float_kernels(void* so, bool fma) {
  std::vector<float> x;
  for_sample(4093, [&](float v) { x.push_back(v); });
  struct { const char* name; UnaryF fma_fn, plain_fn; } fns[] = {
      {"expf", fma_build::expf_, plain_build::expf_},
      {"logf", fma_build::logf_, plain_build::logf_},
      {"erff", fma_build::erff_, plain_build::erff_},
      {"tanhf", fma_build::tanhf_, plain_build::tanhf_},
      {"sigmoidf", fma_build::sigmoidf_, plain_build::sigmoidf_}};
  for (const auto& f : fns) {
    std::vector<float> y = run_kernel<float, float>(so, f.name, x);
    int64_t differ = 0;
    for (size_t i = 0; i < x.size(); ++i)
      if (!same_float(y[i], (fma ? f.fma_fn : f.plain_fn)(x[i])) && differ++ < 3)
        ADD_FAILURE() << f.name << "(" << std::hexfloat << x[i] << "): generated code gives "
                      << y[i] << ", the tested function " << (fma ? f.fma_fn : f.plain_fn)(x[i]);
    EXPECT_EQ(differ, 0) << f.name;
  }
}

void compare_conversion_kernels(void* so) {
  std::vector<uint16_t> halves(65536);
  for (uint32_t i = 0; i < 65536; ++i) halves[i] = uint16_t(i);
  std::vector<float> f16 = run_kernel<uint16_t, float>(so, "f16_to_f32", halves);
  std::vector<float> bf16 = run_kernel<uint16_t, float>(so, "bf16_to_f32", halves);
  for (uint32_t i = 0; i < 65536; ++i) {
    EXPECT_EQ(to_bits(f16[i]), to_bits(fma_build::orc_f16_to_f32(halves[i]))) << std::hex << i;
    EXPECT_EQ(to_bits(bf16[i]), to_bits(fma_build::orc_bf16_to_f32(halves[i]))) << std::hex << i;
  }
  std::vector<float> x;
  for_sample(4093, [&](float v) { x.push_back(v); });
  std::vector<uint16_t> h = run_kernel<float, uint16_t>(so, "f32_to_f16", x);
  std::vector<uint16_t> b = run_kernel<float, uint16_t>(so, "f32_to_bf16", x);
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(h[i], fma_build::orc_f32_to_f16(x[i])) << std::hex << to_bits(x[i]);
    EXPECT_EQ(b[i], fma_build::orc_f32_to_bf16(x[i])) << std::hex << to_bits(x[i]);
  }
}

// Generated code is compiled with -ffp-contract=fast and vectorized; the functions above were
// tested as this file compiles them. vmath.inc makes contraction change nothing: check it.
TEST(VmathCompiled, GeneratedCodeComputesTheTestedBits) {
  testlib::TempDir dir("orchid_vmath");
  if (!compile_kernels(dir, false, dir.file("k.so"))) return;
  void* so = dlopen(dir.file("k.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(so, nullptr) << dlerror();
  auto has_fma = reinterpret_cast<int (*)()>(dlsym(so, "orc_test_fma"));
  ASSERT_NE(has_fma, nullptr);
#if defined(__FP_FAST_FMAF)
  const bool test_has_fma = true;
#else
  const bool test_has_fma = false;
#endif
  if (has_fma() && !test_has_fma) {
    dlclose(so);
    GTEST_SKIP() << "generated code uses FMA, this test build does not (ORCHID_NATIVE=OFF?)";
  }
  compare_float_kernels(so, has_fma() != 0);
  compare_conversion_kernels(so);
  dlclose(so);
}

}  // namespace
}  // namespace orchid::codegen::cpu
