// RoiAlign (rules_sample.cpp), mode avg, against a port of the reference loop (ONNX
// Runtime's RoiAlignForward with its bilinear border rules) on seeded random images and
// regions, some reaching outside the image: both coordinate modes, sampling ratios 1-3,
// spatial scales.
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

double bilinear(const Tensor& x, int64_t n, int64_t c, double y, double xx) {
  int64_t h = x.shape()[2], w = x.shape()[3];
  if (y < -1.0 || y > double(h) || xx < -1.0 || xx > double(w)) return 0;
  if (y <= 0) y = 0;
  if (xx <= 0) xx = 0;
  auto yl = int64_t(y), xl = int64_t(xx);
  int64_t yh = yl + 1, xh = xl + 1;
  if (yl >= h - 1) yh = yl = h - 1, y = double(yl);
  if (xl >= w - 1) xh = xl = w - 1, xx = double(xl);
  double ly = y - double(yl), lx = xx - double(xl), hy = 1 - ly, hx = 1 - lx;
  auto at = [&](int64_t a, int64_t b) { return x.get_f64(((n * x.shape()[1] + c) * h + a) * w + b); };
  return hy * hx * at(yl, xl) + hy * lx * at(yl, xh) + ly * hx * at(yh, xl) + ly * lx * at(yh, xh);
}

TEST(CoverageRoiAlign, MatchesTheReferenceLoop) {
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    Rng rng(seed * 1543);
    Dims xs = {rng.range(1, 3), rng.range(1, 3), rng.range(2, 9), rng.range(2, 9)};
    int64_t r = rng.range(1, 5), oh = rng.range(1, 4), ow = rng.range(1, 4), ratio = rng.range(1, 4);
    bool half_pixel = rng.coin();
    double scale = rng.coin() ? 1.0 : 0.5;
    Tensor x(TensorType{DType::F32, xs}), rois(TensorType{DType::F32, {r, 4}}), batch(TensorType{DType::I64, {r}});
    for (int64_t i = 0; i < x.numel(); ++i) x.set_f64(i, static_cast<float>(rng.uniform(-2, 2)));
    for (int64_t k = 0; k < r; ++k) {
      double x1 = rng.uniform(-3, double(xs[3])), y1 = rng.uniform(-3, double(xs[2]));
      rois.set_f64(k * 4 + 0, static_cast<float>(x1));
      rois.set_f64(k * 4 + 1, static_cast<float>(y1));
      rois.set_f64(k * 4 + 2, static_cast<float>(x1 + rng.uniform(0, 8)));
      rois.set_f64(k * 4 + 3, static_cast<float>(y1 + rng.uniform(0, 8)));
      batch.set_i64(k, rng.range(0, xs[0]));
    }
    SCOPED_TRACE("seed " + std::to_string(seed));
    testlib::OnnxModel m;
    m.opset = 16;
    m.inputs = {{"x", x.type()}, {"rois", rois.type()}, {"batch", batch.type()}};
    m.nodes.push_back({"RoiAlign", {"x", "rois", "batch"}, {"y"},
                       {{"output_height", oh}, {"output_width", ow}, {"sampling_ratio", ratio}, {"spatial_scale", scale},
                        {"coordinate_transformation_mode", std::string(half_pixel ? "half_pixel" : "output_half_pixel")}}});
    m.outputs = {"y"};
    Tensor got = interp::run(testlib::import_model(m), {x, rois, batch})[0];
    Tensor want(TensorType{DType::F32, {r, xs[1], oh, ow}});
    double offset = half_pixel ? 0.5 : 0;
    for (int64_t k = 0; k < r; ++k) {
      double sw = rois.get_f64(k * 4) * scale - offset, sh = rois.get_f64(k * 4 + 1) * scale - offset;
      double rw = rois.get_f64(k * 4 + 2) * scale - offset - sw, rh = rois.get_f64(k * 4 + 3) * scale - offset - sh;
      if (!half_pixel) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
      double bh = rh / double(oh), bw = rw / double(ow);
      for (int64_t c = 0; c < xs[1]; ++c)
        for (int64_t ph = 0; ph < oh; ++ph)
          for (int64_t pw = 0; pw < ow; ++pw) {
            double sum = 0;
            for (int64_t iy = 0; iy < ratio; ++iy)
              for (int64_t ix = 0; ix < ratio; ++ix)
                sum += bilinear(x, batch.get_i64(k), c, sh + double(ph) * bh + (double(iy) + 0.5) * bh / double(ratio),
                                sw + double(pw) * bw + (double(ix) + 0.5) * bw / double(ratio));
            want.set_f64(((k * xs[1] + c) * oh + ph) * ow + pw, sum / double(ratio * ratio));
          }
    }
    EXPECT_EQ(testlib::compare_tensors(got, want, 1e-4, 1e-4), "") << ir::dims_str(xs) << " ratio " << ratio;
  }
}

}  // namespace
}  // namespace orchid
