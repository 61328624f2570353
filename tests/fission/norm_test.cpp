// Differential tests of the normalization fission rules (LayerNormalization,
// BatchNormalization, InstanceNormalization): each imported through the real loader, run by
// the interpreter and compared with a naive two-pass reference on seeded random shapes and
// attributes; plus the rules' error and unsupported messages.
#include <gtest/gtest.h>

#include <cmath>

#include "interp/interp.h"
#include "support/error.h"
#include "testlib/errors.h"
#include "testlib/onnx_builder.h"
#include "testlib/tensors.h"

namespace orchid {
namespace {

using ir::DType;
using ir::Dims;
using ir::Tensor;
using ir::TensorType;
using testlib::import_model;
using testlib::OnnxModel;
using testlib::single_node;
using Attrs = std::vector<std::pair<std::string, frontend::Attribute>>;

Dims random_shape(Rng& rng, int64_t min_rank, int64_t max_rank) {
  Dims s(static_cast<size_t>(rng.range(min_rank, max_rank + 1)));
  for (auto& d : s) d = rng.range(1, 5);
  return s;
}

// Element `idx` of x's shape read from t, which broadcasts into it (aligned right).
double bget(const Tensor& t, const Dims& idx) {
  Dims sub;
  size_t off = idx.size() - t.shape().size();
  for (size_t k = 0; k < t.shape().size(); ++k) sub.push_back(t.shape()[k] == 1 ? 0 : idx[off + k]);
  return t.get_as_double(testlib::flat_offset(t.shape(), sub));
}

// Population mean and variance (two-pass) of each group of x's elements that share their
// index in the dims before `first_axis` (the dims from first_axis on are normalized over).
struct Stats {
  std::vector<double> mean, var;  // indexed by group
  Dims kept;                      // x's shape with the normalized dims set to 1
  int64_t group(const Dims& idx) const {
    Dims g = idx;
    for (size_t d = 0; d < g.size(); ++d)
      if (kept[d] == 1) g[d] = 0;
    return testlib::flat_offset(kept, g);
  }
};

Stats ref_stats(const Tensor& x, int64_t first_axis) {
  Stats s;
  s.kept = x.shape();
  for (size_t d = static_cast<size_t>(first_axis); d < s.kept.size(); ++d) s.kept[d] = 1;
  int64_t groups = ir::numel(s.kept), n = x.numel() / std::max<int64_t>(groups, 1);
  s.mean.assign(static_cast<size_t>(groups), 0.0);
  s.var.assign(static_cast<size_t>(groups), 0.0);
  Dims idx(x.shape().size(), 0);
  for (int64_t i = 0; i < x.numel(); ++i, testlib::next_index(x.shape(), idx))
    s.mean[static_cast<size_t>(s.group(idx))] += x.get_f64(i) / static_cast<double>(n);
  idx.assign(x.shape().size(), 0);
  for (int64_t i = 0; i < x.numel(); ++i, testlib::next_index(x.shape(), idx)) {
    double d = x.get_f64(i) - s.mean[static_cast<size_t>(s.group(idx))];
    s.var[static_cast<size_t>(s.group(idx))] += d * d / static_cast<double>(n);
  }
  return s;
}

std::string error_of(const OnnxModel& m) {
  return testlib::error_of([&] { import_model(m); });
}

bool is_unsupported(const OnnxModel& m) {
  try {
    import_model(m);
  } catch (const UnsupportedError&) {
    return true;
  } catch (const UserError&) {
  }
  return false;
}

#define EXPECT_ERROR(model, text) \
  EXPECT_NE(error_of(model).find(text), std::string::npos) << error_of(model)

// ---- LayerNormalization ----

struct LayerNormCase {
  TensorType x;
  int64_t axis = -1;  // as written in the attribute
  Dims scale_shape;   // Scale's and B's shape
  bool bias = false;
  double epsilon = 1e-5;
};

// Y, Mean and InvStdDev as ONNX's reference computes them.
std::vector<Tensor> ref_layer_norm(const Tensor& x, const Tensor& scale, const Tensor* b, int64_t axis,
                                   double eps) {
  Stats s = ref_stats(x, axis);
  Tensor y(x.type()), mean(TensorType{DType::F32, s.kept}), inv(TensorType{DType::F32, s.kept});
  Dims norm_shape(x.shape().begin() + axis, x.shape().end());
  Tensor sc = scale.numel() == ir::numel(norm_shape) ? Tensor(TensorType{scale.dtype(), norm_shape}, scale.bytes())
                                                     : scale;
  Dims idx(x.shape().size(), 0);
  for (int64_t i = 0; i < x.numel(); ++i, testlib::next_index(x.shape(), idx)) {
    auto g = static_cast<size_t>(s.group(idx));
    double r = 1 / std::sqrt(s.var[g] + eps);
    double v = (x.get_f64(i) - s.mean[g]) * r * bget(sc, idx);
    if (b) v += bget(Tensor(TensorType{b->dtype(), sc.shape()}, b->bytes()), idx);
    y.set_f64(i, v);
    mean.set_f64(static_cast<int64_t>(g), s.mean[g]);
    inv.set_f64(static_cast<int64_t>(g), r);
  }
  return {y, mean, inv};
}

void check_layer_norm(const LayerNormCase& c, Rng& rng, double rtol = 1e-5) {
  std::vector<TensorType> types = {c.x, {c.x.dtype, c.scale_shape}};
  if (c.bias) types.push_back({c.x.dtype, c.scale_shape});
  OnnxModel m = single_node("LayerNormalization", types, 3, {{"axis", c.axis}, {"epsilon", c.epsilon}}, 17);
  std::vector<Tensor> in;
  for (const auto& t : types) in.push_back(testlib::random_tensor(t, rng, -2, 2));
  int64_t axis = c.axis < 0 ? c.axis + c.x.rank() : c.axis;
  std::vector<Tensor> want = ref_layer_norm(in[0], in[1], c.bias ? &in[2] : nullptr, axis,
                                            static_cast<float>(c.epsilon));
  std::vector<Tensor> got = interp::run(import_model(m), in);
  for (size_t k = 0; k < 3; ++k)
    EXPECT_EQ(testlib::compare_tensors(got[k], want[k], rtol, 1e-5), "")
        << "output " << k << " of X " << ir::type_str(c.x) << " axis " << c.axis;
}

TEST(NormFission, LayerNormalization) {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Rng rng(seed * 6151);
    TensorType x{seed % 4 == 0 ? DType::F64 : DType::F32, random_shape(rng, 1, 4)};
    int64_t axis = rng.range(-x.rank(), x.rank() + 1);  // axis == rank normalizes single elements
    Dims norm(x.shape.begin() + (axis < 0 ? axis + x.rank() : axis), x.shape.end());
    if (rng.coin(0.3)) norm.insert(norm.begin(), 1);  // leading 1s broadcast away
    check_layer_norm({x, axis, norm, rng.coin(), rng.coin() ? 1e-5 : 0.25}, rng);
  }
}

// ONNX's function flattens Scale and B: any shape with the normalized element count fits.
TEST(NormFission, LayerNormalizationFlatScale) {
  Rng rng(3);
  check_layer_norm({{DType::F32, {2, 3, 4}}, 1, {12}, true, 1e-5}, rng);
  check_layer_norm({{DType::F32, {2, 3, 4}}, -2, {4, 3}, false, 1e-3}, rng);
  check_layer_norm({{DType::F32, {5, 6}}, 1, {1}, true, 1e-5}, rng);
}

// 16-bit X: the statistics are f32 (stash_type 1), Y is rounded to f16.
TEST(NormFission, LayerNormalizationHalf) {
  Rng rng(11);
  check_layer_norm({{DType::F16, {3, 16}}, -1, {16}, true, 1e-5}, rng, 2e-3);
}

// Only the requested outputs are computed; Y alone works too.
TEST(NormFission, LayerNormalizationOnlyY) {
  TensorType x{DType::F32, {2, 5}};
  OnnxModel m = single_node("LayerNormalization", {x, {DType::F32, {5}}}, 1, {}, 17);
  Rng rng(4);
  Tensor xv = testlib::random_tensor(x, rng), s = testlib::random_tensor({DType::F32, {5}}, rng);
  ir::Graph g = import_model(m);
  EXPECT_EQ(testlib::compare_tensors(interp::run(g, {xv, s})[0], ref_layer_norm(xv, s, nullptr, 1, 1e-5f)[0]), "");
  int reductions = 0;
  for (const auto& n : g.nodes()) {
    if (n.op != ir::PrimOp::Reduce) continue;
    ++reductions;
    EXPECT_EQ(n.reduce, ir::ReduceOp::Welford);
  }
  EXPECT_EQ(reductions, 1);
}

// The same in the interpreter's own precision: every float result rounded to its dtype.
TEST(NormFission, LayerNormalizationHalfOwnPrecision) {
  Rng rng(12);
  TensorType x{DType::F16, {4, 32}}, s{DType::F16, {32}};
  std::vector<Tensor> in = {testlib::random_tensor(x, rng, -2, 2), testlib::random_tensor(s, rng, -2, 2),
                            testlib::random_tensor(s, rng, -2, 2)};
  ir::Graph g = import_model(single_node("LayerNormalization", {x, s, s}, 3, {}, 17));
  std::vector<Tensor> got = interp::run(g, in, {interp::Precision::Own, false});
  std::vector<Tensor> want = ref_layer_norm(in[0], in[1], &in[2], 1, 1e-5f);
  for (size_t k = 0; k < 3; ++k) EXPECT_EQ(testlib::compare_tensors(got[k], want[k], 1e-2, 1e-2), "") << "output " << k;
}

TEST(NormFissionErrors, LayerNormalization) {
  TensorType x{DType::F32, {2, 3, 4}};
  OnnxModel stash = single_node("LayerNormalization", {x, {DType::F32, {4}}}, 1, {{"stash_type", int64_t{11}}}, 17);
  EXPECT_TRUE(is_unsupported(stash));
  EXPECT_ERROR(stash, "not supported: stash_type=11 (ONNX allows 1, float, and 16, bfloat16)");
  OnnxModel shape = single_node("LayerNormalization", {x, {DType::F32, {3}}}, 1, {}, 17);
  EXPECT_ERROR(shape, "Scale of shape [3] does not fit the normalized shape [4] of X [2,3,4]");
  OnnxModel dtype = single_node("LayerNormalization", {x, {DType::F32, {4}}, {DType::F64, {4}}}, 1, {}, 17);
  EXPECT_ERROR(dtype, "B is f64, X is f32");
  OnnxModel axis = single_node("LayerNormalization", {x, {DType::F32, {4}}}, 1, {{"axis", int64_t{4}}}, 17);
  EXPECT_ERROR(axis, "axis 4 is out of range for rank 3");
}

// ---- BatchNormalization ----

// Y = (x - mean) / sqrt(var + eps) * scale + B with the parameters (in[1..4]) per channel,
// or with spatial=0 per feature (x's index without the batch dim).
Tensor ref_batch_norm(const std::vector<Tensor>& in, double eps, bool spatial) {
  const Tensor& x = in[0];
  Tensor y(x.type());
  Dims idx(x.shape().size(), 0);
  for (int64_t i = 0; i < x.numel(); ++i, testlib::next_index(x.shape(), idx)) {
    int64_t p = 0;
    if (spatial) p = x.shape().size() >= 2 ? idx[1] : 0;
    else p = testlib::flat_offset(Dims(x.shape().begin() + 1, x.shape().end()), Dims(idx.begin() + 1, idx.end()));
    auto at = [&](size_t k) { return in[k].get_as_double(p); };
    y.set_f64(i, (x.get_f64(i) - at(3)) / std::sqrt(at(4) + eps) * at(1) + at(2));
  }
  return y;
}

struct BatchNormCase {
  int64_t opset;
  Attrs attrs;
  DType param_dtype = DType::F32;
  bool spatial = true;
};

void check_batch_norm(const BatchNormCase& c, uint64_t seed) {
  SCOPED_TRACE("opset " + std::to_string(c.opset) + " seed " + std::to_string(seed));
  Rng rng(seed * 31 + static_cast<uint64_t>(c.opset));
  TensorType x{DType::F32, random_shape(rng, c.opset >= 9 ? 1 : 2, 4)};
  Dims ps = {x.rank() >= 2 ? x.shape[1] : 1};
  if (!c.spatial) ps = Dims(x.shape.begin() + 1, x.shape.end());
  std::vector<TensorType> types = {x};
  for (int k = 0; k < 4; ++k) types.push_back({k < 2 ? x.dtype : c.param_dtype, ps});
  if (c.opset == 15) types[1].dtype = types[2].dtype = c.param_dtype;
  std::vector<Tensor> in;
  for (size_t k = 0; k < types.size(); ++k)
    in.push_back(testlib::random_tensor(types[k], rng, k == 4 ? 0.1 : -2, 2));
  Attrs attrs = c.attrs;
  double eps = rng.coin() ? 1e-5 : 0.125;
  attrs.emplace_back("epsilon", eps);
  ir::Graph g = import_model(single_node("BatchNormalization", types, 1, attrs, c.opset));
  EXPECT_EQ(testlib::compare_tensors(interp::run(g, in)[0], ref_batch_norm(in, eps, c.spatial), 1e-5, 1e-5), "")
      << "X " << ir::type_str(x);
}

TEST(NormFission, BatchNormalization) {
  const BatchNormCase cases[] = {
      {1, {{"is_test", int64_t{1}}, {"consumed_inputs", std::vector<int64_t>{0, 0, 0, 1, 1}}}},
      {6, {{"is_test", int64_t{1}}}},
      {6, {{"is_test", int64_t{1}}, {"spatial", int64_t{1}}}},
      {7, {}},
      {9, {}},
      {14, {{"training_mode", int64_t{0}}}, DType::F64},
      {15, {}, DType::F64},
      {15, {}, DType::F16},
  };
  for (const auto& c : cases)
    for (uint64_t seed = 1; seed <= 4; ++seed) check_batch_norm(c, seed);
}

// spatial=0 before opset 9: the statistics are per feature, of X's shape without N.
TEST(NormFission, BatchNormalizationPerFeature) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    check_batch_norm({7, {{"spatial", int64_t{0}}}, DType::F32, false}, seed);
    check_batch_norm({6, {{"is_test", int64_t{1}}, {"spatial", int64_t{0}}}, DType::F32, false}, seed);
  }
}

std::vector<TensorType> batch_norm_types(const Dims& xs, const Dims& ps) {
  return {{DType::F32, xs}, {DType::F32, ps}, {DType::F32, ps}, {DType::F32, ps}, {DType::F32, ps}};
}

TEST(NormFissionErrors, BatchNormalizationTraining) {
  auto types = batch_norm_types({2, 3, 4}, {3});
  OnnxModel t15 = single_node("BatchNormalization", types, 1, {{"training_mode", int64_t{1}}}, 15);
  EXPECT_TRUE(is_unsupported(t15));
  EXPECT_ERROR(t15, "not supported: training_mode=1 (statistics of the batch); only inference is supported");
  OnnxModel t6 = single_node("BatchNormalization", types, 1, {}, 6);
  EXPECT_TRUE(is_unsupported(t6));
  EXPECT_ERROR(t6, "not supported: is_test=0 (training mode, statistics of the batch); only inference (is_test=1) is supported");
  OnnxModel t9 = single_node("BatchNormalization", types, 5, {}, 9);
  EXPECT_TRUE(is_unsupported(t9));
  EXPECT_ERROR(t9, "not supported: outputs mean, var, saved_mean or saved_var (training mode); only inference is supported");
  OnnxModel i15 = single_node("BatchNormalization", types, 3, {}, 15);
  EXPECT_FALSE(is_unsupported(i15));
  EXPECT_ERROR(i15, "outputs running_mean and running_var are invalid when training_mode=0");
}

TEST(NormFissionErrors, BatchNormalizationShapes) {
  OnnxModel wrong = single_node("BatchNormalization", batch_norm_types({2, 3, 4}, {4}), 1, {}, 15);
  EXPECT_ERROR(wrong, "input 1 (scale) has shape [4]; expected [3], one value per channel of X [2,3,4]");
  OnnxModel per_channel = single_node("BatchNormalization", batch_norm_types({2, 3, 4}, {3}), 1,
                                      {{"spatial", int64_t{0}}}, 7);
  EXPECT_TRUE(is_unsupported(per_channel));
  EXPECT_ERROR(per_channel, "not supported: spatial=0 with scale of shape [3] (per-feature statistics must have "
                            "X's shape without the batch dim, [3,4])");
}

// spatial=0 where it is trivially spatial (no spatial dims): per-channel parameters fit.
TEST(NormFission, BatchNormalizationPerFeatureWithoutSpatialDims) {
  auto types = batch_norm_types({4, 3}, {3});
  Rng rng(9);
  std::vector<Tensor> in;
  for (size_t k = 0; k < types.size(); ++k) in.push_back(testlib::random_tensor(types[k], rng, k == 4 ? 0.1 : -2, 2));
  ir::Graph g = import_model(single_node("BatchNormalization", types, 1, {{"spatial", int64_t{0}}}, 7));
  EXPECT_EQ(testlib::compare_tensors(interp::run(g, in)[0], ref_batch_norm(in, 1e-5f, true), 1e-5, 1e-5), "");
}

// ---- InstanceNormalization ----

Tensor ref_instance_norm(const std::vector<Tensor>& in, double eps) {
  const Tensor& x = in[0];
  Stats s = ref_stats(x, 2);
  Tensor y(x.type());
  Dims idx(x.shape().size(), 0);
  for (int64_t i = 0; i < x.numel(); ++i, testlib::next_index(x.shape(), idx)) {
    auto g = static_cast<size_t>(s.group(idx));
    double c = in[1].get_f64(idx[1]), b = in[2].get_f64(idx[1]);
    y.set_f64(i, c * (x.get_f64(i) - s.mean[g]) / std::sqrt(s.var[g] + eps) + b);
  }
  return y;
}

TEST(NormFission, InstanceNormalization) {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Rng rng(seed * 1013);
    int64_t opset = seed % 2 ? 6 : 1;
    TensorType x{seed % 5 == 0 ? DType::F64 : DType::F32, random_shape(rng, 2, 5)};
    std::vector<TensorType> types = {x, {x.dtype, {x.shape[1]}}, {x.dtype, {x.shape[1]}}};
    std::vector<Tensor> in;
    for (const auto& t : types) in.push_back(testlib::random_tensor(t, rng, -3, 3));
    double eps = rng.coin() ? 1e-5 : 0.5;
    Attrs attrs = {{"epsilon", eps}};
    if (opset == 1) attrs.emplace_back("consumed_inputs", std::vector<int64_t>{0, 0, 0});
    ir::Graph g = import_model(single_node("InstanceNormalization", types, 1, attrs, opset));
    EXPECT_EQ(testlib::compare_tensors(interp::run(g, in)[0], ref_instance_norm(in, static_cast<float>(eps)), 1e-5,
                                       1e-5),
              "")
        << "X " << ir::type_str(x) << " opset " << opset;
  }
}

// Tensors with a zero dim import and run (the statistics of an empty group are NaN).
TEST(NormFission, EmptyTensors) {
  struct Case {
    std::string op;
    std::vector<TensorType> in;
    int64_t opset;
  };
  const Case cases[] = {
      {"LayerNormalization", {{DType::F32, {0, 4}}, {DType::F32, {4}}}, 17},
      {"LayerNormalization", {{DType::F32, {2, 0}}, {DType::F32, {0}}}, 17},
      {"BatchNormalization", {{DType::F32, {0, 3, 2}}, {DType::F32, {3}}, {DType::F32, {3}}, {DType::F32, {3}},
                              {DType::F32, {3}}}, 15},
      {"InstanceNormalization", {{DType::F32, {1, 2, 0}}, {DType::F32, {2}}, {DType::F32, {2}}}, 6},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op + " " + ir::type_str(c.in[0]));
    std::vector<Tensor> in;
    for (const auto& t : c.in) in.push_back(Tensor(t));
    Tensor y = interp::run(import_model(single_node(c.op, c.in, 1, {}, c.opset)), in)[0];
    EXPECT_EQ(y.type(), c.in[0]);
  }
}

TEST(NormFissionErrors, InstanceNormalization) {
  OnnxModel rank = single_node("InstanceNormalization", {{DType::F32, {3}}, {DType::F32, {3}}, {DType::F32, {3}}}, 1);
  EXPECT_ERROR(rank, "input must have rank >= 2 (N x C x D1 x ...), not [3]");
  OnnxModel shape =
      single_node("InstanceNormalization", {{DType::F32, {2, 3, 4}}, {DType::F32, {4}}, {DType::F32, {3}}}, 1);
  EXPECT_ERROR(shape, "input 1 (scale) has shape [4]; expected [3], one value per channel of X [2,3,4]");
  OnnxModel dtype =
      single_node("InstanceNormalization", {{DType::F32, {2, 3, 4}}, {DType::F32, {3}}, {DType::F64, {3}}}, 1);
  EXPECT_ERROR(dtype, "input 2 is f64, input 0 is f32");
}

}  // namespace
}  // namespace orchid
