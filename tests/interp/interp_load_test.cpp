// Loads: broadcasting, layout remaps, predicated loads and selects that must not read out of
// bounds, indirect loads (gathers) and their out-of-range errors.
#include "interp_test_util.h"

namespace orchid::interp::test {
namespace {

std::vector<double> iota(int64_t n, double scale = 1) {
  std::vector<double> v;
  for (int64_t k = 0; k < n; ++k) v.push_back(static_cast<double>(k) * scale);
  return v;
}

TEST(Load, BroadcastReadsIndexZeroOfUnitDims) {
  // out[i0, i1] = a[i0, 0] + b[0, i1]
  Expr body = load(0, DType::F32, {dvar(0), const_i64(0)}) + load(1, DType::F32, {const_i64(0), dvar(1)});
  Graph g = one_node({{DType::F32, {5, 1}}, {DType::F32, {1, 300}}},
                     prim(PrimOp::Elementwise, {body}, {5, 300}), {{DType::F32, {5, 300}}});
  auto out = doubles(run(g, {tensor_f(DType::F32, {5, 1}, iota(5, 1000)),
                             tensor_f(DType::F32, {1, 300}, iota(300))})[0]);
  for (int64_t a = 0; a < 5; ++a)
    for (int64_t b = 0; b < 300; ++b) ASSERT_EQ(out[static_cast<size_t>(a * 300 + b)], a * 1000.0 + b);
}

TEST(Load, TransposeLayout) {
  Expr body = load(0, DType::I32, {dvar(2), dvar(0), dvar(1)});  // out[a,b,c] = x[c,a,b]
  Graph g = one_node({{DType::I32, {4, 3, 5}}}, prim(PrimOp::Layout, {body}, {3, 5, 4}),
                     {{DType::I32, {3, 5, 4}}});
  std::vector<int64_t> x;
  for (int k = 0; k < 60; ++k) x.push_back(k * 3 - 7);
  auto out = ints(run(g, {tensor_i(DType::I32, {4, 3, 5}, x)})[0]);
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 5; ++b)
      for (int c = 0; c < 4; ++c)
        EXPECT_EQ(out[static_cast<size_t>((a * 5 + b) * 4 + c)], x[static_cast<size_t>((c * 3 + a) * 5 + b)]);
}

TEST(Load, PredicatedPadNeverReadsOutOfBounds) {
  // out[i] = x[i - 3] if 3 <= i < 3 + n else -1: the indices are out of bounds where the
  // predicate fails.
  int64_t n = 700;
  Expr idx = dvar(0) - 3;
  Expr pred = binary(ExprOp::And, binary(ExprOp::Ge, dvar(0), const_i64(3)),
                     binary(ExprOp::Lt, dvar(0), const_i64(3 + n)));
  Expr body = load_pred(0, DType::F32, {idx}, pred, Scalar::of(DType::F32, -1));
  Graph g = one_node({{DType::F32, {n}}}, prim(PrimOp::Layout, {body}, {n + 8}), {{DType::F32, {n + 8}}});
  auto out = doubles(run(g, {tensor_f(DType::F32, {n}, iota(n))})[0]);
  for (int64_t i = 0; i < n + 8; ++i)
    ASSERT_EQ(out[static_cast<size_t>(i)], (i >= 3 && i < 3 + n) ? i - 3.0 : -1.0) << i;
}

TEST(Load, SelectEvaluatesOnlyTheChosenBranchLoads) {
  // concat: out[i] = a[i] if i < 5 else b[i - 5]; each branch is out of bounds elsewhere.
  Expr lt = binary(ExprOp::Lt, dvar(0), const_i64(5));
  Expr body = select(lt, load(0, DType::F64, {dvar(0)}), load(1, DType::F64, {dvar(0) - 5}));
  Graph g = one_node({{DType::F64, {5}}, {DType::F64, {600}}},
                     prim(PrimOp::Layout, {body}, {605}), {{DType::F64, {605}}});
  auto out = doubles(run(g, {tensor_f(DType::F64, {5}, iota(5, -1)), tensor_f(DType::F64, {600}, iota(600))})[0]);
  for (int64_t i = 0; i < 605; ++i) ASSERT_EQ(out[static_cast<size_t>(i)], i < 5 ? -i : i - 5.0);
}

TEST(Load, NestedSelectsAndPredicatesMask) {
  // A load under select under a predicated load: the inner load is read only where both the
  // predicate and the condition hold.
  Expr i = dvar(0);
  Expr inner = select(binary(ExprOp::Lt, i, const_i64(4)), load(1, DType::I64, {i}), const_i64(100));
  Expr pred = binary(ExprOp::Lt, i, const_i64(6));
  Expr body = load_pred(0, DType::I64, {inner}, pred, Scalar::of_int(DType::I64, -1));
  Graph g = one_node({{DType::I64, {101}}, {DType::I64, {4}}}, prim(PrimOp::Layout, {body}, {10}),
                     {{DType::I64, {10}}});
  std::vector<int64_t> x(101);
  for (int k = 0; k < 101; ++k) x[static_cast<size_t>(k)] = 1000 + k;
  auto out = ints(run(g, {tensor_i(DType::I64, {101}, x), tensor_i(DType::I64, {4}, {7, 8, 9, 10})})[0]);
  EXPECT_EQ(out, (std::vector<int64_t>{1007, 1008, 1009, 1010, 1100, 1100, -1, -1, -1, -1}));
}

TEST(Load, UniformLoadInAnUntakenBranchIsNotChecked) {
  // In a long reduction (blocked by reduction) x[i0 + 10] is uniform across the block and out
  // of bounds for every i0; the select never takes it.
  Expr never = binary(ExprOp::Lt, rvar(0), const_i64(0));
  Expr body = select(never, load(0, DType::F32, {dvar(0) + 10}), load(1, DType::F32, {dvar(0), rvar(0)}));
  Graph g = one_node({{DType::F32, {2}}, {DType::F32, {2, 1000}}},
                     prim(PrimOp::Reduce, {body}, {2}, ReduceOp::Sum, {1000}), {{DType::F32, {2}}});
  std::vector<double> ones(2000, 1.0);
  auto out = doubles(run(g, {tensor_f(DType::F32, {2}, {0, 0}), tensor_f(DType::F32, {2, 1000}, ones)})[0]);
  EXPECT_EQ(out, (std::vector<double>{1000, 1000}));
}

TEST(Load, UniformIndexOutOfBoundsIsChecked) {
  // Blocked by reduction, x[i0 + 1, r0] has a uniform row index, out of bounds at i0 = 1.
  Expr by_row = load(0, DType::F32, {dvar(0) + 1, rvar(0)});
  Graph g = one_node({{DType::F32, {2, 1000}}}, prim(PrimOp::Reduce, {by_row}, {2}, ReduceOp::Sum, {1000}),
                     {{DType::F32, {2}}});
  std::string msg = error_of(g, {Tensor({DType::F32, {2, 1000}})});
  EXPECT_NE(msg.find("%x0[2, 0] is out of bounds of f32[2,1000]"), std::string::npos) << msg;
  // Blocked by domain, x[i0, r0 + 5] has a uniform column index, out of bounds at r0 = 2.
  Expr by_col = load(0, DType::F32, {dvar(0), rvar(0) + 5});
  Graph h = one_node({{DType::F32, {1000, 7}}}, prim(PrimOp::Reduce, {by_col}, {1000}, ReduceOp::Sum, {3}),
                     {{DType::F32, {1000}}});
  msg = error_of(h, {Tensor({DType::F32, {1000, 7}})});
  EXPECT_NE(msg.find("%x0[0, 7] is out of bounds of f32[1000,7] (index 7 of dimension 1)"), std::string::npos) << msg;
}

TEST(Load, PredicatedElementwiseLoadTakesTheFill) {
  // x[i0, i1] read at its own point (the contiguous fast path) under a predicate.
  Expr pred = binary(ExprOp::Lt, dvar(1), const_i64(2));
  Expr body = load_pred(0, DType::I32, {dvar(0), dvar(1)}, pred, Scalar::of_int(DType::I32, -7));
  Graph g = one_node({{DType::I32, {300, 3}}}, prim(PrimOp::Elementwise, {body}, {300, 3}),
                     {{DType::I32, {300, 3}}});
  std::vector<int64_t> x(900);
  for (int k = 0; k < 900; ++k) x[static_cast<size_t>(k)] = k;
  auto out = ints(run(g, {tensor_i(DType::I32, {300, 3}, x)})[0]);
  for (int k = 0; k < 900; ++k) ASSERT_EQ(out[static_cast<size_t>(k)], k % 3 < 2 ? k : -7) << k;
}

TEST(Load, ScalarInput) {
  Expr body = load(0, DType::F32, {dvar(0)}) * load(1, DType::F32, {});
  Graph g = one_node({{DType::F32, {3}}, {DType::F32, {}}}, prim(PrimOp::Elementwise, {body}, {3}),
                     {{DType::F32, {3}}});
  auto out = doubles(run(g, {tensor_f(DType::F32, {3}, {1, 2, 3}), tensor_f(DType::F32, {}, {0.5})})[0]);
  EXPECT_EQ(out, (std::vector<double>{0.5, 1, 1.5}));
}

// out[i0, i1] = x[cast<i64>(idx[i0]), i1]: ONNX Gather on axis 0.
Graph gather_graph(int64_t rows, int64_t cols, int64_t n) {
  Expr index = cast(DType::I64, load(1, DType::I32, {dvar(0)}));
  Expr body = load(0, DType::F32, {index, dvar(1)});
  Primitive p = prim(PrimOp::Layout, {body}, {n, cols});
  p.name = "Gather_7";
  return one_node({{DType::F32, {rows, cols}}, {DType::I32, {n}}}, p, {{DType::F32, {n, cols}}});
}

TEST(Load, GatherReadsTheIndexedRows) {
  Graph g = gather_graph(10, 3, 600);
  std::vector<int64_t> idx;
  for (int k = 0; k < 600; ++k) idx.push_back((k * 7) % 10);
  auto out = doubles(run(g, {tensor_f(DType::F32, {10, 3}, iota(30)), tensor_i(DType::I32, {600}, idx)})[0]);
  for (int k = 0; k < 600; ++k)
    for (int c = 0; c < 3; ++c)
      ASSERT_EQ(out[static_cast<size_t>(k * 3 + c)], idx[static_cast<size_t>(k)] * 3.0 + c);
}

TEST(Load, GatherOutOfRangeIsAUserErrorNamingNodeInputAndIndex) {
  Graph g = gather_graph(10, 3, 4);
  std::string msg = error_of(g, {tensor_f(DType::F32, {10, 3}, iota(30)),
                                 tensor_i(DType::I32, {4}, {0, 9, 12, 1})});
  EXPECT_NE(msg.find("node 0 (%y0 = layout, from \"Gather_7\")"), std::string::npos) << msg;
  EXPECT_NE(msg.find("%x0[12, 0]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("f32[10,3]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("index 12 of dimension 0"), std::string::npos) << msg;
  std::string neg = error_of(g, {tensor_f(DType::F32, {10, 3}, iota(30)),
                                 tensor_i(DType::I32, {4}, {0, -1, 2, 1})});
  EXPECT_NE(neg.find("%x0[-1, 0]"), std::string::npos) << neg;
}

TEST(Load, PredicateThatHoldsAtABadIndexFails) {
  Expr pred = binary(ExprOp::Lt, dvar(0), const_i64(5));  // holds at i0 = 4, index 4 of [4]
  Expr body = load_pred(0, DType::F32, {dvar(0)}, pred, Scalar::of(DType::F32, 0));
  Graph g = one_node({{DType::F32, {4}}}, prim(PrimOp::Layout, {body}, {6}), {{DType::F32, {6}}});
  std::string msg = error_of(g, {tensor_f(DType::F32, {4}, iota(4))});
  EXPECT_NE(msg.find("%x0[4] is out of bounds of f32[4] (index 4 of dimension 0)"), std::string::npos) << msg;
}

TEST(Load, LoadOfAComputedValue) {
  // Two nodes: y = x * 2 (i16, wraps at its store), z[i] = y[i] + 1 in i32 via a cast.
  Graph g;
  ValueId x = g.add_input("x", {DType::I16, {3}});
  Primitive p1 = prim(PrimOp::Elementwise, {load(0, DType::I16, {dvar(0)}) * load(0, DType::I16, {dvar(0)})}, {3});
  p1.inputs = {x};
  NodeId n1 = g.add_node(p1, {{DType::I16, {3}}}, {"y"});
  Expr body2 = binary(ExprOp::Add, cast(DType::I32, load(0, DType::I16, {dvar(0)})),
                      constant(Scalar::of_int(DType::I32, 1)));
  Primitive p2 = prim(PrimOp::Elementwise, {body2}, {3});
  p2.inputs = {g.node(n1).outputs[0]};
  NodeId n2 = g.add_node(p2, {{DType::I32, {3}}}, {"z"});
  g.set_outputs({g.node(n2).outputs[0]});
  auto out = ints(run(g, {tensor_i(DType::I16, {3}, {3, 200, -300})})[0]);
  // 200^2 = 40000 wraps to -25536 in i16; (-300)^2 = 90000 wraps to 24464.
  EXPECT_EQ(out, (std::vector<int64_t>{10, -25535, 24465}));
}

}  // namespace
}  // namespace orchid::interp::test
