// Every expression operator against scalar reference code written from docs/ir.md.
#include <cmath>
#include <functional>
#include <limits>
#include <map>

#include "interp_test_util.h"

namespace orchid::interp::test {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// out[i] = op(x0[i], x1[i], ...) over inputs of dtype t; result as f64 (floats) via
// f64_outputs, or exact integers.
std::vector<Tensor> eval_op(ExprOp op, DType t, const std::vector<Tensor>& ins,
                            Options opts = f64_out()) {
  int64_t n = ins[0].numel();
  std::vector<Expr> args;
  std::vector<TensorType> types;
  for (size_t k = 0; k < ins.size(); ++k) {
    args.push_back(load(static_cast<int32_t>(k), t, {dvar(0)}));
    types.push_back(ins[k].type());
  }
  Expr body = make_op(op, t, args);
  Graph g = one_node(types, prim(PrimOp::Elementwise, {body}, {n}),
                     {TensorType{body.dtype(), {n}}});
  return run(g, ins, opts);
}

std::vector<double> unary_f(ExprOp op, const std::vector<double>& xs) {
  auto n = static_cast<int64_t>(xs.size());
  return doubles(eval_op(op, DType::F64, {tensor_f(DType::F64, {n}, xs)})[0]);
}

std::vector<double> binary_f(ExprOp op, const std::vector<double>& a, const std::vector<double>& b) {
  auto n = static_cast<int64_t>(a.size());
  return doubles(
      eval_op(op, DType::F64, {tensor_f(DType::F64, {n}, a), tensor_f(DType::F64, {n}, b)})[0]);
}

std::vector<int64_t> binary_i(ExprOp op, DType t, const std::vector<int64_t>& a,
                              const std::vector<int64_t>& b) {
  auto n = static_cast<int64_t>(a.size());
  return ints(eval_op(op, t, {tensor_i(t, {n}, a), tensor_i(t, {n}, b)})[0]);
}

std::vector<int64_t> unary_i(ExprOp op, DType t, const std::vector<int64_t>& a) {
  auto n = static_cast<int64_t>(a.size());
  return ints(eval_op(op, t, {tensor_i(t, {n}, a)})[0]);
}

const std::vector<double> kSpecial = {-3.7, -2.5, -1.5, -0.5, -0.0, 0.0, 0.5, 1.5, 2.5, 3.7,
                                      1e-3, 100, 1e300, -1e-300, kInf, -kInf, kNaN};

TEST(Ops, FloatUnaryMatchScalarReference) {
  std::map<ExprOp, std::function<double(double)>> ref = {
      {ExprOp::Neg, [](double x) { return -x; }},
      {ExprOp::Abs, [](double x) { return std::fabs(x); }},
      {ExprOp::Exp, [](double x) { return std::exp(x); }},
      {ExprOp::Log, [](double x) { return std::log(x); }},
      {ExprOp::Sqrt, [](double x) { return std::sqrt(x); }},
      {ExprOp::Rsqrt, [](double x) { return 1 / std::sqrt(x); }},
      {ExprOp::Recip, [](double x) { return 1 / x; }},
      {ExprOp::Tanh, [](double x) { return std::tanh(x); }},
      {ExprOp::Erf, [](double x) { return std::erf(x); }},
      {ExprOp::Sigmoid, [](double x) { return 1 / (1 + std::exp(-x)); }},
      {ExprOp::Sin, [](double x) { return std::sin(x); }},
      {ExprOp::Cos, [](double x) { return std::cos(x); }},
      {ExprOp::Floor, [](double x) { return std::floor(x); }},
      {ExprOp::Ceil, [](double x) { return std::ceil(x); }},
  };
  for (auto& [op, f] : ref) {
    std::vector<double> got = unary_f(op, kSpecial);
    for (size_t k = 0; k < kSpecial.size(); ++k)
      EXPECT_TRUE(same(got[k], f(kSpecial[k])))
          << expr_op_name(op) << "(" << kSpecial[k] << ") = " << got[k];
  }
}

TEST(Ops, RoundIsHalfToEven) {
  std::vector<double> x = {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999, 2.5001, -3.5, 1e300, kNaN};
  std::vector<double> want = {0, 2, 2, -0.0, -2, -2, 2, 3, -4, 1e300, kNaN};
  std::vector<double> got = unary_f(ExprOp::Round, x);
  for (size_t k = 0; k < x.size(); ++k) EXPECT_TRUE(same(got[k], want[k])) << x[k];
}

TEST(Ops, SignKeepsNaNAndZero) {
  std::vector<double> got = unary_f(ExprOp::Sign, {-3.5, 2.0, 0.0, kNaN, -kInf, kInf});
  std::vector<double> want = {-1, 1, 0, kNaN, -1, 1};
  for (size_t k = 0; k < want.size(); ++k) EXPECT_TRUE(same(got[k], want[k])) << k;
  EXPECT_EQ(unary_i(ExprOp::Sign, DType::I32, {-7, 0, 9}), (std::vector<int64_t>{-1, 0, 1}));
  EXPECT_EQ(unary_i(ExprOp::Sign, DType::U64, {-1, 0}), (std::vector<int64_t>{1, 0}));
}

TEST(Ops, IsNanIsInf) {
  std::vector<double> x = {0, kNaN, kInf, -kInf, 1e308};
  auto n = static_cast<int64_t>(x.size());
  auto nan = ints(eval_op(ExprOp::IsNan, DType::F32, {tensor_f(DType::F32, {n}, x)})[0]);
  auto inf = ints(eval_op(ExprOp::IsInf, DType::F32, {tensor_f(DType::F32, {n}, x)})[0]);
  EXPECT_EQ(nan, (std::vector<int64_t>{0, 1, 0, 0, 0}));
  EXPECT_EQ(inf, (std::vector<int64_t>{0, 0, 1, 1, 1}));  // 1e308 is inf in f32
}

TEST(Ops, FloatBinaryMatchScalarReference) {
  std::vector<double> a, b;
  for (double x : kSpecial)
    for (double y : kSpecial) a.push_back(x), b.push_back(y);
  auto floor_mod = [](double x, double y) {  // the sign of the divisor, exact
    double r = std::fmod(x, y);
    if (r == 0) return std::copysign(0.0, y);
    return (r < 0) != (y < 0) ? r + y : r;
  };
  auto nan_max = [](double x, double y) { return std::isnan(x) || std::isnan(y) ? kNaN : std::max(x, y); };
  auto nan_min = [](double x, double y) { return std::isnan(x) || std::isnan(y) ? kNaN : std::min(x, y); };
  std::map<ExprOp, std::function<double(double, double)>> ref = {
      {ExprOp::Add, std::plus<double>()},
      {ExprOp::Sub, std::minus<double>()},
      {ExprOp::Mul, std::multiplies<double>()},
      {ExprOp::Div, std::divides<double>()},
      {ExprOp::FloorDiv, [](double x, double y) { return std::floor(x / y); }},
      {ExprOp::Mod, floor_mod},
      {ExprOp::Rem, [](double x, double y) { return std::fmod(x, y); }},
      {ExprOp::Pow, [](double x, double y) { return std::pow(x, y); }},
      {ExprOp::Max, nan_max},
      {ExprOp::Min, nan_min},
  };
  for (auto& [op, f] : ref) {
    std::vector<double> got = binary_f(op, a, b);
    for (size_t k = 0; k < a.size(); ++k) {
      EXPECT_TRUE(same(got[k], f(a[k], b[k]))) << expr_op_name(op) << "(" << a[k] << ", " << b[k] << ") = " << got[k];
    }
  }
}

TEST(Ops, FloatModIsFlooredWithTheDivisorsSign) {
  std::vector<double> got = binary_f(ExprOp::Mod, {-7, 7, -7, 7, 5.5, -5.5, -4}, {3, -3, -3, 3, 2, 2, 2});
  EXPECT_EQ(got, (std::vector<double>{2, -2, -1, 1, 1.5, 0.5, 0}));
  EXPECT_TRUE(same(got[6], 0.0));
  EXPECT_TRUE(std::isnan(binary_f(ExprOp::Mod, {1}, {0})[0]));
  EXPECT_EQ(binary_f(ExprOp::FloorDiv, {-7, 7, -7}, {2, 2, -2}), (std::vector<double>{-4, 3, 3}));
}

TEST(Ops, FloatRemIsTruncatedWithTheDividendsSign) {
  // C's fmod, exact: no rounding of tiny dividends, and a zero result keeps the dividend's sign.
  std::vector<double> got = binary_f(ExprOp::Rem, {-7, 7, -7, 7, 5.5, -5.5, -6, 6, -1e-20, 1e-20, 1e300},
                                     {3, -3, -3, 3, 2, 2, 3, -3, 1, -1, 7});
  std::vector<double> want = {-1, 1, -1, 1, 1.5, -1.5, -0.0, 0.0, -1e-20, 1e-20, std::fmod(1e300, 7)};
  for (size_t k = 0; k < want.size(); ++k) EXPECT_TRUE(same(got[k], want[k])) << k << ": " << got[k];
  EXPECT_TRUE(std::isnan(binary_f(ExprOp::Rem, {1}, {0})[0]));
  EXPECT_TRUE(std::isnan(binary_f(ExprOp::Rem, {kInf}, {2})[0]));
  EXPECT_EQ(binary_f(ExprOp::Rem, {2.5}, {kInf}), (std::vector<double>{2.5}));
  // f32 in own precision: exact, so nothing to round.
  auto f32 = doubles(eval_op(ExprOp::Rem, DType::F32,
                             {tensor_f(DType::F32, {2}, {-1e-20, 5.5}), tensor_f(DType::F32, {2}, {1, -2})},
                             own())[0]);
  EXPECT_EQ(f32, (std::vector<double>{static_cast<float>(-1e-20), 1.5}));
}

TEST(Ops, MaxMinPropagateNaNFromEitherSide) {
  EXPECT_TRUE(std::isnan(binary_f(ExprOp::Max, {kNaN}, {1})[0]));
  EXPECT_TRUE(std::isnan(binary_f(ExprOp::Max, {1}, {kNaN})[0]));
  EXPECT_TRUE(std::isnan(binary_f(ExprOp::Min, {kNaN}, {1})[0]));
  EXPECT_TRUE(std::isnan(binary_f(ExprOp::Min, {-kInf}, {kNaN})[0]));
  EXPECT_EQ(binary_f(ExprOp::Max, {-kInf, 2}, {3, -1}), (std::vector<double>{3, 2}));
}

// Integer reference semantics, written from docs/ir.md.
int64_t ref_div(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (a == kMin && b == -1) return kMin;
  return a / b;
}
int64_t ref_floordiv(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (a == kMin && b == -1) return kMin;
  int64_t q = a / b;
  return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t ref_mod(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0;
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(ref_floordiv(a, b)) * static_cast<uint64_t>(b));
}
int64_t ref_rem(int64_t a, int64_t b) {  // truncated: a - div(a, b) * b, with wrapping
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(ref_div(a, b)) * static_cast<uint64_t>(b));
}

TEST(Ops, IntegerDivisionTruncatesFloorsAndDefinesZero) {
  std::vector<int64_t> v = {-9, -7, -2, -1, 0, 1, 2, 3, 7, 9, kMin, kMax};
  std::vector<int64_t> a, b;
  for (int64_t x : v)
    for (int64_t y : v) a.push_back(x), b.push_back(y);
  auto div = binary_i(ExprOp::Div, DType::I64, a, b);
  auto fdiv = binary_i(ExprOp::FloorDiv, DType::I64, a, b);
  auto mod = binary_i(ExprOp::Mod, DType::I64, a, b);
  auto rem = binary_i(ExprOp::Rem, DType::I64, a, b);
  for (size_t k = 0; k < a.size(); ++k) {
    EXPECT_EQ(div[k], ref_div(a[k], b[k])) << a[k] << " / " << b[k];
    EXPECT_EQ(fdiv[k], ref_floordiv(a[k], b[k])) << a[k] << " // " << b[k];
    EXPECT_EQ(mod[k], ref_mod(a[k], b[k])) << a[k] << " % " << b[k];
    EXPECT_EQ(rem[k], b[k] == 0 ? 0 : ref_rem(a[k], b[k])) << a[k] << " rem " << b[k];
  }
  EXPECT_EQ(binary_i(ExprOp::Div, DType::I32, {-7, 7, 5}, {2, -2, 0}), (std::vector<int64_t>{-3, -3, 0}));
  EXPECT_EQ(binary_i(ExprOp::Mod, DType::I32, {-7, 7, 5}, {2, -2, 0}), (std::vector<int64_t>{1, -1, 0}));
  EXPECT_EQ(binary_i(ExprOp::Rem, DType::I32, {-7, 7, 5, -6}, {2, -2, 0, 3}), (std::vector<int64_t>{-1, 1, 0, 0}));
}

TEST(Ops, U64IsUnsigned) {
  int64_t big = -2;  // 2^64 - 2
  EXPECT_EQ(binary_i(ExprOp::Div, DType::U64, {big}, {2}), (std::vector<int64_t>{kMax}));
  EXPECT_EQ(binary_i(ExprOp::Mod, DType::U64, {big}, {5}), (std::vector<int64_t>{4}));
  EXPECT_EQ(binary_i(ExprOp::Rem, DType::U64, {big, 7}, {5, big}), (std::vector<int64_t>{4, 7}));
  EXPECT_EQ(binary_i(ExprOp::Lt, DType::U64, {1}, {big}), (std::vector<int64_t>{1}));
  EXPECT_EQ(binary_i(ExprOp::Max, DType::U64, {1}, {big}), (std::vector<int64_t>{big}));
  EXPECT_EQ(binary_i(ExprOp::Min, DType::U64, {1}, {big}), (std::vector<int64_t>{1}));
  EXPECT_EQ(binary_i(ExprOp::Lt, DType::I64, {1}, {big}), (std::vector<int64_t>{0}));
}

TEST(Ops, IntegerArithmeticWrapsOnlyAtTheStore) {
  // add of i8 100 + 100 is 200 in i64; the store into i8 wraps it to -56.
  EXPECT_EQ(binary_i(ExprOp::Add, DType::I8, {100, -100}, {100, -100}),
            (std::vector<int64_t>{-56, 56}));
  EXPECT_EQ(binary_i(ExprOp::Mul, DType::U8, {16}, {17}), (std::vector<int64_t>{16}));
  EXPECT_EQ(binary_i(ExprOp::Add, DType::I64, {kMax}, {1}), (std::vector<int64_t>{kMin}));
  // ... but an intermediate keeps its i64 value: (100 + 100) / 2 = 100, not -56 / 2.
  Expr x = load(0, DType::I8, {dvar(0)});
  Expr body = binary(ExprOp::Div, x + x, constant(Scalar::of_int(DType::I8, 2)));
  Graph g = one_node({{DType::I8, {1}}}, prim(PrimOp::Elementwise, {body}, {1}), {{DType::I8, {1}}});
  EXPECT_EQ(ints(run(g, {tensor_i(DType::I8, {1}, {100})})[0]), (std::vector<int64_t>{100}));
}

TEST(Ops, IntegerUnaryAndBitwise) {
  EXPECT_EQ(unary_i(ExprOp::Neg, DType::I64, {5, kMin}), (std::vector<int64_t>{-5, kMin}));
  EXPECT_EQ(unary_i(ExprOp::Abs, DType::I32, {-5, 7}), (std::vector<int64_t>{5, 7}));
  EXPECT_EQ(unary_i(ExprOp::Abs, DType::I8, {-128}), (std::vector<int64_t>{-128}));  // 128 wraps
  EXPECT_EQ(unary_i(ExprOp::Not, DType::Bool, {0, 1}), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(unary_i(ExprOp::Not, DType::I32, {0, 5}), (std::vector<int64_t>{-1, -6}));
  EXPECT_EQ(unary_i(ExprOp::Not, DType::U8, {5}), (std::vector<int64_t>{250}));
  EXPECT_EQ(binary_i(ExprOp::And, DType::I32, {12}, {10}), (std::vector<int64_t>{8}));
  EXPECT_EQ(binary_i(ExprOp::Or, DType::I32, {12}, {10}), (std::vector<int64_t>{14}));
  EXPECT_EQ(binary_i(ExprOp::Xor, DType::I32, {12}, {10}), (std::vector<int64_t>{6}));
  EXPECT_EQ(binary_i(ExprOp::Xor, DType::Bool, {1, 1, 0}, {1, 0, 0}), (std::vector<int64_t>{0, 1, 0}));
  EXPECT_EQ(binary_i(ExprOp::And, DType::Bool, {1, 1, 0}, {1, 0, 0}), (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(binary_i(ExprOp::Max, DType::I16, {-3, 4}, {2, -9}), (std::vector<int64_t>{2, 4}));
}

TEST(Ops, ComparisonsAreIeee) {
  std::vector<double> a = {1, 1, 2, kNaN, kNaN, 1, -0.0};
  std::vector<double> b = {1, 2, 1, 1, kNaN, kNaN, 0.0};
  auto n = static_cast<int64_t>(a.size());
  std::map<ExprOp, std::function<bool(double, double)>> ref = {
      {ExprOp::Eq, std::equal_to<double>()}, {ExprOp::Ne, std::not_equal_to<double>()},
      {ExprOp::Lt, std::less<double>()},     {ExprOp::Le, std::less_equal<double>()},
      {ExprOp::Gt, std::greater<double>()},  {ExprOp::Ge, std::greater_equal<double>()}};
  for (auto& [op, f] : ref) {
    auto got = ints(eval_op(op, DType::F32, {tensor_f(DType::F32, {n}, a), tensor_f(DType::F32, {n}, b)})[0]);
    for (size_t k = 0; k < a.size(); ++k)
      EXPECT_EQ(got[k], f(a[k], b[k]) ? 1 : 0) << expr_op_name(op) << " " << a[k] << " " << b[k];
  }
  EXPECT_EQ(binary_i(ExprOp::Ge, DType::I32, {-1, 3}, {-1, 4}), (std::vector<int64_t>{1, 0}));
}

// cast<to>(x) for a one-element input of dtype `from`.
Tensor cast_one(DType from, DType to, const Tensor& x, Options opts = {}) {
  Expr body = cast(to, load(0, from, {dvar(0)}));
  Graph g = one_node({x.type()}, prim(PrimOp::Elementwise, {body}, {x.numel()}),
                     {{to, {x.numel()}}});
  return run(g, {x}, opts)[0];
}

TEST(Ops, CastFloatToIntegerTruncatesAndWraps) {
  Tensor x = tensor_f(DType::F64, {9}, {2.7, -2.7, kNaN, kInf, -kInf, 3e9, 300.5, -1.5, 1e20});
  EXPECT_EQ(ints(cast_one(DType::F64, DType::I32, x)),
            (std::vector<int64_t>{2, -2, 0, 0, 0, 3000000000 - 4294967296, 300, -1, 1661992960}));
  EXPECT_EQ(ints(cast_one(DType::F64, DType::U8, x)),
            (std::vector<int64_t>{2, 254, 0, 0, 0, 0, 44, 255, 0}));
  // 1e20 mod 2^64 = 7766279631452241920.
  EXPECT_EQ(ints(cast_one(DType::F64, DType::I64, x))[8], 7766279631452241920);
  EXPECT_EQ(ints(cast_one(DType::F64, DType::U64, tensor_f(DType::F64, {1}, {1.8e19})))[0],
            static_cast<int64_t>(uint64_t{18000000000000000000u}));
}

TEST(Ops, CastToBoolIsNonZero) {
  Tensor x = tensor_f(DType::F32, {5}, {0, -0.0, kNaN, 0.1, -kInf});
  EXPECT_EQ(ints(cast_one(DType::F32, DType::Bool, x)), (std::vector<int64_t>{0, 0, 1, 1, 1}));
  Tensor i = tensor_i(DType::I32, {3}, {0, -5, 256});
  EXPECT_EQ(ints(cast_one(DType::I32, DType::Bool, i)), (std::vector<int64_t>{0, 1, 1}));
  Tensor b = tensor_i(DType::Bool, {2}, {1, 0});
  EXPECT_EQ(doubles(cast_one(DType::Bool, DType::F16, b)), (std::vector<double>{1, 0}));
  EXPECT_EQ(ints(cast_one(DType::Bool, DType::I32, b)), (std::vector<int64_t>{1, 0}));
}

TEST(Ops, CastBetweenIntegersWraps) {
  Tensor x = tensor_i(DType::I32, {4}, {300, -1, 127, -129});
  EXPECT_EQ(ints(cast_one(DType::I32, DType::I8, x)), (std::vector<int64_t>{44, -1, 127, 127}));
  EXPECT_EQ(ints(cast_one(DType::I32, DType::U16, x)), (std::vector<int64_t>{300, 65535, 127, 65407}));
  EXPECT_EQ(ints(cast_one(DType::I32, DType::I64, x)), (std::vector<int64_t>{300, -1, 127, -129}));
}

TEST(Ops, CastToFloatRoundsToNearestEvenOnceInOwnPrecision) {
  // 2^24 + 1 ties to 2^24; 2^24 + 3 ties to 2^24 + 4.
  Tensor x = tensor_i(DType::I64, {3}, {16777217, 16777219, (int64_t{1} << 53) + 1});
  Options opts = Options{Precision::Own, true};
  EXPECT_EQ(doubles(cast_one(DType::I64, DType::F32, x, opts)),
            (std::vector<double>{16777216, 16777220, 9007199254740992.0}));
  // In F64 precision a float result is never rounded to a narrower type.
  EXPECT_EQ(doubles(cast_one(DType::I64, DType::F32, x, f64_out()))[0], 16777217);
  Tensor u = tensor_i(DType::U64, {1}, {-1});
  EXPECT_EQ(doubles(cast_one(DType::U64, DType::F64, u))[0], 18446744073709551615.0);
  // i64 -> f32 rounds once: 2^60 + 2^36 + 1 is above the tie, so it rounds up, whereas
  // rounding through f64 first would land on the tie and round to even (down).
  int64_t v = (int64_t{1} << 60) + (int64_t{1} << 36) + 1;
  Tensor w = tensor_i(DType::I64, {1}, {v});
  EXPECT_EQ(doubles(cast_one(DType::I64, DType::F32, w, opts))[0],
            static_cast<double>(static_cast<float>(v)));
  EXPECT_EQ(doubles(cast_one(DType::I64, DType::F32, w, opts))[0], 1152921642045800448.0);
}

TEST(Ops, CastBetweenFloats) {
  Tensor x = tensor_f(DType::F64, {3}, {1e6, 0.1, 70000});
  Options opts = Options{Precision::Own, true};
  std::vector<double> h = doubles(cast_one(DType::F64, DType::F16, x, opts));
  EXPECT_EQ(h[0], kInf);  // beyond f16's range
  EXPECT_EQ(h[1], static_cast<double>(round_to_dtype(0.1, DType::F16)));
  EXPECT_EQ(doubles(cast_one(DType::F64, DType::BF16, x, opts))[2], 70144);
  EXPECT_EQ(doubles(cast_one(DType::F64, DType::F16, x, f64_out()))[0], 1e6);
}

TEST(Ops, SelectChoosesPerLane) {
  Expr c = load(0, DType::Bool, {dvar(0)});
  Expr body = select(c, load(1, DType::I32, {dvar(0)}), load(2, DType::I32, {dvar(0)}));
  Graph g = one_node({{DType::Bool, {4}}, {DType::I32, {4}}, {DType::I32, {4}}},
                     prim(PrimOp::Elementwise, {body}, {4}), {{DType::I32, {4}}});
  auto out = run(g, {tensor_i(DType::Bool, {4}, {1, 0, 0, 1}), tensor_i(DType::I32, {4}, {1, 2, 3, 4}),
                     tensor_i(DType::I32, {4}, {-1, -2, -3, -4})});
  EXPECT_EQ(ints(out[0]), (std::vector<int64_t>{1, -2, -3, 4}));
}

TEST(Ops, VariablesAndConstantsInBodies) {
  // iota: out[i0, i1] = i0 * 10 + i1 - 3, over a domain that spans several blocks.
  Expr body = dvar(0) * 10 + dvar(1) - 3;
  Graph g = one_node({}, prim(PrimOp::Elementwise, {body}, {301, 7}), {{DType::I64, {301, 7}}});
  auto out = ints(run(g, {})[0]);
  for (int64_t a = 0; a < 301; ++a)
    for (int64_t b = 0; b < 7; ++b) ASSERT_EQ(out[static_cast<size_t>(a * 7 + b)], a * 10 + b - 3);
}

}  // namespace
}  // namespace orchid::interp::test
