// Reduction combiners against scalar reference loops: values, ties, NaN, empty domains, and
// both blockings (by domain and by reduction) giving identical results.
#include <cmath>
#include <limits>

#include "interp_test_util.h"
#include "support/random.h"

namespace orchid::interp::test {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<double> random_values(int64_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<double> v;
  for (int64_t k = 0; k < n; ++k) v.push_back(static_cast<float>(rng.uniform(-1, 1)));
  return v;
}

// out[i0] = reduce_{r0 < R} x[i0, r0]: rows x cols input, one output per row.
Graph row_reduce(ReduceOp op, DType t, int64_t rows, int64_t cols, std::vector<DType> outs) {
  std::vector<Expr> bodies = {load(0, t, {dvar(0), rvar(0)})};
  if (op == ReduceOp::ArgMax || op == ReduceOp::ArgMin) bodies.push_back(rvar(0));
  std::vector<TensorType> out_types;
  for (DType d : outs) out_types.push_back({d, {rows}});
  return one_node({{t, {rows, cols}}}, prim(PrimOp::Reduce, bodies, {rows}, op, {cols}), out_types);
}

// Shapes that select each blocking: many short rows (by domain), few long rows (by
// reduction), and sizes that straddle the block length.
const std::vector<std::pair<int64_t, int64_t>> kShapes = {
    {2000, 3}, {3, 2000}, {1, 1}, {513, 7}, {7, 1025}, {64, 64}};

TEST(Reduce, SumProdMaxMinMatchScalarLoops) {
  for (auto [rows, cols] : kShapes) {
    std::vector<double> x = random_values(rows * cols, static_cast<uint64_t>(rows * 7 + cols));
    Tensor in = tensor_f(DType::F64, {rows, cols}, x);
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max, ReduceOp::Min}) {
      auto got = doubles(run(row_reduce(op, DType::F64, rows, cols, {DType::F64}), {in})[0]);
      for (int64_t r = 0; r < rows; ++r) {
        double acc = op == ReduceOp::Sum ? 0 : op == ReduceOp::Prod ? 1
                     : op == ReduceOp::Max ? -kInf : kInf;
        for (int64_t c = 0; c < cols; ++c) {
          double v = x[static_cast<size_t>(r * cols + c)];
          if (op == ReduceOp::Sum) acc += v;
          if (op == ReduceOp::Prod) acc *= v;
          if (op == ReduceOp::Max) acc = std::max(acc, v);
          if (op == ReduceOp::Min) acc = std::min(acc, v);
        }
        ASSERT_TRUE(same(got[static_cast<size_t>(r)], acc))
            << reduce_op_name(op) << " row " << r << " of " << rows << "x" << cols;
      }
    }
  }
}

TEST(Reduce, OwnPrecisionF32SumAccumulatesInOrderInF32) {
  for (auto [rows, cols] : kShapes) {
    std::vector<double> x = random_values(rows * cols, 99);
    auto got = doubles(run(row_reduce(ReduceOp::Sum, DType::F32, rows, cols, {DType::F32}),
                           {tensor_f(DType::F32, {rows, cols}, x)}, own())[0]);
    for (int64_t r = 0; r < rows; ++r) {
      float acc = 0;
      for (int64_t c = 0; c < cols; ++c) acc += static_cast<float>(x[static_cast<size_t>(r * cols + c)]);
      ASSERT_EQ(got[static_cast<size_t>(r)], acc) << rows << "x" << cols << " row " << r;
    }
  }
}

TEST(Reduce, OwnPrecisionF16SumAccumulatesInF32) {
  // 4096 ones: an f16 accumulator would stop at 2048 (2048 + 1 rounds back to 2048).
  Tensor ones = tensor_f(DType::F16, {1, 4096}, std::vector<double>(4096, 1.0));
  auto got = doubles(run(row_reduce(ReduceOp::Sum, DType::F16, 1, 4096, {DType::F16}), {ones}, own())[0]);
  EXPECT_EQ(got[0], 4096);
}

TEST(Reduce, MaxMinPropagateNaN) {
  Tensor x = tensor_f(DType::F32, {3, 4}, {1, kNaN, 3, 2, kNaN, 5, 6, 7, 1, 2, 3, kNaN});
  for (ReduceOp op : {ReduceOp::Max, ReduceOp::Min}) {
    auto got = doubles(run(row_reduce(op, DType::F32, 3, 4, {DType::F32}), {x})[0]);
    for (double v : got) EXPECT_TRUE(std::isnan(v)) << reduce_op_name(op);
  }
}

TEST(Reduce, IntegerMaxMinAndWrappingSum) {
  Tensor x = tensor_i(DType::I8, {2, 3}, {100, 100, 100, -5, 7, -128});
  auto sum = ints(run(row_reduce(ReduceOp::Sum, DType::I8, 2, 3, {DType::I8}), {x})[0]);
  EXPECT_EQ(sum, (std::vector<int64_t>{44, -126}));  // 300 wraps to 44 at the store
  auto mx = ints(run(row_reduce(ReduceOp::Max, DType::I8, 2, 3, {DType::I8}), {x})[0]);
  EXPECT_EQ(mx, (std::vector<int64_t>{100, 7}));
  Tensor u = tensor_i(DType::U64, {1, 3}, {5, -1, 7});  // -1 is 2^64 - 1
  EXPECT_EQ(ints(run(row_reduce(ReduceOp::Max, DType::U64, 1, 3, {DType::U64}), {u})[0])[0], -1);
  EXPECT_EQ(ints(run(row_reduce(ReduceOp::Min, DType::U64, 1, 3, {DType::U64}), {u})[0])[0], 5);
  auto prod = ints(run(row_reduce(ReduceOp::Prod, DType::I8, 2, 3, {DType::I8}), {x})[0]);
  EXPECT_EQ(prod, (std::vector<int64_t>{static_cast<int8_t>(1000000), static_cast<int8_t>(4480)}));
}

TEST(Reduce, ArgMaxArgMinKeepTheFirstTieAndSkipNaN) {
  Tensor x = tensor_f(DType::F32, {4, 5}, {1, 3, 3, 0, 3,                  // tie: first 3
                                           kNaN, 2, kNaN, 2, -1,           // NaN never wins
                                           -kInf, -kInf, -kInf, -kInf, -kInf,  // first -inf
                                           kNaN, kNaN, kNaN, kNaN, kNaN});
  auto mx = run(row_reduce(ReduceOp::ArgMax, DType::F32, 4, 5, {DType::F32, DType::I64}), {x});
  EXPECT_EQ(doubles(mx[0])[0], 3);
  EXPECT_EQ(doubles(mx[0])[1], 2);
  EXPECT_EQ(doubles(mx[0])[2], -kInf);
  EXPECT_EQ(doubles(mx[0])[3], -kInf);
  EXPECT_EQ(ints(mx[1]), (std::vector<int64_t>{1, 1, 0, -1}));
  auto mn = run(row_reduce(ReduceOp::ArgMin, DType::F32, 4, 5, {DType::F32, DType::I64}), {x});
  EXPECT_EQ(doubles(mn[0])[0], 0);
  EXPECT_EQ(doubles(mn[0])[1], -1);
  EXPECT_EQ(doubles(mn[0])[3], kInf);
  EXPECT_EQ(ints(mn[1]), (std::vector<int64_t>{3, 4, 0, -1}));
}

TEST(Reduce, ArgMaxMatchesScalarLoopOnBothBlockings) {
  for (auto [rows, cols] : kShapes) {
    std::vector<double> x = random_values(rows * cols, 5);
    for (double& v : x) v = std::round(v * 4);  // many ties
    Tensor in = tensor_i(DType::I32, {rows, cols}, std::vector<int64_t>(x.begin(), x.end()));
    auto got = run(row_reduce(ReduceOp::ArgMax, DType::I32, rows, cols, {DType::I32, DType::I64}), {in});
    for (int64_t r = 0; r < rows; ++r) {
      int64_t best = 0;
      for (int64_t c = 1; c < cols; ++c)
        if (x[static_cast<size_t>(r * cols + c)] > x[static_cast<size_t>(r * cols + best)]) best = c;
      ASSERT_EQ(ints(got[1])[static_cast<size_t>(r)], best) << rows << "x" << cols << " row " << r;
      ASSERT_EQ(ints(got[0])[static_cast<size_t>(r)], x[static_cast<size_t>(r * cols + best)]);
    }
  }
}

TEST(Reduce, WelfordIsMeanAndPopulationVariance) {
  for (auto [rows, cols] : kShapes) {
    std::vector<double> x = random_values(rows * cols, 11);
    for (double& v : x) v += 3;  // an offset that a naive sum of squares would suffer from
    auto got = run(row_reduce(ReduceOp::Welford, DType::F64, rows, cols, {DType::F64, DType::F64}),
                   {tensor_f(DType::F64, {rows, cols}, x)});
    for (int64_t r = 0; r < rows; ++r) {
      double mean = 0, var = 0;
      for (int64_t c = 0; c < cols; ++c) mean += x[static_cast<size_t>(r * cols + c)];
      mean /= static_cast<double>(cols);
      for (int64_t c = 0; c < cols; ++c) {
        double d = x[static_cast<size_t>(r * cols + c)] - mean;
        var += d * d;
      }
      var /= static_cast<double>(cols);
      ASSERT_NEAR(doubles(got[0])[static_cast<size_t>(r)], mean, 1e-13);
      ASSERT_NEAR(doubles(got[1])[static_cast<size_t>(r)], var, 1e-13);
    }
  }
}

TEST(Reduce, MaxSumIsOnlineSoftmaxPair) {
  for (auto [rows, cols] : kShapes) {
    std::vector<double> x = random_values(rows * cols, 12);
    for (size_t k = 0; k < x.size(); k += 5) x[k] = -kInf;  // -inf terms add 0
    auto got = run(row_reduce(ReduceOp::MaxSum, DType::F64, rows, cols, {DType::F64, DType::F64}),
                   {tensor_f(DType::F64, {rows, cols}, x)});
    for (int64_t r = 0; r < rows; ++r) {
      double m = -kInf, s = 0;
      for (int64_t c = 0; c < cols; ++c) m = std::max(m, x[static_cast<size_t>(r * cols + c)]);
      for (int64_t c = 0; c < cols; ++c)
        if (x[static_cast<size_t>(r * cols + c)] != -kInf) s += std::exp(x[static_cast<size_t>(r * cols + c)] - m);
      ASSERT_EQ(doubles(got[0])[static_cast<size_t>(r)], m);
      if (m == -kInf) {
        ASSERT_EQ(doubles(got[1])[static_cast<size_t>(r)], 0);
      } else {
        ASSERT_NEAR(doubles(got[1])[static_cast<size_t>(r)], s, 1e-12 * s);
      }
    }
  }
}

TEST(Reduce, MaxSumNaNAndInfinity) {
  Tensor x = tensor_f(DType::F32, {3, 3}, {1, kNaN, 2, 1, kInf, 2, -kInf, -kInf, -kInf});
  auto got = run(row_reduce(ReduceOp::MaxSum, DType::F32, 3, 3, {DType::F32, DType::F32}), {x});
  EXPECT_TRUE(std::isnan(doubles(got[0])[0]));
  EXPECT_TRUE(std::isnan(doubles(got[1])[0]));
  EXPECT_EQ(doubles(got[0])[1], kInf);
  EXPECT_TRUE(std::isnan(doubles(got[1])[1]));  // exp(inf - inf), as the two-pass formula
  EXPECT_EQ(doubles(got[0])[2], -kInf);
  EXPECT_EQ(doubles(got[1])[2], 0);
}

TEST(Reduce, EmptyDomainsGiveTheCombinersIdentity) {
  auto one = [&](ReduceOp op, DType t, std::vector<DType> outs) {
    return run(row_reduce(op, t, 3, 0, outs), {Tensor(TensorType{t, {3, 0}})});
  };
  EXPECT_EQ(doubles(one(ReduceOp::Sum, DType::F32, {DType::F32})[0]), (std::vector<double>(3, 0)));
  EXPECT_EQ(doubles(one(ReduceOp::Prod, DType::F32, {DType::F32})[0]), (std::vector<double>(3, 1)));
  EXPECT_EQ(doubles(one(ReduceOp::Max, DType::F32, {DType::F32})[0]), (std::vector<double>(3, -kInf)));
  EXPECT_EQ(doubles(one(ReduceOp::Min, DType::F32, {DType::F32})[0]), (std::vector<double>(3, kInf)));
  EXPECT_EQ(ints(one(ReduceOp::Max, DType::I32, {DType::I32})[0])[0], std::numeric_limits<int32_t>::min());
  EXPECT_EQ(ints(one(ReduceOp::Min, DType::I64, {DType::I64})[0])[0], std::numeric_limits<int64_t>::max());
  EXPECT_EQ(ints(one(ReduceOp::Min, DType::U8, {DType::U8})[0])[0], 255);
  EXPECT_EQ(ints(one(ReduceOp::Sum, DType::I32, {DType::I32})[0])[0], 0);
  auto am = one(ReduceOp::ArgMax, DType::F32, {DType::F32, DType::I64});
  EXPECT_EQ(doubles(am[0])[0], -kInf);
  EXPECT_EQ(ints(am[1])[0], -1);
  auto an = one(ReduceOp::ArgMin, DType::F32, {DType::F32, DType::I64});
  EXPECT_EQ(doubles(an[0])[0], kInf);
  EXPECT_EQ(ints(an[1])[0], -1);
  auto w = one(ReduceOp::Welford, DType::F32, {DType::F32, DType::F32});
  EXPECT_TRUE(std::isnan(doubles(w[0])[0]) && std::isnan(doubles(w[1])[0]));
  auto ms = one(ReduceOp::MaxSum, DType::F32, {DType::F32, DType::F32});
  EXPECT_EQ(doubles(ms[0])[0], -kInf);
  EXPECT_EQ(doubles(ms[1])[0], 0);
}

TEST(Reduce, SeveralBodiesReduceAlike) {
  // Two sums over one reduction: of x and of x * x.
  Expr x = load(0, DType::F64, {dvar(0), rvar(0)});
  Graph g = one_node({{DType::F64, {2, 3}}},
                     prim(PrimOp::Reduce, {x, x * x}, {2}, ReduceOp::Sum, {3}),
                     {{DType::F64, {2}}, {DType::F64, {2}}});
  auto out = run(g, {tensor_f(DType::F64, {2, 3}, {1, 2, 3, -1, 0, 4})});
  EXPECT_EQ(doubles(out[0]), (std::vector<double>{6, 3}));
  EXPECT_EQ(doubles(out[1]), (std::vector<double>{14, 17}));
}

TEST(Reduce, OwnPrecisionEachBodyAccumulatesInItsOwnDtype) {
  // sum of an f32 body and an f64 body over [1, 1e-9, 1e-9]: the f32 sum stays 1, the f64 sum
  // keeps the small terms (an f32 accumulator for both would give 1 for the f64 body too).
  std::vector<double> v = {1, 1e-9, 1e-9};
  Graph g = one_node({{DType::F32, {3}}, {DType::F64, {3}}},
                     prim(PrimOp::Reduce, {load(0, DType::F32, {rvar(0)}), load(1, DType::F64, {rvar(0)})},
                          {}, ReduceOp::Sum, {3}),
                     {{DType::F32, {}}, {DType::F64, {}}});
  auto out = run(g, {tensor_f(DType::F32, {3}, v), tensor_f(DType::F64, {3}, v)}, own());
  EXPECT_EQ(doubles(out[0])[0], 1.0);
  EXPECT_EQ(doubles(out[1])[0], (1.0 + 1e-9) + 1e-9);
  // And the other way round: an f64 first body must not make the f32 body exact. With
  // [1, 2^-24, 2^-24] each f32 step rounds back to 1 (ties to even); summed exactly and rounded
  // once the f32 result would be 1 + 2^-23.
  v = {1, std::ldexp(1.0, -24), std::ldexp(1.0, -24)};
  Graph h = one_node({{DType::F64, {3}}, {DType::F32, {3}}},
                     prim(PrimOp::Reduce, {load(0, DType::F64, {rvar(0)}), load(1, DType::F32, {rvar(0)})},
                          {}, ReduceOp::Sum, {3}),
                     {{DType::F64, {}}, {DType::F32, {}}});
  auto out2 = run(h, {tensor_f(DType::F64, {3}, v), tensor_f(DType::F32, {3}, v)}, own());
  EXPECT_EQ(doubles(out2[0])[0], 1.0 + std::ldexp(1.0, -23));
  EXPECT_EQ(doubles(out2[1])[0], 1.0);
}

TEST(Reduce, MultiDimensionalDomainsAndReductions) {
  // out[a, b] = sum_{r0, r1} x[r0, a, r1, b] * (r0 + 1) over x: [3, 4, 5, 6].
  Expr x = load(0, DType::F64, {rvar(0), dvar(0), rvar(1), dvar(1)});
  Expr w = cast(DType::F64, rvar(0) + 1);
  Graph g = one_node({{DType::F64, {3, 4, 5, 6}}},
                     prim(PrimOp::Reduce, {x * w}, {4, 6}, ReduceOp::Sum, {3, 5}),
                     {{DType::F64, {4, 6}}});
  std::vector<double> v = random_values(3 * 4 * 5 * 6, 3);
  auto got = doubles(run(g, {tensor_f(DType::F64, {3, 4, 5, 6}, v)})[0]);
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 6; ++b) {
      double s = 0;
      for (int r0 = 0; r0 < 3; ++r0)
        for (int r1 = 0; r1 < 5; ++r1) s += v[static_cast<size_t>(((r0 * 4 + a) * 5 + r1) * 6 + b)] * (r0 + 1);
      EXPECT_EQ(got[static_cast<size_t>(a * 6 + b)], s);
    }
}

}  // namespace
}  // namespace orchid::interp::test
