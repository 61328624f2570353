// Differential tests of Resize and Upsample (rules_resize.cpp) against a port of ONNX's
// reference implementation (onnx/backend/test/case/node/resize.py: interpolate_nd with the
// nearest, linear and cubic coefficient functions, edge-padded neighbourhoods, exclude_outside)
// over seeded random
// shapes, scales or sizes, modes and opset versions; and every error message of the rule.
#include "layout_test_util.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace orchid::layout_test {
namespace {

using testlib::import_model;

struct RefMode {
  bool linear = false;
  std::string coord = "half_pixel";
  std::string nearest = "round_prefer_floor";
  bool cubic = false;
  double a = -0.75;
  bool exclude_outside = false;
  std::vector<double> roi;  // tf_crop_and_resize: starts, then ends
  double extrapolation = 0;
};

std::vector<double> coeffs(const RefMode& m, double ratio) {
  if (m.cubic) {
    double a = m.a, r = ratio, q = 1 - ratio;
    return {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a, ((a + 2) * r - (a + 3)) * r * r + 1,
            ((a + 2) * q - (a + 3)) * q * q + 1, ((a * (q + 1) - 5 * a) * (q + 1) + 8 * a) * (q + 1) - 4 * a};
  }
  if (m.linear) return {1 - ratio, ratio};
  if (ratio == std::floor(ratio)) return {0, 1};
  if (m.nearest == "round_prefer_floor") return {double(ratio <= 0.5), double(ratio > 0.5)};
  if (m.nearest == "round_prefer_ceil") return {double(ratio < 0.5), double(ratio >= 0.5)};
  if (m.nearest == "floor") return {1, 0};
  return {0, 1};
}

// interpolate_1d_with_x of the reference.
double interpolate_1d(const std::vector<double>& data, double scale, double x, const RefMode& m, size_t axis) {
  auto in = int64_t(data.size());
  double width = scale * double(in), x_ori = 0;
  if (m.coord == "tf_crop_and_resize") {
    double start = m.roi[axis], end = m.roi[axis + m.roi.size() / 2];
    x_ori = width == 1 ? (end + start) * double(in - 1) / 2
                       : x * (end - start) * double(in - 1) / (width - 1) + start * double(in - 1);
    if (x_ori < 0 || x_ori > double(in - 1)) return m.extrapolation;
  } else if (m.coord == "align_corners")
    x_ori = width == 1 ? 0 : x * double(in - 1) / (width - 1);
  else if (m.coord == "asymmetric")
    x_ori = x / scale;
  else if (m.coord == "pytorch_half_pixel")
    x_ori = width == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  else if (m.coord == "tf_half_pixel_for_nn")
    x_ori = (x + 0.5) / scale;
  else
    x_ori = (x + 0.5) / scale - 0.5;
  double ratio = x_ori == std::floor(x_ori) ? 1 : x_ori - std::floor(x_ori);
  std::vector<double> c = coeffs(m, ratio);
  auto n = int64_t(c.size());
  // get_neighbor: the n nearest indices of the edge-padded data (pad n), ties to the smaller.
  std::vector<int64_t> idx;
  for (int64_t k = 0; k < in + 2 * n; ++k) idx.push_back(k);
  double xp = x_ori + double(n);
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) {
    return std::fabs(xp - double(a)) < std::fabs(xp - double(b));
  });
  std::sort(idx.begin(), idx.begin() + n);
  if (m.exclude_outside) {
    double sum = 0;
    for (int64_t k = 0; k < n; ++k) {
      if (idx[size_t(k)] - n < 0 || idx[size_t(k)] - n >= in) c[size_t(k)] = 0;
      sum += c[size_t(k)];
    }
    for (double& v : c) v /= sum;
  }
  double v = 0;
  for (int64_t k = 0; k < n; ++k)
    v += c[size_t(k)] * data[size_t(std::clamp<int64_t>(idx[size_t(k)] - n, 0, in - 1))];
  return v;
}

// interpolate_nd_with_x: axis `axis` interpolates the values interpolated over later axes.
double interpolate_nd(const Tensor& x, const std::vector<double>& scales, const Dims& at,
                      Dims& prefix, const RefMode& m) {
  size_t axis = prefix.size();
  std::vector<double> vals;
  for (int64_t i = 0; i < x.shape()[axis]; ++i) {
    prefix.push_back(i);
    vals.push_back(axis + 1 == x.shape().size()
                       ? x.get_as_double(testlib::flat_offset(x.shape(), prefix))
                       : interpolate_nd(x, scales, at, prefix, m));
    prefix.pop_back();
  }
  return interpolate_1d(vals, scales[axis], double(at[axis]), m, axis);
}

Tensor reference(const Tensor& x, const std::vector<double>& scales, const Dims& out,
                 const RefMode& m) {
  Tensor want(TensorType{x.dtype(), out});
  Dims idx(out.size(), 0), prefix;
  for (int64_t i = 0; i < want.numel(); ++i, testlib::next_index(out, idx)) {
    double v = interpolate_nd(x, scales, idx, prefix, m);
    if (ir::is_float(x.dtype()))
      want.set_f64(i, v);
    else
      want.set_i64(i, int64_t(v));
  }
  return want;
}

Tensor f32s(const std::vector<double>& v) {
  Tensor t(TensorType{DType::F32, {int64_t(v.size())}});
  for (size_t k = 0; k < v.size(); ++k) t.set_f64(int64_t(k), v[k]);
  return t;
}

float as_f32(double v) { return static_cast<float>(v); }

TEST(ResizeFission, MatchesTheReference) {
  static const char* kCoords[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                  "tf_half_pixel_for_nn"};
  static const char* kNearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  static const double kScales[] = {0.5, 0.6, 0.8, 1.0, 1.5, 2.0, 2.5, 3.0, 1.7};
  for (uint64_t seed = 1; seed <= 80; ++seed) {
    SCOPED_TRACE(seed_trace("Resize", seed));
    Rng rng(seed);
    int64_t opset = seed % 3 == 0 ? 11 : 13;
    RefMode m{rng.coin(0.4), kCoords[rng.range(0, opset == 11 ? 5 : 4)], kNearest[rng.range(0, 4)]};
    m.cubic = !m.linear && rng.coin(0.4);
    if (m.cubic) {
      m.linear = true;  // interpolates floats as linear does
      if (rng.coin()) m.a = -0.5;
      m.exclude_outside = rng.coin();
    }
    TensorType t{m.linear ? (rng.coin(0.7) ? DType::F32 : DType::F64) : random_dtype(rng),
                 random_shape(rng, 1, 4, 4)};
    bool crop = m.linear && opset == 13 && rng.coin(0.3);
    if (crop) {
      m.coord = "tf_crop_and_resize";
      m.extrapolation = 10;
      std::vector<double> ends;
      for (size_t d = 0; d < t.shape.size(); ++d) {
        m.roi.push_back(double(as_f32(rng.uniform(-0.3, 0.4))));
        ends.push_back(double(as_f32(rng.uniform(0.6, 1.3))));
      }
      m.roi.insert(m.roi.end(), ends.begin(), ends.end());
    }
    bool by_sizes = rng.coin(0.5);
    std::vector<double> scales;
    Dims out;
    std::vector<int64_t> sizes;
    for (int64_t n : t.shape) {
      if (by_sizes) {
        sizes.push_back(rng.coin(0.3) ? n : rng.range(1, 9));
        out.push_back(sizes.back());
        scales.push_back(double(sizes.back()) / double(n));
      } else {
        double s = rng.coin(0.3) ? 1.0 : double(as_f32(kScales[rng.range(0, 9)]));
        if (double(n) * s < 1) s = 1;
        scales.push_back(s);
        out.push_back(int64_t(std::floor(s * double(n))));
      }
    }
    Tensor empty_f(TensorType{DType::F32, {0}});
    std::vector<Arg> args = {t, crop ? Arg{f32s(m.roi)} : opset == 11 ? Arg{empty_f} : Arg{}};
    args.push_back(by_sizes ? (opset == 11 ? Arg{empty_f} : Arg{}) : Arg{f32s(scales)});
    if (by_sizes) args.push_back(i64s(sizes));
    Attrs attrs = {{"mode", std::string(m.cubic ? "cubic" : m.linear ? "linear" : "nearest")},
                   {"coordinate_transformation_mode", m.coord}};
    if (!m.linear) attrs.push_back({"nearest_mode", m.nearest});
    if (m.cubic) {
      attrs.push_back({"cubic_coeff_a", m.a});
      if (m.exclude_outside) attrs.push_back({"exclude_outside", int64_t{1}});
    }
    if (crop) attrs.push_back({"extrapolation_value", m.extrapolation});
    Tensor x = testlib::random_tensor(t, rng, -9, 9);
    Tensor got = run_model(node_model("Resize", args, 1, attrs, opset), {x})[0];
    EXPECT_EQ(testlib::compare_tensors(got, reference(x, scales, out, m), 1e-5, 1e-5), "")
        << ir::type_str(t) << " -> " << ir::dims_str(out) << " mode " << (m.cubic ? "cubic" : m.linear ? "linear" : "nearest")
        << " " << m.coord << " a " << m.a << " exclude_outside " << m.exclude_outside << " by sizes " << by_sizes;
  }
}

TEST(ResizeFission, LegacyVersionsRepeatAndInterpolateAsymmetrically) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE(seed_trace("Resize-10/Upsample", seed));
    Rng rng(seed);
    RefMode m{seed % 2 == 0, "asymmetric", "floor"};
    TensorType t{m.linear ? DType::F32 : random_dtype(rng), random_shape(rng, 1, 4, 3)};
    std::vector<double> scales;
    Dims out;
    for (int64_t n : t.shape) {
      scales.push_back(m.linear && rng.coin(0.5) ? 1.5 : double(rng.range(1, 4)));
      out.push_back(int64_t(std::floor(scales.back() * double(n))));
    }
    Attrs attrs = {{"mode", std::string(m.linear ? "linear" : "nearest")}};
    testlib::OnnxModel model;
    if (seed % 3 == 0) {  // Upsample-7: scales is an attribute
      attrs.push_back({"scales", scales});
      model = node_model("Upsample", {t}, 1, attrs, 7);
    } else {
      model = node_model(seed % 3 == 1 ? "Upsample" : "Resize", {t, f32s(scales)}, 1, attrs,
                         seed % 3 == 1 ? 9 : 10);
    }
    Tensor x = testlib::random_tensor(t, rng, -9, 9);
    Tensor got = run_model(model, {x})[0];
    EXPECT_EQ(testlib::compare_tensors(got, reference(x, scales, out, m), 1e-5, 1e-5), "");
  }
}

TEST(ResizeFission, IntegerScalesGiveAffineIndices) {
  TensorType t{DType::F32, {1, 3, 4, 5}};
  ir::Graph g =
      import_model(node_model("Resize", {t, Arg{}, f32s({1, 1, 2, 3})}, 1,
                              {{"coordinate_transformation_mode", std::string("asymmetric")},
                               {"nearest_mode", std::string("floor")}}));
  ASSERT_EQ(g.num_nodes(), 1);
  EXPECT_EQ(g.nodes()[0].op, ir::PrimOp::Layout);
  EXPECT_EQ(g.nodes()[0].inputs.size(), 1u);  // floordiv indices, no index tables
  ir::Graph h = import_model(
      node_model("Resize", {t, Arg{}, f32s({1, 1, 2, 2})}, 1, {{"mode", std::string("linear")}}));
  EXPECT_EQ(count_ops(h, ir::PrimOp::Layout), 2);  // one neighbour gather per resized axis
  EXPECT_EQ(count_ops(h, ir::PrimOp::Elementwise), 2);
  for (const auto& p : h.nodes())  // clamped floordiv indices, no index tables
    if (p.op == ir::PrimOp::Layout) EXPECT_EQ(p.inputs.size(), 1u);
}

TEST(ResizeFission, ExcludeOutsideChangesNothingForLinearAndInsideNearest) {
  TensorType t{DType::F32, {2, 5}};
  Rng rng(4);
  Tensor x = testlib::random_tensor(t, rng);
  for (const char* mode : {"linear", "nearest"}) {
    SCOPED_TRACE(mode);
    Attrs a = {{"mode", std::string(mode)}};
    Tensor plain = run_model(node_model("Resize", {t, Arg{}, f32s({1, 2})}, 1, a), {x})[0];
    a.push_back({"exclude_outside", int64_t{1}});
    Tensor excl = run_model(node_model("Resize", {t, Arg{}, f32s({1, 2})}, 1, a), {x})[0];
    EXPECT_EQ(testlib::compare_tensors(excl, plain, 0, 0), "");
  }
}

TEST(ResizeFission, ScalesThatEmptyADimGiveAnEmptyTensor) {
  TensorType t{DType::F32, {2, 4}};
  for (const char* mode : {"linear", "nearest"}) {
    SCOPED_TRACE(mode);
    testlib::OnnxModel m =
        node_model("Resize", {t, Arg{}, f32s({1, 0.1})}, 1, {{"mode", std::string(mode)}});
    EXPECT_EQ(run_model(m, {Tensor(t)})[0].type(), (TensorType{DType::F32, {2, 0}}));
  }
}

TEST(ResizeFission, Errors) {
  TensorType t{DType::F32, {2, 4}}, i{DType::I32, {2, 4}};
  Tensor none(TensorType{DType::F32, {0}});
  auto resize = [&](std::vector<Arg> args, Attrs attrs, int64_t opset = 13) {
    args.insert(args.begin(), t);
    return node_model("Resize", args, 1, attrs, opset);
  };
  Arg s2 = f32s({1, 2});
  expect_unsupported(node_model("Resize", {i, Arg{}, s2}, 1, {{"mode", std::string("cubic")}}), "Resize",
                     "cubic interpolation of integer tensors (ONNX leaves the rounding unspecified)");
  expect_unsupported(
      resize({Arg{}, s2}, {{"coordinate_transformation_mode", std::string("tf_crop_and_resize")}}),
      "Resize", "tf_crop_and_resize with nearest interpolation");
  expect_error(resize({f32s({0, 1}), s2}, {{"coordinate_transformation_mode", std::string("tf_crop_and_resize")},
                                           {"mode", std::string("linear")}}),
               "Resize", "roi has 2 entries; tf_crop_and_resize needs 4 (a start and an end per dim)");
  expect_unsupported(resize({Arg{}, s2}, {{"coordinate_transformation_mode",
                                           std::string("tf_half_pixel_for_nn")}}),
                     "Resize", "coordinate_transformation_mode 'tf_half_pixel_for_nn'");
  expect_error(resize({Arg{}, s2}, {{"mode", std::string("area")}}), "Resize",
               "unknown mode 'area'");
  expect_error(resize({Arg{}, s2}, {{"nearest_mode", std::string("even")}}), "Resize",
               "unknown nearest_mode 'even'");
  expect_error(resize({Arg{}, f32s({2})}, {}), "Resize",
               "scales must have one entry per dim of [2,4]");
  expect_error(resize({Arg{}, Arg{}, i64s({3})}, {}), "Resize",
               "sizes must have one entry per dim of [2,4]");
  expect_error(resize({Arg{}, s2, i64s({2, 8})}, {}), "Resize",
               "needs exactly one of scales and sizes (non-empty)");
  expect_error(resize({Arg{}, Arg{}, i64s({2, 0})}, {}), "Resize", "sizes [2,0] must be positive");
  expect_error(resize({Arg{}, f32s({1, -2})}, {}), "Resize", "scale -2 must be positive and give a finite size");
  expect_unsupported(node_model("Resize", {TensorType{DType::F32, {0, 4}}, Arg{}, s2}), "Resize",
                     "resizing an empty tensor");
  expect_unsupported(
      node_model("Resize", {i, Arg{}, s2}, 1, {{"mode", std::string("linear")}}), "Resize",
      "linear interpolation of integer tensors (ONNX leaves the rounding unspecified)");
  Attrs outside = {{"exclude_outside", int64_t{1}},
                   {"nearest_mode", std::string("ceil")},
                   {"coordinate_transformation_mode", std::string("asymmetric")}};  // 3.5 -> 4
  expect_unsupported(resize({Arg{}, s2}, outside), "Resize",
                     "exclude_outside=1 where the nearest pixel lies outside");
  expect_unsupported(resize({f32s({1, 1.5})}, {}, 10), "Resize",
                     "nearest mode with the non-integer scale 1.500000 (ONNX leaves the rounding "
                     "of this version unspecified)");
  expect_unsupported(resize({f32s({1, 2})}, {{"mode", std::string("cubic")}}, 10), "Resize",
                     "mode 'cubic'");
  expect_unsupported(
      resize({Arg{}, TensorType{DType::F32, {2}}}, {}), "Resize",
      "input 2 ('x2') must be a constant (computable at compile time): shapes are static");
  expect_error(node_model("Upsample", {t}, 1, {}, 7), "Upsample", "attribute 'scales' is required");
}

}  // namespace
}  // namespace orchid::layout_test
