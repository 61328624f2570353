// GridSample (rules_sample.cpp) against a port of ONNX's reference (GridSample's
// _gs_reflect, _gs_get_cubic_coeffs, the pixel reads per padding mode) on seeded random
// images and grids reaching beyond [-1, 1]: every mode, padding mode and align_corners.
#include <gtest/gtest.h>

#include <cmath>

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

struct Ref {
  std::string mode, padding;
  bool align;
  const Tensor* x;
  int64_t h, w;

  double reflect(double v, double lo, double hi) const {
    double range = hi - lo;
    if (v < lo) {
      double dx = lo - v;
      auto n = static_cast<int64_t>(dx / range);
      double r = dx - static_cast<double>(n) * range;
      return n % 2 == 0 ? lo + r : hi - r;
    }
    if (v > hi) {
      double dx = v - hi;
      auto n = static_cast<int64_t>(dx / range);
      double r = dx - static_cast<double>(n) * range;
      return n % 2 == 0 ? hi - r : lo + r;
    }
    return v;
  }
  double lo(int64_t) const { return align ? 0 : -0.5; }
  double hi(int64_t size) const { return align ? double(size - 1) : double(size) - 0.5; }
  double unnormalise(double g, int64_t size) const {
    return align ? (g + 1) / 2 * double(size - 1) : ((g + 1) * double(size) - 1) / 2;
  }
  // As the ONNX reference: only a coordinate outside [lo, hi] moves.
  double coord(double v, int64_t size) const {
    if (padding == "zeros" || (v >= lo(size) && v <= hi(size))) return v;
    if (padding == "border") return std::clamp(v, 0.0, double(size - 1));
    return size == 1 ? 0.0 : reflect(v, lo(size), hi(size));
  }
  int64_t pixel_index(double v, int64_t size) const {
    if (padding == "reflection" && size > 1) v = reflect(v, lo(size), hi(size));
    if (padding == "reflection" && size == 1) v = 0;
    return static_cast<int64_t>(std::clamp(v, 0.0, double(size - 1)));
  }
  double pixel(int64_t n, int64_t c, double y, double xx) const {
    if (padding == "zeros" && (y < 0 || y > double(h - 1) || xx < 0 || xx > double(w - 1))) return 0;
    int64_t iy = pixel_index(y, h), ix = pixel_index(xx, w);
    return x->get_f64(((n * x->shape()[1] + c) * h + iy) * w + ix);
  }
  static void cubic(double f, double c[4]) {
    double a = -0.75;
    c[0] = ((a * (f + 1) - 5 * a) * (f + 1) + 8 * a) * (f + 1) - 4 * a;
    c[1] = ((a + 2) * f - (a + 3)) * f * f + 1;
    c[2] = ((a + 2) * (1 - f) - (a + 3)) * (1 - f) * (1 - f) + 1;
    c[3] = ((a * (2 - f) - 5 * a) * (2 - f) + 8 * a) * (2 - f) - 4 * a;
  }
  double sample(int64_t n, int64_t c, double gx, double gy) const {
    double xx = coord(unnormalise(gx, w), w), y = coord(unnormalise(gy, h), h);
    if (mode == "nearest") return pixel(n, c, std::nearbyint(y), std::nearbyint(xx));
    double x0 = std::floor(xx), y0 = std::floor(y), fx = xx - x0, fy = y - y0;
    if (mode == "bilinear")
      return (pixel(n, c, y0, x0) * (1 - fx) + pixel(n, c, y0, x0 + 1) * fx) * (1 - fy) +
             (pixel(n, c, y0 + 1, x0) * (1 - fx) + pixel(n, c, y0 + 1, x0 + 1) * fx) * fy;
    double cx[4], cy[4];
    cubic(fx, cx);
    cubic(fy, cy);
    double s = 0;
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 4; ++i) s += pixel(n, c, y0 + j - 1, x0 + i - 1) * cx[i] * cy[j];
    return s;
  }
};

TEST(CoverageGridSample, MatchesTheReference) {
  const char* modes[] = {"nearest", "bilinear", "bicubic"};
  const char* paddings[] = {"zeros", "border", "reflection"};
  for (uint64_t seed = 1; seed <= 36; ++seed) {
    Rng rng(seed * 4241);
    std::string mode = modes[seed % 3], padding = paddings[(seed / 3) % 3];
    bool align = rng.coin();
    Dims xs = {rng.range(1, 3), rng.range(1, 3), rng.range(1, 6), rng.range(1, 6)}, gs = {xs[0], rng.range(1, 5), rng.range(1, 5), 2};
    SCOPED_TRACE("seed " + std::to_string(seed) + " " + mode + " " + padding + (align ? " align_corners" : ""));
    Tensor x(TensorType{DType::F32, xs}), g(TensorType{DType::F32, gs});
    for (int64_t i = 0; i < x.numel(); ++i) x.set_f64(i, static_cast<float>(rng.uniform(-2, 2)));
    for (int64_t i = 0; i < g.numel(); ++i) g.set_f64(i, static_cast<float>(rng.uniform(-1.6, 1.6)));
    testlib::OnnxModel m = testlib::single_node("GridSample", {x.type(), g.type()}, 1,
                                                {{"mode", mode}, {"padding_mode", padding}, {"align_corners", int64_t{align}}}, 16);
    Tensor got = interp::run(testlib::import_model(m), {x, g})[0];
    Ref ref{mode, padding, align, &x, xs[2], xs[3]};
    Tensor want(TensorType{DType::F32, {xs[0], xs[1], gs[1], gs[2]}});
    for (int64_t n = 0; n < xs[0]; ++n)
      for (int64_t c = 0; c < xs[1]; ++c)
        for (int64_t i = 0; i < gs[1]; ++i)
          for (int64_t j = 0; j < gs[2]; ++j) {
            int64_t at = ((n * gs[1] + i) * gs[2] + j) * 2;
            want.set_f64(((n * xs[1] + c) * gs[1] + i) * gs[2] + j, ref.sample(n, c, g.get_f64(at), g.get_f64(at + 1)));
          }
    EXPECT_EQ(testlib::compare_tensors(got, want, 1e-4, 1e-4), "") << ir::dims_str(xs) << " grid " << ir::dims_str(gs);
  }
}

// Between the borders and the outer pixel centres (x = -0.25 without align_corners) the
// coordinate stays; only the bicubic taps beyond the image are padded, one by one.
TEST(CoverageGridSample, BicubicNearTheEdgePadsTapsNotTheCoordinate) {
  Tensor x(TensorType{DType::F32, {1, 1, 1, 4}}), g(TensorType{DType::F32, {1, 1, 1, 2}});
  for (int64_t i = 0; i < 4; ++i) x.set_f64(i, static_cast<double>(i * i) - 1.5);
  g.set_f64(0, -0.875);  // x = ((g + 1) · 4 − 1) / 2 = −0.25
  g.set_f64(1, 0);
  for (const char* padding : {"border", "reflection"}) {
    SCOPED_TRACE(padding);
    testlib::OnnxModel m = testlib::single_node("GridSample", {x.type(), g.type()}, 1,
                                                {{"mode", std::string("bicubic")}, {"padding_mode", std::string(padding)},
                                                 {"align_corners", int64_t{0}}}, 16);
    Tensor got = interp::run(testlib::import_model(m), {x, g})[0];
    Ref ref{"bicubic", padding, false, &x, 1, 4};
    EXPECT_NEAR(got.get_f64(0), ref.sample(0, 0, -0.875, 0), 1e-5);
  }
}

}  // namespace
}  // namespace orchid
