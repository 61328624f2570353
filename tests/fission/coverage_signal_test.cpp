// Signal operators (rules_signal.cpp) against direct complex sums on seeded random cases:
// DFT over every signal axis, real and complex input, forward and inverse, onesided, with a
// dft_length that pads or cuts; STFT with and without a window, real and complex signals,
// onesided or not; the windows against their formulas.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <numbers>

#include "interp/interp.h"
#include "support/random.h"
#include "testlib/onnx_builder.h"
#include "testlib/tensors.h"

namespace orchid {
namespace {

using ir::DType;
using ir::Dims;
using ir::Tensor;
using ir::TensorType;
using cd = std::complex<double>;

Tensor scalar_i64(int64_t v) {
  Tensor t(TensorType{DType::I64, {}});
  t.set_i64(0, v);
  return t;
}

TEST(CoverageSignal, DftMatchesTheComplexSum) {
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    Rng rng(seed * 131);
    Dims xs = {rng.range(1, 3), rng.range(1, 7), rng.range(1, 5), rng.coin() ? 1 : 2};
    int64_t axis = rng.range(1, 3), n = xs[static_cast<size_t>(axis)];
    bool inverse = rng.coin(), onesided = rng.coin(0.3), given = rng.coin();
    int64_t l = given ? rng.range(1, 9) : n, k = onesided ? l / 2 + 1 : l;
    SCOPED_TRACE("seed " + std::to_string(seed));
    Tensor x = testlib::random_tensor({DType::F32, xs}, rng);
    testlib::OnnxModel m;
    m.inputs.push_back({"x", x.type()});
    if (given) m.initializers.push_back({"len", scalar_i64(l)});
    m.nodes.push_back({"DFT", {"x", given ? "len" : ""}, {"y"}, {{"axis", axis}, {"inverse", int64_t{inverse}}, {"onesided", int64_t{onesided}}}});
    m.outputs = {"y"};
    Tensor got = interp::run(testlib::import_model(m), {x})[0];
    Dims ys = xs;
    ys[static_cast<size_t>(axis)] = k;
    ys.back() = 2;
    Tensor want(TensorType{DType::F32, ys});
    for (int64_t b = 0; b < ys[0]; ++b)
      for (int64_t p = 0; p < ys[1]; ++p)
        for (int64_t q = 0; q < ys[2]; ++q) {
          int64_t kk = axis == 1 ? p : q;
          cd sum = 0;
          for (int64_t t = 0; t < std::min(n, l); ++t) {
            Dims at = {b, axis == 1 ? t : p, axis == 2 ? t : q, 0};
            cd v(x.get_f64(testlib::flat_offset(xs, at)), 0);
            if (xs.back() == 2) at.back() = 1, v.imag(x.get_f64(testlib::flat_offset(xs, at)));
            double angle = 2 * std::numbers::pi * double(kk * t) / double(l) * (inverse ? 1 : -1);
            sum += v * std::polar(1.0, angle);
          }
          if (inverse) sum /= double(l);
          want.set_f64(testlib::flat_offset(ys, {b, p, q, 0}), sum.real());
          want.set_f64(testlib::flat_offset(ys, {b, p, q, 1}), sum.imag());
        }
    EXPECT_EQ(testlib::compare_tensors(got, want, 1e-4, 1e-5), "") << ir::dims_str(xs) << " axis " << axis << " L " << l;
  }
}

TEST(CoverageSignal, StftMatchesWindowedFrames) {
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    Rng rng(seed * 977);
    int64_t len = rng.range(4, 30), l = rng.range(1, std::min<int64_t>(len, 9) + 1), step = rng.range(1, 5);
    Dims xs = {rng.range(1, 3), len, rng.coin() ? 1 : 2};
    bool windowed = rng.coin(), onesided = rng.coin();
    SCOPED_TRACE("seed " + std::to_string(seed));
    Tensor x = testlib::random_tensor({DType::F32, xs}, rng), w = testlib::random_tensor({DType::F32, {l}}, rng);
    testlib::OnnxModel m;
    m.inputs.push_back({"x", x.type()});
    m.initializers.push_back({"step", scalar_i64(step)});
    m.initializers.push_back({"len", scalar_i64(l)});
    std::vector<Tensor> feed = {x};
    if (windowed) m.inputs.push_back({"w", w.type()}), feed.push_back(w);
    m.nodes.push_back({"STFT", {"x", "step", windowed ? "w" : "", "len"}, {"y"}, {{"onesided", int64_t{onesided}}}});
    m.outputs = {"y"};
    Tensor got = interp::run(testlib::import_model(m), feed)[0];
    int64_t frames = (len - l) / step + 1, k = onesided ? l / 2 + 1 : l;
    Dims ys = {xs[0], frames, k, 2};
    Tensor want(TensorType{DType::F32, ys});
    for (int64_t b = 0; b < xs[0]; ++b)
      for (int64_t f = 0; f < frames; ++f)
        for (int64_t kk = 0; kk < k; ++kk) {
          cd sum = 0;
          for (int64_t t = 0; t < l; ++t) {
            cd v(x.get_f64(testlib::flat_offset(xs, {b, f * step + t, 0})), xs[2] == 2 ? x.get_f64(testlib::flat_offset(xs, {b, f * step + t, 1})) : 0);
            sum += v * (windowed ? w.get_f64(t) : 1.0) * std::polar(1.0, -2 * std::numbers::pi * double(kk * t) / double(l));
          }
          want.set_f64(testlib::flat_offset(ys, {b, f, kk, 0}), sum.real());
          want.set_f64(testlib::flat_offset(ys, {b, f, kk, 1}), sum.imag());
        }
    EXPECT_EQ(testlib::compare_tensors(got, want, 1e-4, 1e-5), "") << ir::dims_str(xs) << " L " << l << " step " << step;
  }
}

TEST(CoverageSignal, Windows) {
  struct W {
    const char* op;
    std::vector<double> a;
  } windows[] = {{"HannWindow", {0.5, -0.5}}, {"HammingWindow", {25.0 / 46, -21.0 / 46}}, {"BlackmanWindow", {0.42, -0.5, 0.08}}};
  for (const W& win : windows)
    for (int64_t periodic : {0, 1})
      for (int64_t size : {1, 2, 7, 16}) {
        if (size == 1 && periodic == 0) continue;  // N - 1 = 0
        testlib::OnnxModel m;
        m.initializers.push_back({"size", scalar_i64(size)});
        m.nodes.push_back({win.op, {"size"}, {"y"}, {{"periodic", periodic}}});
        m.outputs = {"y"};
        Tensor got = interp::run(testlib::import_model(m), {})[0];
        Tensor want(TensorType{DType::F32, {size}});
        double den = double(periodic ? size : size - 1);
        for (int64_t n = 0; n < size; ++n) {
          double v = 0;
          for (size_t j = 0; j < win.a.size(); ++j) v += win.a[j] * std::cos(2 * std::numbers::pi * double(j) * double(n) / den);
          want.set_f64(n, v);
        }
        EXPECT_EQ(testlib::compare_tensors(got, want, 1e-6, 1e-6), "") << win.op << " periodic " << periodic << " size " << size;
      }
}

}  // namespace
}  // namespace orchid
