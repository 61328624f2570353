// Internal to src/tile: 128-bit helpers and affine forms shared by the interval evaluator,
// the box narrowing and exact restricted ranges.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "support/error.h"
#include "tile/interval.h"

namespace orchid::tile::detail {

using i128 = __int128;
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// A value range computed exactly in 128 bits: the full range where it leaves i64 (the
// interpreter's i64 arithmetic would wrap there).
Interval fit(i128 lo, i128 hi);
// A constraint computed in 128 bits, widened to i64 (every i64 value satisfies the dropped
// part); empty when lo > hi.
Interval clamp(i128 lo, i128 hi);
i128 floor_div(i128 a, i128 b);  // b != 0
i128 ceil_div(i128 a, i128 b);   // b != 0

// c + sum coef * var: terms sorted by variable key (2k for ik, 2k+1 for rk), no zero
// coefficient, |c| and |coef| <= 2^62.
struct Affine {
  i128 c = 0;
  std::vector<std::pair<int32_t, i128>> terms;
};
// The affine form of an i64 expression built from constants, variables, add, sub, neg and mul
// by a constant-valued operand; nullopt for anything else. Modular arithmetic makes the
// interpreter's wrapped value congruent to the affine value, so both agree wherever the
// affine range fits in i64.
std::optional<Affine> linearize(const ir::Expr& e);
const Interval& term_range(const VarBox& box, int32_t key);
Interval& term_range(VarBox& box, int32_t key);
// The affine form's range over the box in 128 bits; false when it is unbounded in practice.
bool affine_range(const Affine& a, const VarBox& box, i128& lo, i128& hi);
// The exact range over a non-empty box (full where it leaves i64).
Interval affine_interval(const Affine& a, const VarBox& box);

}  // namespace orchid::tile::detail

namespace orchid::tile {

using ir::CmpOp;

// op as a comparison (InternalError for any other operator): lets a switch list 6 cases.
inline CmpOp comparison(ir::ExprOp op) {
  std::optional<CmpOp> c = ir::compare_kind(op);
  ORCHID_CHECK(c.has_value()) << ir::expr_op_name(op) << " is not a comparison";
  return *c;
}

}  // namespace orchid::tile
