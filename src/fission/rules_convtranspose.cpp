// Fission of ONNX ConvTranspose into a conv primitive (a linear primitive, so later stages
// give it to the same library kernels as Conv):
//
//   Y[n, o, p..] = sum_{c, q..} X[n, g*C/G + c, i..] * W[g*C/G + c, o - g*M/G, q..]
//                  over p + pad_begin = i * stride + q * dilation,   g = o / (M/G)
//
// equals a stride-1 convolution, with the same dilation and groups, of
//  - Xd, X with stride - 1 zeros inserted between elements and shifted by
//    span - 1 - pad_begin (span = (kernel - 1) * dilation + 1): a layout primitive,
//    Xd[n, c, p] = X[n, c, (p - off) / stride] where p - off >= 0 is a multiple of stride
//    below in * stride, else 0;
//  - Wt, W with its first two dims regrouped to [M, C/G] and its kernel flipped:
//    Wt[o, c, q..] = W[g*C/G + c, o - g*M/G, kernel - 1 - q..] (a layout primitive).
// Xd spans out + span - 1 positions, so the convolution gives exactly `out`. The optional bias
// is added by an elementwise primitive, as for Conv.
//
// Output size and padding, per spatial dim (ONNX ConvTranspose-11; the test data of onnx 1.12
// agrees): with explicit pads, out = stride * (in - 1) + output_padding + span - pad_begin -
// pad_end. With output_shape (or auto_pad SAME_*: out = in * stride), total = stride * (in - 1)
// + output_padding + span - out is split with floor division: SAME_UPPER puts total // 2 at the
// beginning, otherwise the beginning gets total - total // 2. ConvTranspose-1 states the split
// the other way round (and SAME's output size as the input's), so there auto_pad SAME_* is
// refused and output_shape follows its text.
#include "fission/rules.h"
#include "fission/rules_layout2_common.h"
#include "fission/rules_layout_common.h"
#include "support/error.h"

namespace orchid::fission {

namespace {

using ir::Dims;
using ir::DType;
using ir::ExprOp;

struct TransposeGeometry {
  Dims in, kernel, strides, dilations, output_padding;
  Dims pads_begin, pads_end, out;
  int64_t span(size_t d) const { return (kernel[d] - 1) * dilations[d] + 1; }
  // The length along d of Xd, the input with zeros inserted.
  int64_t dilated(size_t d) const { return out[d] + span(d) - 1; }
  // Where X's element 0 lands in Xd.
  int64_t offset(size_t d) const { return span(d) - 1 - pads_begin[d]; }
};

int64_t floor_div2(int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

// Pads from a given output size: total padding split as the version's text says.
void pads_from_output(const RuleContext& ctx, TransposeGeometry& g, const std::string& mode) {
  bool v11 = ctx.version() >= 11;
  for (size_t d = 0; d < g.in.size(); ++d) {
    int64_t total = g.strides[d] * (g.in[d] - 1) + g.output_padding[d] + g.span(d) - g.out[d];
    int64_t half = v11 ? floor_div2(total) : total / 2;
    bool small_begin = v11 ? mode == "SAME_UPPER" : mode != "SAME_UPPER";
    g.pads_begin[d] = small_begin ? half : total - half;
    g.pads_end[d] = total - g.pads_begin[d];
  }
}

// The output size and padding of the node (see the comment at the top).
void read_output(const RuleContext& ctx, TransposeGeometry& g) {
  size_t S = g.in.size();
  std::string mode = ctx.attr_string("auto_pad", "NOTSET");
  ORCHID_USER_CHECK(mode == "NOTSET" || mode == "VALID" || mode == "SAME_UPPER" ||
                    mode == "SAME_LOWER")
      << ctx.where() << "auto_pad '" << mode << "' is not NOTSET, VALID, SAME_UPPER or SAME_LOWER";
  bool same = mode == "SAME_UPPER" || mode == "SAME_LOWER";
  if (same && ctx.version() < 11)
    ctx.unsupported("auto_pad=" + mode +
                    " of ConvTranspose-1 (its text defines the output size "
                    "and the padding differently from version 11)");
  Dims pads = window_detail::spatial_ints(ctx, "pads", 2 * S, 0, 0);
  g.pads_begin.assign(pads.begin(), pads.begin() + static_cast<ptrdiff_t>(S));
  g.pads_end.assign(pads.begin() + static_cast<ptrdiff_t>(S), pads.end());
  if (ctx.has_attr("output_shape")) {
    g.out = window_detail::spatial_ints(ctx, "output_shape", S, 1, 1);
    pads_from_output(ctx, g, mode);
  } else if (same) {
    for (size_t d = 0; d < S; ++d) g.out.push_back(g.in[d] * g.strides[d]);
    pads_from_output(ctx, g, mode);
  } else {
    if (mode == "VALID") g.pads_begin = g.pads_end = Dims(S, 0);
    for (size_t d = 0; d < S; ++d)
      g.out.push_back(g.strides[d] * (g.in[d] - 1) + g.output_padding[d] + g.span(d) -
                      g.pads_begin[d] - g.pads_end[d]);
  }
  for (size_t d = 0; d < S; ++d)
    ORCHID_USER_CHECK(g.out[d] >= 1) << ctx.where() << "the output size " << ir::dims_str(g.out)
                                     << " is not positive along spatial dim " << d;
}

TransposeGeometry read_geometry(const RuleContext& ctx, const Dims& xs, const Dims& ws) {
  size_t S = xs.size() - 2;
  TransposeGeometry g;
  g.in.assign(xs.begin() + 2, xs.end());
  g.kernel.assign(ws.begin() + 2, ws.end());
  for (int64_t k : g.kernel)
    ORCHID_USER_CHECK(k >= 1) << ctx.where() << "the weight's spatial shape "
                              << ir::dims_str(g.kernel) << " has an empty dim";
  ORCHID_USER_CHECK(!ctx.has_attr("kernel_shape") || ctx.attr_ints("kernel_shape", {}) == g.kernel)
      << ctx.where() << "kernel_shape " << ir::dims_str(ctx.attr_ints("kernel_shape", {}))
      << " differs from the weight's spatial shape " << ir::dims_str(g.kernel);
  g.strides = window_detail::spatial_ints(ctx, "strides", S, 1, 1);
  g.dilations = window_detail::spatial_ints(ctx, "dilations", S, 1, 1);
  g.output_padding = window_detail::spatial_ints(ctx, "output_padding", S, 0, 0);
  read_output(ctx, g);
  return g;
}

// Xd: X with zeros inserted (stride) and shifted (padding); X itself when that is the identity.
ValueId dilate_input(RuleContext& ctx, const TransposeGeometry& g) {
  const Dims xs = ctx.shape(0);
  Dims out = {xs[0], xs[1]};
  bool identity = true;
  for (size_t d = 0; d < g.in.size(); ++d) {
    out.push_back(g.dilated(d));
    identity &= g.strides[d] == 1 && g.offset(d) == 0 && out.back() == g.in[d];
  }
  if (identity) return ctx.input(0);
  PrimBuilder b(ctx.graph());
  std::vector<Expr> i = domain_vars(out.size()), idx = {i[0], i[1]}, pred;
  for (size_t d = 0; d < g.in.size(); ++d) {
    int64_t s = g.strides[d];
    Expr t = layout::affine(i[d + 2], 1, -g.offset(d));  // p - off
    if (g.offset(d) > 0) pred.push_back(ir::binary(ExprOp::Ge, t, ir::const_i64(0)));
    if (g.dilated(d) - 1 - g.offset(d) >= g.in[d] * s)
      pred.push_back(ir::binary(ExprOp::Lt, t, ir::const_i64(g.in[d] * s)));
    if (s > 1) pred.push_back(ir::binary(ExprOp::Eq, ir::mod(t, s), ir::const_i64(0)));
    idx.push_back(s > 1 ? ir::floordiv(t, s) : t);
  }
  Expr body =
      b.load_pred(ctx.input(0), idx, layout2::all_of(pred), ir::Scalar::of(ctx.dtype(0), 0));
  ir::Primitive p = b.make(ir::PrimOp::Layout);
  p.domain = out;
  p.bodies = {body};
  return ctx.emit1(std::move(p), {ctx.dtype(0), out}, "dilated");
}

// Wt[o, c, q..] = W[g*C/G + c, o - g*M/G, kernel - 1 - q..], g = o / (M/G).
ValueId flip_weight(RuleContext& ctx, int64_t groups) {
  const Dims ws = ctx.shape(1);
  int64_t cg = ws[0] / groups, mg = ws[1];
  Dims out = {mg * groups, cg};
  out.insert(out.end(), ws.begin() + 2, ws.end());
  return remap(
      ctx, ctx.input(1), out,
      [&](const std::vector<Expr>& i) {
        Expr c = groups == 1 ? i[1] : ir::floordiv(i[0], mg) * cg + i[1];
        std::vector<Expr> idx = {c, groups == 1 ? i[0] : ir::mod(i[0], mg)};
        for (size_t d = 2; d < ws.size(); ++d) idx.push_back(ir::const_i64(ws[d] - 1) - i[d]);
        return idx;
      },
      "flipped");
}

}  // namespace

std::vector<ValueId> rule_ConvTranspose(RuleContext& ctx) {
  for (size_t k = 1; k <= 2 && k < ctx.num_inputs(); ++k)
    ORCHID_USER_CHECK(!ctx.has_input(k) || ctx.dtype(k) == ctx.dtype(0))
        << ctx.where() << "inputs 0 and " << k << " have different dtypes";
  require_dtype(ctx, 0, {DType::F16, DType::F32, DType::F64}, layout2::op_version(ctx));
  const Dims xs = ctx.shape(0), ws = ctx.shape(1);
  int64_t groups = ctx.attr_int("group", 1);
  ORCHID_USER_CHECK(xs.size() >= 3 && ws.size() == xs.size() && groups >= 1 && xs[1] == ws[0] &&
                    ws[0] % groups == 0)
      << ctx.where() << "X " << ir::dims_str(xs) << " and W " << ir::dims_str(ws)
      << " need one rank >= 3, W dim 0 equal to X's channels and divisible by group=" << groups;
  TransposeGeometry g = read_geometry(ctx, xs, ws);
  ir::Primitive p;
  p.op = ir::PrimOp::Conv;
  p.inputs = {dilate_input(ctx, g), flip_weight(ctx, groups)};
  size_t S = g.in.size();
  p.attrs = ir::ConvAttrs{Dims(S, 1), g.dilations, Dims(S, 0), Dims(S, 0), groups};
  Dims out = {xs[0], ws[1] * groups};
  out.insert(out.end(), g.out.begin(), g.out.end());
  ir::TensorType conv_out =
      ir::conv_result_type(ctx.graph().type(p.inputs[0]), ctx.graph().type(p.inputs[1]),
                           std::get<ir::ConvAttrs>(p.attrs));
  ORCHID_CHECK(conv_out.shape == out) << "ConvTranspose as conv gives " << ir::type_str(conv_out)
                                      << ", expected " << ir::dims_str(out);
  ValueId y = ctx.emit1(std::move(p), {ctx.dtype(0), out}, ctx.has_input(2) ? "conv" : "");
  if (!ctx.has_input(2)) return {y};
  ORCHID_USER_CHECK(ctx.shape(2) == Dims{out[1]})
      << ctx.where() << "bias B of shape " << ir::dims_str(ctx.shape(2)) << " should be [" << out[1]
      << "]";
  Dims bias_shape(xs.size() - 1, 1);  // [M, 1, .., 1]: aligned with dim 1 of the output
  bias_shape[0] = out[1];
  ValueId bias = view(ctx, ctx.input(2), bias_shape, "bias");
  return {
      ew_map(ctx, {y, bias}, ctx.dtype(0), [](const std::vector<Expr>& v) { return v[0] + v[1]; })};
}

}  // namespace orchid::fission
