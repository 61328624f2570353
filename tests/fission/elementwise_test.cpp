// Differential tests of the elementwise fission rules: each ONNX op, imported through the
// real loader, is run by the interpreter and compared with a naive reference on seeded
// random broadcast shapes.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <functional>

#include "interp/interp.h"
#include "support/error.h"
#include "testlib/onnx_builder.h"
#include "testlib/tensors.h"
#include "testlib/errors.h"

namespace orchid {
namespace {

using ir::DType;
using ir::Dims;
using ir::Tensor;
using ir::TensorType;
using testlib::import_model;
using testlib::single_node;
using Attrs = std::vector<std::pair<std::string, frontend::Attribute>>;
using Fn = std::function<double(const std::vector<double>&)>;

// Random shapes that broadcast to a common output shape.
std::vector<Dims> broadcast_shapes(Rng& rng, size_t n, Dims* out) {
  size_t rank = static_cast<size_t>(rng.range(1, 5));
  static const int64_t kDims[] = {1, 2, 3, 5, 7};
  out->clear();
  for (size_t k = 0; k < rank; ++k) out->push_back(kDims[rng.range(1, 5)]);
  std::vector<Dims> shapes;
  for (size_t i = 0; i < n; ++i) {
    size_t r = static_cast<size_t>(rng.range(0, static_cast<int64_t>(rank) + 1));
    if (i == 0) r = rank;
    Dims s(out->end() - static_cast<int64_t>(r), out->end());
    for (auto& d : s)
      if (rng.coin(0.3)) d = 1;
    shapes.push_back(s);
  }
  for (size_t k = 0; k < rank; ++k) {  // the output dim is the max over inputs
    int64_t m = 1;
    for (const auto& s : shapes)
      if (k + s.size() >= rank) m = std::max(m, s[k + s.size() - rank]);
    (*out)[k] = m;
  }
  return shapes;
}

double bcast_get(const Tensor& t, const Dims& out_shape, const Dims& idx) {
  Dims sub;
  size_t off = out_shape.size() - t.shape().size();
  for (size_t k = 0; k < t.shape().size(); ++k) sub.push_back(t.shape()[k] == 1 ? 0 : idx[off + k]);
  return t.get_as_double(testlib::flat_offset(t.shape(), sub));
}

struct OpCase {
  std::string op;
  size_t arity;
  DType in;
  DType out;
  Fn ref;
  Attrs attrs = {};
  double lo = -2, hi = 2;
  int64_t opset = 17;
};

void check(const OpCase& c) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE(c.op + " seed " + std::to_string(seed));
    Rng rng(seed * 7919 + c.op.size());
    Dims out_shape;
    std::vector<Dims> shapes = broadcast_shapes(rng, c.arity, &out_shape);
    std::vector<TensorType> types;
    std::vector<Tensor> inputs;
    for (const auto& s : shapes) {
      types.push_back({c.in, s});
      inputs.push_back(testlib::random_tensor(types.back(), rng, c.lo, c.hi));
    }
    ir::Graph g = import_model(single_node(c.op, types, 1, c.attrs, c.opset));
    Tensor got = interp::run(g, inputs)[0];
    Tensor want(TensorType{c.out, out_shape});
    Dims idx(out_shape.size(), 0);
    for (int64_t i = 0; i < want.numel(); ++i, testlib::next_index(out_shape, idx)) {
      std::vector<double> args;
      for (const auto& t : inputs) args.push_back(bcast_get(t, out_shape, idx));
      double v = c.ref(args);
      if (ir::is_float(c.out)) want.set_f64(i, v);
      else want.set_i64(i, static_cast<int64_t>(v));
    }
    EXPECT_EQ(testlib::compare_tensors(got, want, 1e-5, 1e-6), "");
  }
}

Tensor tensor_of(const TensorType& t, const std::vector<double>& values) {
  Tensor out(t);
  for (size_t k = 0; k < values.size(); ++k) {
    auto i = static_cast<int64_t>(k);
    ir::is_float(t.dtype) ? out.set_f64(i, values[k]) : out.set_i64(i, static_cast<int64_t>(values[k]));
  }
  return out;
}

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

TEST(ElementwiseFission, UnaryFloatOps) {
  check({"Neg", 1, DType::F32, DType::F32, [](auto a) { return -a[0]; }});
  check({"Abs", 1, DType::I32, DType::I32, [](auto a) { return std::fabs(a[0]); }, {}, -9, 9});
  check({"Exp", 1, DType::F32, DType::F32, [](auto a) { return std::exp(a[0]); }});
  check({"Log", 1, DType::F64, DType::F64, [](auto a) { return std::log(a[0]); }, {}, 0.1, 5});
  check({"Sqrt", 1, DType::F32, DType::F32, [](auto a) { return std::sqrt(a[0]); }, {}, 0, 4});
  check({"Reciprocal", 1, DType::F32, DType::F32, [](auto a) { return 1 / a[0]; }, {}, 0.5, 3});
  check({"Relu", 1, DType::F32, DType::F32, [](auto a) { return std::max(a[0], 0.0); }});
  check({"Relu", 1, DType::I8, DType::I8, [](auto a) { return std::max(a[0], 0.0); }, {}, -9, 9});
  check({"Sigmoid", 1, DType::F32, DType::F32, [](auto a) { return sigmoid(a[0]); }});
  check({"Tanh", 1, DType::F32, DType::F32, [](auto a) { return std::tanh(a[0]); }});
  check({"Erf", 1, DType::F32, DType::F32, [](auto a) { return std::erf(a[0]); }});
  check({"Not", 1, DType::Bool, DType::Bool, [](auto a) { return a[0] == 0; }});
  check({"Identity", 1, DType::I64, DType::I64, [](auto a) { return a[0]; }, {}, -9, 9});
  check({"LeakyRelu", 1, DType::F32, DType::F32, [](auto a) { return a[0] < 0 ? 0.3 * a[0] : a[0]; },
         {{"alpha", 0.3}}});
  check({"Cast", 1, DType::F32, DType::I32, [](auto a) { return std::trunc(a[0]); },
         {{"to", int64_t{6}}}, -50, 50});
  check({"Cast", 1, DType::I64, DType::F16, [](auto a) { return a[0]; }, {{"to", int64_t{10}}}, -99, 99});
  check({"Cast", 1, DType::F32, DType::Bool, [](auto a) { return a[0] != 0; }, {{"to", int64_t{9}}}, -1, 1});
  check({"Clip", 1, DType::F32, DType::F32, [](auto a) { return std::clamp(a[0], -0.5, 0.25); },
         {{"min", -0.5}, {"max", 0.25}}, -2, 2, 6});
  check({"Dropout", 1, DType::F32, DType::F32, [](auto a) { return a[0]; }});
}

TEST(ElementwiseFission, BinaryOpsBroadcast) {
  check({"Add", 2, DType::F32, DType::F32, [](auto a) { return a[0] + a[1]; }});
  check({"Sub", 2, DType::I64, DType::I64, [](auto a) { return a[0] - a[1]; }, {}, -99, 99});
  check({"Mul", 2, DType::F64, DType::F64, [](auto a) { return a[0] * a[1]; }});
  check({"Div", 2, DType::F32, DType::F32, [](auto a) { return a[0] / a[1]; }, {}, 0.5, 4});
  check({"Div", 2, DType::I32, DType::I32, [](auto a) { return std::trunc(a[0] / a[1]); }, {}, 1, 50});
  check({"Pow", 2, DType::F32, DType::F32, [](auto a) { return std::pow(a[0], a[1]); }, {}, 0.5, 2});
  check({"Pow", 2, DType::I64, DType::I64, [](auto a) { return std::pow(a[0], a[1]); }, {}, 0, 5});
  check({"Equal", 2, DType::I32, DType::Bool, [](auto a) { return a[0] == a[1]; }, {}, -2, 2});
  check({"Less", 2, DType::F32, DType::Bool, [](auto a) { return a[0] < a[1]; }});
  check({"Greater", 2, DType::F32, DType::Bool, [](auto a) { return a[0] > a[1]; }});
  check({"And", 2, DType::Bool, DType::Bool, [](auto a) { return a[0] && a[1]; }});
  check({"Or", 2, DType::Bool, DType::Bool, [](auto a) { return a[0] || a[1]; }});
}

TEST(ElementwiseFission, RoundingAndTrigonometry) {
  check({"Floor", 1, DType::F32, DType::F32, [](auto a) { return std::floor(a[0]); }, {}, -5, 5});
  check({"Ceil", 1, DType::F32, DType::F32, [](auto a) { return std::ceil(a[0]); }, {}, -5, 5});
  check({"Round", 1, DType::F32, DType::F32, [](auto a) { return std::nearbyint(a[0]); }, {}, -5, 5});
  check({"Sign", 1, DType::I32, DType::I32, [](auto a) { return double((a[0] > 0) - (a[0] < 0)); }, {}, -3, 3});
  check({"Sin", 1, DType::F32, DType::F32, [](auto a) { return std::sin(a[0]); }, {}, -4, 4});
  check({"Cos", 1, DType::F32, DType::F32, [](auto a) { return std::cos(a[0]); }, {}, -4, 4});
  check({"Tan", 1, DType::F64, DType::F64, [](auto a) { return std::tan(a[0]); }, {}, -1.2, 1.2});
  check({"Sinh", 1, DType::F32, DType::F32, [](auto a) { return std::sinh(a[0]); }});
  check({"Cosh", 1, DType::F32, DType::F32, [](auto a) { return std::cosh(a[0]); }});
  check({"Asinh", 1, DType::F64, DType::F64, [](auto a) { return std::asinh(a[0]); }});
  check({"Acosh", 1, DType::F64, DType::F64, [](auto a) { return std::acosh(a[0]); }, {}, 1, 4});
  check({"Atanh", 1, DType::F64, DType::F64, [](auto a) { return std::atanh(a[0]); }, {}, -0.9, 0.9});
  check({"Asin", 1, DType::F64, DType::F64, [](auto a) { return std::asin(a[0]); }, {}, -1, 1});
  check({"Acos", 1, DType::F64, DType::F64, [](auto a) { return std::acos(a[0]); }, {}, -1, 1});
  check({"Atan", 1, DType::F32, DType::F32, [](auto a) { return std::atan(a[0]); }, {}, -20, 20});
  check({"BitShift", 2, DType::U8, DType::U8, [](auto a) { return double(uint8_t(unsigned(a[0]) << unsigned(a[1]))); },
         {{"direction", std::string("LEFT")}}, 0, 9});
  check({"BitShift", 2, DType::U32, DType::U32, [](auto a) { return double(uint32_t(a[0]) >> unsigned(a[1])); },
         {{"direction", std::string("RIGHT")}}, 0, 31});
  check({"GreaterOrEqual", 2, DType::I32, DType::Bool, [](auto a) { return a[0] >= a[1]; }, {}, -2, 2});
  check({"LessOrEqual", 2, DType::F32, DType::Bool, [](auto a) { return a[0] <= a[1]; }});
  check({"Xor", 2, DType::Bool, DType::Bool, [](auto a) { return (a[0] != 0) != (a[1] != 0); }});
  check({"Mod", 2, DType::I32, DType::I32, [](auto a) { return a[0] - std::floor(a[0] / a[1]) * a[1]; }, {}, 1, 9});
  check({"Mod", 2, DType::I64, DType::I64, [](auto a) { return a[1] == 0 ? 0 : std::fmod(a[0], a[1]); },
         {{"fmod", int64_t{1}}}, -9, 9});
  check({"Mod", 2, DType::F32, DType::F32, [](auto a) { return std::fmod(a[0], a[1]); }, {{"fmod", int64_t{1}}},
         0.5, 3});
  check({"Mean", 3, DType::F32, DType::F32, [](auto a) { return (a[0] + a[1] + a[2]) / 3; }});
}

TEST(ElementwiseFission, Activations) {
  check({"Softplus", 1, DType::F32, DType::F32, [](auto a) { return std::log(std::exp(a[0]) + 1); }});
  check({"Softsign", 1, DType::F32, DType::F32, [](auto a) { return a[0] / (1 + std::fabs(a[0])); }});
  check({"Elu", 1, DType::F32, DType::F32, [](auto a) { return a[0] < 0 ? 0.7 * (std::exp(a[0]) - 1) : a[0]; },
         {{"alpha", 0.7}}});
  check({"Selu", 1, DType::F32, DType::F32, [](auto a) {
           double al = 1.67326319217681884765625, g = 1.05070102214813232421875;
           return g * (a[0] > 0 ? a[0] : al * std::exp(a[0]) - al);
         }});
  check({"Celu", 1, DType::F32, DType::F32, [](auto a) {
           return std::max(0.0, a[0]) + std::min(0.0, 2 * (std::exp(a[0] / 2) - 1));
         }, {{"alpha", 2.0}}});
  check({"HardSigmoid", 1, DType::F32, DType::F32, [](auto a) { return std::clamp(0.2 * a[0] + 0.5, 0.0, 1.0); },
         {}, -4, 4});
  check({"HardSwish", 1, DType::F32, DType::F32, [](auto a) { return a[0] * std::clamp(a[0] / 6 + 0.5, 0.0, 1.0); },
         {}, -4, 4});
  check({"ThresholdedRelu", 1, DType::F32, DType::F32, [](auto a) { return a[0] > 0.5 ? a[0] : 0; },
         {{"alpha", 0.5}}});
  check({"Shrink", 1, DType::F32, DType::F32,
         [](auto a) { return a[0] < -0.5 ? a[0] + 0.25 : a[0] > 0.5 ? a[0] - 0.25 : 0; }, {{"bias", 0.25}}});
  check({"IsInf", 1, DType::F32, DType::Bool, [](auto a) { return std::isinf(a[0]); }});
  check({"IsNaN", 1, DType::F32, DType::Bool, [](auto a) { return std::isnan(a[0]); }});
}

TEST(ElementwiseFission, PReluSlopeBroadcastsToX) {
  Rng rng(9);
  TensorType x{DType::F32, {2, 3, 4}}, slope{DType::F32, {3, 1}};
  std::vector<Tensor> in = {testlib::random_tensor(x, rng), testlib::random_tensor(slope, rng)};
  Tensor got = interp::run(import_model(single_node("PRelu", {x, slope})), in)[0];
  Tensor want(x);
  for (int64_t i = 0; i < 24; ++i) {
    double v = in[0].get_f64(i), s = in[1].get_f64((i / 4) % 3);
    want.set_f64(i, v < 0 ? v * s : v);
  }
  EXPECT_EQ(testlib::compare_tensors(got, want), "");
  EXPECT_EQ(testlib::error_of([&] { import_model(single_node("PRelu", {slope, x}), "p.onnx"); }),
            "p.onnx: node 'node' (PRelu, opset 17): slope of shape [2,3,4] does not broadcast to [3,1]");
  EXPECT_EQ(testlib::error_of([&] { import_model(single_node("Mod", {x, x}), "p.onnx"); }),
            "p.onnx: node 'node' (Mod, opset 17): fmod=0 is not defined for floating-point inputs");
}

TEST(ElementwiseFission, VariadicAndWhere) {
  check({"Max", 3, DType::F32, DType::F32, [](auto a) { return std::max({a[0], a[1], a[2]}); }});
  check({"Min", 2, DType::I32, DType::I32, [](auto a) { return std::min(a[0], a[1]); }, {}, -9, 9});
  check({"Sum", 4, DType::F32, DType::F32, [](auto a) { return a[0] + a[1] + a[2] + a[3]; }});
  check({"Max", 1, DType::F32, DType::F32, [](auto a) { return a[0]; }});
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE("Where seed " + std::to_string(seed));
    Rng rng(seed);
    Dims out;
    auto shapes = broadcast_shapes(rng, 3, &out);
    std::vector<TensorType> types = {{DType::Bool, shapes[0]}, {DType::F32, shapes[1]}, {DType::F32, shapes[2]}};
    std::vector<Tensor> in;
    for (const auto& t : types) in.push_back(testlib::random_tensor(t, rng));
    Tensor got = interp::run(import_model(single_node("Where", types)), in)[0];
    Tensor want(TensorType{DType::F32, out});
    Dims idx(out.size(), 0);
    for (int64_t i = 0; i < want.numel(); ++i, testlib::next_index(out, idx))
      want.set_f64(i, bcast_get(in[0], out, idx) != 0 ? bcast_get(in[1], out, idx) : bcast_get(in[2], out, idx));
    EXPECT_EQ(testlib::compare_tensors(got, want), "");
  }
}

TEST(ElementwiseFission, ClipWithBoundInputs) {
  Rng rng(3);
  TensorType x{DType::F32, {4, 5}}, s{DType::F32, {}};
  std::vector<Tensor> in = {testlib::random_tensor(x, rng), testlib::random_tensor(s, rng, -1, 0),
                            testlib::random_tensor(s, rng, 0, 1)};
  Tensor got = interp::run(import_model(single_node("Clip", {x, s, s})), in)[0];
  Tensor want(x);
  for (int64_t i = 0; i < 20; ++i)
    want.set_f64(i, std::clamp(in[0].get_f64(i), in[1].get_f64(0), in[2].get_f64(0)));
  EXPECT_EQ(testlib::compare_tensors(got, want), "");
}

TEST(ElementwiseFission, LegacyBroadcastAlignsAtAxis) {
  Rng rng(5);
  TensorType a{DType::F32, {2, 3, 4}}, b{DType::F32, {3}};
  std::vector<Tensor> in = {testlib::random_tensor(a, rng), testlib::random_tensor(b, rng)};
  Tensor got = interp::run(import_model(single_node("Add", {a, b}, 1, {{"broadcast", int64_t{1}}, {"axis", int64_t{1}}}, 6)), in)[0];
  Tensor want(a);
  for (int64_t i = 0; i < 24; ++i) want.set_f64(i, in[0].get_f64(i) + in[1].get_f64((i / 4) % 3));
  EXPECT_EQ(testlib::compare_tensors(got, want), "");
}

TEST(ElementwiseFission, UnaryOutputsKeepTheInputShape) {
  // ew_unary once built its output type from p.domain in the argument list that also moved p:
  // under left-to-right evaluation (clang) every output had rank 0.
  for (const char* op : {"Neg", "Relu", "Sigmoid", "Softsign"}) {
    ir::Graph g = import_model(single_node(op, {{DType::F32, {2, 3, 4}}}));
    EXPECT_EQ(g.type(g.outputs()[0]), (TensorType{DType::F32, {2, 3, 4}})) << op;
    for (const ir::Primitive& p : g.nodes())
      for (ir::ValueId v : p.outputs) EXPECT_EQ(g.type(v).shape, p.domain) << op;
  }
  ir::Graph cast = import_model(single_node("Cast", {{DType::F32, {5, 1}}}, 1, {{"to", int64_t{7}}}));
  EXPECT_EQ(cast.type(cast.outputs()[0]), (TensorType{DType::I64, {5, 1}}));
}

// C's fmod, exact: Mod(-1e-20, 1) is -1e-20 (not 1 - 1e-20 rounded, minus 1), Mod(-6, 3) is
// -0 (the dividend's sign).
TEST(ElementwiseFission, ModWithFmodIsExactAndKeepsTheDividendsSign) {
  std::vector<double> a = {-1e-20, -6, 6, 5.5, -5.5, 7, -7, 1e-30};
  std::vector<double> b = {1, 3, -3, -2, 2, -3, 3, -1e10};
  for (DType t : {DType::F32, DType::F64}) {
    SCOPED_TRACE(ir::dtype_name(t));
    auto n = static_cast<int64_t>(a.size());
    TensorType tt{t, {n}};
    Tensor ta(tt), tb(tt);
    for (int64_t i = 0; i < n; ++i) ta.set_f64(i, a[static_cast<size_t>(i)]), tb.set_f64(i, b[static_cast<size_t>(i)]);
    ir::Graph g = import_model(single_node("Mod", {tt, tt}, 1, {{"fmod", int64_t{1}}}));
    for (interp::Options opts : {interp::Options{}, interp::Options{interp::Precision::Own, false}}) {
      Tensor got = interp::run(g, {ta, tb}, opts)[0];
      for (int64_t i = 0; i < n; ++i) {
        double want = std::fmod(ta.get_f64(i), tb.get_f64(i));
        EXPECT_EQ(std::bit_cast<uint64_t>(got.get_f64(i)), std::bit_cast<uint64_t>(want))
            << "Mod(" << ta.get_f64(i) << ", " << tb.get_f64(i) << ") = " << got.get_f64(i) << ", expected " << want;
      }
    }
  }
  // Integers: C's %, and 0 for a zero divisor.
  TensorType it{DType::I32, {5}};
  Tensor ia = tensor_of(it, {-7, 7, -6, 5, -2147483648.0}), ib = tensor_of(it, {2, -2, 3, 0, -1});
  Tensor got = interp::run(import_model(single_node("Mod", {it, it}, 1, {{"fmod", int64_t{1}}})), {ia, ib})[0];
  EXPECT_EQ(testlib::compare_tensors(got, tensor_of(it, {-1, 1, 0, 0, 0})), "");
}

// Dropout's training_mode must be one bool: an empty or a float initializer is a user error.
TEST(ElementwiseFission, DropoutTrainingModeMustBeOneBool) {
  auto with_mode = [](const Tensor& mode) {
    testlib::OnnxModel m = single_node("Dropout", {{DType::F32, {2, 3}}});
    m.initializers.emplace_back("mode", mode);
    m.nodes[0].inputs = {"x0", "", "mode"};
    return testlib::error_of([&] { import_model(m, "d.onnx"); });
  };
  EXPECT_EQ(with_mode(Tensor(TensorType{DType::Bool, {0}})),
            "d.onnx: node 'node' (Dropout, opset 17): training_mode must be one bool, not bool[0]");
  EXPECT_EQ(with_mode(Tensor(TensorType{DType::F32, {}})),
            "d.onnx: node 'node' (Dropout, opset 17): training_mode must be one bool, not f32[]");
  EXPECT_EQ(with_mode(Tensor(TensorType{DType::Bool, {2}})),
            "d.onnx: node 'node' (Dropout, opset 17): training_mode must be one bool, not bool[2]");
  EXPECT_EQ(with_mode(Tensor(TensorType{DType::Bool, {}})), "(no error)");  // false: inference
  Tensor on(TensorType{DType::Bool, {1}});
  on.set_i64(0, 1);
  EXPECT_EQ(with_mode(on), "d.onnx: node 'node' (Dropout, opset 17): not supported: training-mode dropout is random");
}

// Sum/Max/Min/Mean of many inputs: one primitive per at most 64 inputs, chained left to right,
// so no body nests deeper than 64 operators.
TEST(ElementwiseFission, VariadicOfManyInputsChainsPrimitives) {
  constexpr int kInputs = 200;
  Rng rng(11);
  std::vector<TensorType> types;
  std::vector<Tensor> in;
  for (int k = 0; k < kInputs; ++k) {
    types.push_back({DType::F32, k % 3 == 0 ? Dims{3} : Dims{2, 3}});
    in.push_back(testlib::random_tensor(types.back(), rng));
  }
  for (const char* op : {"Sum", "Max", "Min", "Mean"}) {
    SCOPED_TRACE(op);
    ir::Graph g = import_model(single_node(op, types));
    EXPECT_GE(g.num_nodes(), 4);
    for (const ir::Primitive& p : g.nodes()) EXPECT_LE(p.inputs.size(), 64u);
    EXPECT_EQ(g.type(g.outputs()[0]), (TensorType{DType::F32, {2, 3}}));
    // The reference folds left to right in f32, as the one-primitive form did.
    Tensor want(TensorType{DType::F32, {2, 3}});
    std::string name = op;
    for (int64_t i = 0; i < 6; ++i) {
      float acc = static_cast<float>(in[0].get_f64(i % 3));
      for (int k = 1; k < kInputs; ++k) {
        auto v = static_cast<float>(in[static_cast<size_t>(k)].get_f64(k % 3 == 0 ? i % 3 : i));
        acc = name == "Max" ? std::max(acc, v) : name == "Min" ? std::min(acc, v) : acc + v;
      }
      want.set_f64(i, name == "Mean" ? static_cast<float>(acc / static_cast<float>(kInputs)) : acc);
    }
    Tensor got = interp::run(g, in, interp::Options{interp::Precision::Own, false})[0];
    EXPECT_EQ(testlib::compare_tensors(got, want, 0, 0), "");
  }
}

TEST(ElementwiseFission, ErrorsNameTheNode) {
  TensorType a{DType::F32, {2, 3}}, b{DType::F32, {4}}, i{DType::I32, {2, 3}};
  EXPECT_EQ(testlib::error_of([&] { import_model(single_node("Add", {a, b}), "e.onnx"); }),
            "e.onnx: node 'node' (Add, opset 17): shapes do not broadcast: [2,3] and [4]");
  EXPECT_EQ(testlib::error_of([&] { import_model(single_node("Mul", {a, i}), "e.onnx"); }),
            "e.onnx: node 'node' (Mul, opset 17): inputs 0 and 1 have different dtypes (f32 and i32)");
  EXPECT_EQ(testlib::error_of([&] { import_model(single_node("Cast", {a}, 1, {{"to", int64_t{8}}}), "e.onnx"); }),
            "e.onnx: node 'node' (Cast, opset 17): not supported: cast to STRING");
  EXPECT_EQ(testlib::error_of([&] { import_model(single_node("Dropout", {a, {DType::F32, {}}, {DType::Bool, {}}}), "e.onnx"); }),
            "e.onnx: node 'node' (Dropout, opset 17): not supported: training_mode given at run time (training-mode dropout is random)");
}

}  // namespace
}  // namespace orchid
