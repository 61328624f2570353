// Interval arithmetic over index expressions (Welder §3.1, "tile propagation"): the range of
// values an expression can take when its loop variables range over a box.
//
// An Interval is INCLUSIVE: {lo, hi} holds every v with lo <= v <= hi; it is empty when
// lo > hi. (Regions of tensors, region.h, are half-open instead: [lo, hi) per dimension.)
// Bounds are plain int64; the full range [INT64_MIN, INT64_MAX] means "unknown". Booleans are
// intervals inside [0, 1]: {1, 1} always true, {0, 0} always false, {0, 1} unknown.
//
// Soundness: for every point of the box, the value the interpreter computes (docs/ir.md,
// integers held in i64 and wrapping modulo 2^64) lies in the interval. Arithmetic is done in
// 128 bits; where the true result could leave i64 (and so wrap), the result is the full range.
// Integer operators outside the index-expression subset (bitwise and/or/xor, div by a
// non-constant, ...) and anything computed from floats give the full range of their dtype;
// comparisons of floats give {0, 1}.
//
// Exactness: an interval is *exact* when both bounds are values the expression takes at some
// point of the box. Affine expressions (sums of constant multiples of variables, each variable
// taken once after collecting terms, so `i0 - i0 + 3` is exactly 3) are exact, and so are
// the quasi-affine indices of views: floordivs by positive constants of an affine expression,
// optionally reduced mod a positive constant (terms whose coefficients the divisor divides
// pass through floordiv and vanish under mod; the residues of the rest are enumerated when it
// has at most 4096 points, else mod is exact within one period and [0, m-1] beyond).
// Floordiv by a positive constant and min/max keep exactness of monotone single-variable
// arguments. A select takes one branch when its condition is decided over the box, else the
// union of both branches, each evaluated over the box narrowed by the condition (refine
// below), so `select(lt(i, 0), neg(i), i)` is |i| exactly. What stays inexact: expressions
// whose bounds need correlations that a box cannot hold (max(i - 2, 2 - i) is [-2, 2] over
// i in 0..4, not [0, 2]), and values of indirect loads.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "ir/expr.h"

namespace orchid::tile {

struct Interval {
  int64_t lo = 0;
  int64_t hi = -1;  // default: empty

  static constexpr Interval full() {
    return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
  }
  static constexpr Interval point(int64_t v) { return {v, v}; }
  static constexpr Interval empty_interval() { return {0, -1}; }
  constexpr bool empty() const { return lo > hi; }
  constexpr bool is_point() const { return lo == hi; }
  constexpr bool contains(int64_t v) const { return lo <= v && v <= hi; }
  constexpr bool operator==(const Interval&) const = default;
};

// The smallest interval holding both (an empty operand is ignored).
Interval hull(const Interval& a, const Interval& b);
Interval intersect(const Interval& a, const Interval& b);
// "[lo, hi]", "[]" when empty, "-inf"/"+inf" for the extreme bounds.
std::string interval_str(const Interval& a);
// Every value of an integer or bool dtype as the interpreter holds it in i64 (u64: all i64).
Interval dtype_range(ir::DType t);

// Ranges of the loop variables: domain variables i0.. and reduction variables r0.. .
struct VarBox {
  std::vector<Interval> domain;
  std::vector<Interval> reduce;
  bool infeasible = false;  // set by refine when a condition can never hold

  // True when no point lies in the box (some variable has no value, or infeasible).
  bool empty() const;
  const Interval& of(ir::VarKind kind, int32_t index) const;
  Interval& of(ir::VarKind kind, int32_t index);
  bool operator==(const VarBox&) const = default;
};
// The smallest box holding both (an empty box is ignored).
VarBox hull(const VarBox& a, const VarBox& b);

// The values an integer tensor read by an indirect load (a Load node inside an index
// expression or a condition) can hold at the points of `box`. Without one, the load's dtype
// range is used. A predicated load's fill is added by the evaluator, not by this function.
using LoadRangeFn = std::function<Interval(const ir::Expr& load, const VarBox& box)>;

// The values of integer or bool expression e over `box` (empty when the box is empty).
// Variables must be in the box's range (InternalError otherwise); e must not be float.
Interval eval_interval(const ir::Expr& e, const VarBox& box, const LoadRangeFn& loads = {});

// The smallest box (conservatively: a box containing every point) of the points of `box`
// where the bool expression `cond` evaluates to `value`; an empty box when the evaluation
// shows it never does. Narrowing understands and/or/not, select, casts to bool and
// comparisons of index expressions (affine comparisons are solved per variable; others are
// narrowed backwards through add, sub, mul by a constant, floordiv, mod within one period,
// min, max and select). Conditions on floats narrow nothing.
VarBox refine(const ir::Expr& cond, bool value, const VarBox& box, const LoadRangeFn& loads = {});

// The values of index expression e over the points of `box`, restricted to `within`: the
// smallest interval holding every value v of e with v in `within` (empty when none). For
// affine e over few points this is exact (e.g. the smallest in-bounds position of a strided,
// dilated, padded convolution window); otherwise it is eval_interval intersected with
// `within`, rounded inward to the residue class affine expressions keep (gcd of their
// coefficients).
Interval eval_interval_within(const ir::Expr& e, const VarBox& box, const Interval& within,
                              const LoadRangeFn& loads = {});

}  // namespace orchid::tile
