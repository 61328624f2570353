// Own precision (round every float result to its dtype) against F64 precision (never round).
#include "interp_test_util.h"

namespace orchid::interp::test {
namespace {

// out = (x + 1) + 1 in dtype t.
Graph plus_one_twice(DType t) {
  Expr one = const_f(t, 1);
  Expr body = (load(0, t, {dvar(0)}) + one) + one;
  return one_node({{t, {1}}}, prim(PrimOp::Elementwise, {body}, {1}), {{t, {1}}});
}

TEST(Precision, OwnRoundsEveryOperationF64DoesNot) {
  struct Case {
    DType t;
    double x, own, f64;
  };
  // 2048 + 1 ties to 2048 in f16 (spacing 2); 256 + 1 in bf16; 2^24 + 1 in f32.
  for (Case c : {Case{DType::F16, 2048, 2048, 2050}, Case{DType::BF16, 256, 256, 258},
                 Case{DType::F32, 16777216, 16777216, 16777218}}) {
    Graph g = plus_one_twice(c.t);
    Tensor x = tensor_f(c.t, {1}, {c.x});
    EXPECT_EQ(doubles(run(g, {x}, own())[0])[0], c.own) << dtype_name(c.t);
    EXPECT_EQ(doubles(run(g, {x}, f64_out())[0])[0], c.f64) << dtype_name(c.t);
    EXPECT_EQ(doubles(run(g, {x})[0])[0], c.f64) << dtype_name(c.t) << " stored in its dtype";
  }
}

TEST(Precision, F64OutputsKeepTheUnroundedValue) {
  Graph g = plus_one_twice(DType::F16);
  Tensor x = tensor_f(DType::F16, {1}, {0.1});
  auto f64 = run(g, {x}, f64_out());
  EXPECT_EQ(f64[0].dtype(), DType::F64);
  double stored = round_to_dtype(0.1, DType::F16);
  EXPECT_EQ(f64[0].get_f64(0), stored + 1 + 1);
  auto plain = run(g, {x});
  EXPECT_EQ(plain[0].dtype(), DType::F16);
  EXPECT_EQ(plain[0].get_f64(0), round_to_dtype(stored + 2, DType::F16));
}

TEST(Precision, IntegerOutputsStayIntegersWithF64Outputs) {
  Expr body = load(0, DType::I32, {dvar(0)}) + load(0, DType::I32, {dvar(0)});
  Graph g = one_node({{DType::I32, {2}}}, prim(PrimOp::Elementwise, {body}, {2}), {{DType::I32, {2}}});
  auto out = run(g, {tensor_i(DType::I32, {2}, {3, -4})}, f64_out());
  EXPECT_EQ(out[0].dtype(), DType::I32);
  EXPECT_EQ(ints(out[0]), (std::vector<int64_t>{6, -8}));
}

TEST(Precision, OwnF32SumLosesSmallTermsF64KeepsThem) {
  std::vector<double> x = {1e8, 1, 1, 1, 1, 1, 1, 1, 1};
  Graph g = one_node({{DType::F32, {9}}},
                     prim(PrimOp::Reduce, {load(0, DType::F32, {rvar(0)})}, {}, ReduceOp::Sum, {9}),
                     {{DType::F32, {}}});
  Tensor in = tensor_f(DType::F32, {9}, x);
  EXPECT_EQ(doubles(run(g, {in}, own())[0])[0], 1e8);
  EXPECT_EQ(doubles(run(g, {in})[0])[0], 1e8 + 8);
}

TEST(Precision, LinearAccumulatesInF64AndRoundsOnceInOwnPrecision) {
  // [2048, 1, 1] . [1, 1, 1] = 2050 in f16; per-step f16 sums would stop at 2048.
  Primitive p;
  p.op = PrimOp::MatMul;
  p.attrs = MatMulAttrs{};
  Graph g = one_node({{DType::F16, {1, 3}}, {DType::F16, {3, 1}}}, p, {{DType::F16, {1, 1}}});
  auto out = run(g, {tensor_f(DType::F16, {1, 3}, {2048, 1, 1}), tensor_f(DType::F16, {3, 1}, {1, 1, 1})}, own());
  EXPECT_EQ(doubles(out[0])[0], 2050);
  // f32: the matmul's f64 sum keeps 2^24 + 2, a written f32 reduction rounds every step.
  Graph m = one_node({{DType::F32, {1, 3}}, {DType::F32, {3, 1}}}, p, {{DType::F32, {1, 1}}});
  std::vector<Tensor> in = {tensor_f(DType::F32, {1, 3}, {16777216, 1, 1}),
                            tensor_f(DType::F32, {3, 1}, {1, 1, 1})};
  EXPECT_EQ(doubles(run(m, in, own())[0])[0], 16777218);
  Expr body = load(0, DType::F32, {const_i64(0), rvar(0)}) * load(1, DType::F32, {rvar(0), const_i64(0)});
  Graph s = one_node({{DType::F32, {1, 3}}, {DType::F32, {3, 1}}},
                     prim(PrimOp::Reduce, {body}, {1, 1}, ReduceOp::Sum, {3}), {{DType::F32, {1, 1}}});
  EXPECT_EQ(doubles(run(s, in, own())[0])[0], 16777216);
  EXPECT_EQ(doubles(run(s, in)[0])[0], 16777218);
}

TEST(Precision, OwnRoundsTranscendentalsToTheirDtype) {
  Expr body = unary(ExprOp::Exp, load(0, DType::F32, {dvar(0)}));
  Graph g = one_node({{DType::F32, {3}}}, prim(PrimOp::Elementwise, {body}, {3}), {{DType::F32, {3}}});
  Tensor x = tensor_f(DType::F32, {3}, {0.1, 1, -3});
  auto own_out = doubles(run(g, {x}, Options{Precision::Own, true})[0]);
  auto f64 = doubles(run(g, {x}, f64_out())[0]);
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(own_out[k], static_cast<double>(static_cast<float>(f64[k])));
    EXPECT_NE(own_out[k], f64[k]);
  }
}

}  // namespace
}  // namespace orchid::interp::test
