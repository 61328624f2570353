// Differential tests of ConvTranspose (rules_convtranspose.cpp) over seeded random geometry —
// groups, strides, dilations, explicit pads, output_padding, output_shape, auto_pad — and
// opset versions, against a naive reference that scatters every input element's products
// into the output as ONNX's text defines it; and every error message of the rule.
#include <algorithm>

#include "layout_test_util.h"

namespace orchid::layout_test {
namespace {

struct Geometry {
  size_t S = 0;
  int64_t groups = 1;
  Dims xs, ws, strides, dilations, output_padding, pads_begin, pads_end, out;
};

int64_t span(const Geometry& g, size_t d) { return (g.ws[d + 2] - 1) * g.dilations[d] + 1; }

// Pads from an output size: total = stride * (in - 1) + output_padding + span - out.
// ConvTranspose-11: SAME_UPPER begins with floor(total / 2), the others end with it;
// ConvTranspose-1 (NOTSET): begins with total / 2.
void pads_from_output(Geometry& g, bool same_upper, bool v1) {
  for (size_t d = 0; d < g.S; ++d) {
    int64_t total = g.strides[d] * (g.xs[d + 2] - 1) + g.output_padding[d] + span(g, d) - g.out[d];
    int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
    if (v1)
      g.pads_begin[d] = total / 2;
    else
      g.pads_begin[d] = same_upper ? half : total - half;
    g.pads_end[d] = total - g.pads_begin[d];
  }
}

// Y[n, o, p] = B[o] + sum X[n, c, i] * W[c, o - g*M/G, q] over p + pad_begin = i * s + q * d.
Tensor reference(const Geometry& g, const Tensor& x, const Tensor& w, const Tensor* b) {
  int64_t cg = g.xs[1] / g.groups, mg = g.ws[1];
  Dims ys = {g.xs[0], mg * g.groups};
  ys.insert(ys.end(), g.out.begin(), g.out.end());
  std::vector<double> acc(static_cast<size_t>(ir::numel(ys)), 0);
  Dims xi(g.xs.size(), 0);
  for (int64_t fx = 0; fx < x.numel(); ++fx, testlib::next_index(g.xs, xi)) {
    int64_t grp = xi[1] / cg;
    Dims wi(g.ws.size(), 0);
    for (int64_t fw = 0; fw < w.numel(); ++fw, testlib::next_index(g.ws, wi)) {
      if (wi[0] != xi[1]) continue;
      Dims yi = {xi[0], grp * mg + wi[1]};
      bool inside = true;
      for (size_t d = 0; d < g.S; ++d) {
        int64_t p = xi[d + 2] * g.strides[d] + wi[d + 2] * g.dilations[d] - g.pads_begin[d];
        inside &= p >= 0 && p < g.out[d];
        yi.push_back(p);
      }
      if (inside)
        acc[static_cast<size_t>(testlib::flat_offset(ys, yi))] += x.get_f64(fx) * w.get_f64(fw);
    }
  }
  Tensor y(TensorType{x.dtype(), ys});
  Dims yi(ys.size(), 0);
  for (int64_t f = 0; f < y.numel(); ++f, testlib::next_index(ys, yi))
    y.set_f64(f, acc[static_cast<size_t>(f)] + (b ? b->get_f64(yi[1]) : 0));
  return y;
}

// A random geometry and the attributes that express it; `mode` 0: explicit pads, 1:
// output_shape, 2: SAME_UPPER, 3: SAME_LOWER, 4: VALID.
Geometry random_geometry(Rng& rng, int mode, bool v1, Attrs& attrs) {
  Geometry g;
  g.S = static_cast<size_t>(rng.range(1, 4));
  g.groups = rng.range(1, 3);
  g.xs = {rng.range(1, 3), g.groups * rng.range(1, 3)};
  g.ws = {g.xs[1], rng.range(1, 3)};
  for (size_t d = 0; d < g.S; ++d) {
    g.xs.push_back(rng.range(1, g.S == 3 ? 3 : 5));
    g.ws.push_back(rng.range(1, 4));
    g.strides.push_back(rng.range(1, 4));
    g.dilations.push_back(rng.range(1, 3));
    g.output_padding.push_back(mode == 0 || mode == 1 ? rng.range(0, g.strides.back()) : 0);
    int64_t natural = g.strides[d] * (g.xs.back() - 1) + g.output_padding[d] + span(g, d);
    int64_t pb = mode == 0 ? rng.range(0, 3) : 0, pe = mode == 0 ? rng.range(0, 3) : 0;
    while (natural - pb - pe < 1) (pb > pe ? pb : pe) -= 1;
    g.pads_begin.push_back(pb);
    g.pads_end.push_back(pe);
    int64_t out = natural - pb - pe;
    if (mode == 1) out = std::max<int64_t>(1, natural + rng.range(-3, 3));
    if (mode == 2 || mode == 3) out = g.xs.back() * g.strides[d];
    g.out.push_back(out);
  }
  if (mode == 1 || mode == 2 || mode == 3) pads_from_output(g, mode == 2, v1);
  attrs.push_back({"strides", g.strides});
  if (rng.coin()) attrs.push_back({"kernel_shape", Dims(g.ws.begin() + 2, g.ws.end())});
  if (g.groups != 1 || rng.coin()) attrs.push_back({"group", g.groups});
  attrs.push_back({"dilations", g.dilations});
  if (mode <= 1) attrs.push_back({"output_padding", g.output_padding});
  if (mode == 0) {
    Dims pads = g.pads_begin;
    pads.insert(pads.end(), g.pads_end.begin(), g.pads_end.end());
    attrs.push_back({"pads", pads});
  }
  if (mode == 1) attrs.push_back({"output_shape", g.out});
  static const char* kModes[] = {"NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"};
  if (mode >= 2 || rng.coin(0.2)) attrs.push_back({"auto_pad", std::string(kModes[mode])});
  return g;
}

TEST(CoverageConvTranspose, MatchesReference) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE(seed_trace("ConvTranspose", seed));
    Rng rng(seed);
    int mode = static_cast<int>(seed % 5);
    int64_t opset = mode <= 1 && seed % 3 == 0 ? 9 : 13;
    Attrs attrs;
    Geometry g = random_geometry(rng, mode, opset < 11, attrs);
    DType t = seed % 4 == 0 ? DType::F64 : DType::F32;
    Tensor x = random_data({t, g.xs}, rng), w = random_data({t, g.ws}, rng);
    Tensor b = random_data({t, {g.ws[1] * g.groups}}, rng);
    bool bias = rng.coin();
    bool const_w = rng.coin();
    std::vector<Arg> args = {x.type(), const_w ? Arg{w} : Arg{w.type()}};
    std::vector<Tensor> ins = {x};
    if (!const_w) ins.push_back(w);
    if (bias) args.push_back(b);
    Tensor want = reference(g, x, w, bias ? &b : nullptr);
    std::vector<Tensor> got = run_model(node_model("ConvTranspose", args, 1, attrs, opset), ins);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(testlib::compare_tensors(got[0], want), "") << "mode " << mode;
  }
}

TEST(CoverageConvTranspose, ZeroInsertionIsSkippedForUnitStrideWithoutPadding) {
  // stride 1 and pads = span - 1 (a "same" full correlation): Xd is X itself.
  TensorType x{DType::F32, {1, 1, 4}}, w{DType::F32, {1, 1, 3}};
  ir::Graph g =
      testlib::import_model(node_model("ConvTranspose", {x, w}, 1, {{"pads", Dims{2, 2}}}));
  EXPECT_EQ(count_ops(g, ir::PrimOp::Layout), 1);  // only the flipped weight
  EXPECT_EQ(count_ops(g, ir::PrimOp::Conv), 1);
}

TEST(CoverageConvTranspose, Errors) {
  TensorType x{DType::F32, {1, 2, 3}}, w{DType::F32, {2, 1, 2}};
  auto model = [&](Attrs a, int64_t opset = 13) {
    return node_model("ConvTranspose", {x, w}, 1, std::move(a), opset);
  };
  expect_error(node_model("ConvTranspose", {x, TensorType{DType::F64, {2, 1, 2}}}), "ConvTranspose",
               "inputs 0 and 1 have different dtypes");
  expect_error(
      node_model("ConvTranspose", {x, TensorType{DType::F32, {3, 1, 2}}}), "ConvTranspose",
      "X [1,2,3] and W [3,1,2] need one rank >= 3, W dim 0 equal to X's channels and divisible by "
      "group=1");
  expect_error(
      model({{"group", int64_t{3}}}), "ConvTranspose",
      "X [1,2,3] and W [2,1,2] need one rank >= 3, W dim 0 equal to X's channels and divisible by "
      "group=3");
  expect_error(model({{"kernel_shape", Dims{3}}}), "ConvTranspose",
               "kernel_shape [3] differs from the weight's spatial shape [2]");
  expect_error(model({{"auto_pad", std::string("SAME")}}), "ConvTranspose",
               "auto_pad 'SAME' is not NOTSET, VALID, SAME_UPPER or SAME_LOWER");
  expect_error(model({{"pads", Dims{3, 3}}}), "ConvTranspose",
               "the output size [-2] is not positive along spatial dim 0");
  expect_error(model({{"strides", Dims{1, 1}}}), "ConvTranspose",
               "attribute 'strides' has 2 entries, expected 1");
  expect_unsupported(
      model({{"auto_pad", std::string("SAME_UPPER")}}, 9), "ConvTranspose",
      "auto_pad=SAME_UPPER of ConvTranspose-1 (its text defines the output size and the "
      "padding differently from version 11)");
  expect_error(node_model("ConvTranspose", {x, w, TensorType{DType::F32, {2}}}), "ConvTranspose",
               "bias B of shape [2] should be [1]");
  expect_error(node_model("ConvTranspose",
                          {TensorType{DType::BF16, {1, 2, 3}}, TensorType{DType::BF16, {2, 1, 2}}}),
               "ConvTranspose", "input 0 has dtype bf16; ConvTranspose-11 allows f16, f32, f64");
  expect_error(node_model("ConvTranspose",
                          {TensorType{DType::I32, {1, 2, 3}}, TensorType{DType::I32, {2, 1, 2}}}),
               "ConvTranspose", "not supported: input 0 of dtype i32 (supported: float)");
}

}  // namespace
}  // namespace orchid::layout_test
