// Fission rules of pooling. A pooling window is one reduce primitive over the window
// [k0, k1, ..] (reduction variables r0, r1, ..) reading
//   X[n, c, p_d * stride_d + r_d * dilation_d - pad_begin_d ..]
// with a predicated load that yields the combiner's neutral element outside X (-inf, or the
// dtype's lowest integer, for max; 0 for sum). Padding and ceil_mode follow ONNX shape
// inference (linear_common.h): windows may run past the padded end in ceil_mode, and those
// positions are simply outside X. A window that covers no element of X at all has no ONNX
// meaning (runtimes disagree) and is refused.
//  - MaxPool: a max reduction; its Indices output an argmax reduction whose index body is
//    the flat offset into X (row-major, batch and channel included; storage_order=1 where
//    it is unambiguous).
//  - AveragePool: a sum reduction, then an elementwise division by the window's element
//    count computed from the output indices (count_include_pad=0: elements inside X;
//    1: inside the padded extent, as onnxruntime and PyTorch count them).
//  - GlobalAveragePool / GlobalMaxPool: reductions over the spatial axes (keepdims).
#include <algorithm>
#include <cmath>
#include <limits>

#include "fission/builders.h"
#include "fission/linear_common.h"
#include "fission/rules.h"
#include "support/error.h"

namespace orchid::fission {

namespace {

using ir::DType;
using ir::Dims;

Dims pool_shape(const Dims& xs, const WindowGeometry& w) {
  Dims out = {xs[0], xs[1]};
  out.insert(out.end(), w.out.begin(), w.out.end());
  return out;
}

// Refuses geometries where some window covers only padding (or the space past it).
void require_windows_touch_input(const RuleContext& ctx, const WindowGeometry& w) {
  for (size_t d = 0; d < w.rank(); ++d) {
    for (int64_t p = 0; p < w.out[d]; ++p) {
      bool touches = false;
      for (int64_t q = 0; q < w.kernel[d] && !touches; ++q) {
        int64_t pos = w.start(d, p) + q * w.dilations[d];
        touches = pos >= 0 && pos < w.in[d];
      }
      if (!touches)
        ctx.unsupported("pooling window " + std::to_string(p) + " of spatial dim " + std::to_string(d) +
                        " covers no input element (only padding or space past it), which ONNX leaves undefined");
    }
  }
}

std::vector<Expr> window_index(const WindowGeometry& w) {
  std::vector<Expr> idx = {ir::dvar(0), ir::dvar(1)};
  for (size_t d = 0; d < w.rank(); ++d) idx.push_back(window_pos(w, d));
  return idx;
}

// combine_{window} X[window position], `fill` outside X.
ValueId window_reduce(RuleContext& ctx, const WindowGeometry& w, ir::ReduceOp op, ir::Scalar fill,
                      const std::string& suffix) {
  ValueId x = ctx.input(0);
  PrimBuilder pb(ctx.graph());
  Expr pred = window_inside(w);
  Expr body = pred.defined() ? pb.load_pred(x, window_index(w), pred, fill) : pb.load(x, window_index(w));
  ir::Primitive p = pb.make(ir::PrimOp::Reduce);
  p.domain = pool_shape(ctx.shape(0), w);
  p.reduce_domain = w.kernel;
  p.reduce = op;
  p.bodies = {body};
  ir::TensorType out{ctx.dtype(0), p.domain};  // before the call: p is moved from in its arguments
  return ctx.emit1(std::move(p), out, suffix);
}

ir::Scalar lowest(DType t) {
  if (ir::is_float(t)) return ir::Scalar::of(t, -std::numeric_limits<double>::infinity());
  return ir::Scalar::of_int(t, ir::dtype_lowest(t));
}

// The flat offset into X of the window position: row-major over all dims
// (storage_order=0), or n*C + c then column-major over the spatial dims (storage_order=1,
// as onnxruntime; only used where N*C = 1, so that it is also ONNX's column-major order).
Expr flat_offset(const Dims& xs, const WindowGeometry& w, bool column_major) {
  std::vector<Expr> idx = window_index(w);
  Dims strides = ir::row_major_strides(xs);
  if (column_major) {
    int64_t plane = 1;
    for (size_t d = 0; d < w.rank(); ++d) strides[2 + d] = plane, plane *= w.in[d];
    strides[1] = plane;
    strides[0] = plane * xs[1];
  }
  Expr flat;
  for (size_t j = 0; j < idx.size(); ++j) {
    Expr term = strides[j] == 1 ? idx[j] : idx[j] * strides[j];
    flat = flat.defined() ? flat + term : term;
  }
  return flat;
}

// MaxPool's Indices: an argmax over the window whose positions outside X read NaN, which
// never wins (integer inputs are compared as f64 for that).
ValueId max_indices(RuleContext& ctx, const WindowGeometry& w) {
  const Dims& xs = ctx.shape(0);
  int64_t order = ctx.attr_int("storage_order", 0);
  ORCHID_USER_CHECK(order == 0 || order == 1) << ctx.where() << "storage_order " << order << " is not 0 or 1";
  if (order == 1 && xs[0] * xs[1] > 1)
    ctx.unsupported("Indices with storage_order=1 for N*C > 1 (ONNX's column-major offset and "
                    "onnxruntime's disagree)");
  PrimBuilder pb(ctx.graph());
  ValueId x = ctx.input(0);
  DType t = ctx.dtype(0);
  Expr pred = window_inside(w);
  double nan = std::numeric_limits<double>::quiet_NaN();
  Expr value = pb.load(x, window_index(w));
  if (pred.defined() && ir::is_float(t)) value = pb.load_pred(x, window_index(w), pred, ir::Scalar::of(t, nan));
  if (pred.defined() && !ir::is_float(t))
    value = ir::select(pred, ir::cast(DType::F64, pb.load_pred(x, window_index(w), pred, ir::Scalar::of_int(t, 0))),
                       ir::const_f(DType::F64, nan));
  ir::Primitive p = pb.make(ir::PrimOp::Reduce);
  p.domain = pool_shape(xs, w);
  p.reduce_domain = w.kernel;
  p.reduce = ir::ReduceOp::ArgMax;
  p.bodies = {value, flat_offset(xs, w, order == 1)};
  Dims shape = p.domain;
  return ctx.emit(std::move(p), {{value.dtype(), shape}, {DType::I64, shape}}, "argmax")[1];
}

// The number of elements window point p of spatial dim d divides by: those inside X, or
// (count_include_pad) those inside the padded extent [-pad_begin, in + pad_end).
int64_t window_count(const WindowGeometry& w, size_t d, int64_t p, bool include_pad) {
  int64_t lo = include_pad ? -w.pads_begin[d] : 0;
  int64_t hi = include_pad ? w.in[d] + w.pads_end[d] : w.in[d];
  int64_t s = w.start(d, p);
  return std::min(s + w.kernel[d], hi) - std::max(s, lo);
}

// The divisor of AveragePool as an i64 expression of the output indices; `*constant` is set
// (and the result undefined) when it is the same for every output point.
Expr average_divisor(const WindowGeometry& w, bool include_pad, int64_t* constant) {
  *constant = 1;
  Expr varying;
  for (size_t d = 0; d < w.rank(); ++d) {
    int64_t first = window_count(w, d, 0, include_pad);
    bool same = true;
    for (int64_t p = 1; p < w.out[d] && same; ++p) same = window_count(w, d, p, include_pad) == first;
    if (same) {
      *constant *= first;
      continue;
    }
    Expr start = ir::dvar(static_cast<int32_t>(2 + d)) * w.strides[d] - w.pads_begin[d];
    int64_t lo = include_pad ? -w.pads_begin[d] : 0;
    int64_t hi = include_pad ? w.in[d] + w.pads_end[d] : w.in[d];
    Expr count = ir::binary(ir::ExprOp::Min, start + w.kernel[d], ir::const_i64(hi)) -
                 ir::binary(ir::ExprOp::Max, start, ir::const_i64(lo));
    varying = varying.defined() ? varying * count : count;
  }
  return varying;
}

}  // namespace

std::vector<ValueId> rule_MaxPool(RuleContext& ctx) {
  std::string op = "MaxPool-" + std::to_string(ctx.version());
  using D = DType;
  if (ctx.version() < 12) require_dtype(ctx, 0, {D::F16, D::F32, D::F64}, op);
  else require_dtype(ctx, 0, {D::F16, D::F32, D::F64, D::I8, D::U8}, op);
  require_attr_since(ctx, "storage_order", 8);
  require_attr_since(ctx, "dilations", 10);
  require_attr_since(ctx, "ceil_mode", 10);
  WindowGeometry w = read_window(ctx, ctx.shape(0), {nullptr, true, ctx.attr_int("ceil_mode", 0) != 0});
  require_windows_touch_input(ctx, w);
  std::vector<ValueId> outs = {window_reduce(ctx, w, ir::ReduceOp::Max, lowest(ctx.dtype(0)), "")};
  const auto& names = ctx.node().outputs;
  if (ctx.version() >= 8 && names.size() > 1 && !names[1].empty()) outs.push_back(max_indices(ctx, w));
  return outs;
}

std::vector<ValueId> rule_AveragePool(RuleContext& ctx) {
  DType t = ctx.dtype(0);
  require_dtype(ctx, 0, {DType::F16, DType::F32, DType::F64}, "AveragePool-" + std::to_string(ctx.version()));
  require_attr_since(ctx, "count_include_pad", 7);
  require_attr_since(ctx, "ceil_mode", 10);
  require_attr_since(ctx, "dilations", 19);
  WindowGeometry w = read_window(ctx, ctx.shape(0), {nullptr, false, ctx.attr_int("ceil_mode", 0) != 0});
  require_windows_touch_input(ctx, w);
  bool include_pad = ctx.attr_int("count_include_pad", 0) != 0;
  int64_t constant = 1;
  Expr varying = average_divisor(w, include_pad, &constant);
  ValueId sum = window_reduce(ctx, w, ir::ReduceOp::Sum, ir::Scalar::of(t, 0), "sum");
  return {ew_unary(ctx, sum, [&](Expr s) {
    Expr divisor = ir::const_f(t, static_cast<double>(constant));
    if (varying.defined()) divisor = ir::cast(t, constant == 1 ? varying : varying * constant);
    return s / divisor;
  })};
}

std::vector<ValueId> rule_GlobalAveragePool(RuleContext& ctx) {
  const Dims& xs = ctx.shape(0);
  require_dtype(ctx, 0, {DType::F16, DType::F32, DType::F64}, "GlobalAveragePool-1");
  ORCHID_USER_CHECK(xs.size() >= 2) << ctx.where() << "input of shape " << ir::dims_str(xs)
                                    << " needs rank >= 2 (batch, channels, spatial dims)";
  std::vector<int64_t> axes;
  int64_t count = 1;
  for (size_t d = 2; d < xs.size(); ++d) axes.push_back(static_cast<int64_t>(d)), count *= xs[d];
  ValueId sum = reduce_axes(ctx, ctx.input(0), axes, true, ir::ReduceOp::Sum, nullptr, "sum")[0];
  DType t = ctx.dtype(0);
  return {ew_unary(ctx, sum, [&](Expr s) { return s / ir::const_f(t, static_cast<double>(count)); })};
}

std::vector<ValueId> rule_GlobalMaxPool(RuleContext& ctx) {
  const Dims& xs = ctx.shape(0);
  require_dtype(ctx, 0, {DType::F16, DType::F32, DType::F64}, "GlobalMaxPool-1");
  ORCHID_USER_CHECK(xs.size() >= 2) << ctx.where() << "input of shape " << ir::dims_str(xs)
                                    << " needs rank >= 2 (batch, channels, spatial dims)";
  std::vector<int64_t> axes;
  for (size_t d = 2; d < xs.size(); ++d) axes.push_back(static_cast<int64_t>(d));
  return {reduce_axes(ctx, ctx.input(0), axes, true, ir::ReduceOp::Max)[0]};
}

}  // namespace orchid::fission
