// The device helpers every generated CUDA module starts with: the fixed-width integer types
// (NVRTC includes no standard header), the scalar helpers shared with the CPU prelude
// (codegen/cpu/prelude.h, scalar_helpers_source: docs/ir.md's integer division by zero,
// floored division and modulo, NaN-propagating max/min, float -> integer casts that wrap),
// the device's own rounding to odd and checked indices (atomics), f32
// transcendentals from CUDA's math library, f16/bf16 conversions by the hardware's rounding
// conversions, and the GCC builtin spelling of math functions that the shared expression
// emitter (codegen/cpu/emit_expr.cpp) writes, mapped onto CUDA's device functions.
#include "codegen/cuda/prelude.h"

#include "codegen/cpu/prelude.h"

namespace orchid::codegen::cuda {

std::string prelude_source() {
  std::string s = R"CUDA(
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
#define __builtin_fabsf fabsf
#define __builtin_fabs fabs
#define __builtin_sqrtf sqrtf
#define __builtin_sqrt sqrt
#define __builtin_exp exp
#define __builtin_log log
#define __builtin_tanh tanh
#define __builtin_erf erf
#define __builtin_sinf sinf
#define __builtin_sin sin
#define __builtin_cosf cosf
#define __builtin_cos cos
#define __builtin_atanf atanf
#define __builtin_atan atan
#define __builtin_floorf floorf
#define __builtin_floor floor
#define __builtin_ceilf ceilf
#define __builtin_ceil ceil
#define __builtin_roundevenf rintf
#define __builtin_roundeven rint
#define __builtin_fmodf fmodf
#define __builtin_fmod fmod
#define __builtin_powf powf
#define __builtin_pow pow
#define __builtin_trunc trunc
#define __builtin_copysign copysign
#define __builtin_nanf(s) __int_as_float(0x7fc00000)
#define __builtin_nan(s) __longlong_as_double(0x7ff8000000000000LL)
#define __builtin_inff() __int_as_float(0x7f800000)
#define __builtin_inf() __longlong_as_double(0x7ff0000000000000LL)
#define ORC_INLINE static __device__ __forceinline__
)CUDA";
  s += cpu::scalar_helpers_source();
  s += R"CUDA(
ORC_INLINE float orc_f64_to_f32_odd(double x) {
  float f = (float)x;
  if ((double)f != x && x == x) {
    uint32_t b = __float_as_uint(f);
    if (fabs((double)f) > fabs(x)) b -= 1;
    b |= 1;
    f = __uint_as_float(b);
  }
  return f;
}
ORC_INLINE int64_t orc_chk(int64_t i, int64_t n, int64_t* err, int64_t code) {
  if ((uint64_t)i < (uint64_t)n) return i;
  if (err) atomicExch((unsigned long long*)err, (unsigned long long)code);
  return 0;
}
ORC_INLINE float orc_expf(float x) { return expf(x); }
ORC_INLINE float orc_logf(float x) { return logf(x); }
ORC_INLINE float orc_tanhf(float x) { return tanhf(x); }
ORC_INLINE float orc_erff(float x) { return erff(x); }
ORC_INLINE float orc_sigmoidf(float x) { return 1.0f / (1.0f + expf(-x)); }
ORC_INLINE float orc_f16_to_f32(uint16_t h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}
ORC_INLINE uint16_t orc_f32_to_f16(float f) {
  uint16_t h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
ORC_INLINE float orc_bf16_to_f32(uint16_t b) { return __uint_as_float((uint32_t)b << 16); }
ORC_INLINE uint16_t orc_f32_to_bf16(float f) {
  uint16_t b;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b) : "f"(f));
  return b;
}
)CUDA";
  return s;
}

}  // namespace orchid::codegen::cuda
