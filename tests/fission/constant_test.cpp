// Tests of the rules whose outputs are compile-time constants (rules_constant.cpp): Shape,
// Size, Constant, ConstantOfShape and Range against naive references over seeded random
// shapes and values; shape computations (Shape -> Gather -> Concat -> Reshape) on a model
// with a dynamic dimension fold to constants, leaving only the view; every error message.
// The ONNX protobuf classes, to give a model what the test builder cannot (a dynamic dim, a
// sparse attribute); the definitions are those of the onnx_proto target, which the test
// links through orchid_testlib.
#ifndef ONNX_ML
#define ONNX_ML 1
#endif
#ifndef ONNX_NAMESPACE
#define ONNX_NAMESPACE onnx
#endif
#include <onnx/onnx_pb.h>

#include "fission/fission.h"
#include "frontend/onnx_loader.h"
#include "layout_test_util.h"

namespace orchid::layout_test {
namespace {

using testlib::import_model;

// The single output of m, which must import to a constant (no primitive).
Tensor constant_output(const testlib::OnnxModel& m) {
  ir::Graph g = import_model(m);
  EXPECT_EQ(g.num_nodes(), 0);
  std::vector<Tensor> inputs;
  for (ir::ValueId v : g.inputs()) inputs.push_back(Tensor(g.type(v)));
  return interp::run(g, inputs)[0];
}

void expect_constant(const testlib::OnnxModel& m, const Tensor& want) {
  EXPECT_EQ(testlib::compare_tensors(constant_output(m), want, 0, 0), "");
}

TEST(ConstantFission, ShapeAndSizeAreConstants) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE(seed_trace("Shape", seed));
    Rng rng(seed);
    static const int64_t kOpsets[] = {1, 13, 15};
    int64_t opset = kOpsets[seed % 3];
    TensorType t{random_dtype(rng), random_shape(rng, 0, 4)};
    auto rank = int64_t(t.shape.size());
    Attrs attrs;
    int64_t start = 0, end = rank;
    if (opset >= 15 && rng.coin(0.7))
      start = rng.range(-rank - 2, rank + 3), attrs.push_back({"start", start});
    if (opset >= 15 && rng.coin(0.7))
      end = rng.range(-rank - 2, rank + 3), attrs.push_back({"end", end});
    auto fix = [rank](int64_t a) { return std::clamp<int64_t>(a < 0 ? a + rank : a, 0, rank); };
    std::vector<int64_t> dims;
    for (int64_t d = fix(start); d < fix(end); ++d) dims.push_back(t.shape[size_t(d)]);
    expect_constant(node_model("Shape", {t}, 1, attrs, opset), i64s(dims));
    expect_constant(node_model("Size", {t}, 1, {}, seed % 2 ? 1 : 13),
                    scalar(DType::I64, double(t.numel())));
  }
}

TEST(ConstantFission, ConstantFromEveryValueAttribute) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE(seed_trace("Constant", seed));
    Rng rng(seed);
    TensorType t{random_dtype(rng), random_shape(rng, 0, 3)};
    Tensor v = random_data(t, rng);
    expect_constant(node_model("Constant", {}, 1, {{"value", v}}, seed % 2 ? 9 : 13), v);
    double f = double(float(rng.uniform(-5, 5)));
    int64_t i = rng.range(-1000, 1000);
    expect_constant(node_model("Constant", {}, 1, {{"value_float", f}}, 13), scalar(DType::F32, f));
    expect_constant(node_model("Constant", {}, 1, {{"value_int", i}}, 12),
                    scalar(DType::I64, double(i)));
    expect_constant(node_model("Constant", {}, 1, {{"value_ints", std::vector<int64_t>{i, 2, -i}}}),
                    i64s({i, 2, -i}));
    Tensor fs(TensorType{DType::F32, {2}});
    fs.set_f64(0, f);
    fs.set_f64(1, -f);
    expect_constant(node_model("Constant", {}, 1, {{"value_floats", std::vector<double>{f, -f}}}),
                    fs);
  }
}

TEST(ConstantFission, ConstantOfShapeFillsAnyDtype) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE(seed_trace("ConstantOfShape", seed));
    Rng rng(seed);
    Dims shape = random_shape(rng, 0, 3);
    if (seed == 3) shape.push_back(0);
    Attrs attrs;
    Tensor want(TensorType{DType::F32, shape});  // the default: f32 zeros
    if (seed % 2 == 0) {
      Tensor v = random_data({random_dtype(rng), {1}}, rng);
      attrs.push_back({"value", v});
      want = Tensor(TensorType{v.dtype(), shape});
      for (int64_t k = 0; k < want.numel(); ++k) copy_elem(want, k, v, 0);
    }
    expect_constant(
        node_model("ConstantOfShape", {i64s(std::vector<int64_t>(shape.begin(), shape.end()))}, 1,
                   attrs, 9),
        want);
  }
}

TEST(ConstantFission, RangeCountsLikeALoop) {
  static const DType kTypes[] = {DType::F32, DType::F64, DType::I16, DType::I32, DType::I64};
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE(seed_trace("Range", seed));
    Rng rng(seed);
    DType t = kTypes[seed % 5];
    bool fl = ir::is_float(t);
    double start = fl ? rng.uniform(-10, 10) : double(rng.range(-10, 10));
    double limit = fl ? rng.uniform(-10, 10) : double(rng.range(-10, 10));
    double delta = fl ? rng.uniform(0.3, 3) : double(rng.range(1, 4));
    if (rng.coin(0.5)) delta = -delta;
    Tensor s = scalar(t, start), l = scalar(t, limit), d = scalar(t, delta);
    start = s.get_as_double(0), limit = l.get_as_double(0), delta = d.get_as_double(0);
    std::vector<double> vals;
    for (double v = start; delta > 0 ? v < limit : v > limit; v += delta) vals.push_back(v);
    Tensor want(TensorType{t, {int64_t(vals.size())}});
    for (size_t k = 0; k < vals.size(); ++k) {
      if (fl)
        want.set_f64(int64_t(k), start + double(k) * delta);
      else
        want.set_i64(int64_t(k), int64_t(vals[k]));
    }
    EXPECT_EQ(testlib::compare_tensors(constant_output(node_model("Range", {s, l, d}, 1, {}, 11)),
                                       want, 1e-6, 1e-6),
              "");
  }
}

// x[N,3,4] with N a dynamic dim (fixed at import) -> Reshape(x, Concat(Shape(x)[0], -1))
// the way PyTorch exports x.view(x.size(0), -1), and with a 1-D Gather.
std::string dynamic_reshape_model(bool scalar_gather) {
  testlib::OnnxModel m;
  m.inputs = {{"x", {DType::F32, {2, 3, 4}}}};
  m.initializers = {{"minus1", i64s({-1})},
                    {"zero", scalar_gather ? scalar(DType::I64, 0) : i64s({0})},
                    {"axes", i64s({0})}};
  m.nodes.push_back({"Shape", {"x"}, {"s"}, {}, ""});
  m.nodes.push_back({"Gather", {"s", "zero"}, {"d0"}, {{"axis", int64_t{0}}}, ""});
  std::string d0 = "d0";
  if (scalar_gather) m.nodes.push_back({"Unsqueeze", {"d0", "axes"}, {"d0v"}, {}, ""}), d0 = "d0v";
  m.nodes.push_back({"Concat", {d0, "minus1"}, {"ns"}, {{"axis", int64_t{0}}}, ""});
  m.nodes.push_back({"Reshape", {"x", "ns"}, {"y"}, {}, ""});
  m.outputs = {"y"};
  onnx::ModelProto p;
  p.ParseFromString(testlib::serialize_model(m));
  auto* dim = p.mutable_graph()
                  ->mutable_input(0)
                  ->mutable_type()
                  ->mutable_tensor_type()
                  ->mutable_shape()
                  ->mutable_dim(0);
  dim->set_dim_param("batch");  // a dynamic batch dimension
  for (int k = 0; k < p.graph().node_size(); ++k)
    p.mutable_graph()->mutable_node(k)->set_name("n" + std::to_string(k));
  return p.SerializeAsString();
}

TEST(ConstantFission, ShapeChainsFoldToConstantsLeavingOnlyTheView) {
  for (bool scalar_gather : {false, true}) {
    SCOPED_TRACE(scalar_gather ? "scalar Gather + Unsqueeze" : "1-D Gather");
    frontend::ImportOptions opts;
    opts.shapes["x"] = {2, 3, 4};
    ir::Graph g = fission::fission(
        frontend::load_onnx_bytes(dynamic_reshape_model(scalar_gather), "dyn.onnx", opts));
    ASSERT_EQ(g.num_nodes(), 1);
    EXPECT_EQ(g.nodes()[0].op, ir::PrimOp::View);
    EXPECT_TRUE(g.constants().empty());  // the folded shape computation is dead
    EXPECT_EQ(g.type(g.outputs()[0]), (TensorType{DType::F32, {2, 12}}));
    Rng rng(1);
    Tensor x = testlib::random_tensor({DType::F32, {2, 3, 4}}, rng);
    EXPECT_EQ(interp::run(g, {x})[0].bytes(), x.bytes());
  }
}

TEST(ConstantFission, Errors) {
  TensorType f{DType::F32, {}}, i{DType::I64, {}};
  expect_error(node_model("Constant", {}, 1, {}, 13), "Constant",
               "needs exactly one value attribute, found 0");
  expect_error(node_model("Constant", {}, 1, {{"value_int", int64_t{1}}, {"value_float", 1.0}}, 13),
               "Constant", "needs exactly one value attribute, found 2");
  expect_unsupported(node_model("Constant", {}, 1, {{"value_string", std::string("a")}}, 13),
                     "Constant", "string constants");
  expect_error(node_model("ConstantOfShape", {i64s({2, -1})}, 1, {}, 9), "ConstantOfShape",
               "shape [2,-1] has a negative dim");
  expect_error(node_model("ConstantOfShape", {i64s({2})}, 1, {{"value", i64s({1, 2})}}, 9),
               "ConstantOfShape", "value must have one element, found i64[2]");
  expect_unsupported(
      node_model("ConstantOfShape", {TensorType{DType::I64, {2}}}, 1, {}, 9), "ConstantOfShape",
      "input 0 ('x0') must be a constant (computable at compile time): shapes are static");
  expect_error(
      node_model("Range", {scalar(DType::F32, 0), scalar(DType::I64, 5), scalar(DType::F32, 1)}, 1,
                 {}, 11),
      "Range", "input 1 must be a scalar of dtype f32, found i64[]");
  expect_error(
      node_model("Range", {scalar(DType::F32, 0), scalar(DType::F32, 5), scalar(DType::F32, 0)}, 1,
                 {}, 11),
      "Range", "delta is 0");
  expect_error(
      node_model("Range", {scalar(DType::I32, 0), scalar(DType::I32, 5), scalar(DType::I32, 0)}, 1,
                 {}, 11),
      "Range", "delta is 0");
  expect_unsupported(
      node_model("Range", {f, f, f}, 1, {}, 11), "Range",
      "input 0 ('x0') must be a constant (computable at compile time): shapes are static");
  (void)i;
}

TEST(ConstantFission, SparseConstantsAreRefused) {
  testlib::OnnxModel m = node_model("Constant", {}, 1, {}, 13);
  onnx::ModelProto p;
  p.ParseFromString(testlib::serialize_model(m));
  auto* a = p.mutable_graph()->mutable_node(0)->add_attribute();
  a->set_name("sparse_value");
  a->set_type(onnx::AttributeProto::SPARSE_TENSOR);
  onnx::SparseTensorProto* s = a->mutable_sparse_tensor();
  s->add_dims(3);
  s->mutable_values()->set_data_type(1);
  s->mutable_values()->add_dims(1);
  s->mutable_values()->add_float_data(2.5f);
  s->mutable_indices()->set_data_type(7);
  s->mutable_indices()->add_dims(1);
  s->mutable_indices()->add_int64_data(1);
  EXPECT_EQ(
      error_of(
          [&] { fission::fission(frontend::load_onnx_bytes(p.SerializeAsString(), "e.onnx")); }),
      "e.onnx: node 'node' (Constant, opset 13): not supported: attribute 'sparse_value' (graph, "
      "sparse-tensor and type attributes)");
}

}  // namespace
}  // namespace orchid::layout_test
