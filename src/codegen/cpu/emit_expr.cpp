// C expressions for IR expressions, with the semantics of docs/ir.md. Floats of 16 bits and
// f32 compute in float, f64 in double, integers (and u8..u32) in int64_t, u64 in uint64_t,
// bool in bool; stores round or wrap to the value's dtype.
#include <cinttypes>
#include <cstdio>

#include "codegen/cpu/emit.h"
#include "support/error.h"

namespace orchid::codegen::cpu::detail {

using ir::DType;
using ir::Expr;
using ir::ExprOp;

namespace {

enum class Cls { F32, F64, Int, U64, Bool };

Cls cls(DType t) {
  switch (t) {
    case DType::F32:
    case DType::F16:
    case DType::BF16: return Cls::F32;
    case DType::F64: return Cls::F64;
    case DType::U64: return Cls::U64;
    case DType::Bool: return Cls::Bool;
    case DType::I8:
    case DType::I16:
    case DType::I32:
    case DType::I64:
    case DType::U8:
    case DType::U16:
    case DType::U32: return Cls::Int;
  }
  return Cls::Int;
}

std::string call(const std::string& f, const std::string& a) { return f + "(" + a + ")"; }
std::string call(const std::string& f, const std::string& a, const std::string& b) {
  return f + "(" + a + ", " + b + ")";
}
std::string paren(const std::string& a) { return "(" + a + ")"; }

std::string float_literal(double v, bool single) {
  if (v != v) return single ? "__builtin_nanf(\"\")" : "__builtin_nan(\"\")";
  if (v - v != 0) return std::string(v < 0 ? "-" : "") + (single ? "__builtin_inff()" : "__builtin_inf()");
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);
  return single ? "((float)" + std::string(buf) + ")" : "(" + std::string(buf) + ")";
}

// A float constant that is not NaN: max and min with it need no NaN test of their own.
bool ordered_const(const Expr& e) { return e.op() == ExprOp::Const && e->value.f == e->value.f; }

// A positive integer constant operand (floordiv / mod by a constant become index arithmetic).
bool positive_const(const Expr& e) {
  return e.op() == ExprOp::Const && ir::dtype_class(e.dtype()) == ir::DTypeClass::Signed &&
         e->value.i > 0;
}

std::string narrow_int(DType to, const std::string& a) {
  switch (to) {
    case DType::I8: return "((int64_t)(int8_t)" + paren(a) + ")";
    case DType::I16: return "((int64_t)(int16_t)" + paren(a) + ")";
    case DType::I32: return "((int64_t)(int32_t)" + paren(a) + ")";
    case DType::U8: return "((int64_t)(uint8_t)" + paren(a) + ")";
    case DType::U16: return "((int64_t)(uint16_t)" + paren(a) + ")";
    case DType::U32: return "((int64_t)(uint32_t)" + paren(a) + ")";
    case DType::I64: return "((int64_t)" + paren(a) + ")";
    case DType::U64: return "((uint64_t)" + paren(a) + ")";
    case DType::Bool: return "(" + paren(a) + " != 0)";
    case DType::F32:
    case DType::F16:
    case DType::BF16:
    case DType::F64: break;
  }
  ORCHID_CHECK(false) << "narrow_int to a float dtype";
  return a;
}

// A float (in float or double) rounded to a float dtype, kept in its compute type.
std::string round_float(DType to, const std::string& a) {
  switch (to) {
    case DType::F16: return "orc_f16_to_f32(orc_f32_to_f16((float)" + paren(a) + "))";
    case DType::BF16: return "orc_bf16_to_f32(orc_f32_to_bf16((float)" + paren(a) + "))";
    case DType::F32: return "((float)" + paren(a) + ")";
    default: return "((double)" + paren(a) + ")";
  }
}

}  // namespace

std::string compute_type(DType t) {
  switch (cls(t)) {
    case Cls::F32: return "float";
    case Cls::F64: return "double";
    case Cls::Int: return "int64_t";
    case Cls::U64: return "uint64_t";
    case Cls::Bool: return "bool";
  }
  return "int64_t";
}

std::string storage_type(DType t) {
  switch (t) {
    case DType::F32: return "float";
    case DType::F16:
    case DType::BF16:
    case DType::U16: return "uint16_t";
    case DType::F64: return "double";
    case DType::I8: return "int8_t";
    case DType::I16: return "int16_t";
    case DType::I32: return "int32_t";
    case DType::I64: return "int64_t";
    case DType::U8:
    case DType::Bool: return "uint8_t";
    case DType::U32: return "uint32_t";
    case DType::U64: return "uint64_t";
  }
  return "uint8_t";
}

std::string to_compute(DType t, const std::string& stored) {
  switch (t) {
    case DType::F16: return "orc_f16_to_f32(" + stored + ")";
    case DType::BF16: return "orc_bf16_to_f32(" + stored + ")";
    case DType::Bool: return "(" + stored + " != 0)";
    case DType::F32:
    case DType::F64:
    case DType::U64: return stored;
    case DType::I8:
    case DType::I16:
    case DType::I32:
    case DType::I64:
    case DType::U8:
    case DType::U16:
    case DType::U32: return "((int64_t)" + stored + ")";
  }
  return stored;
}

std::string to_storage(DType t, const std::string& computed) {
  switch (t) {
    case DType::F16: return "orc_f32_to_f16(" + computed + ")";
    case DType::BF16: return "orc_f32_to_bf16(" + computed + ")";
    default: return "(" + storage_type(t) + ")(" + computed + ")";
  }
}

std::string literal(const ir::Scalar& s) {
  switch (cls(s.dtype)) {
    case Cls::F32: return float_literal(s.f, true);
    case Cls::F64: return float_literal(s.f, false);
    case Cls::Bool: return s.i ? "true" : "false";
    case Cls::U64: return "((uint64_t)" + std::to_string(static_cast<uint64_t>(s.i)) + "ULL)";
    case Cls::Int:
      if (s.i == INT64_MIN) return "((int64_t)(-9223372036854775807LL - 1))";
      return "((int64_t)" + std::to_string(s.i) + "LL)";
  }
  return "0";
}

bool pure_index(const Expr& e) {
  bool pure = true;
  ir::visit_post(e, [&](const Expr& x) {
    pure &= x.op() != ExprOp::Load && (x.dtype() == DType::I64 || x.dtype() == DType::Bool);
  });
  return pure;
}

tile::VarBox producer_box(const Expr& load, const tile::VarBox& box) {
  tile::VarBox p;
  size_t rank = load.num_args() - (load->predicated ? 1 : 0);
  for (size_t d = 0; d < rank; ++d)
    p.domain.push_back(pure_index(load.arg(d)) ? tile::eval_interval(load.arg(d), box) : tile::Interval::full());
  return p;
}

std::optional<int64_t> mod_period_start(const Expr& mod, const tile::VarBox& box) {
  if (mod.op() != ExprOp::Mod || mod.dtype() != DType::I64 || !positive_const(mod.arg(1)) || !pure_index(mod.arg(0)))
    return std::nullopt;
  tile::Interval v = tile::eval_interval(mod.arg(0), box);
  const int64_t m = mod.arg(1)->value.i, far = int64_t{1} << 62;  // far from overflow
  if (v.empty() || v.lo < -far || v.hi > far) return std::nullopt;
  auto period = [m](int64_t x) { return x / m - (x % m < 0 ? 1 : 0); };  // floor(x / m)
  if (period(v.lo) != period(v.hi)) return std::nullopt;
  return period(v.lo) * m;
}

// Index arithmetic over s.box (the loop piece being emitted): an expression of one value there
// is that value; a select whose condition is decided is the operand it takes (the other is
// never evaluated, as in the interpreter); a mod by a positive constant whose operand stays
// within one period is a subtraction. A reflecting pad's index is then, piece by piece, an
// affine function of the loop's variable, and its loop a copy that vectorizes.
std::optional<std::string> ExprEmitter::decided(const Expr& e, const Scope& s) {
  ir::ExprCategory c = ir::expr_op_category(e.op());
  if (c == ir::ExprCategory::Leaf || c == ir::ExprCategory::Load) return std::nullopt;
  if (pure_index(e)) {
    tile::Interval v = tile::eval_interval(e, *s.box);
    if (v.is_point()) return literal(ir::Scalar::of_int(e.dtype(), v.lo));
  }
  if (c == ir::ExprCategory::Select && pure_index(e.arg(0))) {
    tile::Interval v = tile::eval_interval(e.arg(0), *s.box);
    if (v.is_point()) return expr(e.arg(v.lo != 0 ? 1 : 2), s);
  }
  if (std::optional<int64_t> k = mod_period_start(e, *s.box)) {
    std::string a = expr(e.arg(0), s);
    if (*k == 0) return a;
    return "(" + a + (*k > 0 ? " - " : " + ") + std::to_string(*k > 0 ? *k : -*k) + "LL)";
  }
  return std::nullopt;
}

std::string ExprEmitter::expr(const Expr& e, const Scope& s) {
  if (s.box != nullptr)
    if (std::optional<std::string> d = decided(e, s)) return *d;
  switch (ir::expr_op_category(e.op())) {
    case ir::ExprCategory::Leaf:
      if (e.op() == ExprOp::Const) return literal(e->value);
      return e->var_kind == ir::VarKind::Domain ? s.dvars.at(e->index) : s.rvars.at(e->index);
    case ir::ExprCategory::Load: return load(e, s);
    case ir::ExprCategory::Unary: return unary(e, expr(e.arg(0), s));
    case ir::ExprCategory::Binary:
      // a / b for floats, b invariant in the innermost loop: a times (1/b in f64, rounded once),
      // rounded to float, is a / b correctly rounded. The product is within 2^-52 (relative) of
      // a/b, which a quotient of floats never comes closer than 2^-49 to a rounding boundary
      // without being on it; zeros, infinities and NaNs of a and b come out as IEEE division's.
      // A multiplication and two conversions in the loop, not the slow division.
      if (e.op() == ExprOp::Div && cls(e.dtype()) == Cls::F32 && s.hoist && invariant(e.arg(1), s)) {
        std::string r = "dz" + std::to_string(fresh_++);
        hoisted_.push_back("const double " + r + " = 1.0 / (double)" + expr(e.arg(1), s) + ";");
        return "((float)((double)" + expr(e.arg(0), s) + " * " + r + "))";
      }
      return binary(e, expr(e.arg(0), s), expr(e.arg(1), s));
    case ir::ExprCategory::Compare: return binary(e, expr(e.arg(0), s), expr(e.arg(1), s));
    case ir::ExprCategory::Select:
      return "(" + expr(e.arg(0), s) + " ? " + expr(e.arg(1), s) + " : " + expr(e.arg(2), s) + ")";
    case ir::ExprCategory::Cast: return cast(e.arg(0).dtype(), e.dtype(), expr(e.arg(0), s));
  }
  return "";
}

// Whether e takes the same value in every iteration of the innermost loop, and may be
// computed in front of it: it does not read that loop's variable (loads at indices free of it
// read one element; an inlined producer's value is a function of its indices), and has no
// load with a checked index (which must not report an error for a loop that does not run).
bool ExprEmitter::invariant(const Expr& e, const Scope& s) const {
  if (s.inner < 0) return false;
  bool free = true;
  ir::visit_post(e, [&](const Expr& x) {
    free &= !(x.op() == ExprOp::Var && x->var_kind == s.inner_kind && x->index == s.inner);
  });
  return free && !checks_index(e, *s.prim);
}

// Whether evaluating e (a body of p) checks an index: a load at an index that loads, here or
// in a producer inlined into it.
bool ExprEmitter::checks_index(const Expr& e, const ir::Primitive& p) const {
  bool checks = false;
  ir::visit_post(e, [&](const Expr& x) {
    if (checks || x.op() != ExprOp::Load) return;
    for (size_t d = 0; d < x.num_args(); ++d)
      ir::visit_post(x.arg(d), [&](const Expr& y) { checks |= y.op() == ExprOp::Load; });
    const ir::Value& v = g_.value(p.inputs[x->index]);
    if (v.origin != ir::ValueOrigin::Node) return;
    for (const NodeLowering& nl : kl_.nodes)
      if (nl.node == v.node && nl.inlined) checks |= checks_index(g_.node(nl.node).bodies[0], g_.node(nl.node));
  });
  return checks;
}

std::string ExprEmitter::unary(const Expr& e, const std::string& a) const {
  Cls c = cls(e.arg(0).dtype());
  bool f = c == Cls::F32;
  switch (e.op()) {
    case ExprOp::Neg:
      if (c == Cls::U64) return "((uint64_t)0 - " + a + ")";
      // Signed integers wrap (docs/ir.md): -fwrapv on the host; CUDA has no such flag, so
      // the arithmetic is unsigned there.
      if (c == Cls::Int && dialect_ == Dialect::Cuda) return "((int64_t)(0ULL - (uint64_t)" + a + "))";
      return "(-" + a + ")";
    case ExprOp::Abs:
      if (c == Cls::U64) return a;
      if (c == Cls::Int) return call("orc_iabs", a);
      return call(f ? "__builtin_fabsf" : "__builtin_fabs", a);
    case ExprOp::Exp: return call(f ? "orc_expf" : "__builtin_exp", a);
    case ExprOp::Log: return call(f ? "orc_logf" : "__builtin_log", a);
    case ExprOp::Sqrt: return call(f ? "__builtin_sqrtf" : "__builtin_sqrt", a);
    case ExprOp::Rsqrt: return f ? "(1.0f / __builtin_sqrtf(" + a + "))" : "(1.0 / __builtin_sqrt(" + a + "))";
    case ExprOp::Recip: return f ? "(1.0f / " + a + ")" : "(1.0 / " + a + ")";
    case ExprOp::Tanh: return call(f ? "orc_tanhf" : "__builtin_tanh", a);
    case ExprOp::Erf: return call(f ? "orc_erff" : "__builtin_erf", a);
    case ExprOp::Sigmoid: return f ? call("orc_sigmoidf", a) : "(1.0 / (1.0 + __builtin_exp(-" + a + ")))";
    case ExprOp::Sin: return call(f ? "__builtin_sinf" : "__builtin_sin", a);
    case ExprOp::Cos: return call(f ? "__builtin_cosf" : "__builtin_cos", a);
    case ExprOp::Atan: return call(f ? "__builtin_atanf" : "__builtin_atan", a);
    case ExprOp::Floor: return call(f ? "__builtin_floorf" : "__builtin_floor", a);
    case ExprOp::Ceil: return call(f ? "__builtin_ceilf" : "__builtin_ceil", a);
    case ExprOp::Round: return call(f ? "__builtin_roundevenf" : "__builtin_roundeven", a);
    case ExprOp::Sign:
      if (c == Cls::U64) return "((uint64_t)(" + a + " != 0))";
      if (c == Cls::Int) return call("orc_isign", a);
      return call(f ? "orc_signf" : "orc_sign", a);
    case ExprOp::IsNan: return "(" + a + " != " + a + ")";
    case ExprOp::IsInf: return f ? call("orc_isinff", a) : "(__builtin_fabs(" + a + ") == __builtin_inf())";
    case ExprOp::Not: return c == Cls::Bool ? "(!" + a + ")" : "(~" + a + ")";
    default: break;
  }
  ORCHID_CHECK(false) << ir::expr_op_name(e.op()) << " is not unary";
  return a;
}

std::string ExprEmitter::binary(const Expr& e, const std::string& a, const std::string& b) const {
  Cls c = cls(e.arg(0).dtype());
  bool fl = c == Cls::F32 || c == Cls::F64, f = c == Cls::F32;
  switch (e.op()) {
    case ExprOp::Add:
    case ExprOp::Sub:
    case ExprOp::Mul: {
      const char* op = e.op() == ExprOp::Add ? " + " : e.op() == ExprOp::Sub ? " - " : " * ";
      if (c == Cls::Int && dialect_ == Dialect::Cuda)  // wrapping, as Neg above
        return "((int64_t)((uint64_t)" + a + op + "(uint64_t)" + b + "))";
      return "(" + a + op + b + ")";
    }
    case ExprOp::Div:
      if (fl) return "(" + a + " / " + b + ")";
      return call(c == Cls::U64 ? "orc_udiv" : "orc_sdiv", a, b);
    case ExprOp::FloorDiv:
      if (fl) return call(f ? "__builtin_floorf" : "__builtin_floor", "(" + a + " / " + b + ")");
      if (c == Cls::U64) return call("orc_udiv", a, b);
      return call(positive_const(e.arg(1)) ? "orc_ifdiv" : "orc_sfloordiv", a, b);
    case ExprOp::Mod:
      if (fl) return (f ? "(float)" : "") + call("orc_fmod_floored", a, b);
      if (c == Cls::U64) return call("orc_umod", a, b);
      return call(positive_const(e.arg(1)) ? "orc_imod" : "orc_smod", a, b);
    case ExprOp::Rem:
      if (fl) return call(f ? "__builtin_fmodf" : "__builtin_fmod", a, b);
      return call(c == Cls::U64 ? "orc_umod" : "orc_srem", a, b);
    case ExprOp::Pow: return call(f ? "__builtin_powf" : "__builtin_pow", a, b);
    case ExprOp::Max:
    case ExprOp::Min: {
      bool mx = e.op() == ExprOp::Max;
      std::string side = dialect_ != Dialect::Gnu ? "" : ordered_const(e.arg(1)) ? "_r" : ordered_const(e.arg(0)) ? "_l" : "";
      switch (c) {
        case Cls::F32: return call((mx ? "orc_fmaxf" : "orc_fminf") + side, a, b);
        case Cls::F64: return call((mx ? "orc_fmax" : "orc_fmin") + side, a, b);
        case Cls::Int: return call(mx ? "orc_max64" : "orc_min64", a, b);
        case Cls::U64: return call(mx ? "orc_maxu64" : "orc_minu64", a, b);
        case Cls::Bool: return "((bool)(" + a + (mx ? " | " : " & ") + b + "))";
      }
      break;
    }
    case ExprOp::And: return c == Cls::Bool ? "((bool)(" + a + " & " + b + "))" : "(" + a + " & " + b + ")";
    case ExprOp::Or: return c == Cls::Bool ? "((bool)(" + a + " | " + b + "))" : "(" + a + " | " + b + ")";
    case ExprOp::Xor: return c == Cls::Bool ? "((bool)(" + a + " ^ " + b + "))" : "(" + a + " ^ " + b + ")";
    case ExprOp::Shl: return call(c == Cls::U64 ? "orc_shlu64" : "orc_shl64", a, b);
    case ExprOp::Shr: return call(c == Cls::U64 ? "orc_shru64" : "orc_shr64", a, b);
    case ExprOp::Eq: return "(" + a + " == " + b + ")";
    case ExprOp::Ne: return "(" + a + " != " + b + ")";
    case ExprOp::Lt: return "(" + a + " < " + b + ")";
    case ExprOp::Le: return "(" + a + " <= " + b + ")";
    case ExprOp::Gt: return "(" + a + " > " + b + ")";
    case ExprOp::Ge: return "(" + a + " >= " + b + ")";
    default: break;
  }
  ORCHID_CHECK(false) << ir::expr_op_name(e.op()) << " is not binary";
  return a;
}

std::string ExprEmitter::cast(DType from, DType to, const std::string& a) const {
  Cls cf = cls(from), ct = cls(to);
  bool ffrom = cf == Cls::F32 || cf == Cls::F64, fto = ct == Cls::F32 || ct == Cls::F64;
  if (fto) {
    if (!ffrom && to != DType::F64) return round_float(to, "(float)" + paren(a));
    if (cf == Cls::F64 && (to == DType::F16 || to == DType::BF16))
      return round_float(to, "orc_f64_to_f32_odd(" + a + ")");
    return round_float(to, a);
  }
  if (to == DType::Bool) return "(" + paren(a) + " != 0)";
  if (ffrom) return narrow_int(to, "orc_f2i((double)" + paren(a) + ")");
  return narrow_int(to, a);
}

}  // namespace orchid::codegen::cpu::detail
