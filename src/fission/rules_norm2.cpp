// Fission rules of the remaining normalizations and of Lp pooling.
//
//  - LRN: a sum reduction over the channel window [c - floor((size-1)/2), c + ceil((size-1)/2)]
//    of x² (a predicated load reads 0 outside [0, C)), then elementwise
//    y = x / (bias + alpha / size * square_sum) ^ beta.
//  - LpNormalization: a sum reduction of |x| (p = 1) or x² (p = 2) over the axis, then
//    y = x / norm elementwise (norm = the sum, or its square root). A zero norm gives NaN,
//    as the definition x / ||x||_p does (onnxruntime writes 0 there instead).
//  - MeanVarianceNormalization: ONNX's function y = (x - E[x]) / (sqrt(E[x²] - E[x]²) + 1e-9)
//    over `axes`; the population mean and variance come from one welford reduction (the same
//    quantity, computed stably), 16-bit floats in f32.
//  - LpPool / GlobalLpPool: a sum reduction of |x|^p over the window (padding reads 0, as the
//    zero padding of the definition contributes nothing), then the p-th root. Integral p = 1
//    and 2 use abs and x·x; any other p > 0 uses pow.
#include <cmath>
#include <sstream>

#include "fission/builders.h"
#include "fission/linear_common.h"
#include "fission/norm_common.h"
#include "fission/rules.h"
#include "fission/rules_layout_common.h"
#include "support/error.h"

namespace orchid::fission {

namespace {

using ir::DType;
using ir::Dims;
using ir::ExprOp;
using ir::ReduceOp;

// The float dtypes an operator's schema allows: f16, f32, f64, and bf16 where `bf16`.
void require_float(const RuleContext& ctx, bool bf16) {
  using D = DType;
  std::string op = ctx.node().op_type + "-" + std::to_string(ctx.version());
  if (bf16) require_dtype(ctx, 0, {D::F16, D::F32, D::F64, D::BF16}, op);
  else require_dtype(ctx, 0, {D::F16, D::F32, D::F64}, op);
}

// ---- Lp norms of pooling windows ----

// The term |v|^p summed by an Lp pool and the p-th root that finishes it.
struct LpNorm {
  double p = 2;
  Expr term(Expr v) const {
    if (p == 1) return ir::unary(ExprOp::Abs, v);
    if (p == 2) return v * v;
    return ir::binary(ExprOp::Pow, ir::unary(ExprOp::Abs, v), ir::const_f(v.dtype(), p));
  }
  Expr root(Expr s) const {
    if (p == 1) return s;
    if (p == 2) return ir::unary(ExprOp::Sqrt, s);
    return ir::binary(ExprOp::Pow, s, ir::const_f(s.dtype(), 1 / p));
  }
};

// LpPool's and GlobalLpPool's p: a float before opset 2, an int from 2; p > 0.
LpNorm lp_norm(const RuleContext& ctx) {
  double p = ctx.version() < 2 ? ctx.attr_float("p", 2.0) : static_cast<double>(ctx.attr_int("p", 2));
  if (!(p > 0) || std::isinf(p)) {
    std::ostringstream os;
    os << "p = " << p << " (the Lp norm needs a finite p > 0)";
    ctx.unsupported(os.str());
  }
  return {p};
}

// sum over the window of norm.term(X[window position]), 0 outside X.
ValueId lp_window_sum(RuleContext& ctx, const WindowGeometry& w, const LpNorm& norm) {
  ValueId x = ctx.input(0);
  DType t = ctx.dtype(0);
  std::vector<Expr> idx = {ir::dvar(0), ir::dvar(1)};
  for (size_t d = 0; d < w.rank(); ++d) idx.push_back(window_pos(w, d));
  PrimBuilder pb(ctx.graph());
  Expr pred = window_inside(w);
  Expr v = pred.defined() ? pb.load_pred(x, idx, pred, ir::Scalar::of(t, 0)) : pb.load(x, idx);
  ir::Primitive p = pb.make(ir::PrimOp::Reduce);
  p.domain = {ctx.shape(0)[0], ctx.shape(0)[1]};
  p.domain.insert(p.domain.end(), w.out.begin(), w.out.end());
  p.reduce_domain = w.kernel;
  p.reduce = ReduceOp::Sum;
  p.bodies = {norm.term(v)};
  ir::TensorType out{t, p.domain};
  return ctx.emit1(std::move(p), out, "sum");
}

// ---- MeanVarianceNormalization ----

// MVN's axes: the attribute (default [0, 2, 3]) normalised; an empty list means all axes.
std::vector<int64_t> mvn_axes(const RuleContext& ctx, int64_t rank) {
  std::vector<int64_t> axes = layout::normalize_axes(ctx, ctx.attr_ints("axes", {0, 2, 3}), rank);
  if (axes.empty())
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  return axes;
}

}  // namespace

std::vector<ValueId> rule_LRN(RuleContext& ctx) {
  require_float(ctx, ctx.version() >= 13);
  ValueId x = ctx.input(0);
  const Dims xs = ctx.shape(0);
  DType t = ctx.dtype(0), u = compute_dtype(t);
  ORCHID_USER_CHECK(xs.size() >= 2) << ctx.where() << "input of shape " << ir::dims_str(xs)
                                    << " needs rank >= 2 (N x C x D1 x ...)";
  int64_t size = ctx.required_attr_int("size");
  ORCHID_USER_CHECK(size >= 1) << ctx.where() << "size = " << size << " must be >= 1";
  int64_t head = (size - 1) / 2;  // channels before c in the window
  std::vector<Expr> idx = domain_vars(xs.size());
  Expr ch = idx[1] + ir::rvar(0);
  if (head > 0) ch = ch - head;
  idx[1] = ch;
  Expr inside = ir::binary(ExprOp::And, ir::binary(ExprOp::Ge, ch, ir::const_i64(0)),
                           ir::binary(ExprOp::Lt, ch, ir::const_i64(xs[1])));
  PrimBuilder pb(ctx.graph());
  Expr v = as(u, pb.load_pred(x, idx, inside, ir::Scalar::of(t, 0)));
  ir::Primitive p = pb.make(ir::PrimOp::Reduce);
  p.domain = xs;
  p.reduce_domain = {size};
  p.reduce = ReduceOp::Sum;
  p.bodies = {v * v};
  ValueId sq = ctx.emit1(std::move(p), {u, xs}, "square_sum");
  Expr scale = ir::const_f(u, ctx.attr_float("alpha", 1e-4) / static_cast<double>(size));
  Expr bias = ir::const_f(u, ctx.attr_float("bias", 1.0));
  Expr beta = ir::const_f(u, ctx.attr_float("beta", 0.75));
  return {ew_map(ctx, {x, sq}, t, [&](const std::vector<Expr>& e) {
    return as(t, as(u, e[0]) / ir::binary(ExprOp::Pow, bias + scale * e[1], beta));
  })};
}

std::vector<ValueId> rule_LpNormalization(RuleContext& ctx) {
  require_float(ctx, false);
  ValueId x = ctx.input(0);
  DType t = ctx.dtype(0);
  int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", -1), ctx.type(0).rank());
  int64_t p = ctx.attr_int("p", 2);
  ORCHID_USER_CHECK(p == 1 || p == 2) << ctx.where() << "p = " << p
                                      << ": LpNormalization defines only p = 1 and p = 2";
  LpNorm norm{static_cast<double>(p)};
  ValueId sum = reduce_axes(ctx, x, {axis}, true, ReduceOp::Sum, [&](Expr v) { return norm.term(v); }, "norm")[0];
  return {ew_map(ctx, {x, sum}, t, [&](const std::vector<Expr>& e) { return e[0] / norm.root(e[1]); })};
}

std::vector<ValueId> rule_MeanVarianceNormalization(RuleContext& ctx) {
  require_float(ctx, ctx.version() >= 13);
  ValueId x = ctx.input(0);
  DType t = ctx.dtype(0), u = compute_dtype(t);
  Dims xs = ctx.shape(0);
  std::vector<int64_t> axes = mvn_axes(ctx, static_cast<int64_t>(xs.size()));
  bool keepdims = true;
  ValueId xr = x;
  if (axes.empty()) {  // a scalar: its own population (mean x, variance 0)
    axes = {static_cast<int64_t>(xs.size())};
    xs.push_back(1);
    xr = view(ctx, x, xs, "column");
    keepdims = false;
  }
  std::vector<ValueId> mv = reduce_axes(ctx, xr, axes, keepdims, ReduceOp::Welford,
                                        [u](Expr v) { return as(u, v); }, "moments");
  Expr eps = ir::const_f(u, static_cast<double>(1e-9f));  // ONNX's Epsilon, a float constant
  return {ew_map(ctx, {x, mv[0], mv[1]}, t, [&](const std::vector<Expr>& e) {
    return as(t, (as(u, e[0]) - e[1]) / (ir::unary(ExprOp::Sqrt, e[2]) + eps));
  })};
}

std::vector<ValueId> rule_LpPool(RuleContext& ctx) {
  require_float(ctx, false);
  require_attr_since(ctx, "dilations", 18);
  require_attr_since(ctx, "ceil_mode", 18);
  LpNorm norm = lp_norm(ctx);
  WindowGeometry w = read_window(ctx, ctx.shape(0), {nullptr, false, false});
  ValueId sum = lp_window_sum(ctx, w, norm);
  if (norm.p == 1) return {sum};
  return {ew_unary(ctx, sum, [&](Expr s) { return norm.root(s); })};
}

std::vector<ValueId> rule_GlobalLpPool(RuleContext& ctx) {
  require_float(ctx, false);
  const Dims xs = ctx.shape(0);
  ORCHID_USER_CHECK(xs.size() >= 2) << ctx.where() << "input of shape " << ir::dims_str(xs)
                                    << " needs rank >= 2 (batch, channels, spatial dims)";
  LpNorm norm = lp_norm(ctx);
  std::vector<int64_t> axes;
  for (size_t d = 2; d < xs.size(); ++d) axes.push_back(static_cast<int64_t>(d));
  ValueId sum = reduce_axes(ctx, ctx.input(0), axes, true, ReduceOp::Sum,
                            [&](Expr v) { return norm.term(v); }, "sum")[0];
  if (norm.p == 1) return {sum};
  return {ew_unary(ctx, sum, [&](Expr s) { return norm.root(s); })};
}

}  // namespace orchid::fission
