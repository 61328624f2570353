// The scalar helpers every generated source starts with: the semantics of docs/ir.md for the
// operators C does not give directly (integer division by zero, floored division and modulo,
// NaN-propagating max/min, float -> integer casts that wrap). Branch-free where they sit in
// inner loops, so that loops calling them still vectorize.
#include "codegen/cpu/prelude.h"

namespace orchid::codegen::cpu {

std::string_view scalar_helpers_source() {
  return R"ORCHID_SCALARS(
/* Signed integer division, floored division, modulo and remainder (docs/ir.md): by 0 gives 0;
 * by -1 negates (wrapping, in unsigned arithmetic), so i64 min / -1 never traps. */
ORC_INLINE int64_t orc_sdiv(int64_t a, int64_t b) { return b == 0 ? 0 : b == -1 ? (int64_t)(0ULL - (uint64_t)a) : a / b; }
ORC_INLINE int64_t orc_sfloordiv(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return (int64_t)(0ULL - (uint64_t)a);
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
ORC_INLINE int64_t orc_smod(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0;
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
ORC_INLINE int64_t orc_srem(int64_t a, int64_t b) { return b == 0 || b == -1 ? 0 : a % b; }
ORC_INLINE uint64_t orc_udiv(uint64_t a, uint64_t b) { return b == 0 ? 0 : a / b; }
ORC_INLINE uint64_t orc_umod(uint64_t a, uint64_t b) { return b == 0 ? 0 : a % b; }
/* Index arithmetic: floored division and modulo by a positive constant c (the compiler turns
 * the division by a constant into a multiplication). */
ORC_INLINE int64_t orc_ifdiv(int64_t a, int64_t c) { return (a >= 0 ? a : (int64_t)((uint64_t)a - (uint64_t)(c - 1))) / c; }
ORC_INLINE int64_t orc_imod(int64_t a, int64_t c) { return (int64_t)((uint64_t)a - (uint64_t)orc_ifdiv(a, c) * (uint64_t)c); }
/* NaN propagates; of equal operands the first wins. */
ORC_INLINE float orc_fmaxf(float a, float b) { return a != a ? a : b != b ? b : (a < b ? b : a); }
ORC_INLINE float orc_fminf(float a, float b) { return a != a ? a : b != b ? b : (b < a ? b : a); }
ORC_INLINE double orc_fmax(double a, double b) { return a != a ? a : b != b ? b : (a < b ? b : a); }
ORC_INLINE double orc_fmin(double a, double b) { return a != a ? a : b != b ? b : (b < a ? b : a); }
/* The same where operand c is not NaN (a constant), c second (_r) or first (_l): one compare
 * and select where the above takes three (a relu's max with 0). The _r forms are one vmaxps
 * or vminps on x86; the _l forms a compare and a blend (equal operands give c, a NaN b gives
 * b). */
ORC_INLINE float orc_fmaxf_r(float a, float c) { return a < c ? c : a; }
ORC_INLINE float orc_fmaxf_l(float c, float b) { return b <= c ? c : b; }
ORC_INLINE float orc_fminf_r(float a, float c) { return c < a ? c : a; }
ORC_INLINE float orc_fminf_l(float c, float b) { return c <= b ? c : b; }
ORC_INLINE double orc_fmax_r(double a, double c) { return a < c ? c : a; }
ORC_INLINE double orc_fmax_l(double c, double b) { return b <= c ? c : b; }
ORC_INLINE double orc_fmin_r(double a, double c) { return c < a ? c : a; }
ORC_INLINE double orc_fmin_l(double c, double b) { return c <= b ? c : b; }
/* Max / min as a combiner of lanes of a reduction, branch-free: NaN propagates (which NaN is
 * left unspecified) and of equal operands the accumulator wins. */
ORC_INLINE float orc_fmaxf_acc(float acc, float x) { return ((x > acc) | (x != x)) ? x : acc; }
ORC_INLINE float orc_fminf_acc(float acc, float x) { return ((x < acc) | (x != x)) ? x : acc; }
ORC_INLINE double orc_fmax_acc(double acc, double x) { return ((x > acc) | (x != x)) ? x : acc; }
ORC_INLINE double orc_fmin_acc(double acc, double x) { return ((x < acc) | (x != x)) ? x : acc; }
ORC_INLINE float orc_signf(float x) { return x > 0 ? 1.0f : x < 0 ? -1.0f : x; }
ORC_INLINE double orc_sign(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x; }
ORC_INLINE bool orc_isinff(float x) { return __builtin_fabsf(x) == __builtin_inff(); }
/* Floored float modulo: fmod (exact) moved into the divisor's sign; a zero takes b's sign. */
ORC_INLINE double orc_fmod_floored(double a, double b) {
  double r = __builtin_fmod(a, b);
  if (r == 0) return __builtin_copysign(0.0, b);
  return ((r < 0) != (b < 0)) ? r + b : r;
}
/* Float -> integer: truncate toward zero, wrap modulo 2^64 (NaN and infinities give 0); the
 * caller narrows to the width. */
ORC_INLINE int64_t orc_f2i(double x) {
  if (x != x || x - x != 0) return 0;
  double t = __builtin_trunc(x);
  if (t >= -9223372036854775808.0 && t < 9223372036854775808.0) return (int64_t)t;
  double m = __builtin_fmod(t, 18446744073709551616.0);
  if (m < 0) m += 18446744073709551616.0;
  return (int64_t)(uint64_t)m;
}
/* Integer max / min; of equal operands the first wins (as for floats). */
ORC_INLINE int64_t orc_max64(int64_t a, int64_t b) { return a < b ? b : a; }
ORC_INLINE int64_t orc_min64(int64_t a, int64_t b) { return b < a ? b : a; }
ORC_INLINE uint64_t orc_maxu64(uint64_t a, uint64_t b) { return a < b ? b : a; }
/* Shifts (docs/ir.md): by b outside [0, 63], 0 (or -1 for a negative a shifted right). */
ORC_INLINE int64_t orc_shl64(int64_t a, int64_t b) { return b < 0 || b > 63 ? 0 : (int64_t)((uint64_t)a << b); }
ORC_INLINE int64_t orc_shr64(int64_t a, int64_t b) { return b < 0 || b > 63 ? (a < 0 ? -1 : 0) : a >> b; }
ORC_INLINE uint64_t orc_shlu64(uint64_t a, uint64_t b) { return b > 63 ? 0 : a << b; }
ORC_INLINE uint64_t orc_shru64(uint64_t a, uint64_t b) { return b > 63 ? 0 : a >> b; }
ORC_INLINE uint64_t orc_minu64(uint64_t a, uint64_t b) { return b < a ? b : a; }
ORC_INLINE int64_t orc_iabs(int64_t x) { return x < 0 ? (int64_t)(0ULL - (uint64_t)x) : x; }
ORC_INLINE int64_t orc_isign(int64_t x) { return (x > 0) - (x < 0); }
)ORCHID_SCALARS";
}

std::string prelude_source() {
  std::string s = R"ORCHID_PRELUDE(
#define ORC_INLINE static inline __attribute__((always_inline))
)ORCHID_PRELUDE";
  s += scalar_helpers_source();
  s += R"ORCHID_PRELUDE(
/* f64 -> f32 rounded to odd: a following rounding to f16 or bf16 then equals the direct
 * rounding of the f64 value (no double-rounding error). */
ORC_INLINE float orc_f64_to_f32_odd(double x) {
  float f = (float)x;
  if ((double)f != x && x == x) {
    uint32_t b;
    __builtin_memcpy(&b, &f, 4);
    if (__builtin_fabs((double)f) > __builtin_fabs(x)) b -= 1;
    b |= 1;
    __builtin_memcpy(&f, &b, 4);
  }
  return f;
}
/* A run-time index checked against its extent: out of bounds reports `code` and the index
 * (the first failure of the call: orchid_args::error) and reads 0. */
ORC_INLINE int64_t orc_chk(int64_t i, int64_t n, int64_t* err, int64_t code) {
  if ((uint64_t)i < (uint64_t)n) return i;
  int64_t none = 0;
  if (err && __atomic_compare_exchange_n(err, &none, code, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
    __atomic_store_n(err + 1, i, __ATOMIC_RELAXED);
  return 0;
}
/* Streaming (non-temporal) stores: `bytes` from src to dst past the caches, in the widest
 * aligned vector stores the target has (the bytes before dst's first aligned address and after
 * its last are stored as usual); orc_stream_fence orders them before what follows, as the
 * kernel's caller expects of its stores. Elsewhere than on x86, plain copies. */
#if defined(__x86_64__) && defined(__AVX512F__)
typedef long long orc_ntv __attribute__((vector_size(64)));
ORC_INLINE void orc_nt_store(char* p, orc_ntv v) { __builtin_ia32_movntdq512((orc_ntv*)p, v); }
#elif defined(__x86_64__) && defined(__AVX__)
typedef long long orc_ntv __attribute__((vector_size(32)));
ORC_INLINE void orc_nt_store(char* p, orc_ntv v) { __builtin_ia32_movntdq256((orc_ntv*)p, v); }
#elif defined(__x86_64__)
typedef long long orc_ntv __attribute__((vector_size(16)));
ORC_INLINE void orc_nt_store(char* p, orc_ntv v) { __builtin_ia32_movntdq((orc_ntv*)p, v); }
#else
typedef long long orc_ntv __attribute__((vector_size(16)));
ORC_INLINE void orc_nt_store(char* p, orc_ntv v) { __builtin_memcpy(p, &v, sizeof v); }
#endif
ORC_INLINE void orc_stream(void* dst, const void* src, int64_t bytes) {
  char* d = (char*)dst;
  const char* s = (const char*)src;
  const int64_t w = (int64_t)sizeof(orc_ntv);
  int64_t head = (int64_t)((0 - (uintptr_t)d) % (uintptr_t)w), i = 0;
  if (head > bytes) head = bytes;
  for (; i < head; ++i) d[i] = s[i];
  for (; i + w <= bytes; i += w) {
    orc_ntv v;
    __builtin_memcpy(&v, s + i, sizeof v);
    orc_nt_store(d + i, v);
  }
  for (; i < bytes; ++i) d[i] = s[i];
}
/* Elements of `size` bytes from p to the end of a streaming chunk of at most n elements: the
 * chunk ends at a vector-aligned address where it can, so that the next starts on one. */
ORC_INLINE int64_t orc_stream_chunk(const void* p, int64_t size, int64_t n) {
  int64_t off = (int64_t)((uintptr_t)p % (uintptr_t)sizeof(orc_ntv));
  return off % size == 0 && n * size > off ? n - off / size : n;
}
/* d[i * ld + j] = s[j * ls + i] for i, j < 8 (f32): an 8 x 8 block transposed in registers by
 * unpacks and shuffles of 8-float vectors (GCC vector extensions: any ISA; AVX2 gives 24
 * shuffles for 64 elements). Rows need no alignment. */
typedef float orc_t8f __attribute__((vector_size(32), aligned(4)));
typedef int32_t orc_t8i __attribute__((vector_size(32)));
ORC_INLINE void orc_transpose_8x8(const float* s, int64_t ls, float* d, int64_t ld) {
  const orc_t8f r0 = *(const orc_t8f*)(s + 0 * ls), r1 = *(const orc_t8f*)(s + 1 * ls);
  const orc_t8f r2 = *(const orc_t8f*)(s + 2 * ls), r3 = *(const orc_t8f*)(s + 3 * ls);
  const orc_t8f r4 = *(const orc_t8f*)(s + 4 * ls), r5 = *(const orc_t8f*)(s + 5 * ls);
  const orc_t8f r6 = *(const orc_t8f*)(s + 6 * ls), r7 = *(const orc_t8f*)(s + 7 * ls);
  const orc_t8i lo = {0, 8, 1, 9, 4, 12, 5, 13}, hi = {2, 10, 3, 11, 6, 14, 7, 15};
  const orc_t8f t0 = __builtin_shuffle(r0, r1, lo), t1 = __builtin_shuffle(r0, r1, hi);
  const orc_t8f t2 = __builtin_shuffle(r2, r3, lo), t3 = __builtin_shuffle(r2, r3, hi);
  const orc_t8f t4 = __builtin_shuffle(r4, r5, lo), t5 = __builtin_shuffle(r4, r5, hi);
  const orc_t8f t6 = __builtin_shuffle(r6, r7, lo), t7 = __builtin_shuffle(r6, r7, hi);
  const orc_t8i q0 = {0, 1, 8, 9, 4, 5, 12, 13}, q1 = {2, 3, 10, 11, 6, 7, 14, 15};
  const orc_t8f u0 = __builtin_shuffle(t0, t2, q0), u1 = __builtin_shuffle(t0, t2, q1);
  const orc_t8f u2 = __builtin_shuffle(t1, t3, q0), u3 = __builtin_shuffle(t1, t3, q1);
  const orc_t8f u4 = __builtin_shuffle(t4, t6, q0), u5 = __builtin_shuffle(t4, t6, q1);
  const orc_t8f u6 = __builtin_shuffle(t5, t7, q0), u7 = __builtin_shuffle(t5, t7, q1);
  const orc_t8i h0 = {0, 1, 2, 3, 8, 9, 10, 11}, h1 = {4, 5, 6, 7, 12, 13, 14, 15};
  *(orc_t8f*)(d + 0 * ld) = __builtin_shuffle(u0, u4, h0), *(orc_t8f*)(d + 1 * ld) = __builtin_shuffle(u1, u5, h0);
  *(orc_t8f*)(d + 2 * ld) = __builtin_shuffle(u2, u6, h0), *(orc_t8f*)(d + 3 * ld) = __builtin_shuffle(u3, u7, h0);
  *(orc_t8f*)(d + 4 * ld) = __builtin_shuffle(u0, u4, h1), *(orc_t8f*)(d + 5 * ld) = __builtin_shuffle(u1, u5, h1);
  *(orc_t8f*)(d + 6 * ld) = __builtin_shuffle(u2, u6, h1), *(orc_t8f*)(d + 7 * ld) = __builtin_shuffle(u3, u7, h1);
}
ORC_INLINE void orc_stream_fence(void) {
#if defined(__x86_64__)
  __builtin_ia32_sfence();
#endif
}
)ORCHID_PRELUDE";
  return s;
}

}  // namespace orchid::codegen::cpu
