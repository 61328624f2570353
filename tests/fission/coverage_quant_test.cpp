// Quantization rules (rules_quant.cpp) against direct references on seeded random data:
// QuantizeLinear and DequantizeLinear, scalar and per-axis, uint8 and int8; the integer and
// quantized matmul and conv against integer references. Quantized values are compared
// exactly: the references compute each quotient in f32, as the operators define it.
#include <gtest/gtest.h>

#include <cmath>

#include "interp/interp.h"
#include "support/random.h"
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
using testlib::single_node;

std::vector<Tensor> run(const testlib::OnnxModel& m, const std::vector<Tensor>& inputs) {
  return interp::run(import_model(m), inputs, {interp::Precision::Own});
}

double qmin(DType t) { return t == DType::U8 ? 0 : -128; }
double qmax(DType t) { return t == DType::U8 ? 255 : 127; }

// saturate(round_half_even(f32(x / s)) + zp)
int64_t quantize(float x, float s, int64_t zp, DType t) {
  float q = std::nearbyint(x / s) + static_cast<float>(zp);
  return static_cast<int64_t>(std::min<double>(std::max<double>(q, qmin(t)), qmax(t)));
}

// Index of element i of `shape` along `axis`.
int64_t coord(const Dims& shape, int64_t i, size_t axis) {
  for (size_t d = shape.size(); d-- > axis + 1;) i /= shape[d];
  return i % shape[axis];
}

TEST(CoverageQuant, QuantizeAndDequantizeLinear) {
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    Rng rng(seed * 7919);
    Dims shape(static_cast<size_t>(rng.range(1, 4)));
    for (int64_t& d : shape) d = rng.range(1, 5);
    DType qt = rng.coin() ? DType::U8 : DType::I8;
    bool per_axis = rng.coin();
    size_t axis = static_cast<size_t>(rng.range(0, static_cast<int64_t>(shape.size())));
    int64_t n = per_axis ? shape[axis] : 1;
    Dims ps = per_axis ? Dims{n} : Dims{};
    Tensor scale = testlib::random_tensor({DType::F32, ps}, rng, 0.01, 0.5);
    Tensor zp = testlib::random_tensor({qt, ps}, rng, qmin(qt) / 2 + 1, qmax(qt) / 2);
    SCOPED_TRACE("seed " + std::to_string(seed) + " " + ir::dims_str(shape) + " " + std::string(ir::dtype_name(qt)) +
                 (per_axis ? " axis " + std::to_string(axis) : " scalar"));
    std::vector<std::pair<std::string, frontend::Attribute>> attrs;
    if (per_axis) attrs.emplace_back("axis", static_cast<int64_t>(axis) - (rng.coin() ? static_cast<int64_t>(shape.size()) : 0));
    Tensor x = testlib::random_tensor({DType::F32, shape}, rng, -40, 40);
    Tensor q = run(single_node("QuantizeLinear", {x.type(), scale.type(), zp.type()}, 1, attrs, 13), {x, scale, zp})[0];
    Tensor want_q(TensorType{qt, shape});
    for (int64_t i = 0; i < x.numel(); ++i) {
      int64_t c = per_axis ? coord(shape, i, axis) : 0;
      want_q.set_i64(i, quantize(static_cast<float>(x.get_f64(i)), static_cast<float>(scale.get_f64(c)), zp.get_i64(c), qt));
    }
    EXPECT_EQ(testlib::compare_tensors(q, want_q, 0, 0), "");
    Tensor back = run(single_node("DequantizeLinear", {q.type(), scale.type(), zp.type()}, 1, attrs, 13), {q, scale, zp})[0];
    Tensor want_x(TensorType{DType::F32, shape});
    for (int64_t i = 0; i < x.numel(); ++i) {
      int64_t c = per_axis ? coord(shape, i, axis) : 0;
      want_x.set_f64(i, static_cast<float>(static_cast<float>(q.get_i64(i) - zp.get_i64(c)) * static_cast<float>(scale.get_f64(c))));
    }
    EXPECT_EQ(testlib::compare_tensors(back, want_x, 0, 0), "");
  }
}

// QLinearMatMul: quantize((A - a_zp) @ (B - b_zp) * (a_scale * b_scale) / y_scale, y_zp), and
// MatMulInteger's i32 accumulator on the way.
TEST(CoverageQuant, QLinearMatMulAndMatMulInteger) {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    Rng rng(seed * 104729);
    int64_t m = rng.range(1, 6), k = rng.range(1, 9), n = rng.range(1, 6);
    DType at = rng.coin() ? DType::U8 : DType::I8, bt = rng.coin() ? DType::U8 : DType::I8, yt = rng.coin() ? DType::U8 : DType::I8;
    Tensor a = testlib::random_tensor({at, {m, k}}, rng, qmin(at), qmax(at) + 1), b = testlib::random_tensor({bt, {k, n}}, rng, qmin(bt), qmax(bt) + 1);
    Tensor azp = testlib::random_tensor({at, {}}, rng, qmin(at), qmax(at) + 1), bzp = testlib::random_tensor({bt, {}}, rng, qmin(bt), qmax(bt) + 1);
    Tensor as = testlib::random_tensor({DType::F32, {}}, rng, 0.001, 0.05), bs = testlib::random_tensor({DType::F32, {}}, rng, 0.001, 0.05);
    Tensor ys = testlib::random_tensor({DType::F32, {}}, rng, 0.05, 2), yzp = testlib::random_tensor({yt, {}}, rng, qmin(yt) / 2, qmax(yt) / 2);
    SCOPED_TRACE("seed " + std::to_string(seed));
    Tensor acc = run(single_node("MatMulInteger", {a.type(), b.type(), azp.type(), bzp.type()}, 1, {}, 10), {a, b, azp, bzp})[0];
    Tensor y = run(single_node("QLinearMatMul", {a.type(), as.type(), azp.type(), b.type(), bs.type(), bzp.type(), ys.type(), yzp.type()},
                               1, {}, 10),
                   {a, as, azp, b, bs, bzp, ys, yzp})[0];
    Tensor want_acc(TensorType{DType::I32, {m, n}}), want_y(TensorType{yt, {m, n}});
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        int64_t s = 0;
        for (int64_t t = 0; t < k; ++t) s += (a.get_i64(i * k + t) - azp.get_i64(0)) * (b.get_i64(t * n + j) - bzp.get_i64(0));
        want_acc.set_i64(i * n + j, s);
        float real = static_cast<float>(s) * (static_cast<float>(as.get_f64(0)) * static_cast<float>(bs.get_f64(0)));
        want_y.set_i64(i * n + j, quantize(real, static_cast<float>(ys.get_f64(0)), yzp.get_i64(0), yt));
      }
    EXPECT_EQ(testlib::compare_tensors(acc, want_acc, 0, 0), "");
    EXPECT_EQ(testlib::compare_tensors(y, want_y, 0, 0), "");
  }
}

// ConvInteger with a per-output-channel weight zero point against an integer reference.
TEST(CoverageQuant, ConvIntegerPerChannelZeroPoint) {
  Rng rng(31);
  Tensor x = testlib::random_tensor({DType::U8, {1, 2, 5, 5}}, rng, 0, 256), w = testlib::random_tensor({DType::I8, {3, 2, 3, 3}}, rng, -128, 128);
  Tensor xzp = testlib::random_tensor({DType::U8, {}}, rng, 0, 256), wzp = testlib::random_tensor({DType::I8, {3}}, rng, -128, 128);
  Tensor y = run(single_node("ConvInteger", {x.type(), w.type(), xzp.type(), wzp.type()}, 1, {}, 10), {x, w, xzp, wzp})[0];
  ASSERT_EQ(y.type(), (TensorType{DType::I32, {1, 3, 3, 3}}));
  for (int64_t o = 0; o < 3; ++o)
    for (int64_t p = 0; p < 3; ++p)
      for (int64_t q = 0; q < 3; ++q) {
        int64_t s = 0;
        for (int64_t c = 0; c < 2; ++c)
          for (int64_t u = 0; u < 3; ++u)
            for (int64_t v = 0; v < 3; ++v)
              s += (x.get_i64((c * 5 + p + u) * 5 + q + v) - xzp.get_i64(0)) * (w.get_i64(((o * 2 + c) * 3 + u) * 3 + v) - wzp.get_i64(o));
        EXPECT_EQ(y.get_i64((o * 3 + p) * 3 + q), s) << o << " " << p << " " << q;
      }
}

TEST(CoverageQuantErrors, BadScalesAndTypes) {
  std::string e = testlib::error_of(
      [] { import_model(single_node("QuantizeLinear", {{DType::F32, {2, 3}}, {DType::F32, {4}}, {DType::U8, {4}}}, 1, {}, 13)); });
  EXPECT_NE(e.find("node 'node' (QuantizeLinear"), std::string::npos) << e;
  EXPECT_NE(e.find("scale [4] is neither a scalar nor one value per element of axis 1 of [2,3]"), std::string::npos) << e;
  e = testlib::error_of([] { import_model(single_node("MatMulInteger", {{DType::F32, {2, 3}}, {DType::U8, {3, 2}}}, 1, {}, 10)); });
  EXPECT_NE(e.find("MatMulInteger"), std::string::npos) << e;
  e = testlib::error_of([] { import_model(single_node("MatMulInteger", {{DType::U8, {2, 3}}, {DType::U8, {4, 2}}}, 1, {}, 10)); });
  EXPECT_NE(e.find("node 'node' (MatMulInteger"), std::string::npos) << e;
}

}  // namespace
}  // namespace orchid
