// Narrowing a box of loop variables by a condition (refine) and exact ranges of affine
// expressions restricted to an interval (eval_interval_within); see interval.h.
//
// Narrowing is HC4-style backward propagation: a constraint "e lies in D" on the value the
// interpreter computes is pushed from e to its operands, each step keeping every point of the
// box where the constraint can hold. Affine constraints are solved per variable over the
// other variables' ranges (twice, so that one variable's narrowing reaches the others).
// Backward steps through add/sub/mul/neg are only taken where the forward range fits in i64
// (no wrap), so that the interpreter's value equals the mathematical one.
#include <algorithm>
#include <numeric>

#include "support/error.h"
#include "tile/interval.h"
#include "tile/interval_internal.h"

namespace orchid::tile {

using ir::DType;
using ir::Expr;
using ir::ExprOp;
using namespace detail;  // NOLINT

namespace {

// A constraint on a difference of two i64 values, which may leave i64: 128-bit bounds, with
// +-2^100 standing for unbounded.
struct Range128 {
  i128 lo, hi;
};
constexpr i128 kInf = i128(1) << 100;

VarBox infeasible(VarBox box) {
  box.infeasible = true;
  return box;
}

bool fits_i64(const Affine& a, const VarBox& box) {
  i128 lo, hi;
  return affine_range(a, box, lo, hi) && lo >= kMin && hi <= kMax;
}

// Keeps the points where the affine value lies in D.
VarBox narrow_affine(const Affine& a, Range128 d, VarBox box) {
  if (a.terms.empty()) return (a.c >= d.lo && a.c <= d.hi) ? box : infeasible(box);
  constexpr i128 kHuge = i128(1) << 126;
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t t = 0; t < a.terms.size(); ++t) {
      if (box.empty()) return box;
      i128 lo = a.c, hi = a.c;  // the other terms' range
      for (size_t u = 0; u < a.terms.size(); ++u) {
        if (u == t) continue;
        const Interval& r = term_range(box, a.terms[u].first);
        i128 x = a.terms[u].second * r.lo, y = a.terms[u].second * r.hi;
        lo += std::min(x, y);
        hi += std::max(x, y);
        if (lo < -kHuge || hi > kHuge) return box;
      }
      i128 coef = a.terms[t].second;
      i128 L = d.lo - hi, H = d.hi - lo;  // coef * v must lie in [L, H]
      i128 vlo = coef > 0 ? ceil_div(L, coef) : ceil_div(H, coef);
      i128 vhi = coef > 0 ? floor_div(H, coef) : floor_div(L, coef);
      Interval& r = term_range(box, a.terms[t].first);
      r = intersect(r, clamp(vlo, vhi));
    }
  }
  return box;
}

VarBox narrow_expr(const Expr& e, Interval d, VarBox box, const LoadRangeFn& loads);

// x != 0 where x is an integer expression: only an end of x's range can be cut off.
VarBox narrow_nonzero(const Expr& x, VarBox box, const LoadRangeFn& loads) {
  Interval r = eval_interval(x, box, loads);
  if (r.lo == 0) return narrow_expr(x, {1, kMax}, box, loads);
  if (r.hi == 0) return narrow_expr(x, {kMin, -1}, box, loads);
  return box;
}

VarBox narrow_arith(const Expr& e, const Interval& d, VarBox box, const LoadRangeFn& loads) {
  if (e.op() == ExprOp::Neg) {
    Interval a = eval_interval(e.arg(0), box, loads);
    if (a.lo == kMin) return box;
    return narrow_expr(e.arg(0), clamp(-i128(d.hi), -i128(d.lo)), box, loads);
  }
  Interval a = eval_interval(e.arg(0), box, loads);
  Interval b = eval_interval(e.arg(1), box, loads);
  if (e.op() == ExprOp::Mul) {
    const Expr* x = b.is_point() ? &e.arg(0) : a.is_point() ? &e.arg(1) : nullptr;
    if (x == nullptr) return box;
    i128 k = b.is_point() ? b.lo : a.lo;
    Interval xr = b.is_point() ? a : b;
    i128 p = k * xr.lo, q = k * xr.hi;
    if (k == 0 || std::min(p, q) < kMin || std::max(p, q) > kMax) return box;
    i128 lo = k > 0 ? ceil_div(d.lo, k) : ceil_div(d.hi, k);
    i128 hi = k > 0 ? floor_div(d.hi, k) : floor_div(d.lo, k);
    return narrow_expr(*x, clamp(lo, hi), box, loads);
  }
  bool add = e.op() == ExprOp::Add;
  i128 lo = add ? i128(a.lo) + b.lo : i128(a.lo) - b.hi;
  i128 hi = add ? i128(a.hi) + b.hi : i128(a.hi) - b.lo;
  if (lo < kMin || hi > kMax) return box;  // may wrap: nothing to learn
  // a + b in D: a in D - b, b in D - a.   a - b in D: a in D + b, b in a - D.
  box = narrow_expr(e.arg(0), add ? clamp(i128(d.lo) - b.hi, i128(d.hi) - b.lo)
                                  : clamp(i128(d.lo) + b.lo, i128(d.hi) + b.hi), box, loads);
  if (box.empty()) return box;
  a = eval_interval(e.arg(0), box, loads);
  return narrow_expr(e.arg(1), add ? clamp(i128(d.lo) - a.hi, i128(d.hi) - a.lo)
                                   : clamp(i128(a.lo) - d.hi, i128(a.hi) - d.lo), box, loads);
}

// The constant divisor of floordiv/mod, when it is one (and positive).
std::optional<int64_t> positive_divisor(const Expr& e) {
  const Expr& b = e.arg(1);
  if (b.op() != ExprOp::Const || e.dtype() == DType::U64 || b->value.i <= 0) return std::nullopt;
  return b->value.i;
}

// Add, Sub, Mul and Neg: through the affine form where the expression has one, else by their
// operands' intervals.
VarBox narrow_linear(const Expr& e, Interval d, const VarBox& box, const LoadRangeFn& loads) {
  if (auto lin = linearize(e)) {
    if (!fits_i64(*lin, box)) return box;
    return narrow_affine(*lin, {d.lo, d.hi}, box);
  }
  if (e.dtype() == DType::U64) return box;
  return narrow_arith(e, d, box, loads);
}

// The binary operators whose operands a range of their result bounds; nullopt for the others.
std::optional<VarBox> narrow_binary(const Expr& e, Interval d, VarBox box, const LoadRangeFn& loads) {
  switch (*ir::binary_kind(e.op())) {
    case ir::BinaryOp::Add:
    case ir::BinaryOp::Sub:
    case ir::BinaryOp::Mul: return narrow_linear(e, d, box, loads);
    case ir::BinaryOp::FloorDiv: {
      auto c = positive_divisor(e);
      if (!c) return box;
      return narrow_expr(e.arg(0), clamp(i128(d.lo) * *c, i128(d.hi) * *c + *c - 1), box, loads);
    }
    case ir::BinaryOp::Mod: {
      auto m = positive_divisor(e);
      if (!m) return box;
      Interval a = eval_interval(e.arg(0), box, loads);
      i128 q = floor_div(a.lo, *m);
      if (q != floor_div(a.hi, *m)) return box;
      return narrow_expr(e.arg(0), clamp(d.lo + q * *m, d.hi + q * *m), box, loads);
    }
    case ir::BinaryOp::Min:
    case ir::BinaryOp::Max: {
      if (e.dtype() == DType::U64) return box;
      // min >= lo: both operands are; max <= hi: both operands are.
      Interval side = e.op() == ExprOp::Min ? Interval{d.lo, kMax} : Interval{kMin, d.hi};
      box = narrow_expr(e.arg(0), side, box, loads);
      return narrow_expr(e.arg(1), side, box, loads);
    }
    case ir::BinaryOp::Div:
    case ir::BinaryOp::Rem:
    case ir::BinaryOp::Pow:
    case ir::BinaryOp::And:
    case ir::BinaryOp::Or:
    case ir::BinaryOp::Xor:
    case ir::BinaryOp::Shl:
    case ir::BinaryOp::Shr: break;
  }
  return std::nullopt;
}

VarBox narrow_expr(const Expr& e, Interval d, VarBox box, const LoadRangeFn& loads) {
  if (box.empty() || !ir::is_integral(e.dtype())) return box;
  Interval v = eval_interval(e, box, loads);
  d = intersect(d, v);
  if (d.empty()) return infeasible(box);
  if (d == v) return box;
  switch (ir::expr_op_category(e.op())) {
    case ir::ExprCategory::Leaf:
      if (e.op() != ExprOp::Var) break;
      box.of(e->var_kind, e->index) = d;
      return box;
    case ir::ExprCategory::Unary:
      if (e.op() == ExprOp::Neg) return narrow_linear(e, d, box, loads);
      break;
    case ir::ExprCategory::Binary:
      if (std::optional<VarBox> b = narrow_binary(e, d, box, loads)) return *b;
      break;
    case ir::ExprCategory::Select: {
      Interval c = eval_interval(e.arg(0), box, loads);
      if (c == Interval::point(1)) return narrow_expr(e.arg(1), d, box, loads);
      if (c == Interval::point(0)) return narrow_expr(e.arg(2), d, box, loads);
      return hull(narrow_expr(e.arg(1), d, refine(e.arg(0), true, box, loads), loads),
                  narrow_expr(e.arg(2), d, refine(e.arg(0), false, box, loads), loads));
    }
    case ir::ExprCategory::Cast: {
      const Expr& x = e.arg(0);
      if (!ir::is_integral(x.dtype())) return box;
      if (e.dtype() == DType::Bool) {
        if (d == Interval::point(0)) return narrow_expr(x, {0, 0}, box, loads);
        return d == Interval::point(1) ? narrow_nonzero(x, box, loads) : box;
      }
      Interval a = eval_interval(x, box, loads);
      if (intersect(a, dtype_range(e.dtype())) != a) return box;  // wraps: not the identity
      return narrow_expr(x, d, box, loads);
    }
    case ir::ExprCategory::Load:
    case ir::ExprCategory::Compare: break;
  }
  // Another bool operator: narrowed as a condition; any other operator teaches nothing.
  if (e.dtype() == DType::Bool && d.is_point()) return refine(e, d.lo == 1, box, loads);
  return box;
}

ExprOp negated(ExprOp op) {
  switch (comparison(op)) {
    case CmpOp::Lt: return ExprOp::Ge;
    case CmpOp::Le: return ExprOp::Gt;
    case CmpOp::Gt: return ExprOp::Le;
    case CmpOp::Ge: return ExprOp::Lt;
    case CmpOp::Eq: return ExprOp::Ne;
    case CmpOp::Ne: return ExprOp::Eq;
  }
  ORCHID_CHECK(false) << ir::expr_op_name(op) << " is not a comparison";
  return op;
}

VarBox narrow_not_equal(const Expr& a, const Expr& b, VarBox box, const LoadRangeFn& loads) {
  Interval ai = eval_interval(a, box, loads), bi = eval_interval(b, box, loads);
  auto cut = [&](const Expr& x, const Interval& xr, int64_t k) {
    if (xr.lo == k) return narrow_expr(x, {k + 1, kMax}, box, loads);
    if (xr.hi == k) return narrow_expr(x, {kMin, k - 1}, box, loads);
    return box;
  };
  if (bi.is_point()) return cut(a, ai, bi.lo);
  if (ai.is_point()) return cut(b, bi, ai.lo);
  return box;
}

// Keeps the points where `a op b` holds (integer or bool operands, signed order).
VarBox narrow_compare(ExprOp op, const Expr& a, const Expr& b, VarBox box, const LoadRangeFn& loads) {
  Range128 d{-kInf, kInf};  // the allowed a - b
  switch (comparison(op)) {
    case CmpOp::Ne: return narrow_not_equal(a, b, box, loads);
    case CmpOp::Lt: d.hi = -1; break;
    case CmpOp::Le: d.hi = 0; break;
    case CmpOp::Gt: d.lo = 1; break;
    case CmpOp::Ge: d.lo = 0; break;
    case CmpOp::Eq: d.lo = d.hi = 0; break;
  }
  auto la = linearize(a), lb = linearize(b);
  if (la && lb && fits_i64(*la, box) && fits_i64(*lb, box)) {
    Affine diff = *la;
    diff.c -= lb->c;
    for (const auto& term : lb->terms) {
      const auto& key = term.first;
      const auto& coef = term.second;
      auto it = std::find_if(diff.terms.begin(), diff.terms.end(), [&key](const auto& t) { return t.first == key; });
      if (it == diff.terms.end()) {
        diff.terms.push_back({key, -coef});
      } else if ((it->second -= coef) == 0) {
        diff.terms.erase(it);
      }
    }
    return narrow_affine(diff, d, box);
  }
  Interval bi = eval_interval(b, box, loads);
  box = narrow_expr(a, clamp(d.lo + bi.lo, d.hi + bi.hi), box, loads);
  if (box.empty()) return box;
  Interval ai = eval_interval(a, box, loads);
  return narrow_expr(b, clamp(ai.lo - d.hi, ai.hi - d.lo), box, loads);
}

}  // namespace

VarBox refine(const Expr& cond, bool value, const VarBox& box, const LoadRangeFn& loads) {
  if (box.empty()) return box;
  Interval c = eval_interval(cond, box, loads);
  if (!c.contains(value ? 1 : 0)) return infeasible(box);
  if (c.is_point()) return box;
  const bool logical = cond.dtype() == DType::Bool;  // not, and, or: logical on bool, bitwise otherwise
  switch (ir::expr_op_category(cond.op())) {
    case ir::ExprCategory::Unary:
      if (cond.op() != ExprOp::Not || !logical) return box;
      return refine(cond.arg(0), !value, box, loads);
    case ir::ExprCategory::Binary: {
      if ((cond.op() != ExprOp::And && cond.op() != ExprOp::Or) || !logical) return box;
      // All operands must take `value` when (And, true) or (Or, false); else either may.
      bool both = (cond.op() == ExprOp::And) == value;
      if (both) return refine(cond.arg(1), value, refine(cond.arg(0), value, box, loads), loads);
      return hull(refine(cond.arg(0), value, box, loads), refine(cond.arg(1), value, box, loads));
    }
    case ir::ExprCategory::Select:
      return hull(refine(cond.arg(1), value, refine(cond.arg(0), true, box, loads), loads),
                  refine(cond.arg(2), value, refine(cond.arg(0), false, box, loads), loads));
    case ir::ExprCategory::Cast: return narrow_expr(cond, Interval::point(value ? 1 : 0), box, loads);
    case ir::ExprCategory::Compare: {
      DType t = cond.arg(0).dtype();
      if (ir::is_float(t) || t == DType::U64) return box;
      return narrow_compare(value ? cond.op() : negated(cond.op()), cond.arg(0), cond.arg(1), box, loads);
    }
    case ir::ExprCategory::Leaf:
    case ir::ExprCategory::Load: break;
  }
  return box;
}

namespace {

// Exact: enumerates every variable but the one of the widest range (at most kMaxPoints
// combinations) and solves for that one in closed form.
std::optional<Interval> affine_within_enumerated(const Affine& a, const VarBox& box, const Interval& w) {
  constexpr i128 kMaxPoints = 4096;
  if (a.terms.empty()) return w.contains(static_cast<int64_t>(a.c)) ? Interval::point(static_cast<int64_t>(a.c))
                                                                    : Interval::empty_interval();
  size_t pivot = 0;
  for (size_t t = 1; t < a.terms.size(); ++t) {
    const Interval& r = term_range(box, a.terms[t].first);
    const Interval& p = term_range(box, a.terms[pivot].first);
    if (i128(r.hi) - r.lo > i128(p.hi) - p.lo) pivot = t;
  }
  i128 points = 1;
  std::vector<size_t> others;
  for (size_t t = 0; t < a.terms.size(); ++t) {
    if (t == pivot) continue;
    const Interval& r = term_range(box, a.terms[t].first);
    points *= i128(r.hi) - r.lo + 1;
    if (points > kMaxPoints) return std::nullopt;
    others.push_back(t);
  }
  const Interval& pr = term_range(box, a.terms[pivot].first);
  i128 cp = a.terms[pivot].second;
  std::vector<int64_t> at(others.size());
  for (size_t k = 0; k < others.size(); ++k) at[k] = term_range(box, a.terms[others[k]].first).lo;
  i128 best_lo = 0, best_hi = 0;
  bool any = false;
  while (true) {
    i128 base = a.c;
    for (size_t k = 0; k < others.size(); ++k) base += a.terms[others[k]].second * at[k];
    // t in [tlo, thi] keeps base + cp * t inside w.
    i128 tlo = std::max<i128>(pr.lo, cp > 0 ? ceil_div(w.lo - base, cp) : ceil_div(w.hi - base, cp));
    i128 thi = std::min<i128>(pr.hi, cp > 0 ? floor_div(w.hi - base, cp) : floor_div(w.lo - base, cp));
    if (tlo <= thi) {
      i128 x = base + cp * tlo, y = base + cp * thi;
      best_lo = any ? std::min({best_lo, x, y}) : std::min(x, y);
      best_hi = any ? std::max({best_hi, x, y}) : std::max(x, y);
      any = true;
    }
    size_t k = 0;
    for (; k < others.size(); ++k) {
      if (at[k] < term_range(box, a.terms[others[k]].first).hi) {
        ++at[k];
        break;
      }
      at[k] = term_range(box, a.terms[others[k]].first).lo;
    }
    if (k == others.size()) break;
  }
  if (!any) return Interval::empty_interval();
  return Interval{static_cast<int64_t>(best_lo), static_cast<int64_t>(best_hi)};
}

// Conservative: the range cut to w, rounded inward to the residue of c modulo the gcd of
// the coefficients (every value of the form is congruent to c).
Interval affine_within_congruence(const Affine& a, i128 lo, i128 hi, const Interval& w) {
  i128 g = 0;
  for (const auto& t : a.terms) g = std::gcd(static_cast<int64_t>(g), static_cast<int64_t>(t.second));  // |coef| <= 2^62
  lo = std::max<i128>(lo, w.lo);
  hi = std::min<i128>(hi, w.hi);
  if (g > 1) {
    auto residue = [g](i128 x) { return x - floor_div(x, g) * g; };  // in [0, g)
    lo += residue(a.c - lo);
    hi -= residue(hi - a.c);
  }
  return fit(lo, hi);
}

}  // namespace

Interval eval_interval_within(const Expr& e, const VarBox& box, const Interval& within, const LoadRangeFn& loads) {
  if (box.empty() || within.empty()) return Interval::empty_interval();
  if (auto lin = linearize(e)) {
    i128 lo, hi;
    if (affine_range(*lin, box, lo, hi) && lo >= kMin && hi <= kMax) {
      if (auto exact = affine_within_enumerated(*lin, box, within)) return *exact;
      return affine_within_congruence(*lin, lo, hi, within);
    }
  }
  return intersect(eval_interval(e, box, loads), within);
}

}  // namespace orchid::tile
