// Interval arithmetic over index expressions (interval.h): affine forms and forward
// evaluation. Narrowing of boxes and restricted ranges are in narrow.cpp.
#include "tile/interval.h"

#include <algorithm>

#include "support/error.h"
#include "tile/interval_internal.h"

namespace orchid::tile {

using ir::DType;
using ir::Expr;
using ir::ExprOp;
using detail::i128;

namespace detail {

Interval fit(i128 lo, i128 hi) {
  if (lo > hi) return Interval::empty_interval();
  if (lo < kMin || hi > kMax) return Interval::full();
  return {static_cast<int64_t>(lo), static_cast<int64_t>(hi)};
}

Interval clamp(i128 lo, i128 hi) {
  lo = std::max<i128>(lo, kMin);
  hi = std::min<i128>(hi, kMax);
  if (lo > hi) return Interval::empty_interval();
  return {static_cast<int64_t>(lo), static_cast<int64_t>(hi)};
}

i128 floor_div(i128 a, i128 b) {
  i128 q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

i128 ceil_div(i128 a, i128 b) { return -floor_div(-a, b); }

namespace {
int32_t var_key(const Expr& v) {
  return 2 * v->index + (v->var_kind == ir::VarKind::Reduce ? 1 : 0);
}
constexpr i128 kCoefLimit = i128(1) << 62;

void add_term(Affine& a, int32_t key, i128 coef) {
  auto it = std::lower_bound(a.terms.begin(), a.terms.end(), key,
                             [](const auto& t, int32_t k) { return t.first < k; });
  if (it != a.terms.end() && it->first == key) {
    it->second += coef;
    if (it->second == 0) a.terms.erase(it);
  } else if (coef != 0) {
    a.terms.insert(it, {key, coef});
  }
}

bool in_limit(const Affine& a) {
  if (a.c > kCoefLimit || a.c < -kCoefLimit) return false;
  for (const auto& t : a.terms)
    if (t.second > kCoefLimit || t.second < -kCoefLimit) return false;
  return true;
}
}  // namespace

namespace {

// Add, Sub and Mul of i64 operands: affine where both operands are (Mul: one a constant).
std::optional<Affine> linearize_binary(const Expr& e) {
  switch (*ir::binary_kind(e.op())) {
    case ir::BinaryOp::Add:
    case ir::BinaryOp::Sub: {
      auto a = linearize(e.arg(0));
      if (!a) return std::nullopt;
      auto b = linearize(e.arg(1));
      if (!b) return std::nullopt;
      i128 s = e.op() == ExprOp::Add ? 1 : -1;
      Affine out = *a;
      out.c += s * b->c;
      for (const auto& t : b->terms) add_term(out, t.first, s * t.second);
      if (!in_limit(out)) return std::nullopt;
      return out;
    }
    case ir::BinaryOp::Mul: {
      auto a = linearize(e.arg(0));
      if (!a) return std::nullopt;
      auto b = linearize(e.arg(1));
      if (!b) return std::nullopt;
      if (!a->terms.empty() && !b->terms.empty()) return std::nullopt;
      const Affine& k = a->terms.empty() ? *a : *b;
      const Affine& x = a->terms.empty() ? *b : *a;
      Affine out;
      out.c = x.c * k.c;
      for (const auto& t : x.terms)
        if (t.second * k.c != 0) out.terms.push_back({t.first, t.second * k.c});
      if (!in_limit(out)) return std::nullopt;
      return out;
    }
    case ir::BinaryOp::Div:
    case ir::BinaryOp::FloorDiv:
    case ir::BinaryOp::Mod:
    case ir::BinaryOp::Rem:
    case ir::BinaryOp::Pow:
    case ir::BinaryOp::Max:
    case ir::BinaryOp::Min:
    case ir::BinaryOp::And:
    case ir::BinaryOp::Or:
    case ir::BinaryOp::Xor:
    case ir::BinaryOp::Shl:
    case ir::BinaryOp::Shr: break;
  }
  return std::nullopt;
}

}  // namespace

std::optional<Affine> linearize(const Expr& e) {
  Affine out;
  if (e.op() == ExprOp::Var) {
    out.terms.push_back({var_key(e), 1});
    return out;
  }
  if (e.dtype() != DType::I64) return std::nullopt;
  switch (ir::expr_op_category(e.op())) {
    case ir::ExprCategory::Leaf:  // a constant
      out.c = e->value.i;
      return out;
    case ir::ExprCategory::Unary: {
      if (e.op() != ExprOp::Neg) return std::nullopt;
      auto a = linearize(e.arg(0));
      if (!a) return std::nullopt;
      out.c = -a->c;
      for (const auto& t : a->terms) out.terms.push_back({t.first, -t.second});
      return out;
    }
    case ir::ExprCategory::Binary: return linearize_binary(e);
    case ir::ExprCategory::Load:
    case ir::ExprCategory::Compare:
    case ir::ExprCategory::Select:
    case ir::ExprCategory::Cast: break;
  }
  return std::nullopt;
}

const Interval& term_range(const VarBox& box, int32_t key) {
  return box.of(key % 2 ? ir::VarKind::Reduce : ir::VarKind::Domain, key / 2);
}

Interval& term_range(VarBox& box, int32_t key) {
  return box.of(key % 2 ? ir::VarKind::Reduce : ir::VarKind::Domain, key / 2);
}

// [lo, hi] of c + sum coef * var over the box, in 128 bits (|coef| <= 2^62, |var| < 2^63, so
// a term stays below 2^125; a sum that grows past 2^126 is reported as unbounded).
bool affine_range(const Affine& a, const VarBox& box, i128& lo, i128& hi) {
  constexpr i128 kHuge = i128(1) << 126;
  lo = hi = a.c;
  for (const auto& [key, coef] : a.terms) {
    const Interval& r = term_range(box, key);
    i128 x = coef * r.lo, y = coef * r.hi;
    lo += std::min(x, y);
    hi += std::max(x, y);
    if (lo < -kHuge || hi > kHuge) return false;
  }
  return true;
}

Interval affine_interval(const Affine& a, const VarBox& box) {
  if (box.empty()) return Interval::empty_interval();
  i128 lo, hi;
  if (!affine_range(a, box, lo, hi)) return Interval::full();
  return fit(lo, hi);
}

}  // namespace detail

using namespace detail;  // NOLINT

Interval hull(const Interval& a, const Interval& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
}

Interval intersect(const Interval& a, const Interval& b) {
  if (a.empty() || b.empty()) return Interval::empty_interval();
  Interval r{std::max(a.lo, b.lo), std::min(a.hi, b.hi)};
  return r.empty() ? Interval::empty_interval() : r;
}

std::string interval_str(const Interval& a) {
  if (a.empty()) return "[]";
  auto bound = [](int64_t v) {
    if (v == kMin) return std::string("-inf");
    if (v == kMax) return std::string("+inf");
    return std::to_string(v);
  };
  return "[" + bound(a.lo) + ", " + bound(a.hi) + "]";
}

Interval dtype_range(DType t) {
  // u64 values past INT64_MAX are held as negative int64: every int64 is a u64 value.
  if (ir::is_float(t) || t == DType::U64) return Interval::full();
  return {ir::dtype_lowest(t), ir::dtype_highest(t)};
}

bool VarBox::empty() const {
  if (infeasible) return true;
  for (const Interval& r : domain)
    if (r.empty()) return true;
  for (const Interval& r : reduce)
    if (r.empty()) return true;
  return false;
}

const Interval& VarBox::of(ir::VarKind kind, int32_t index) const {
  const auto& vars = kind == ir::VarKind::Domain ? domain : reduce;
  ORCHID_CHECK(index >= 0 && static_cast<size_t>(index) < vars.size())
      << (kind == ir::VarKind::Domain ? "i" : "r") << index << " outside a box of "
      << vars.size() << " variables";
  return vars[static_cast<size_t>(index)];
}

Interval& VarBox::of(ir::VarKind kind, int32_t index) {
  return const_cast<Interval&>(static_cast<const VarBox&>(*this).of(kind, index));
}

VarBox hull(const VarBox& a, const VarBox& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  ORCHID_CHECK(a.domain.size() == b.domain.size() && a.reduce.size() == b.reduce.size())
      << "hull of boxes of different ranks";
  VarBox r = a;
  for (size_t k = 0; k < r.domain.size(); ++k) r.domain[k] = hull(a.domain[k], b.domain[k]);
  for (size_t k = 0; k < r.reduce.size(); ++k) r.reduce[k] = hull(a.reduce[k], b.reduce[k]);
  return r;
}

// ---- Forward evaluation. ----

namespace {

// Operands read as unsigned (u64 div/floordiv/mod/min/max/compare) agree with the signed
// reading only when both are non-negative.
bool unsigned_trouble(DType t, const Interval& a, const Interval& b) {
  return t == DType::U64 && (a.lo < 0 || b.lo < 0);
}

Interval eval_compare(ExprOp op, const Interval& a, const Interval& b) {
  auto decide = [](bool yes, bool no) -> Interval {
    if (yes) return Interval::point(1);
    if (no) return Interval::point(0);
    return {0, 1};
  };
  switch (comparison(op)) {
    case CmpOp::Lt: return decide(a.hi < b.lo, a.lo >= b.hi);
    case CmpOp::Le: return decide(a.hi <= b.lo, a.lo > b.hi);
    case CmpOp::Gt: return decide(a.lo > b.hi, a.hi <= b.lo);
    case CmpOp::Ge: return decide(a.lo >= b.hi, a.hi < b.lo);
    case CmpOp::Eq: return decide(a.is_point() && b.is_point() && a.lo == b.lo, intersect(a, b).empty());
    case CmpOp::Ne: return decide(intersect(a, b).empty(), a.is_point() && b.is_point() && a.lo == b.lo);
  }
  ORCHID_CHECK(false) << ir::expr_op_name(op) << " is not a comparison";
  return {0, 1};
}

Interval eval_floordiv(const Interval& a, int64_t c) {
  if (c == 0) return Interval::point(0);
  i128 x = floor_div(a.lo, c), y = floor_div(a.hi, c);
  return fit(std::min(x, y), std::max(x, y));
}

Interval eval_mod(const Interval& a, int64_t m) {
  if (m == 0) return Interval::point(0);
  i128 qa = floor_div(a.lo, m), qb = floor_div(a.hi, m);
  if (qa == qb) return fit(a.lo - qa * m, a.hi - qa * m);
  return m > 0 ? Interval{0, m - 1} : Interval{m + 1, 0};
}

Interval eval_cast(const Expr& e, const VarBox& box, const LoadRangeFn& loads) {
  const Expr& x = e.arg(0);
  if (ir::is_float(x.dtype())) return e.dtype() == DType::Bool ? Interval{0, 1} : dtype_range(e.dtype());
  Interval a = eval_interval(x, box, loads);
  if (e.dtype() == DType::Bool) {
    if (a == Interval::point(0)) return a;
    return a.contains(0) ? Interval{0, 1} : Interval::point(1);
  }
  Interval r = dtype_range(e.dtype());
  return intersect(a, r) == a ? a : r;  // wraps into the width unless it already fits
}

Interval eval_load(const Expr& e, const VarBox& box, const LoadRangeFn& loads) {
  Interval pred{1, 1};
  VarBox read = box;
  if (e->predicated) {
    pred = eval_interval(e->args.back(), box, loads);
    read = refine(e->args.back(), true, box, loads);
  }
  Interval values = Interval::empty_interval();
  if (!read.empty()) {
    values = intersect(loads ? loads(e, read) : Interval::full(), dtype_range(e.dtype()));
  }
  if (pred.contains(0)) values = hull(values, Interval::point(e->value.i));
  return values;
}

// The exact range of (a mod m) when a's variables take at most kMaxModPoints combinations:
// the residues of a non-contiguous argument (a reshape moving row boundaries reads
// `(4 i0 + i1) mod 6`) need not reach 0 or m - 1.
std::optional<Interval> mod_enumerated(const Affine& a, const VarBox& box, i128 m) {
  constexpr i128 kMaxModPoints = 4096;
  i128 points = 1;
  for (const auto& t : a.terms) {
    const Interval& r = term_range(box, t.first);
    points *= i128(r.hi) - r.lo + 1;
    if (points > kMaxModPoints) return std::nullopt;
  }
  std::vector<int64_t> at;
  for (const auto& t : a.terms) at.push_back(term_range(box, t.first).lo);
  Interval out = Interval::empty_interval();
  for (i128 n = 0; n < points; ++n) {
    i128 v = a.c;
    for (size_t k = 0; k < at.size(); ++k) v += a.terms[k].second * at[k];
    out = hull(out, Interval::point(static_cast<int64_t>(v - floor_div(v, m) * m)));
    for (size_t k = at.size(); k-- > 0;) {  // odometer
      if (at[k] < term_range(box, a.terms[k].first).hi) {
        ++at[k];
        break;
      }
      at[k] = term_range(box, a.terms[k].first).lo;
    }
  }
  return out;
}

// The positive constant divisor of an i64 floordiv / mod node, if it has one.
std::optional<i128> positive_const_divisor(const Expr& e) {
  const Expr& b = e.arg(1);
  if (e.dtype() != DType::I64 || b.op() != ExprOp::Const || b->value.i <= 0) return std::nullopt;
  return i128(b->value.i);
}

// floordiv / mod of a quasi-affine argument — an affine X under floordivs by positive
// constants — through the identities (a, b, s, m > 0)
//   floordiv(floordiv(X, a), b) = floordiv(X, a b)
//   mod(floordiv(X, s), m)      = floordiv(mod(X, s m), s)
// and, for X = M Q + R where M divides Q's coefficients (and the multiple of M in the
// constant), floordiv(X, M) = Q + floordiv(R, M) and mod(X, M) = mod(R, M): so
// `(12 i0 + 6 i1 + i2) mod 6` is `i2 mod 6`. This is what keeps views (reshapes) exact.
std::optional<Interval> eval_divmod_affine(const Expr& e, const VarBox& box) {
  constexpr i128 kLimit = i128(1) << 62;
  auto m = positive_const_divisor(e);
  if (!m) return std::nullopt;
  i128 s = 1;  // the product of the peeled floordivs
  const Expr* x = &e.arg(0);
  while (x->op() == ExprOp::FloorDiv) {
    auto d = positive_const_divisor(*x);
    if (!d || s * *d * *m > kLimit) break;
    s *= *d;
    x = &x->arg(0);
  }
  auto lin = linearize(*x);
  if (!lin) return std::nullopt;
  i128 lo, hi;
  if (!affine_range(*lin, box, lo, hi) || lo < kMin || hi > kMax) return std::nullopt;  // may wrap
  i128 big = s * *m;  // floordiv: X by s m; mod: X mod s m, then by s
  Affine quot, rest;
  quot.c = floor_div(lin->c, big);
  rest.c = lin->c - quot.c * big;
  for (const auto& t : lin->terms) {
    if (t.second % big == 0) quot.terms.push_back({t.first, t.second / big});
    else rest.terms.push_back(t);
  }
  Interval r = affine_interval(rest, box);  // full (still sound) where a part leaves i64
  if (e.op() == ExprOp::Mod) {
    auto residues = mod_enumerated(rest, box, big);
    Interval res = residues ? *residues : eval_mod(r, static_cast<int64_t>(big));
    return eval_floordiv(res, static_cast<int64_t>(s));
  }
  Interval q = affine_interval(quot, box), f = eval_floordiv(r, static_cast<int64_t>(big));
  return fit(i128(q.lo) + f.lo, i128(q.hi) + f.hi);
}

Interval eval_binary(const Expr& e, const VarBox& box, const LoadRangeFn& loads) {
  ExprOp op = e.op();
  if (op == ExprOp::Add || op == ExprOp::Sub || op == ExprOp::Mul) {
    if (auto lin = linearize(e)) return affine_interval(*lin, box);
  }
  if (op == ExprOp::FloorDiv || op == ExprOp::Mod) {
    if (auto r = eval_divmod_affine(e, box)) return *r;
  }
  Interval a = eval_interval(e.arg(0), box, loads);
  Interval b = eval_interval(e.arg(1), box, loads);
  if (a.empty() || b.empty()) return Interval::empty_interval();
  DType t = e.dtype();
  switch (*ir::binary_kind(op)) {
    case ir::BinaryOp::Add: return fit(i128(a.lo) + b.lo, i128(a.hi) + b.hi);
    case ir::BinaryOp::Sub: return fit(i128(a.lo) - b.hi, i128(a.hi) - b.lo);
    case ir::BinaryOp::Mul: {
      i128 c[] = {i128(a.lo) * b.lo, i128(a.lo) * b.hi, i128(a.hi) * b.lo, i128(a.hi) * b.hi};
      return fit(*std::min_element(c, c + 4), *std::max_element(c, c + 4));
    }
    case ir::BinaryOp::Div:
      if (!b.is_point() || unsigned_trouble(t, a, b)) return Interval::full();
      if (b.lo == 0) return Interval::point(0);
      return fit(std::min(i128(a.lo) / b.lo, i128(a.hi) / b.lo), std::max(i128(a.lo) / b.lo, i128(a.hi) / b.lo));
    case ir::BinaryOp::FloorDiv:
      if (!b.is_point() || unsigned_trouble(t, a, b)) return Interval::full();
      return eval_floordiv(a, b.lo);
    case ir::BinaryOp::Mod:
      if (unsigned_trouble(t, a, b)) return Interval::full();
      if (b.is_point()) return eval_mod(a, b.lo);
      if (b.lo > 0) return {0, b.hi - 1};
      return Interval::full();
    case ir::BinaryOp::Max:
      if (unsigned_trouble(t, a, b)) return Interval::full();
      return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
    case ir::BinaryOp::Min:
      if (unsigned_trouble(t, a, b)) return Interval::full();
      return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
    case ir::BinaryOp::And:
      if (t == DType::Bool) return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
      return Interval::full();
    case ir::BinaryOp::Or:
      if (t == DType::Bool) return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
      return Interval::full();
    case ir::BinaryOp::Xor:
      if (t == DType::Bool && a.is_point() && b.is_point()) return Interval::point(a.lo ^ b.lo);
      return t == DType::Bool ? Interval{0, 1} : Interval::full();
    case ir::BinaryOp::Shl:  // on bool operands (0 or 1): 0, 1 or 2 until a store narrows it
      if (t == DType::Bool && a.is_point() && b.is_point()) return Interval::point(a.lo << b.lo);
      return t == DType::Bool ? Interval{0, 2} : Interval::full();
    case ir::BinaryOp::Shr:
      if (t == DType::Bool && a.is_point() && b.is_point()) return Interval::point(a.lo >> b.lo);
      return t == DType::Bool ? Interval{0, 1} : Interval::full();
    case ir::BinaryOp::Rem:
    case ir::BinaryOp::Pow: break;
  }
  return Interval::full();
}

Interval eval_unary(const Expr& e, const VarBox& box, const LoadRangeFn& loads) {
  if (e.op() == ExprOp::IsNan || e.op() == ExprOp::IsInf) return {0, 1};
  if (e.op() == ExprOp::Neg) {
    if (auto lin = linearize(e)) return affine_interval(*lin, box);
  }
  Interval a = eval_interval(e.arg(0), box, loads);
  if (a.empty()) return a;
  switch (*ir::unary_kind(e.op())) {
    case ir::UnaryOp::Neg: return fit(-i128(a.hi), -i128(a.lo));
    case ir::UnaryOp::Abs:
      if (a.lo >= 0) return a;
      if (a.hi <= 0) return fit(-i128(a.hi), -i128(a.lo));
      return fit(0, std::max(-i128(a.lo), i128(a.hi)));
    case ir::UnaryOp::Sign:
      if (e.dtype() == DType::U64) return {0, 1};
      return {a.lo > 0 ? 1 : a.lo < 0 ? -1 : 0, a.hi > 0 ? 1 : a.hi < 0 ? -1 : 0};
    case ir::UnaryOp::Not:
      if (e.dtype() == DType::Bool) return {1 - a.hi, 1 - a.lo};
      return {~a.hi, ~a.lo};
    case ir::UnaryOp::Exp:
    case ir::UnaryOp::Log:
    case ir::UnaryOp::Sqrt:
    case ir::UnaryOp::Rsqrt:
    case ir::UnaryOp::Recip:
    case ir::UnaryOp::Tanh:
    case ir::UnaryOp::Erf:
    case ir::UnaryOp::Sigmoid:
    case ir::UnaryOp::Sin:
    case ir::UnaryOp::Cos:
    case ir::UnaryOp::Atan:
    case ir::UnaryOp::Floor:
    case ir::UnaryOp::Ceil:
    case ir::UnaryOp::Round:
    case ir::UnaryOp::IsNan:
    case ir::UnaryOp::IsInf: break;
  }
  return Interval::full();
}

}  // namespace

Interval eval_interval(const Expr& e, const VarBox& box, const LoadRangeFn& loads) {
  ORCHID_CHECK(ir::is_integral(e.dtype()))
      << "interval of a " << ir::dtype_name(e.dtype()) << " expression (" << ir::expr_op_name(e.op()) << ")";
  if (box.empty()) return Interval::empty_interval();
  switch (ir::expr_op_category(e.op())) {
    case ir::ExprCategory::Leaf:
      if (e.op() == ExprOp::Var) return box.of(e->var_kind, e->index);
      return Interval::point(e->value.i);
    case ir::ExprCategory::Load: return eval_load(e, box, loads);
    case ir::ExprCategory::Unary: return eval_unary(e, box, loads);
    case ir::ExprCategory::Binary: return eval_binary(e, box, loads);
    case ir::ExprCategory::Compare: {
      DType t = e.arg(0).dtype();
      if (ir::is_float(t)) return {0, 1};
      Interval a = eval_interval(e.arg(0), box, loads);
      Interval b = eval_interval(e.arg(1), box, loads);
      if (a.empty() || b.empty()) return Interval::empty_interval();
      if (unsigned_trouble(t, a, b)) return {0, 1};
      return eval_compare(e.op(), a, b);
    }
    case ir::ExprCategory::Select: {
      Interval c = eval_interval(e.arg(0), box, loads);
      if (c == Interval::point(1)) return eval_interval(e.arg(1), box, loads);
      if (c == Interval::point(0)) return eval_interval(e.arg(2), box, loads);
      if (c.empty()) return c;
      return hull(eval_interval(e.arg(1), refine(e.arg(0), true, box, loads), loads),
                  eval_interval(e.arg(2), refine(e.arg(0), false, box, loads), loads));
    }
    case ir::ExprCategory::Cast: return eval_cast(e, box, loads);
  }
  return Interval::full();
}

}  // namespace orchid::tile
