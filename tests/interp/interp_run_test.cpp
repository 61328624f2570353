// The graph walk: input validation messages, run_all, views, chains of nodes.
#include "interp_test_util.h"

namespace orchid::interp::test {
namespace {

Graph add_graph() {
  Expr body = load(0, DType::F32, {dvar(0), dvar(1)}) + load(1, DType::F32, {dvar(0), dvar(1)});
  return one_node({{DType::F32, {2, 3}}, {DType::F32, {2, 3}}},
                  prim(PrimOp::Elementwise, {body}, {2, 3}), {{DType::F32, {2, 3}}});
}

TEST(Run, InputCountIsChecked) {
  Graph g = add_graph();
  EXPECT_EQ(error_of(g, {Tensor({DType::F32, {2, 3}})}), "graph @t takes 2 inputs, given 1");
}

TEST(Run, InputTypeIsCheckedNamingTheInput) {
  Graph g = add_graph();
  EXPECT_EQ(error_of(g, {Tensor({DType::F32, {2, 3}}), Tensor({DType::F16, {2, 3}})}),
            "input 1 (%x1) must be f32[2,3], given f16[2,3]");
  EXPECT_EQ(error_of(g, {Tensor({DType::F32, {3, 2}}), Tensor({DType::F32, {2, 3}})}),
            "input 0 (%x0) must be f32[2,3], given f32[3,2]");
}

// x -> a = x * 2 -> v = view(a) as [3, 2] -> b = v + c (constant); outputs b and x.
Graph chain() {
  Graph g;
  g.name = "chain";
  ValueId x = g.add_input("x", {DType::F32, {2, 3}});
  ValueId c = g.add_constant("c", tensor_f(DType::F32, {3, 2}, {10, 20, 30, 40, 50, 60}));
  Primitive twice = prim(PrimOp::Elementwise, {load(0, DType::F32, {dvar(0), dvar(1)}) * const_f(DType::F32, 2)}, {2, 3});
  twice.inputs = {x};
  ValueId a = g.node(g.add_node(twice, {{DType::F32, {2, 3}}}, {"a"})).outputs[0];
  Primitive view;
  view.op = PrimOp::View;
  view.inputs = {a};
  ValueId v = g.node(g.add_node(view, {{DType::F32, {3, 2}}}, {"v"})).outputs[0];
  Primitive add = prim(PrimOp::Elementwise,
                       {load(0, DType::F32, {dvar(0), dvar(1)}) + load(1, DType::F32, {dvar(0), dvar(1)})}, {3, 2});
  add.inputs = {v, c};
  ValueId b = g.node(g.add_node(add, {{DType::F32, {3, 2}}}, {"b"})).outputs[0];
  g.set_outputs({b, x});
  return g;
}

TEST(Run, ChainWithViewAndConstant) {
  Graph g = chain();
  Tensor x = tensor_f(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  auto out = run(g, {x});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), (Dims{3, 2}));
  EXPECT_EQ(doubles(out[0]), (std::vector<double>{12, 24, 36, 48, 60, 72}));
  EXPECT_EQ(out[1], x);  // a graph input can be an output
}

TEST(Run, RunAllReturnsEveryValueByValueId) {
  Graph g = chain();
  Tensor x = tensor_f(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  auto all = run_all(g, {x});
  ASSERT_EQ(all.size(), static_cast<size_t>(g.num_values()));
  for (int32_t v = 0; v < g.num_values(); ++v) EXPECT_EQ(all[static_cast<size_t>(v)].type(), g.type(ValueId(v)));
  EXPECT_EQ(all[static_cast<size_t>(g.find_value("x")->v)], x);
  EXPECT_EQ(all[static_cast<size_t>(g.find_value("c")->v)], g.constant(*g.find_value("c")));
  EXPECT_EQ(doubles(all[static_cast<size_t>(g.find_value("a")->v)]), (std::vector<double>{2, 4, 6, 8, 10, 12}));
  EXPECT_EQ(doubles(all[static_cast<size_t>(g.find_value("v")->v)]), (std::vector<double>{2, 4, 6, 8, 10, 12}));
  auto f64 = run_all(g, {x}, f64_out());
  EXPECT_EQ(f64[static_cast<size_t>(g.find_value("a")->v)].dtype(), DType::F64);
}

TEST(Run, UnusedOutputsOfAMultiOutputNode) {
  // A welford node whose mean only is used downstream; its variance is never read.
  Graph g;
  ValueId x = g.add_input("x", {DType::F64, {2, 4}});
  Primitive w = prim(PrimOp::Reduce, {load(0, DType::F64, {dvar(0), rvar(0)})}, {2}, ReduceOp::Welford, {4});
  w.inputs = {x};
  NodeId n = g.add_node(w, {{DType::F64, {2}}, {DType::F64, {2}}}, {"mean", "var"});
  Primitive neg = prim(PrimOp::Elementwise, {unary(ExprOp::Neg, load(0, DType::F64, {dvar(0)}))}, {2});
  neg.inputs = {g.node(n).outputs[0]};
  NodeId m = g.add_node(neg, {{DType::F64, {2}}}, {"neg"});
  g.set_outputs({g.node(m).outputs[0]});
  auto out = run(g, {tensor_f(DType::F64, {2, 4}, {1, 2, 3, 4, -1, -1, -1, -5})});
  EXPECT_EQ(doubles(out[0]), (std::vector<double>{-2.5, 2}));
}

TEST(Run, ZeroSizedTensors) {
  Expr body = load(0, DType::F32, {dvar(0), dvar(1)}) + load(1, DType::F32, {dvar(0), dvar(1)});
  Graph g = one_node({{DType::F32, {0, 3}}, {DType::F32, {0, 3}}},
                     prim(PrimOp::Elementwise, {body}, {0, 3}), {{DType::F32, {0, 3}}});
  auto out = run(g, {Tensor({DType::F32, {0, 3}}), Tensor({DType::F32, {0, 3}})});
  EXPECT_EQ(out[0].numel(), 0);
}

}  // namespace
}  // namespace orchid::interp::test
