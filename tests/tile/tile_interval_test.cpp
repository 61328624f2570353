// Interval arithmetic over index expressions (src/tile/interval.h): each operator's rule, the
// overflow rule, narrowing of boxes by conditions, restricted affine ranges, and a seeded fuzz
// that checks soundness against exact evaluation at every point of small boxes (and exactness
// for affine expressions).
#include <gtest/gtest.h>

#include <functional>
#include <iostream>
#include <limits>

#include "ir/printer.h"
#include "support/random.h"
#include "tile/interval.h"
#include "tile_oracle.h"

namespace orchid::tile {
namespace {

using ir::DType;
using ir::Expr;
using ir::ExprOp;

constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();

VarBox box2(Interval i0, Interval i1, std::vector<Interval> reduce = {}) {
  VarBox b;
  b.domain = {i0, i1};
  b.reduce = std::move(reduce);
  return b;
}

Expr i0() { return ir::dvar(0); }
Expr i1() { return ir::dvar(1); }
Expr cmp(ExprOp op, Expr a, Expr b) { return ir::binary(op, std::move(a), std::move(b)); }
Expr cmp(ExprOp op, Expr a, int64_t b) { return cmp(op, std::move(a), ir::const_i64(b)); }

TEST(TileInterval, AffineIsExactAndCancels) {
  VarBox b = box2({2, 5}, {-3, 4});
  EXPECT_EQ(eval_interval(i0() * 3 + i1() - 1, b), (Interval{2, 18}));
  EXPECT_EQ(eval_interval(i0() * -2 + 7, b), (Interval{-3, 3}));        // negative factor flips
  EXPECT_EQ(eval_interval(ir::const_i64(-4) * i1(), b), (Interval{-16, 12}));  // constant on the left
  EXPECT_EQ(eval_interval(i0() - i0() + 3, b), Interval::point(3));     // dependency removed
  EXPECT_EQ(eval_interval(i0() * 2 - (i0() + i1()), b), (Interval{-2, 8}));  // i0 - i1
  EXPECT_EQ(eval_interval(ir::unary(ExprOp::Neg, i1()), b), (Interval{-4, 3}));
}

// Bool shifts as the interpreter computes them: true << true is 2 until a store narrows it.
TEST(TileInterval, BoolShiftsAreNotXor) {
  VarBox b = box2({0, 0}, {0, 0});
  Expr t = ir::const_bool(true);
  EXPECT_EQ(eval_interval(ir::binary(ExprOp::Shl, t, t), b), Interval::point(2));
  EXPECT_EQ(eval_interval(ir::binary(ExprOp::Shr, t, t), b), Interval::point(0));
  EXPECT_EQ(eval_interval(ir::binary(ExprOp::Xor, t, t), b), Interval::point(0));
}

TEST(TileInterval, FloorDivAndModByPositiveConstants) {
  VarBox b = box2({-7, 9}, {4, 6});
  EXPECT_EQ(eval_interval(ir::floordiv(i0(), 4), b), (Interval{-2, 2}));
  EXPECT_EQ(eval_interval(ir::mod(i1(), 8), b), (Interval{4, 6}));         // one period: exact
  EXPECT_EQ(eval_interval(ir::mod(i1() + 3, 8), b), (Interval{0, 7}));     // 7..9 wraps
  EXPECT_EQ(eval_interval(ir::mod(i0(), 4), b), (Interval{0, 3}));
  EXPECT_EQ(eval_interval(ir::mod(i0() - 16, 4), box2({17, 18}, {0, 0})), (Interval{1, 2}));  // negative argument
  EXPECT_EQ(eval_interval(ir::floordiv(i0(), 4), box2({-8, -5}, {0, 0})), Interval::point(-2));
}

TEST(TileInterval, MinMaxSelectAndConditions) {
  VarBox b = box2({0, 9}, {3, 5});
  EXPECT_EQ(eval_interval(ir::binary(ExprOp::Min, i0(), ir::const_i64(4)), b), (Interval{0, 4}));
  EXPECT_EQ(eval_interval(ir::binary(ExprOp::Max, i0() - 2, ir::const_i64(0)), b), (Interval{0, 7}));
  // Known to be loose: a box cannot hold the correlation of the two operands (exact: [0, 2]).
  EXPECT_EQ(eval_interval(ir::binary(ExprOp::Max, i0() - 2, ir::const_i64(2) - i0()), box2({0, 4}, {0, 0})),
            (Interval{-2, 2}));
  // Decided conditions pick one branch; undecided ones take both, each over its part of the box.
  EXPECT_EQ(eval_interval(ir::select(cmp(ExprOp::Lt, i1(), 9), i0(), i1() * 100), b), (Interval{0, 9}));
  EXPECT_EQ(eval_interval(ir::select(cmp(ExprOp::Lt, i0(), 0), i0() - 50, i0()), b), (Interval{0, 9}));
  // |i - 4| over 0..9 through a select: exactly [0, 5], not [-9, 9].
  Expr j = i0() - 4;
  EXPECT_EQ(eval_interval(ir::select(cmp(ExprOp::Lt, j, 0), ir::unary(ExprOp::Neg, j), j), b), (Interval{0, 5}));
  EXPECT_EQ(eval_interval(cmp(ExprOp::Ge, i1(), 3), b), Interval::point(1));
  EXPECT_EQ(eval_interval(cmp(ExprOp::Gt, i1(), 5), b), Interval::point(0));
  EXPECT_EQ(eval_interval(cmp(ExprOp::Eq, i0(), 4), b), (Interval{0, 1}));
  EXPECT_EQ(eval_interval(cmp(ExprOp::Ne, i1(), 7), b), Interval::point(1));
  Expr yes = cmp(ExprOp::Ge, i1(), 3), maybe = cmp(ExprOp::Lt, i0(), 5), no = cmp(ExprOp::Lt, i1(), 0);
  EXPECT_EQ(eval_interval(ir::binary(ExprOp::And, yes, maybe), b), (Interval{0, 1}));
  EXPECT_EQ(eval_interval(ir::binary(ExprOp::And, no, maybe), b), Interval::point(0));
  EXPECT_EQ(eval_interval(ir::binary(ExprOp::Or, yes, maybe), b), Interval::point(1));
  EXPECT_EQ(eval_interval(ir::unary(ExprOp::Not, no), b), Interval::point(1));
  EXPECT_EQ(eval_interval(ir::cast(DType::I64, yes), b), Interval::point(1));
  EXPECT_EQ(eval_interval(ir::cast(DType::Bool, i1()), b), Interval::point(1));
  EXPECT_EQ(eval_interval(ir::cast(DType::Bool, i0()), b), (Interval{0, 1}));
  // Float comparisons are unknown, and nothing of them is evaluated.
  Expr fl = ir::load(0, DType::F32, {i0()});
  EXPECT_EQ(eval_interval(cmp(ExprOp::Gt, fl, ir::const_f(DType::F32, 0)), b), (Interval{0, 1}));
}

TEST(TileInterval, IndirectLoadsUseTheirDtypeOrTheGivenRange) {
  VarBox b = box2({0, 3}, {0, 0});
  Expr u8 = ir::cast(DType::I64, ir::load(0, DType::U8, {i0()}));
  EXPECT_EQ(eval_interval(u8, b), (Interval{0, 255}));
  EXPECT_EQ(eval_interval(ir::load(0, DType::I64, {i0()}), b), Interval::full());
  int calls = 0;
  LoadRangeFn fn = [&](const Expr& load, const VarBox& at) {
    ++calls;
    EXPECT_EQ(load->index, 0);
    EXPECT_EQ(at.domain[0], (Interval{0, 3}));
    return Interval{-1000, 1000};  // clipped to the dtype
  };
  EXPECT_EQ(eval_interval(u8, b, fn), (Interval{0, 255}));
  EXPECT_EQ(calls, 1);
  // A predicated load yields its fill where the predicate may fail; its values are asked for
  // over the points where it holds.
  Expr pl = ir::load_pred(0, DType::I64, {i0()}, cmp(ExprOp::Ge, i0(), 2), ir::Scalar::of_int(DType::I64, -7));
  LoadRangeFn seen = [&](const Expr&, const VarBox& at) {
    EXPECT_EQ(at.domain[0], (Interval{2, 3}));
    return Interval{10, 20};
  };
  EXPECT_EQ(eval_interval(pl, b, seen), (Interval{-7, 20}));
  EXPECT_EQ(eval_interval(pl, box2({2, 3}, {0, 0}), seen), (Interval{10, 20}));
  EXPECT_EQ(eval_interval(pl, box2({0, 1}, {0, 0}), seen), Interval::point(-7));
}

TEST(TileInterval, OverflowGivesTheFullRange) {
  VarBox b = box2({0, 3}, {0, 0});
  int64_t big = int64_t{1} << 62;
  EXPECT_EQ(eval_interval(i0() * big, b), Interval::full());           // 3 * 2^62 wraps
  EXPECT_EQ(eval_interval(i0() * big, box2({-2, 1}, {0, 0})), (Interval{-2 * big, big}));
  EXPECT_EQ(eval_interval(ir::const_i64(kI64Max) + i0(), b), Interval::full());
  EXPECT_EQ(eval_interval(ir::const_i64(kI64Min) - i0(), box2({0, 0}, {0, 0})), Interval::point(kI64Min));
  EXPECT_EQ(eval_interval(ir::unary(ExprOp::Neg, ir::load(0, DType::I64, {i0()})), b), Interval::full());
  // Unknown values stay unknown through arithmetic (no saturated, wrong bounds).
  Expr unknown = ir::load(0, DType::I64, {i0()});
  EXPECT_EQ(eval_interval(unknown + 5, b), Interval::full());
  EXPECT_EQ(eval_interval(ir::floordiv(unknown, 2), b), (Interval{kI64Min / 2, kI64Max / 2}));
  EXPECT_EQ(eval_interval(ir::mod(unknown, 7), b), (Interval{0, 6}));
}

TEST(TileRefine, NarrowsBoxesByConditions) {
  VarBox b = box2({0, 10}, {0, 10});
  EXPECT_EQ(refine(cmp(ExprOp::Lt, i0(), 5), true, b), box2({0, 4}, {0, 10}));
  EXPECT_EQ(refine(cmp(ExprOp::Lt, i0(), 5), false, b), box2({5, 10}, {0, 10}));
  // Conjunctions narrow every variable; the negation of a conjunction is the union.
  Expr pad = ir::binary(ExprOp::And, cmp(ExprOp::Ge, i0() - 2, 0), cmp(ExprOp::Lt, i1() * 2 - 1, 8));
  EXPECT_EQ(refine(pad, true, b), box2({2, 10}, {0, 4}));
  EXPECT_EQ(refine(pad, false, b), b);
  // Two variables: i0 < i1 + 3 over i1 in 0..2 caps i0 at 4.
  EXPECT_EQ(refine(cmp(ExprOp::Lt, i0(), i1() + 3), true, box2({0, 10}, {0, 2})), box2({0, 4}, {0, 2}));
  // Through floordiv, min and select.
  EXPECT_EQ(refine(cmp(ExprOp::Eq, ir::floordiv(i0(), 4), 1), true, b), box2({4, 7}, {0, 10}));
  EXPECT_EQ(refine(cmp(ExprOp::Ge, ir::binary(ExprOp::Min, i0(), i1()), 6), true, b), box2({6, 10}, {6, 10}));
  EXPECT_EQ(refine(ir::unary(ExprOp::Not, cmp(ExprOp::Gt, i1(), 3)), true, b), box2({0, 10}, {0, 3}));
  EXPECT_EQ(refine(cmp(ExprOp::Ne, i0(), 0), true, b), box2({1, 10}, {0, 10}));
  // A condition that never holds gives an empty box; one that always holds changes nothing.
  EXPECT_TRUE(refine(cmp(ExprOp::Gt, i0(), 10), true, b).empty());
  EXPECT_EQ(refine(cmp(ExprOp::Ge, i0(), 0), true, b), b);
  // Rank 0 boxes can be infeasible too.
  VarBox scalar;
  EXPECT_TRUE(refine(ir::const_bool(false), true, scalar).empty());
  EXPECT_FALSE(refine(ir::const_bool(true), true, scalar).empty());
}

TEST(TileEvalWithin, FindsTheExactInBoundsRangeOfAffineIndices) {
  // A strided, dilated, padded window: pos = 2p + 2q - 1 is always odd, so the smallest
  // in-bounds position is 1, not 0, and the largest below 9 is 7.
  VarBox b;
  b.domain = {{0, 3}};
  b.reduce = {{0, 2}};
  Expr pos = ir::dvar(0) * 2 + ir::rvar(0) * 2 - 1;
  EXPECT_EQ(eval_interval(pos, b), (Interval{-1, 9}));
  EXPECT_EQ(eval_interval_within(pos, b, {0, 8}), (Interval{1, 7}));
  EXPECT_TRUE(eval_interval_within(pos, b, {2, 2}).empty());
  // Non-affine: the interval cut to the bounds.
  EXPECT_EQ(eval_interval_within(ir::mod(ir::dvar(0), 2), b, {1, 5}), Interval::point(1));
}

// ---- Fuzz: random index expressions against exact evaluation. ----

class ExprFuzz {
 public:
  explicit ExprFuzz(Rng& rng, bool affine_only) : rng_(rng), affine_(affine_only) {}

  // What a view's index looks like: an affine expression under floordivs by positive
  // constants, optionally reduced modulo a positive constant.
  Expr gen_view() {
    bool was = affine_;
    affine_ = true;
    Expr e = gen_int(3);
    affine_ = was;
    for (int64_t k = rng_.range(0, 3); k > 0; --k) e = ir::floordiv(e, rng_.range(1, 8));
    if (rng_.coin(0.7)) e = ir::mod(e, rng_.range(1, 8));
    return e;
  }

  Expr gen_int(int depth) {
    if (depth == 0 || rng_.coin(0.25)) return leaf();
    int pick = static_cast<int>(rng_.range(0, affine_ ? 4 : 11));
    switch (pick) {
      case 0: return gen_int(depth - 1) + gen_int(depth - 1);
      case 1: return gen_int(depth - 1) - gen_int(depth - 1);
      case 2: return rng_.coin() ? gen_int(depth - 1) * constant() : ir::const_i64(small()) * gen_int(depth - 1);
      case 3: return ir::unary(ExprOp::Neg, gen_int(depth - 1));
      case 4: return ir::floordiv(gen_int(depth - 1), rng_.range(1, 6));
      case 5: return ir::mod(gen_int(depth - 1), rng_.range(1, 6));
      case 6: return ir::binary(ExprOp::Min, gen_int(depth - 1), gen_int(depth - 1));
      case 7: return ir::binary(ExprOp::Max, gen_int(depth - 1), gen_int(depth - 1));
      case 8: return ir::select(gen_bool(depth - 1), gen_int(depth - 1), gen_int(depth - 1));
      case 9: return ir::cast(DType::I64, gen_bool(depth - 1));
      default: return gen_int(depth - 1) * constant();
    }
  }

  Expr gen_bool(int depth) {
    if (depth == 0) return cmp(compare_op(), leaf(), leaf());
    switch (rng_.range(0, 7)) {
      case 0: return ir::binary(ExprOp::And, gen_bool(depth - 1), gen_bool(depth - 1));
      case 1: return ir::binary(ExprOp::Or, gen_bool(depth - 1), gen_bool(depth - 1));
      case 2: return ir::unary(ExprOp::Not, gen_bool(depth - 1));
      case 3: return ir::cast(DType::Bool, gen_int(depth - 1));
      default: return cmp(compare_op(), gen_int(depth - 1), gen_int(depth - 1));
    }
  }

  VarBox box() {
    VarBox b;
    for (int k = 0; k < 2; ++k) {
      int64_t lo = rng_.range(-6, 7);
      b.domain.push_back({lo, lo + rng_.range(0, 6)});
    }
    int64_t lo = rng_.range(-3, 4);
    b.reduce.push_back({lo, lo + rng_.range(0, 4)});
    return b;
  }

 private:
  Expr leaf() {
    double u = rng_.uniform();
    if (u < 0.35) return ir::dvar(static_cast<int32_t>(rng_.range(0, 2)));
    if (u < 0.5) return ir::rvar(0);
    return ir::const_i64(constant_value());
  }
  int64_t small() { return rng_.range(-4, 5); }
  int64_t constant_value() {
    // Now and then a huge constant, so that wrapping arithmetic is exercised (not in affine
    // mode, whose expressions must stay exact, and so must not wrap).
    if (!affine_ && rng_.coin(0.06)) {
      const int64_t huge[] = {kI64Max, kI64Min, int64_t{1} << 62, -(int64_t{1} << 62), kI64Max - 3};
      return huge[rng_.range(0, 5)];
    }
    return small();
  }
  Expr constant() { return ir::const_i64(constant_value()); }
  ExprOp compare_op() {
    const ExprOp ops[] = {ExprOp::Lt, ExprOp::Le, ExprOp::Gt, ExprOp::Ge, ExprOp::Eq, ExprOp::Ne};
    return ops[rng_.range(0, 6)];
  }

  Rng& rng_;
  bool affine_;
};

// Every point of a box (domain i0, i1 and reduction r0).
template <class F>
void each_point(const VarBox& b, F&& fn) {
  for (int64_t x = b.domain[0].lo; x <= b.domain[0].hi; ++x)
    for (int64_t y = b.domain[1].lo; y <= b.domain[1].hi; ++y)
      for (int64_t z = b.reduce[0].lo; z <= b.reduce[0].hi; ++z) fn(oracle::Point{x, y}, oracle::Point{z});
}

bool in_box(const VarBox& b, const oracle::Point& i, const oracle::Point& r) {
  return !b.empty() && b.domain[0].contains(i[0]) && b.domain[1].contains(i[1]) && b.reduce[0].contains(r[0]);
}

struct FuzzCounts {
  int exprs = 0, exact = 0, refines = 0, refine_exact = 0;
};

enum class Family { General, Affine, View };

void fuzz_one(Rng& rng, Family family, FuzzCounts& n) {
  bool affine_only = family == Family::Affine;
  ExprFuzz fz(rng, affine_only);
  oracle::PointEval pe({}, {}, {});
  VarBox b = fz.box();
  Expr e = family == Family::View ? fz.gen_view() : fz.gen_int(4);
  Interval got = eval_interval(e, b);
  Interval within{rng.range(-20, 5), rng.range(-5, 20)};
  Interval got_within = eval_interval_within(e, b, within);
  Interval seen = Interval::empty_interval(), seen_within = Interval::empty_interval();
  each_point(b, [&](const oracle::Point& i, const oracle::Point& r) {
    int64_t v = *pe.eval(e, i, r);
    seen = hull(seen, Interval::point(v));
    if (within.contains(v)) seen_within = hull(seen_within, Interval::point(v));
  });
  std::string what = ir::print_expr(e) + " over i0 " + interval_str(b.domain[0]) + ", i1 " +
                     interval_str(b.domain[1]) + ", r0 " + interval_str(b.reduce[0]);
  EXPECT_EQ(intersect(seen, got), seen) << what << ": values " << interval_str(seen) << ", interval " << interval_str(got);
  EXPECT_EQ(intersect(seen_within, got_within), seen_within)
      << what << " within " << interval_str(within) << ": " << interval_str(got_within);
  ++n.exprs;
  n.exact += got == seen;
  if (family == Family::View) {
    EXPECT_EQ(got, seen) << "quasi-affine, not exact: " << what;
  }
  if (affine_only) {
    EXPECT_EQ(got, seen) << "affine, not exact: " << what;
    EXPECT_EQ(got_within, seen_within) << "affine within " << interval_str(within) << ", not exact: " << what;
  }
  // Narrowing keeps every point where the condition takes the value.
  Expr c = fz.gen_bool(3);
  for (bool value : {true, false}) {
    VarBox nb = refine(c, value, b);
    VarBox tight;
    bool any = false;
    each_point(b, [&](const oracle::Point& i, const oracle::Point& r) {
      if ((*pe.eval(c, i, r) != 0) != value) return;
      EXPECT_TRUE(in_box(nb, i, r)) << "refine(" << ir::print_expr(c) << ", " << value << ") over " << what
                                    << " dropped (" << i[0] << ", " << i[1] << ", " << r[0] << ")";
      VarBox pt;
      pt.domain = {Interval::point(i[0]), Interval::point(i[1])};
      pt.reduce = {Interval::point(r[0])};
      tight = any ? hull(tight, pt) : pt;
      any = true;
    });
    ++n.refines;
    n.refine_exact += any ? nb == tight : nb.empty();
  }
}

TEST(TileIntervalFuzz, SoundOnRandomIndexExpressionsAndExactOnAffineAndViewOnes) {
  FuzzCounts general, affine, view;
  for (uint64_t seed = 0; seed < 3000; ++seed) {
    Rng rng(seed);
    fuzz_one(rng, Family::General, general);
    fuzz_one(rng, Family::Affine, affine);
    fuzz_one(rng, Family::View, view);
    if (::testing::Test::HasFailure()) {
      ADD_FAILURE() << "first failure at seed " << seed;
      break;
    }
  }
  std::cout << "[tightness] intervals exact: " << general.exact << "/" << general.exprs
            << " general, " << affine.exact << "/" << affine.exprs << " affine, " << view.exact << "/"
            << view.exprs << " view-like; refined boxes exact: " << general.refine_exact + affine.refine_exact
            << "/" << general.refines + affine.refines << "\n";
  EXPECT_EQ(affine.exact, affine.exprs);
  EXPECT_EQ(view.exact, view.exprs);
}

}  // namespace
}  // namespace orchid::tile
