// Lane loops of the expression operators. One dispatch switch over ExprOp; each case is one
// tight loop over the lanes of a block.
#include "interp/lane_ops.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "interp/buffer.h"
#include "support/error.h"

namespace orchid::interp::detail {

using ir::DType;
using ir::ExprOp;

namespace {

struct Ctx {
  const Instr& in;
  RegFile& r;
  int64_t n;
  Precision p;
  const double* fa(int k) const { return r.fp(in.args[k]); }
  const int64_t* ia(int k) const { return r.ip(in.args[k]); }
  bool u64() const { return in.arg_dtype == DType::U64; }
};

// ---- Loop shapes: float/integral, unary/binary, value/bool results. ----
template <class F>
void f1(const Ctx& c, F f) {
  const double* a = c.fa(0);
  double* d = c.r.fp(c.in.dst);
  for (int64_t j = 0; j < c.n; ++j) d[j] = f(a[j]);
  round_lanes(d, c.n, rounding_dtype(c.in.dtype, c.p));
}
template <class F>
void f2(const Ctx& c, F f) {
  const double *a = c.fa(0), *b = c.fa(1);
  double* d = c.r.fp(c.in.dst);
  for (int64_t j = 0; j < c.n; ++j) d[j] = f(a[j], b[j]);
  round_lanes(d, c.n, rounding_dtype(c.in.dtype, c.p));
}
template <class F>
void i1(const Ctx& c, F f) {
  const int64_t* a = c.ia(0);
  int64_t* d = c.r.ip(c.in.dst);
  for (int64_t j = 0; j < c.n; ++j) d[j] = f(a[j]);
}
template <class F>
void i2(const Ctx& c, F f) {
  const int64_t *a = c.ia(0), *b = c.ia(1);
  int64_t* d = c.r.ip(c.in.dst);
  for (int64_t j = 0; j < c.n; ++j) d[j] = f(a[j], b[j]);
}
// Float operands, bool (int64 lanes) result.
template <class F>
void ftest(const Ctx& c, F f) {
  const double* a = c.fa(0);
  int64_t* d = c.r.ip(c.in.dst);
  for (int64_t j = 0; j < c.n; ++j) d[j] = f(a[j]);
}
template <class F>
void fcmp(const Ctx& c, F f) {
  const double *a = c.fa(0), *b = c.fa(1);
  int64_t* d = c.r.ip(c.in.dst);
  for (int64_t j = 0; j < c.n; ++j) d[j] = f(a[j], b[j]);
}
// Integral binary operator whose u64 form reads the operands unsigned.
template <class FS, class FU>
void i2u(const Ctx& c, FS fs, FU fu) {
  if (!c.u64()) return i2(c, fs);
  i2(c, [&](int64_t a, int64_t b) {
    return static_cast<int64_t>(fu(static_cast<uint64_t>(a), static_cast<uint64_t>(b)));
  });
}
// Either loop shape, by the operand class.
template <class FF, class FI>
void num1(const Ctx& c, FF ff, FI fi) {
  if (ir::is_float(c.in.arg_dtype)) return f1(c, ff);
  i1(c, fi);
}
template <class FF, class FS, class FU>
void num2(const Ctx& c, FF ff, FS fs, FU fu) {
  if (ir::is_float(c.in.arg_dtype)) return f2(c, ff);
  i2u(c, fs, fu);
}
template <class F>
void compare(const Ctx& c, F f) {
  if (ir::is_float(c.in.arg_dtype)) return fcmp(c, f);
  if (c.u64()) return i2(c, [&](int64_t a, int64_t b) -> int64_t {
      return f(static_cast<uint64_t>(a), static_cast<uint64_t>(b));
    });
  i2(c, [&](int64_t a, int64_t b) -> int64_t { return f(a, b); });
}

// ---- Scalar semantics (docs/ir.md). ----
// Floored float modulo: fmod (exact) moved into the divisor's sign.
double fmod_floored(double a, double b) {
  double r = std::fmod(a, b);
  if (r == 0) return std::copysign(0.0, b);
  return ((r < 0) != (b < 0)) ? r + b : r;
}
double fsign(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x; }

void cast(const Ctx& c) {
  DType from = c.in.arg_dtype, to = c.in.dtype;
  if (ir::is_float(from) && ir::is_float(to)) {
    f1(c, [](double x) { return x; });  // f1 rounds to `to` in Own precision
  } else if (ir::is_float(from)) {
    ftest(c, [to](double x) { return float_to_integral(x, to); });
  } else if (ir::is_float(to)) {
    const int64_t* a = c.ia(0);
    double* d = c.r.fp(c.in.dst);
    for (int64_t j = 0; j < c.n; ++j) d[j] = integral_to_float(a[j], from, to, c.p);
  } else {
    i1(c, [to](int64_t x) { return ir::wrap_to_dtype(x, to); });
  }
}

void select(const Ctx& c) {
  const int64_t* cond = c.ia(0);
  if (ir::is_float(c.in.dtype)) {
    const double *a = c.fa(1), *b = c.fa(2);
    double* d = c.r.fp(c.in.dst);
    for (int64_t j = 0; j < c.n; ++j) d[j] = cond[j] ? a[j] : b[j];
  } else {
    const int64_t *a = c.ia(1), *b = c.ia(2);
    int64_t* d = c.r.ip(c.in.dst);
    for (int64_t j = 0; j < c.n; ++j) d[j] = cond[j] ? a[j] : b[j];
  }
}

}  // namespace

void exec_op(const Instr& in, RegFile& regs, int64_t n, Precision p) {
  Ctx c{in, regs, n, p};
  bool u64 = c.u64(), boolean = in.arg_dtype == DType::Bool;
  auto same = [](int64_t x) { return x; };
  auto unsigned_sign = [](int64_t x) -> int64_t { return x != 0; };
  switch (in.op) {
    case ExprOp::Neg: return num1(c, [](double x) { return -x; }, wneg);
    case ExprOp::Abs: return u64 ? i1(c, same) : num1(c, [](double x) { return std::fabs(x); }, sabs);
    case ExprOp::Exp: return f1(c, [](double x) { return std::exp(x); });
    case ExprOp::Log: return f1(c, [](double x) { return std::log(x); });
    case ExprOp::Sqrt: return f1(c, [](double x) { return std::sqrt(x); });
    case ExprOp::Rsqrt: return f1(c, [](double x) { return 1.0 / std::sqrt(x); });
    case ExprOp::Recip: return f1(c, [](double x) { return 1.0 / x; });
    case ExprOp::Tanh: return f1(c, [](double x) { return std::tanh(x); });
    case ExprOp::Erf: return f1(c, [](double x) { return std::erf(x); });
    case ExprOp::Sigmoid: return f1(c, [](double x) { return 1.0 / (1.0 + std::exp(-x)); });
    case ExprOp::Sin: return f1(c, [](double x) { return std::sin(x); });
    case ExprOp::Cos: return f1(c, [](double x) { return std::cos(x); });
    case ExprOp::Atan: return f1(c, [](double x) { return std::atan(x); });
    case ExprOp::Floor: return f1(c, [](double x) { return std::floor(x); });
    case ExprOp::Ceil: return f1(c, [](double x) { return std::ceil(x); });
    case ExprOp::Round: return f1(c, [](double x) { return std::nearbyint(x); });
    case ExprOp::Sign: return u64 ? i1(c, unsigned_sign) : num1(c, fsign, ssign);
    case ExprOp::IsNan: return ftest(c, [](double x) -> int64_t { return std::isnan(x); });
    case ExprOp::IsInf: return ftest(c, [](double x) -> int64_t { return std::isinf(x); });
    case ExprOp::Not:
      return boolean ? i1(c, [](int64_t x) -> int64_t { return !x; })
                     : i1(c, [](int64_t x) { return ~x; });
    case ExprOp::Add: return num2(c, std::plus<double>(), wrap_add, std::plus<uint64_t>());
    case ExprOp::Sub: return num2(c, std::minus<double>(), wsub, std::minus<uint64_t>());
    case ExprOp::Mul: return num2(c, std::multiplies<double>(), wrap_mul, std::multiplies<uint64_t>());
    case ExprOp::Div: return num2(c, std::divides<double>(), sdiv, udiv);
    case ExprOp::FloorDiv:
      return num2(c, [](double a, double b) { return std::floor(a / b); }, sfloordiv, udiv);
    case ExprOp::Mod: return num2(c, fmod_floored, smod, umod);
    case ExprOp::Rem: return num2(c, [](double a, double b) { return std::fmod(a, b); }, srem, umod);
    case ExprOp::Pow: return f2(c, [](double a, double b) { return std::pow(a, b); });
    case ExprOp::Max:
      return num2(c, nan_max, [](int64_t a, int64_t b) { return std::max(a, b); },
                  [](uint64_t a, uint64_t b) { return std::max(a, b); });
    case ExprOp::Min:
      return num2(c, nan_min, [](int64_t a, int64_t b) { return std::min(a, b); },
                  [](uint64_t a, uint64_t b) { return std::min(a, b); });
    case ExprOp::And: return i2(c, [](int64_t a, int64_t b) { return a & b; });
    case ExprOp::Or: return i2(c, [](int64_t a, int64_t b) { return a | b; });
    case ExprOp::Xor: return i2(c, [](int64_t a, int64_t b) { return a ^ b; });
    case ExprOp::Shl: return i2u(c, shl_signed, shl_unsigned);
    case ExprOp::Shr: return i2u(c, shr_signed, shr_unsigned);
    case ExprOp::Eq: return compare(c, [](auto a, auto b) { return a == b; });
    case ExprOp::Ne: return compare(c, [](auto a, auto b) { return a != b; });
    case ExprOp::Lt: return compare(c, [](auto a, auto b) { return a < b; });
    case ExprOp::Le: return compare(c, [](auto a, auto b) { return a <= b; });
    case ExprOp::Gt: return compare(c, [](auto a, auto b) { return a > b; });
    case ExprOp::Ge: return compare(c, [](auto a, auto b) { return a >= b; });
    case ExprOp::Select: return select(c);
    case ExprOp::Cast: return cast(c);
    case ExprOp::Const:
    case ExprOp::Var:
    case ExprOp::Load: break;
  }
  ORCHID_CHECK(false) << ir::expr_op_name(in.op) << " is not a lane operator";
}

}  // namespace orchid::interp::detail
