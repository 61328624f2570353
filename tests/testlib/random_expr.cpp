// Random scalar bodies for the random graph generator (see random_graph_internal.h for the
// tameness rules every expression here follows).
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "support/error.h"
#include "testlib/random_graph_internal.h"

namespace orchid::testlib::detail {

using ir::DType;
using ir::Expr;
using ir::ExprOp;

namespace {

constexpr double kLeafBound = 4;   // float leaves are scaled into [-4, 4]
constexpr double kExprBound = 64;  // float subexpressions beyond this are scaled back
constexpr double kTwo62 = 4611686018427387904.0;

TE mk(Expr e, Facts f) { return {std::move(e), f}; }

// Float -> float conversions that never round.
bool widens(DType s, DType t) {
  if (s == DType::F16 || s == DType::BF16) return t == DType::F32 || t == DType::F64;
  return s == DType::F32 && t == DType::F64;
}

// Integers converted to float t are first clamped to this magnitude: exact in t, and tame.
double int_limit_in_float(DType t) { return t == DType::BF16 ? 256 : 1024; }

double sign_of(double v) { return v > 0 ? 1 : v < 0 ? -1 : 0; }

// Smallest power of two strictly above x (x >= 0), as used by bitwise-operator intervals.
double pow2_above(double x) {
  double p = 1;
  while (p <= x) p *= 2;
  return p;
}

Facts abs_facts(const Facts& a) {
  double lo = a.lo >= 0 ? a.lo : (a.hi <= 0 ? -a.hi : 0);
  return {lo, a.bound(), a.exact};
}

Facts mul_facts(const Facts& a, const Facts& b) {
  double c[] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4), a.exact && b.exact};
}

template <class F>
Facts monotone(const Facts& a, F fn, bool exact) {
  return {fn(a.lo), fn(a.hi), exact};
}

double tanh_(double v) { return std::tanh(v); }
double exp_(double v) { return std::exp(v); }
double log_(double v) { return std::log(v); }
double sqrt_(double v) { return std::sqrt(v); }
double erf_(double v) { return std::erf(v); }
double sigmoid_(double v) { return 1 / (1 + std::exp(-v)); }

template <class T>
const T& choose(Rng& rng, const std::vector<T>& xs) {
  return xs[static_cast<size_t>(rng.range(0, static_cast<int64_t>(xs.size())))];
}

}  // namespace

double Facts::bound() const { return std::max(std::fabs(lo), std::fabs(hi)); }

Facts join(const Facts& a, const Facts& b) {
  return {std::min(a.lo, b.lo), std::max(a.hi, b.hi), a.exact && b.exact};
}

Facts dtype_range(DType t) {
  switch (t) {
    case DType::F32:
    case DType::F16:
    case DType::BF16:
    case DType::F64: return {-1e4, 1e4, true};
    case DType::I8: return {-128, 127, true};
    case DType::I16: return {-32768, 32767, true};
    case DType::I32: return {-2147483648.0, 2147483647.0, true};
    case DType::I64: return {-kTwo62, kTwo62, true};
    case DType::U8: return {0, 255, true};
    case DType::U16: return {0, 65535, true};
    case DType::U32: return {0, 4294967295.0, true};
    case DType::U64: return {0, kTwo62, true};
    case DType::Bool: return {0, 1, true};
  }
  return {};
}

bool fits(const Facts& f, DType t) {
  Facts r = dtype_range(t);
  return f.lo >= r.lo && f.hi <= r.hi;  // false for NaN bounds
}

std::vector<bool> used_slots(const std::vector<Expr>& bodies, size_t num_slots) {
  std::vector<bool> used(num_slots, false);
  for (const Expr& b : bodies)
    ir::visit_post(b, [&](const Expr& e) {
      if (e.op() == ExprOp::Load) used[static_cast<size_t>(e->index)] = true;
    });
  return used;
}

Expr remap_slots(const Expr& e, const std::vector<int>& map) {
  return ir::map_post(e, [&](const Expr& n) {
    if (n.op() != ExprOp::Load || map[static_cast<size_t>(n->index)] == n->index) return n;
    auto copy = std::make_shared<ir::ExprNode>(*n);
    copy->index = map[static_cast<size_t>(n->index)];
    return Expr(std::move(copy));
  });
}

// ---------------------------------------------------------------- leaves and conversions

void ExprGen::add_load(Expr load, Facts f) {
  loads_.push_back({std::move(load), f});
  uses_.push_back(0);
}

void ExprGen::add_var(Expr var, int64_t extent) {
  vars_.push_back({std::move(var), {0, static_cast<double>(extent - 1), true}});
}

TE ExprGen::konst(DType t, double v) {
  ir::Scalar s = ir::is_float(t) ? ir::Scalar::of(t, v)
                                 : ir::Scalar::of_int(t, static_cast<int64_t>(std::llround(v)));
  double x = s.as_double();
  return mk(ir::constant(s), {x, x, true});
}

TE ExprGen::random_const(DType t) {
  if (ir::is_float(t)) {
    static const std::vector<double> kNice = {0, 0.5, 1, -1, 2, 0.25, -0.5, 3, -2, 0.125, 1.5};
    return konst(t, rng_.coin(0.5) ? choose(rng_, kNice) : rng_.uniform(-2, 2));
  }
  if (ir::is_bool(t)) return konst(t, rng_.coin() ? 1 : 0);
  bool sgn = ir::dtype_class(t) == ir::DTypeClass::Signed;
  int64_t v = rng_.coin(0.85) ? rng_.range(sgn ? -8 : 0, 8) : rng_.range(sgn ? -100 : 0, 101);
  return konst(t, static_cast<double>(v));
}

TE ExprGen::scale(TE a, double bound) {
  if (!ir::is_float(a.dtype()) || a.f.bound() <= bound) return a;
  double c = 1;  // halvings only: exact, and the same on every platform (no libm)
  while (a.f.bound() * c > bound && c > 0x1p-200) c /= 2;
  Facts f = {a.f.lo * c, a.f.hi * c, a.f.exact};
  return mk(ir::binary(ExprOp::Mul, a.e, ir::const_f(a.dtype(), c)), f);
}

TE ExprGen::clamp(TE a, double lo, double hi) {
  Facts r = dtype_range(a.dtype());
  lo = std::max(lo, r.lo);
  hi = std::min(hi, r.hi);
  TE l = konst(a.dtype(), lo), h = konst(a.dtype(), hi);
  Facts f = {std::clamp(a.f.lo, l.f.lo, h.f.lo), std::clamp(a.f.hi, l.f.lo, h.f.lo), a.f.exact};
  Expr e = ir::binary(ExprOp::Max, ir::binary(ExprOp::Min, a.e, h.e), l.e);
  return mk(std::move(e), f);
}

TE ExprGen::positive(TE a) {
  if (a.f.lo >= 0.25) return a;
  static const std::vector<double> kOffsets = {0.25, 0.5, 1, 2};
  TE c = konst(a.dtype(), choose(rng_, kOffsets));
  Facts f = abs_facts(a.f);
  f = {f.lo + c.f.lo, f.hi + c.f.lo, false};
  return mk(ir::binary(ExprOp::Add, ir::unary(ExprOp::Abs, a.e), c.e), f);
}

TE ExprGen::tame_float(TE a) { return a.f.bound() > kExprBound ? scale(a, kLeafBound) : a; }

std::optional<TE> ExprGen::cast_to(TE a, DType t, bool exact) {
  DType s = a.dtype();
  bool discontinuous = ir::is_float(s) && !ir::is_float(t);
  if ((exact || discontinuous) && !a.f.exact) return std::nullopt;
  if (s == t) return a;
  if (ir::is_bool(t)) {
    bool never_zero = a.f.lo > 0 || a.f.hi < 0, always_zero = a.f.lo == 0 && a.f.hi == 0;
    return mk(ir::cast(t, a.e), {never_zero ? 1.0 : 0.0, always_zero ? 0.0 : 1.0, true});
  }
  if (ir::is_float(t)) {
    if (ir::is_float(s)) {
      Facts f = {a.f.lo, a.f.hi, a.f.exact && widens(s, t)};
      if (exact && !f.exact) return std::nullopt;
      return mk(ir::cast(t, a.e), f);
    }
    double lim = int_limit_in_float(t);
    if (a.f.bound() > lim) a = clamp(a, -lim, lim);
    return mk(ir::cast(t, a.e), {a.f.lo, a.f.hi, true});
  }
  // To an integer. Negative values would wrap into u64 beyond the kept range: clip at 0.
  if (t == DType::U64 && a.f.lo < 0) a = clamp(a, 0, ir::is_float(s) ? 1e4 : kTwo62);
  Facts f = {std::trunc(a.f.lo), std::trunc(a.f.hi), true};
  if (!fits(f, t)) f = dtype_range(t);  // wraps at the cast
  return mk(ir::cast(t, a.e), f);
}

std::optional<TE> ExprGen::load_as(int leaf, DType t, bool exact) {
  std::optional<TE> r = cast_to(loads_[static_cast<size_t>(leaf)], t, exact);
  if (!r) return std::nullopt;
  ++uses_[static_cast<size_t>(leaf)];
  return scale(*r, kLeafBound);
}

std::optional<TE> ExprGen::load_leaf(DType t, bool exact) {
  std::vector<int> all, fresh;
  for (size_t i = 0; i < loads_.size(); ++i) {
    const TE& l = loads_[i];
    bool needs_exact = exact || (ir::is_float(l.dtype()) && !ir::is_float(t));
    if (needs_exact && !l.f.exact) continue;
    all.push_back(static_cast<int>(i));
    if (uses_[i] == 0) fresh.push_back(static_cast<int>(i));
  }
  if (all.empty()) return std::nullopt;
  int i = !fresh.empty() && rng_.coin(0.8) ? choose(rng_, fresh) : choose(rng_, all);
  return load_as(i, t, exact);
}

std::optional<TE> ExprGen::var_leaf(DType t, bool exact) {
  if (vars_.empty()) return std::nullopt;
  std::optional<TE> r = cast_to(choose(rng_, vars_), t, exact);
  if (r) r = scale(*r, kLeafBound);
  return r;
}

TE ExprGen::leaf(DType t, bool exact) {
  double r = rng_.uniform();
  if (r < 0.7)
    if (auto l = load_leaf(t, exact)) return *l;
  if (r < 0.9)
    if (auto v = var_leaf(t, exact)) return *v;
  if (auto l = load_leaf(t, exact); l && rng_.coin(0.5)) return *l;
  return random_const(t);
}

DType ExprGen::random_scalar_dtype() {
  static const std::vector<DType> kTypes = {
      DType::F32, DType::F32, DType::F32, DType::F16, DType::BF16, DType::F64, DType::I8,
      DType::I16, DType::I32, DType::I32, DType::I64, DType::I64, DType::U8,  DType::U16,
      DType::U32, DType::U64, DType::Bool, DType::Bool};
  return choose(rng_, kTypes);
}

// ---------------------------------------------------------------- operators

TE ExprGen::gen(DType t, int depth, bool exact) {
  if (depth <= 0 || rng_.coin(0.2)) return leaf(t, exact);
  for (int attempt = 0; attempt < 6; ++attempt) {
    std::optional<TE> r = ir::is_float(t)  ? gen_float(t, depth, exact)
                          : ir::is_bool(t) ? gen_bool(depth)
                                           : gen_int(t, depth);
    if (r) return *r;
  }
  return leaf(t, exact);
}

std::optional<TE> ExprGen::gen_using(DType t, int depth, bool exact, int leaf) {
  for (int attempt = 0; attempt < 8; ++attempt) {
    TE r = gen(t, depth, exact);
    bool uses = false;
    ir::visit_post(r.e, [&](const Expr& e) {
      uses |= e.op() == ExprOp::Load && equal(e, loads_[static_cast<size_t>(leaf)].e);
    });
    if (uses) return r;
  }
  return load_as(leaf, t, exact);
}

std::optional<TE> ExprGen::gen_cast_from_other(DType t, int depth, bool exact) {
  DType u = random_scalar_dtype();
  if (u == t) return std::nullopt;
  bool need = exact || (ir::is_float(u) && !ir::is_float(t));
  return cast_to(gen(u, depth - 1, need), t, exact);
}

std::optional<TE> ExprGen::gen_float(DType t, int depth, bool exact) {
  auto sub = [&](bool ex) { return gen(t, depth - 1, ex); };
  int form = static_cast<int>(rng_.range(0, exact ? 9 : 20));
  switch (form) {
    case 0: {
      TE a = sub(exact);
      return mk(ir::unary(ExprOp::Neg, a.e), {-a.f.hi, -a.f.lo, a.f.exact});
    }
    case 1: {
      TE a = sub(exact);
      return mk(ir::unary(ExprOp::Abs, a.e), abs_facts(a.f));
    }
    case 2: {  // discontinuous: exact operand
      TE a = sub(true);
      ExprOp op = choose(rng_, std::vector<ExprOp>{ExprOp::Floor, ExprOp::Ceil, ExprOp::Round});
      return tame_float(mk(ir::unary(op, a.e), {std::floor(a.f.lo), std::ceil(a.f.hi), true}));
    }
    case 3: {
      TE a = sub(true);
      return mk(ir::unary(ExprOp::Sign, a.e), {sign_of(a.f.lo), sign_of(a.f.hi), true});
    }
    case 4: {
      TE a = sub(exact), b = sub(exact);
      bool mx = rng_.coin();
      Facts f = mx ? Facts{std::max(a.f.lo, b.f.lo), std::max(a.f.hi, b.f.hi), true}
                   : Facts{std::min(a.f.lo, b.f.lo), std::min(a.f.hi, b.f.hi), true};
      f.exact = a.f.exact && b.f.exact;
      return mk(ir::binary(mx ? ExprOp::Max : ExprOp::Min, a.e, b.e), f);
    }
    case 5: {
      TE c = gen(DType::Bool, depth - 1, true), a = sub(exact), b = sub(exact);
      return mk(ir::select(c.e, a.e, b.e), join(a.f, b.f));
    }
    case 6: return gen_cast_from_other(t, depth, exact);
    case 7: {  // times a power of two: exact
      TE a = sub(exact);
      TE c = konst(t, choose(rng_, std::vector<double>{2, 4, -2, 0.5, -1, 0.25}));
      return tame_float(mk(ir::binary(ExprOp::Mul, a.e, c.e), mul_facts(a.f, c.f)));
    }
    case 8: {  // floordiv by a power of two: exact operand, exact result
      TE a = sub(true);
      TE c = konst(t, choose(rng_, std::vector<double>{0.5, 1, 2, 4, -2}));
      double x = std::floor(a.f.lo / c.f.lo), y = std::floor(a.f.hi / c.f.lo);
      Facts f = {std::min(x, y), std::max(x, y), true};
      return tame_float(mk(ir::binary(ExprOp::FloorDiv, a.e, c.e), f));
    }
    default: return gen_float_math(t, depth, form);
  }
}

std::optional<TE> ExprGen::gen_float_math(DType t, int depth, int form) {
  auto sub = [&] { return gen(t, depth - 1, false); };
  auto un = [&](ExprOp op, const TE& a, Facts f) {
    f.exact = false;
    return tame_float(mk(ir::unary(op, a.e), f));
  };
  auto bin = [&](ExprOp op, const TE& a, const TE& b, Facts f) {
    f.exact = false;
    return tame_float(mk(ir::binary(op, a.e, b.e), f));
  };
  switch (form) {
    case 9: {  // exp of a bounded argument
      TE a = sub();
      if (a.f.bound() > 4)
        a = rng_.coin() ? mk(ir::unary(ExprOp::Tanh, a.e), monotone(a.f, tanh_, false))
                        : scale(a, 4);
      return un(ExprOp::Exp, a, monotone(a.f, exp_, false));
    }
    case 10: {
      TE a = positive(sub());
      return un(ExprOp::Log, a, monotone(a.f, log_, false));
    }
    case 11: {
      TE a = positive(sub());
      if (rng_.coin()) return un(ExprOp::Sqrt, a, monotone(a.f, sqrt_, false));
      return un(ExprOp::Rsqrt, a, {1 / std::sqrt(a.f.hi), 1 / std::sqrt(a.f.lo), false});
    }
    case 12: {
      TE a = positive(sub());
      if (rng_.coin()) return un(ExprOp::Recip, a, {1 / a.f.hi, 1 / a.f.lo, false});
      a = mk(ir::unary(ExprOp::Neg, a.e), {-a.f.hi, -a.f.lo, false});
      return un(ExprOp::Recip, a, {1 / a.f.hi, 1 / a.f.lo, false});
    }
    case 13: {
      TE a = scale(sub(), 8);
      switch (rng_.range(0, 3)) {
        case 0: return un(ExprOp::Tanh, a, monotone(a.f, tanh_, false));
        case 1: return un(ExprOp::Erf, a, monotone(a.f, erf_, false));
        default: return un(ExprOp::Sigmoid, a, monotone(a.f, sigmoid_, false));
      }
    }
    case 14: {
      TE a = scale(sub(), 8);
      if (rng_.coin(0.25)) return un(ExprOp::Atan, a, {-1.5708, 1.5708, false});
      return un(rng_.coin() ? ExprOp::Sin : ExprOp::Cos, a, {-1, 1, false});
    }
    case 15: {
      TE a = sub(), b = sub();
      if (rng_.coin()) return bin(ExprOp::Add, a, b, {a.f.lo + b.f.lo, a.f.hi + b.f.hi});
      return bin(ExprOp::Sub, a, b, {a.f.lo - b.f.hi, a.f.hi - b.f.lo});
    }
    case 16: {
      TE a = sub(), b = sub();
      return bin(ExprOp::Mul, a, b, mul_facts(a.f, b.f));
    }
    case 17: {  // division by a value kept away from zero
      TE a = sub(), b = rng_.coin(0.7) ? positive(sub())
                                       : konst(t, choose(rng_, std::vector<double>{2, -4, 0.5, 3}));
      if (b.f.lo > 0 && rng_.coin(0.3))
        b = mk(ir::unary(ExprOp::Neg, b.e), {-b.f.hi, -b.f.lo, b.f.exact});
      Facts inv = {1 / b.f.hi, 1 / b.f.lo, false};
      return bin(ExprOp::Div, a, b, mul_facts(a.f, inv));
    }
    case 18: {  // pow of a positive base in [1/4, ~6] with an exponent in [-3, 3]
      TE a = positive(scale(sub(), 4));
      TE b = rng_.coin() ? konst(t, choose(rng_, std::vector<double>{2, 0.5, -1, 3, -0.5, 1.5}))
                         : scale(sub(), 2);
      double c[] = {std::pow(a.f.lo, b.f.lo), std::pow(a.f.lo, b.f.hi), std::pow(a.f.hi, b.f.lo),
                    std::pow(a.f.hi, b.f.hi)};
      return bin(ExprOp::Pow, a, b, {*std::min_element(c, c + 4), *std::max_element(c, c + 4)});
    }
    default: {  // floored modulo or remainder by a power of two: exact operand (the jump is the same)
      TE a = gen(t, depth - 1, true);
      TE c = konst(t, choose(rng_, std::vector<double>{0.5, 1, 2, 4, -2, -1}));
      if (rng_.coin()) {  // rem: the sign of a, below |c|
        double m = std::fabs(c.f.lo);
        return bin(ExprOp::Rem, a, c, {a.f.lo >= 0 ? 0 : -m, a.f.hi <= 0 ? 0 : m});
      }
      Facts f = c.f.lo > 0 ? Facts{0, c.f.lo} : Facts{c.f.lo, 0};
      return bin(ExprOp::Mod, a, c, f);
    }
  }
}

std::optional<TE> ExprGen::gen_int(DType t, int depth) {
  bool sgn = ir::dtype_class(t) == ir::DTypeClass::Signed;
  auto sub = [&] { return gen(t, depth - 1, true); };
  std::optional<TE> r;
  switch (rng_.range(0, 14)) {
    case 0:
    case 1: {
      if (!sgn) return std::nullopt;
      TE a = sub();
      r = rng_.coin() ? mk(ir::unary(ExprOp::Neg, a.e), {-a.f.hi, -a.f.lo, true})
                      : mk(ir::unary(ExprOp::Abs, a.e), abs_facts(a.f));
      break;
    }
    case 2: {
      TE a = sub();
      r = mk(ir::unary(ExprOp::Sign, a.e), {sign_of(a.f.lo), sign_of(a.f.hi), true});
      break;
    }
    case 3: {  // bitwise complement (unsigned would leave the range in the interpreter's i64)
      if (!sgn) return std::nullopt;
      TE a = sub();
      r = mk(ir::unary(ExprOp::Not, a.e), {-a.f.hi - 1, -a.f.lo - 1, true});
      break;
    }
    case 4: {
      TE a = sub(), b = sub();
      r = mk(ir::binary(ExprOp::Add, a.e, b.e), {a.f.lo + b.f.lo, a.f.hi + b.f.hi, true});
      break;
    }
    case 5: {
      TE a = sub(), b = sub();
      if (!sgn) {  // max(a, b) - min(a, b): never negative
        Facts hi = {std::max(a.f.lo, b.f.lo), std::max(a.f.hi, b.f.hi), true};
        Expr e = ir::binary(ExprOp::Sub, ir::binary(ExprOp::Max, a.e, b.e),
                            ir::binary(ExprOp::Min, a.e, b.e));
        r = mk(std::move(e), {0, hi.hi, true});
      } else {
        r = mk(ir::binary(ExprOp::Sub, a.e, b.e), {a.f.lo - b.f.hi, a.f.hi - b.f.lo, true});
      }
      break;
    }
    case 6: {
      TE a = sub(), b = sub();
      r = mk(ir::binary(ExprOp::Mul, a.e, b.e), mul_facts(a.f, b.f));
      break;
    }
    case 7: return gen_int_division(t, depth, ExprOp::Div);
    case 8: return gen_int_division(t, depth, ExprOp::FloorDiv);
    case 9: return gen_int_division(t, depth, rng_.coin() ? ExprOp::Mod : ExprOp::Rem);
    case 10: {
      TE a = sub(), b = sub();
      bool mx = rng_.coin();
      Facts f = mx ? Facts{std::max(a.f.lo, b.f.lo), std::max(a.f.hi, b.f.hi), true}
                   : Facts{std::min(a.f.lo, b.f.lo), std::min(a.f.hi, b.f.hi), true};
      r = mk(ir::binary(mx ? ExprOp::Max : ExprOp::Min, a.e, b.e), f);
      break;
    }
    case 11: {
      TE a = sub(), b = sub();
      double p = pow2_above(std::max(a.f.bound(), b.f.bound()));
      bool nonneg = a.f.lo >= 0 && b.f.lo >= 0;
      if (rng_.coin(0.3)) {  // shifts: left by 0..3 bits; right by anything (0 or -1 past 63)
        bool left = rng_.coin();
        if (left) {
          double k = static_cast<double>(rng_.range(0, 4));
          TE amount = konst(t, k);
          double m = std::pow(2.0, k);
          r = mk(ir::binary(ExprOp::Shl, a.e, amount.e), {std::min(a.f.lo * m, a.f.lo), std::max(a.f.hi * m, a.f.hi), true});
        } else {
          r = mk(ir::binary(ExprOp::Shr, a.e, b.e), {std::min(a.f.lo, a.f.lo < 0 ? -1.0 : 0.0), std::max(a.f.hi, 0.0), true});
        }
        break;
      }
      ExprOp op = choose(rng_, std::vector<ExprOp>{ExprOp::And, ExprOp::Or, ExprOp::Xor});
      Facts f = nonneg ? Facts{0, p - 1, true} : Facts{-p, p - 1, true};
      if (op == ExprOp::And && (a.f.lo >= 0 || b.f.lo >= 0))
        f = {0, a.f.lo >= 0 && b.f.lo >= 0 ? std::min(a.f.hi, b.f.hi)
                                           : (a.f.lo >= 0 ? a.f.hi : b.f.hi), true};
      r = mk(ir::binary(op, a.e, b.e), f);
      break;
    }
    case 12: {
      TE c = gen(DType::Bool, depth - 1, true), a = sub(), b = sub();
      r = mk(ir::select(c.e, a.e, b.e), join(a.f, b.f));
      break;
    }
    default: return gen_cast_from_other(t, depth, true);
  }
  if (!fits(r->f, t)) return std::nullopt;
  return r;
}

std::optional<TE> ExprGen::gen_int_division(DType t, int depth, ExprOp op) {
  bool sgn = ir::dtype_class(t) == ir::DTypeClass::Signed;
  TE a = gen(t, depth - 1, true), b = gen(t, depth - 1, true);
  switch (rng_.range(0, 3)) {  // the divisor: as drawn (0 gives 0), a constant, or >= 1
    case 0: break;
    case 1: b = konst(t, choose(rng_, sgn ? std::vector<double>{1, 2, 3, -3, -2, 5, 7}
                                          : std::vector<double>{1, 2, 3, 5, 7}));
      break;
    default:
      b = mk(ir::binary(ExprOp::Max, b.e, konst(t, 1).e),
             {std::max(b.f.lo, 1.0), std::max(b.f.hi, 1.0), true});
  }
  bool nonneg = a.f.lo >= 0 && b.f.lo >= 0;
  double ba = a.f.bound(), bb = b.f.bound();
  Facts f;
  if (op == ExprOp::Mod || op == ExprOp::Rem) {  // |result| < |b|; rem also has a's sign
    f = bb == 0 ? Facts{0, 0, true}
        : nonneg ? Facts{0, std::min(a.f.hi, bb - 1), true}
                 : Facts{-(bb - 1), bb - 1, true};
  } else if (nonneg) {
    f = {0, a.f.hi, true};
  } else {
    double m = op == ExprOp::Div ? ba : std::max(ba, 1.0);
    f = {-m, m, true};
  }
  if (!fits(f, t)) return std::nullopt;
  return mk(ir::binary(op, a.e, b.e), f);
}

std::optional<TE> ExprGen::gen_bool(int depth) {
  const Facts kBool = {0, 1, true};
  auto sub = [&] { return gen(DType::Bool, depth - 1, true); };
  switch (rng_.range(0, 11)) {
    case 0:
    case 1:
    case 2:
    case 3: return gen_compare(depth);
    case 4: return mk(ir::unary(ExprOp::Not, sub().e), kBool);
    case 5: {
      ExprOp op = choose(rng_, std::vector<ExprOp>{ExprOp::And, ExprOp::Or, ExprOp::Xor,
                                                  ExprOp::Max, ExprOp::Min});
      TE a = sub(), b = sub();  // separate statements: argument order is unspecified
      return mk(ir::binary(op, a.e, b.e), kBool);
    }
    case 6: {
      TE c = sub(), a = sub(), b = sub();
      return mk(ir::select(c.e, a.e, b.e), kBool);
    }
    case 7:
    case 8: {  // isnan / isinf, sometimes of a select that can yield a NaN or an infinity
      DType u = choose(rng_, std::vector<DType>{DType::F32, DType::F16, DType::BF16, DType::F64});
      Expr a = gen(u, depth - 1, true).e;
      if (rng_.coin(0.3)) {
        double special = rng_.coin() ? std::numeric_limits<double>::quiet_NaN()
                                     : (rng_.coin() ? 1 : -1) * std::numeric_limits<double>::infinity();
        a = ir::select(sub().e, a, ir::constant(ir::Scalar::of(u, special)));
      }
      return mk(ir::unary(rng_.coin() ? ExprOp::IsNan : ExprOp::IsInf, a), kBool);
    }
    case 9: {
      DType u = random_scalar_dtype();
      if (ir::is_bool(u)) return std::nullopt;
      return cast_to(gen(u, depth - 1, true), DType::Bool, true);
    }
    default: return leaf(DType::Bool, true);
  }
}

std::optional<TE> ExprGen::gen_compare(int depth) {
  DType u = random_scalar_dtype();
  TE a = gen(u, depth - 1, true);
  TE b = a;
  if (rng_.coin()) {
    b = gen(u, depth - 1, true);
  } else if (ir::is_float(u)) {  // a constant inside a's range: the comparison is not constant
    b = konst(u, rng_.uniform(a.f.lo, a.f.hi));
  } else if (a.f.hi - a.f.lo < 1e15) {
    auto lo = static_cast<int64_t>(a.f.lo), hi = static_cast<int64_t>(a.f.hi);
    b = konst(u, static_cast<double>(rng_.range(lo, hi + 1)));
  } else {
    b = random_const(u);
  }
  ExprOp op = choose(rng_, std::vector<ExprOp>{ExprOp::Eq, ExprOp::Ne, ExprOp::Lt, ExprOp::Le,
                                              ExprOp::Gt, ExprOp::Ge});
  return mk(ir::binary(op, a.e, b.e), {0, 1, true});
}

}  // namespace orchid::testlib::detail
