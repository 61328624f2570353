// Differential tests of the LRN, LpNormalization, MeanVarianceNormalization, LpPool and
// GlobalLpPool fission rules: each ONNX node, imported through the real loader, is run by the
// interpreter and compared with a naive reference on seeded random shapes, attributes, opsets
// and dtypes; plus the rules' error and unsupported messages.
#include <algorithm>

#include "coverage_reduce_util.h"

namespace orchid {
namespace {

using namespace coverage;

double tolerance(DType t) { return ir::dtype_bytes(t) == 2 ? 2e-2 : 1e-5; }

DType float_dtype(uint64_t seed, bool bf16) {
  switch (seed % 4) {
    case 0: return DType::F64;
    case 1: return DType::F32;
    case 2: return DType::F16;
    default: return bf16 ? DType::BF16 : DType::F32;
  }
}

// ---- LRN ----

Tensor ref_lrn(const Tensor& x, int64_t size, double alpha, double beta, double bias) {
  Tensor y(x.type());
  Lines l(x.shape(), 1);
  int64_t head = (size - 1) / 2, tail = size - 1 - head;
  for (int64_t line = 0; line < l.count(); ++line)
    for (int64_t c = 0; c < l.len; ++c) {
      double sq = 0;
      for (int64_t i = std::max<int64_t>(0, c - head); i <= std::min(l.len - 1, c + tail); ++i)
        sq += x.get_f64(l.at(line, i)) * x.get_f64(l.at(line, i));
      y.set_f64(l.at(line, c), x.get_f64(l.at(line, c)) / std::pow(bias + alpha / static_cast<double>(size) * sq, beta));
    }
  return y;
}

TEST(CoverageReduceNorm, LRN) {
  for (int64_t opset : {1, 13})
    for (uint64_t seed = 1; seed <= 6; ++seed) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " opset " + std::to_string(opset));
      Rng rng(seed * 4099 + static_cast<uint64_t>(opset));
      DType t = float_dtype(seed, opset >= 13);
      TensorType xt{t, random_shape(rng, 2, 4, 6)};
      int64_t size = rng.range(1, 7);
      double alpha = static_cast<float>(rng.uniform(1e-4, 0.5)), beta = static_cast<float>(rng.uniform(0.25, 1.5));
      double bias = static_cast<float>(rng.uniform(0.5, 2));
      Attrs attrs = {{"size", size}, {"alpha", alpha}, {"beta", beta}, {"bias", bias}};
      if (rng.coin(0.3)) attrs = {{"size", size}}, alpha = static_cast<float>(1e-4), beta = 0.75, bias = 1;
      Tensor x = testlib::random_tensor(xt, rng, -2, 2);
      EXPECT_EQ(testlib::compare_tensors(run(single_node("LRN", {xt}, 1, attrs, opset), {x})[0],
                                         ref_lrn(x, size, alpha, beta, bias), tolerance(t), tolerance(t)),
                "")
          << "x " << ir::type_str(xt) << " size " << size;
    }
}

TEST(CoverageReduceNormErrors, LRN) {
  TensorType x{DType::F32, {1, 3, 2}};
  EXPECT_ERROR(single_node("LRN", {x}, 1, {}, 13), "attribute 'size' is required");
  EXPECT_ERROR(single_node("LRN", {x}, 1, {{"size", int64_t{0}}}, 13), "size = 0 must be >= 1");
  EXPECT_ERROR(single_node("LRN", {{DType::F32, {3}}}, 1, {{"size", int64_t{1}}}, 13),
               "input of shape [3] needs rank >= 2 (N x C x D1 x ...)");
  EXPECT_ERROR(single_node("LRN", {{DType::BF16, {1, 3}}}, 1, {{"size", int64_t{1}}}, 1), "LRN-1 allows f16, f32, f64");
}

// ---- LpNormalization ----

Tensor ref_lp_normalization(const Tensor& x, int64_t axis, int64_t p) {
  Tensor y(x.type());
  Lines l(x.shape(), axis);
  for (int64_t line = 0; line < l.count(); ++line) {
    double norm = 0;
    for (int64_t t = 0; t < l.len; ++t) {
      double v = x.get_f64(l.at(line, t));
      norm += p == 1 ? std::abs(v) : v * v;
    }
    if (p == 2) norm = std::sqrt(norm);
    for (int64_t t = 0; t < l.len; ++t) y.set_f64(l.at(line, t), x.get_f64(l.at(line, t)) / norm);
  }
  return y;
}

TEST(CoverageReduceNorm, LpNormalization) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Rng rng(seed * 97);
    DType t = float_dtype(seed, false);
    TensorType xt{t, random_shape(rng, 1, 4)};
    int64_t rank = xt.rank(), axis = rng.range(-rank, rank), p = rng.range(1, 3);
    Attrs attrs;
    if (rng.coin(0.8)) attrs.emplace_back("axis", axis);
    else axis = -1;
    if (p == 1 || rng.coin()) attrs.emplace_back("p", p);
    Tensor x = testlib::random_tensor(xt, rng, 0.25, 2);
    for (int64_t i = 0; i < x.numel(); ++i)
      if (rng.coin()) x.set_f64(i, -x.get_f64(i));
    EXPECT_EQ(testlib::compare_tensors(run(single_node("LpNormalization", {xt}, 1, attrs, 1), {x})[0],
                                       ref_lp_normalization(x, axis < 0 ? axis + rank : axis, p), tolerance(t),
                                       tolerance(t)),
              "")
        << "x " << ir::type_str(xt) << " axis " << axis << " p " << p;
  }
}

TEST(CoverageReduceNormErrors, LpNormalization) {
  TensorType x{DType::F32, {2, 3}};
  EXPECT_ERROR(single_node("LpNormalization", {x}, 1, {{"p", int64_t{3}}}, 1),
               "p = 3: LpNormalization defines only p = 1 and p = 2");
  EXPECT_ERROR(single_node("LpNormalization", {x}, 1, {{"axis", int64_t{2}}}, 1), "axis 2 is out of range for rank 2");
}

// ---- MeanVarianceNormalization ----

// (x - mean) / (sqrt(variance) + 1e-9) with the population statistics over `axes`.
Tensor ref_mvn(const Tensor& x, const std::vector<int64_t>& axes) {
  Dims kept = x.shape();
  for (int64_t a : axes) kept[static_cast<size_t>(a)] = 1;
  auto group = [&](Dims idx) {
    for (int64_t a : axes) idx[static_cast<size_t>(a)] = 0;
    return static_cast<size_t>(testlib::flat_offset(kept, idx));
  };
  double n = static_cast<double>(x.numel()) / static_cast<double>(ir::numel(kept));
  std::vector<double> mean(static_cast<size_t>(ir::numel(kept))), var(mean.size());
  Dims idx(x.shape().size(), 0);
  for (int64_t i = 0; i < x.numel(); ++i, testlib::next_index(x.shape(), idx)) mean[group(idx)] += x.get_f64(i) / n;
  idx.assign(x.shape().size(), 0);
  for (int64_t i = 0; i < x.numel(); ++i, testlib::next_index(x.shape(), idx)) {
    double d = x.get_f64(i) - mean[group(idx)];
    var[group(idx)] += d * d / n;
  }
  Tensor y(x.type());
  idx.assign(x.shape().size(), 0);
  for (int64_t i = 0; i < x.numel(); ++i, testlib::next_index(x.shape(), idx))
    y.set_f64(i, (x.get_f64(i) - mean[group(idx)]) / (std::sqrt(var[group(idx)]) + 1e-9));
  return y;
}

TEST(CoverageReduceNorm, MeanVarianceNormalization) {
  for (int64_t opset : {9, 13})
    for (uint64_t seed = 1; seed <= 6; ++seed) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " opset " + std::to_string(opset));
      Rng rng(seed * 1201 + static_cast<uint64_t>(opset));
      DType t = float_dtype(seed, opset >= 13);
      bool default_axes = rng.coin(0.3);
      TensorType xt{t, random_shape(rng, default_axes ? 4 : 1, 4)};
      int64_t rank = xt.rank();
      std::vector<int64_t> axes = {0, 2, 3}, written;
      Attrs attrs;
      if (!default_axes) {
        axes.clear();
        for (int64_t a = 0; a < rank; ++a)
          if (rng.coin()) axes.push_back(a), written.push_back(rng.coin() ? a : a - rank);
        attrs.emplace_back("axes", written);
        if (axes.empty())
          for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
      }
      Tensor x = testlib::random_tensor(xt, rng, -2, 2);
      EXPECT_EQ(testlib::compare_tensors(run(single_node("MeanVarianceNormalization", {xt}, 1, attrs, opset), {x})[0],
                                         ref_mvn(x, axes), tolerance(t), tolerance(t)),
                "")
          << "x " << ir::type_str(xt) << " axes " << ir::dims_str(written);
    }
}

TEST(CoverageReduceNormErrors, MeanVarianceNormalization) {
  EXPECT_ERROR(single_node("MeanVarianceNormalization", {{DType::F32, {2, 3}}}, 1, {}, 13),
               "axes entry 2 is out of range for rank 2");
  EXPECT_ERROR(single_node("MeanVarianceNormalization", {{DType::F32, {2, 3}}}, 1,
                           {{"axes", std::vector<int64_t>{0, -2}}}, 13),
               "axes names axis 0 twice");
}

// ---- LpPool / GlobalLpPool ----

struct PoolCase {
  Dims x;
  Dims kernel, strides, pads;  // pads: begins then ends
  std::string auto_pad = "NOTSET";
  double p = 2;
};

// The window of output point o of one spatial dim: its first input position.
int64_t first_pos(int64_t o, int64_t stride, int64_t pad) { return o * stride - pad; }

Tensor ref_lp_pool(const Tensor& x, const PoolCase& c, const Dims& out_spatial) {
  size_t S = c.kernel.size();
  Dims out = {c.x[0], c.x[1]};
  out.insert(out.end(), out_spatial.begin(), out_spatial.end());
  Tensor y(TensorType{x.dtype(), out});
  Dims o(out.size(), 0);
  for (int64_t i = 0; i < y.numel(); ++i, testlib::next_index(out, o)) {
    double sum = 0;
    Dims q(S, 0);
    do {
      Dims at = {o[0], o[1]};
      bool inside = true;
      for (size_t d = 0; d < S; ++d) {
        at.push_back(first_pos(o[2 + d], c.strides[d], c.pads[d]) + q[d]);
        inside &= at.back() >= 0 && at.back() < c.x[2 + d];
      }
      if (inside) sum += std::pow(std::abs(x.get_f64(testlib::flat_offset(c.x, at))), c.p);
    } while (testlib::next_index(c.kernel, q));
    y.set_f64(i, std::pow(sum, 1 / c.p));
  }
  return y;
}

// A random pooling geometry; SAME padding only with kernel >= stride (non-negative padding).
PoolCase random_pool(Rng& rng) {
  PoolCase c;
  size_t S = static_cast<size_t>(rng.range(1, 4));
  c.x = {rng.range(1, 3), rng.range(1, 4)};
  int mode = static_cast<int>(rng.range(0, 4));  // explicit, VALID, SAME_UPPER, SAME_LOWER
  c.auto_pad = mode == 0 ? "NOTSET" : mode == 1 ? "VALID" : mode == 2 ? "SAME_UPPER" : "SAME_LOWER";
  c.pads.assign(2 * S, 0);
  for (size_t d = 0; d < S; ++d) {
    c.x.push_back(rng.range(1, 7));
    c.kernel.push_back(rng.range(1, c.x.back() + 1));
    c.strides.push_back(rng.range(1, mode >= 2 ? std::min<int64_t>(c.kernel[d], 2) + 1 : 3));
    if (mode == 0) c.pads[d] = rng.range(0, c.kernel[d]), c.pads[d + S] = rng.range(0, c.kernel[d]);
  }
  return c;
}

// The output sizes (and, for SAME, the pads) as ONNX shape inference computes them.
Dims pool_out(PoolCase& c) {
  Dims out;
  size_t S = c.kernel.size();
  for (size_t d = 0; d < S; ++d) {
    int64_t in = c.x[2 + d], s = c.strides[d], k = c.kernel[d];
    if (c.auto_pad == "SAME_UPPER" || c.auto_pad == "SAME_LOWER") {
      int64_t o = (in + s - 1) / s, total = std::max<int64_t>(0, (o - 1) * s + k - in);
      c.pads[d] = c.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      c.pads[d + S] = total - c.pads[d];
    }
    out.push_back((in + c.pads[d] + c.pads[d + S] - k) / s + 1);
  }
  return out;
}

TEST(CoverageReduceNorm, LpPool) {
  for (int64_t opset : {1, 2, 11})
    for (uint64_t seed = 1; seed <= 8; ++seed) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " opset " + std::to_string(opset));
      Rng rng(seed * 5003 + static_cast<uint64_t>(opset));
      PoolCase c = random_pool(rng);
      DType t = float_dtype(seed, false);
      c.p = opset < 2 ? (rng.coin() ? 1.5 : 2.0) : static_cast<double>(rng.range(1, 4));
      Attrs attrs = {{"kernel_shape", c.kernel}};
      if (opset < 2) attrs.emplace_back("p", c.p);
      else attrs.emplace_back("p", static_cast<int64_t>(c.p));
      bool strided = std::any_of(c.strides.begin(), c.strides.end(), [](int64_t s) { return s != 1; });
      if (strided || rng.coin()) attrs.emplace_back("strides", c.strides);
      if (c.auto_pad != "NOTSET") attrs.emplace_back("auto_pad", c.auto_pad);
      else attrs.emplace_back("pads", c.pads);
      Dims out = pool_out(c);
      TensorType xt{t, c.x};
      Tensor x = testlib::random_tensor(xt, rng, -2, 2);
      EXPECT_EQ(testlib::compare_tensors(run(single_node("LpPool", {xt}, 1, attrs, opset), {x})[0],
                                         ref_lp_pool(x, c, out), tolerance(t), tolerance(t)),
                "")
          << "x " << ir::dims_str(c.x) << " kernel " << ir::dims_str(c.kernel) << " strides "
          << ir::dims_str(c.strides) << " pads " << ir::dims_str(c.pads) << " " << c.auto_pad << " p " << c.p;
    }
}

TEST(CoverageReduceNorm, GlobalLpPool) {
  for (int64_t opset : {1, 2})
    for (uint64_t seed = 1; seed <= 6; ++seed) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " opset " + std::to_string(opset));
      Rng rng(seed * 307 + static_cast<uint64_t>(opset));
      DType t = float_dtype(seed, false);
      PoolCase c;
      c.x = random_shape(rng, 2, 5);
      c.kernel = Dims(c.x.begin() + 2, c.x.end());
      c.strides.assign(c.kernel.size(), 1);
      c.pads.assign(2 * c.kernel.size(), 0);
      c.p = opset < 2 ? (rng.coin() ? 3.0 : 2.0) : static_cast<double>(rng.range(1, 4));
      Attrs attrs;
      if (c.p != 2 || rng.coin()) {
        if (opset < 2) attrs.emplace_back("p", c.p);
        else attrs.emplace_back("p", static_cast<int64_t>(c.p));
      }
      TensorType xt{t, c.x};
      Tensor x = testlib::random_tensor(xt, rng, -2, 2);
      EXPECT_EQ(testlib::compare_tensors(run(single_node("GlobalLpPool", {xt}, 1, attrs, opset), {x})[0],
                                         ref_lp_pool(x, c, Dims(c.kernel.size(), 1)), tolerance(t), tolerance(t)),
                "")
          << "x " << ir::dims_str(c.x) << " p " << c.p;
    }
}

TEST(CoverageReduceNormErrors, LpPool) {
  TensorType x{DType::F32, {1, 2, 5}};
  Attrs k = {{"kernel_shape", Dims{2}}};
  OnnxModel zero = single_node("LpPool", {x}, 1, {{"kernel_shape", Dims{2}}, {"p", int64_t{0}}}, 11);
  EXPECT_TRUE(is_unsupported(zero));
  EXPECT_ERROR(zero, "not supported: p = 0 (the Lp norm needs a finite p > 0)");
  EXPECT_ERROR(single_node("LpPool", {x}, 1, {{"kernel_shape", Dims{2}}, {"dilations", Dims{2}}}, 11),
               "attribute 'dilations' is not defined before version 18");
  EXPECT_ERROR(single_node("LpPool", {x}, 1, {}, 11), "attribute 'kernel_shape' is required");
  EXPECT_ERROR(single_node("LpPool", {{DType::F32, {1, 2}}}, 1, k, 11), "needs rank >= 3");
  EXPECT_ERROR(single_node("LpPool", {x}, 1, {{"kernel_shape", Dims{2}}, {"p", 2.0}}, 11), "attribute 'p' should be an int");
  OnnxModel global = single_node("GlobalLpPool", {x}, 1, {{"p", -1.5}}, 1);
  EXPECT_TRUE(is_unsupported(global));
  EXPECT_ERROR(global, "not supported: p = -1.5 (the Lp norm needs a finite p > 0)");
  EXPECT_ERROR(single_node("GlobalLpPool", {{DType::F32, {3}}}, 1, {}, 2),
               "input of shape [3] needs rank >= 2 (batch, channels, spatial dims)");
}

}  // namespace
}  // namespace orchid
