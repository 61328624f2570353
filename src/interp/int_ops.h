// Integer and bool semantics of the expression operators on one exact value (docs/ir.md,
// "Scalar and index expressions"): i64 arithmetic wraps modulo 2^64, u64 operands are read
// unsigned, division and modulo by 0 give 0. The interpreter's lane loops and the
// finite-field evaluator (src/verify) both compute integers through these.
#pragma once

#include <cstdint>

#include "ir/dtype.h"
#include "ir/expr.h"

namespace orchid::interp {

inline int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
inline int64_t wneg(int64_t a) { return static_cast<int64_t>(0 - static_cast<uint64_t>(a)); }
inline int64_t wsub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
// a < b in the order of integral dtype t (u64 unsigned, every other signed).
inline bool int_less(int64_t a, int64_t b, bool is_u64) {
  return is_u64 ? static_cast<uint64_t>(a) < static_cast<uint64_t>(b) : a < b;
}

inline int64_t sdiv(int64_t a, int64_t b) { return b == 0 ? 0 : b == -1 ? wneg(a) : a / b; }
inline int64_t sfloordiv(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return wneg(a);
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
inline int64_t smod(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0;
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
// Truncated remainder (C's %, the sign of the dividend); by 0 gives 0, and by -1 gives 0
// (where C's i64 min % -1 would overflow).
inline int64_t srem(int64_t a, int64_t b) { return b == 0 || b == -1 ? 0 : a % b; }
inline uint64_t udiv(uint64_t a, uint64_t b) { return b == 0 ? 0 : a / b; }
inline uint64_t umod(uint64_t a, uint64_t b) { return b == 0 ? 0 : a % b; }
// Shifts by b outside [0, 63]: 0, or -1 for a negative a shifted right.
inline int64_t shl_signed(int64_t a, int64_t b) {
  return b < 0 || b > 63 ? 0 : static_cast<int64_t>(static_cast<uint64_t>(a) << b);
}
inline int64_t shr_signed(int64_t a, int64_t b) { return b < 0 || b > 63 ? (a < 0 ? -1 : 0) : a >> b; }
inline uint64_t shl_unsigned(uint64_t a, uint64_t b) { return b > 63 ? 0 : a << b; }
inline uint64_t shr_unsigned(uint64_t a, uint64_t b) { return b > 63 ? 0 : a >> b; }
inline int64_t sabs(int64_t x) { return x < 0 ? wneg(x) : x; }
inline int64_t ssign(int64_t x) { return (x > 0) - (x < 0); }

// One operator on exact values of integral dtype t (the operands' dtype). Unary: neg, abs,
// sign, not. Binary: the arithmetic, max/min, bitwise and shift operators.
int64_t int_unary(ir::ExprOp op, int64_t a, ir::DType t);
int64_t int_binary(ir::ExprOp op, int64_t a, int64_t b, ir::DType t);
bool int_compare(ir::CmpOp c, int64_t a, int64_t b, ir::DType t);

}  // namespace orchid::interp
