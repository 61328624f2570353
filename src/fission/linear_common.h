// Helpers shared by the linear and pooling rules (rules_linear.cpp, rules_pool.cpp,
// rules_norm2.cpp's LpPool):
//  - the geometry of a sliding window over the spatial dims of an input [N, C, s0, s1, ..]
//    (kernel, strides, dilations, explicit or automatic padding, output size) exactly as
//    ONNX shape inference (convPoolShapeInference, onnx 1.12) defines it for Conv, MaxPool
//    and AveragePool, and the index expressions of a reduction over such a window;
//  - the dtype constraints of an operator's schema version.
// Header-only so that it needs no build-file entry; a candidate for builders.h.
#pragma once

#include <algorithm>
#include <initializer_list>
#include <string>

#include "fission/rule_context.h"
#include "support/error.h"

namespace orchid::fission {

// UserError unless input k's dtype is one the operator's schema allows (`op`: "MaxPool-8").
inline void require_dtype(const RuleContext& ctx, size_t k, std::initializer_list<ir::DType> allowed,
                          const std::string& op) {
  ir::DType t = ctx.dtype(k);
  if (std::find(allowed.begin(), allowed.end(), t) != allowed.end()) return;
  std::string names;
  for (ir::DType a : allowed) names += (names.empty() ? "" : ", ") + std::string(ir::dtype_name(a));
  ORCHID_USER_ERROR() << ctx.where() << "input " << k << " has dtype " << ir::dtype_name(t) << "; "
                      << op << " allows " << names;
}

// UserError when attribute `name` is present on a version older than the one introducing it.
inline void require_attr_since(const RuleContext& ctx, const std::string& name, int64_t since) {
  ORCHID_USER_CHECK(!ctx.has_attr(name) || ctx.version() >= since)
      << ctx.where() << "attribute '" << name << "' is not defined before version " << since;
}

// A window sliding over the spatial dims: output point p of spatial dim d reads the input
// positions p * strides[d] - pads_begin[d] + q * dilations[d] for q in [0, kernel[d]).
struct WindowGeometry {
  ir::Dims in;  // spatial input sizes
  ir::Dims kernel, strides, dilations, pads_begin, pads_end;
  ir::Dims out;  // spatial output sizes
  size_t rank() const { return in.size(); }
  int64_t span(size_t d) const { return (kernel[d] - 1) * dilations[d] + 1; }
  int64_t start(size_t d, int64_t p) const { return p * strides[d] - pads_begin[d]; }
};

struct WindowOptions {
  const ir::Dims* weight_kernel = nullptr;  // Conv: the spatial shape of W
  bool has_dilations = true;                // the operator defines `dilations`
  bool ceil_mode = false;
};

namespace window_detail {

// A per-spatial-dim int list attribute: `count` entries (default `dflt` each), all >= lo.
inline ir::Dims spatial_ints(const RuleContext& ctx, const std::string& name, size_t count,
                             int64_t dflt, int64_t lo) {
  if (!ctx.has_attr(name)) return ir::Dims(count, dflt);
  ir::Dims v = ctx.attr_ints(name, {});
  ORCHID_USER_CHECK(v.size() == count) << ctx.where() << "attribute '" << name << "' has "
                                       << v.size() << " entries, expected " << count;
  for (int64_t x : v)
    ORCHID_USER_CHECK(x >= lo) << ctx.where() << "attribute '" << name << "' = "
                               << ir::dims_str(v) << " needs values >= " << lo;
  return v;
}

// auto_pad SAME_UPPER / SAME_LOWER: the total padding of dim d as ONNX shape inference
// computes it (clamped at 0). Where the unclamped padding is so negative that onnxruntime
// (and ONNX's own test generator) would place the first window elsewhere, refuse.
inline void same_pads(const RuleContext& ctx, WindowGeometry& w, size_t d, bool upper) {
  int64_t s = w.strides[d], residual = s > 1 ? w.in[d] % s : 0;
  int64_t total = residual == 0 ? w.span(d) - s : w.span(d) - residual;
  if (total < 0) {
    int64_t runtime_head = upper ? total / 2 : (total + 1) / 2;  // truncating, as onnxruntime
    if (runtime_head != 0)
      ctx.unsupported("auto_pad=" + std::string(upper ? "SAME_UPPER" : "SAME_LOWER") +
                      " with a kernel span " + std::to_string(w.span(d)) + " much smaller than stride " +
                      std::to_string(s) + " (negative padding: ONNX and onnxruntime disagree)");
    total = 0;
  }
  int64_t small = total / 2, big = total - small;
  w.pads_begin[d] = upper ? small : big;
  w.pads_end[d] = upper ? big : small;
}

inline void read_pads(const RuleContext& ctx, WindowGeometry& w) {
  size_t S = w.rank();
  ir::Dims pads = spatial_ints(ctx, "pads", 2 * S, 0, 0);
  std::string mode = ctx.attr_string("auto_pad", "NOTSET");
  bool any_pad = std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; });
  ORCHID_USER_CHECK(mode == "NOTSET" || mode == "VALID" || mode == "SAME_UPPER" || mode == "SAME_LOWER")
      << ctx.where() << "auto_pad '" << mode << "' is not NOTSET, VALID, SAME_UPPER or SAME_LOWER";
  ORCHID_USER_CHECK(mode == "NOTSET" || !any_pad)
      << ctx.where() << "pads " << ir::dims_str(pads) << " cannot be used with auto_pad=" << mode;
  w.pads_begin.assign(pads.begin(), pads.begin() + static_cast<int64_t>(S));
  w.pads_end.assign(pads.begin() + static_cast<int64_t>(S), pads.end());
  if (mode == "SAME_UPPER" || mode == "SAME_LOWER")
    for (size_t d = 0; d < S; ++d) same_pads(ctx, w, d, mode == "SAME_UPPER");
}

}  // namespace window_detail

// Reads kernel_shape, strides, dilations, pads and auto_pad of the node for an input of
// shape x_shape [N, C, spatial..] and computes the output's spatial sizes:
//   out = 1 + floor-or-ceil((in + pad_begin + pad_end - span) / stride).
inline WindowGeometry read_window(const RuleContext& ctx, const ir::Dims& x_shape,
                                  const WindowOptions& opt) {
  ORCHID_USER_CHECK(x_shape.size() >= 3)
      << ctx.where() << "input of shape " << ir::dims_str(x_shape)
      << " needs rank >= 3 (batch, channels, spatial dims)";
  size_t S = x_shape.size() - 2;
  WindowGeometry w;
  w.in.assign(x_shape.begin() + 2, x_shape.end());
  if (opt.weight_kernel) {
    w.kernel = *opt.weight_kernel;
    for (int64_t k : w.kernel)
      ORCHID_USER_CHECK(k >= 1) << ctx.where() << "the weight's spatial shape " << ir::dims_str(w.kernel)
                                << " has an empty dim";
    ORCHID_USER_CHECK(!ctx.has_attr("kernel_shape") || ctx.attr_ints("kernel_shape", {}) == w.kernel)
        << ctx.where() << "kernel_shape " << ir::dims_str(ctx.attr_ints("kernel_shape", {}))
        << " differs from the weight's spatial shape " << ir::dims_str(w.kernel);
  } else {
    ORCHID_USER_CHECK(ctx.has_attr("kernel_shape")) << ctx.where() << "attribute 'kernel_shape' is required";
    w.kernel = window_detail::spatial_ints(ctx, "kernel_shape", S, 1, 1);
  }
  w.strides = window_detail::spatial_ints(ctx, "strides", S, 1, 1);
  w.dilations = opt.has_dilations ? window_detail::spatial_ints(ctx, "dilations", S, 1, 1) : ir::Dims(S, 1);
  window_detail::read_pads(ctx, w);
  for (size_t d = 0; d < S; ++d) {
    int64_t room = w.in[d] + w.pads_begin[d] + w.pads_end[d] - w.span(d);
    ORCHID_USER_CHECK(room >= 0) << ctx.where() << "the window (span " << w.span(d)
                                 << ") is larger than the padded input (" << room + w.span(d)
                                 << ") along spatial dim " << d;
    int64_t s = w.strides[d];
    w.out.push_back(1 + (opt.ceil_mode ? (room + s - 1) / s : room / s));
  }
  return w;
}

// The input position along spatial dim d read by a reduction over the window, whose output
// point is domain variable 2 + d and whose window offset is reduction variable r_d:
//   p * stride + r * dilation - pad_begin.
inline ir::Expr window_pos(const WindowGeometry& w, size_t d) {
  ir::Expr p = ir::dvar(static_cast<int32_t>(2 + d));
  ir::Expr r = ir::rvar(static_cast<int32_t>(d));
  ir::Expr pos = (w.strides[d] == 1 ? p : p * w.strides[d]) + (w.dilations[d] == 1 ? r : r * w.dilations[d]);
  return w.pads_begin[d] == 0 ? pos : pos - w.pads_begin[d];
}

// Where the window position lies inside the input; undefined when it always does.
inline ir::Expr window_inside(const WindowGeometry& w) {
  ir::Expr pred;
  auto add = [&pred](ir::Expr c) { pred = pred.defined() ? ir::binary(ir::ExprOp::And, pred, c) : c; };
  for (size_t d = 0; d < w.rank(); ++d) {
    ir::Expr pos = window_pos(w, d);
    int64_t last = w.start(d, w.out[d] - 1) + (w.kernel[d] - 1) * w.dilations[d];
    if (w.pads_begin[d] > 0) add(ir::binary(ir::ExprOp::Ge, pos, ir::const_i64(0)));
    if (last >= w.in[d]) add(ir::binary(ir::ExprOp::Lt, pos, ir::const_i64(w.in[d])));
  }
  return pred;
}

// conv(x, weights) with the Conv attributes of ctx's node (kernel_shape, strides, dilations,
// pads or auto_pad, group), checked against the shapes; defined in rules_linear.cpp.
ir::ValueId conv_of(RuleContext& ctx, ir::ValueId x, ir::ValueId weights, const std::string& suffix = "");

}  // namespace orchid::fission
