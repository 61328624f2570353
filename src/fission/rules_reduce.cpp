// Fission rules of reductions and of the softmax family.
//
// Reduce<Op>(x, axes, keepdims) is one reduce primitive over the normalised axes (all axes
// when none are given), followed by an elementwise primitive where the operator finishes the
// combined value (ReduceMean divides by the count, ReduceL2 takes the square root, ...).
// Softmax and LogSoftmax follow Korch's rule: a max-reduce, exp(x - max) elementwise, a
// sum-reduce and a division (LogSoftmax: x - max - log(sum)). Before opset 13 both coerce x
// to 2-D at `axis` and normalise over the whole trailing block [axis, rank).
#include <algorithm>
#include <cstdint>
#include <functional>

#include "fission/builders.h"
#include "fission/rules.h"
#include "support/error.h"

namespace orchid::fission {

namespace {

using ir::DType;
using ir::ExprOp;
using ir::ReduceOp;

// The axes a Reduce* node reduces, normalised and sorted; `noop` when ReduceSum-13's
// noop_with_empty_axes turns an empty axes list into the identity.
struct AxesSpec {
  std::vector<int64_t> axes;
  bool noop = false;
};

std::vector<int64_t> normalized_axes(const RuleContext& ctx, const std::vector<int64_t>& raw,
                                     int64_t rank) {
  std::vector<int64_t> out;
  for (int64_t a : raw) {
    int64_t n = ctx.normalize_axis(a, rank, "axis");
    ORCHID_USER_CHECK(std::find(out.begin(), out.end(), n) == out.end())
        << ctx.where() << "axis " << a << " appears twice in axes";
    out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The raw axes of input 1 (ReduceSum from opset 13). An omitted input and an input whose
// static shape is [0] are both known to be empty, even when the latter is fed at run time.
std::vector<int64_t> axes_from_input(const RuleContext& ctx) {
  if (!ctx.has_input(1) || (!ctx.constant(1) && ctx.type(1).numel() == 0)) return {};
  if (!ctx.constant(1))
    ctx.unsupported("axes computed at run time (input 1 'axes' must be a constant)");
  return ctx.const_ints(1);
}

AxesSpec axes_of(const RuleContext& ctx) {
  bool from_input = ctx.node().op_type == "ReduceSum" && ctx.version() >= 13;
  std::vector<int64_t> raw = from_input ? axes_from_input(ctx) : ctx.attr_ints("axes", {});
  int64_t rank = ctx.type(0).rank();
  if (!raw.empty()) return {normalized_axes(ctx, raw, rank), false};
  if (from_input && ctx.attr_int("noop_with_empty_axes", 0) != 0) return {{}, true};
  AxesSpec all;
  for (int64_t a = 0; a < rank; ++a) all.axes.push_back(a);
  return all;
}

int64_t reduced_count(const ir::Dims& shape, const std::vector<int64_t>& axes) {
  int64_t n = 1;
  for (int64_t a : axes) n *= shape[static_cast<size_t>(a)];
  return n;
}

ir::Dims reduced_shape(const ir::Dims& shape, const std::vector<int64_t>& axes, bool keepdims) {
  ir::Dims out;
  for (size_t d = 0; d < shape.size(); ++d) {
    bool reduced = std::find(axes.begin(), axes.end(), static_cast<int64_t>(d)) != axes.end();
    if (!reduced) out.push_back(shape[d]);
    else if (keepdims) out.push_back(1);
  }
  return out;
}

// A tensor of `shape` filled with v (an elementwise primitive with a constant body).
ValueId splat(RuleContext& ctx, const ir::Scalar& v, const ir::Dims& shape) {
  ir::Primitive p;
  p.op = ir::PrimOp::Elementwise;
  p.domain = shape;
  p.bodies = {ir::constant(v)};
  return ctx.emit1(std::move(p), {v.dtype, shape});
}

// How a Reduce* operator combines its elements: the combiner, the term of each element
// (nullptr: the element itself) and what is done with the combined value (nullptr: nothing).
struct ReduceSpec {
  ReduceOp op;
  std::function<Expr(Expr)> term;
  std::function<Expr(Expr, int64_t count)> finish;
};

std::vector<ValueId> reduce_rule(RuleContext& ctx, const ReduceSpec& spec) {
  ValueId x = ctx.input(0);
  AxesSpec axes = axes_of(ctx);
  if (axes.noop) return {x};
  bool keepdims = ctx.attr_int("keepdims", 1) != 0;
  const ir::Dims& shape = ctx.shape(0);
  DType t = ctx.dtype(0);
  int64_t count = reduced_count(shape, axes.axes);
  bool extreme = spec.op == ReduceOp::Max || spec.op == ReduceOp::Min;
  if (extreme && count == 0 && ir::is_integral(t)) {
    // ONNX's ReduceMax (ReduceMin) of no integers: the dtype's lowest (highest) value.
    int64_t limit = spec.op == ReduceOp::Min ? ir::dtype_highest(t) : ir::dtype_lowest(t);
    return {splat(ctx, ir::Scalar::of_int(t, limit), reduced_shape(shape, axes.axes, keepdims))};
  }
  ValueId r = reduce_axes(ctx, x, axes.axes, keepdims, spec.op, spec.term,
                          spec.finish ? "reduced" : "")[0];
  if (!spec.finish) return {r};
  return {ew_unary(ctx, r, [&](Expr v) { return spec.finish(v, count); })};
}

Expr typed_const(DType t, double v) { return ir::constant(ir::Scalar::of(t, v)); }

Expr square(Expr v) { return v * v; }

// The axes softmax normalises over: `axis` from opset 13, before it the trailing block
// [axis, rank) of the 2-D coercion.
std::vector<int64_t> softmax_axes(const RuleContext& ctx) {
  int64_t rank = ctx.type(0).rank();
  int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", ctx.version() >= 13 ? -1 : 1), rank);
  if (ctx.version() >= 13) return {axis};
  std::vector<int64_t> axes;
  for (int64_t a = axis; a < rank; ++a) axes.push_back(a);
  return axes;
}

// Korch's softmax: m = max x; e = exp(x - m); s = sum e; softmax = e / s and
// log-softmax = (x - m) - log(s).
ValueId softmax_family(RuleContext& ctx, bool log) {
  ValueId x = ctx.input(0);
  DType t = ctx.dtype(0);
  std::vector<int64_t> axes = softmax_axes(ctx);
  ValueId m = reduce_axes(ctx, x, axes, true, ReduceOp::Max, nullptr, "max")[0];
  ValueId e = ew_map(ctx, {x, m}, t, [](const std::vector<Expr>& v) {
    return ir::unary(ExprOp::Exp, v[0] - v[1]);
  }, "exp");
  ValueId s = reduce_axes(ctx, e, axes, true, ReduceOp::Sum, nullptr, "sum")[0];
  if (!log) return ew_map(ctx, {e, s}, t, [](const std::vector<Expr>& v) { return v[0] / v[1]; });
  return ew_map(ctx, {x, m, s}, t, [](const std::vector<Expr>& v) {
    return (v[0] - v[1]) - ir::unary(ExprOp::Log, v[2]);
  });
}

// log(sum(exp(x))) computed stably as m + log(sum(exp(x - m))), m = max x, with m taken as 0
// where it is infinite (all terms -inf gives log(0) = -inf; any +inf gives +inf, as ONNX).
std::vector<ValueId> log_sum_exp(RuleContext& ctx) {
  ValueId x = ctx.input(0);
  AxesSpec axes = axes_of(ctx);
  bool keepdims = ctx.attr_int("keepdims", 1) != 0;
  DType t = ctx.dtype(0);
  ValueId m = reduce_axes(ctx, x, axes.axes, true, ReduceOp::Max, nullptr, "max")[0];
  ValueId shift = ew_unary(ctx, m, [t](Expr v) {
    return ir::select(ir::unary(ExprOp::IsInf, v), typed_const(t, 0), v);
  }, "shift");
  ValueId e = ew_map(ctx, {x, shift}, t, [](const std::vector<Expr>& v) {
    return ir::unary(ExprOp::Exp, v[0] - v[1]);
  }, "exp");
  ValueId s = reduce_axes(ctx, e, axes.axes, true, ReduceOp::Sum, nullptr, "sum")[0];
  ValueId out = ew_map(ctx, {shift, s}, t, [](const std::vector<Expr>& v) {
    return v[0] + ir::unary(ExprOp::Log, v[1]);
  }, keepdims ? "" : "kept");
  if (keepdims) return {out};
  return {view(ctx, out, reduced_shape(ctx.shape(0), axes.axes, false))};
}

}  // namespace

std::vector<ValueId> rule_ReduceSum(RuleContext& ctx) {
  return reduce_rule(ctx, {ReduceOp::Sum, nullptr, nullptr});
}

// The mean is the sum divided by the count (integers: truncated toward zero, as ONNX Runtime;
// an empty reduction divides by 0: NaN for floats).
std::vector<ValueId> rule_ReduceMean(RuleContext& ctx) {
  DType t = ctx.dtype(0);
  return reduce_rule(ctx, {ReduceOp::Sum, nullptr, [t](Expr s, int64_t n) {
                             return s / ir::constant(ir::Scalar::of_int(t, n));
                           }});
}

std::vector<ValueId> rule_ReduceMax(RuleContext& ctx) {
  return reduce_rule(ctx, {ReduceOp::Max, nullptr, nullptr});
}

std::vector<ValueId> rule_ReduceMin(RuleContext& ctx) {
  return reduce_rule(ctx, {ReduceOp::Min, nullptr, nullptr});
}

std::vector<ValueId> rule_ReduceProd(RuleContext& ctx) {
  return reduce_rule(ctx, {ReduceOp::Prod, nullptr, nullptr});
}

std::vector<ValueId> rule_ReduceSumSquare(RuleContext& ctx) {
  return reduce_rule(ctx, {ReduceOp::Sum, square, nullptr});
}

std::vector<ValueId> rule_ReduceL1(RuleContext& ctx) {
  return reduce_rule(ctx, {ReduceOp::Sum, [](Expr v) { return ir::unary(ExprOp::Abs, v); }, nullptr});
}

std::vector<ValueId> rule_ReduceL2(RuleContext& ctx) {
  return reduce_rule(ctx, {ReduceOp::Sum, square, [](Expr s, int64_t) {
                             return ir::unary(ExprOp::Sqrt, s);
                           }});
}

std::vector<ValueId> rule_ReduceLogSum(RuleContext& ctx) {
  return reduce_rule(ctx, {ReduceOp::Sum, nullptr, [](Expr s, int64_t) {
                             return ir::unary(ExprOp::Log, s);
                           }});
}

std::vector<ValueId> rule_ReduceLogSumExp(RuleContext& ctx) { return log_sum_exp(ctx); }

std::vector<ValueId> rule_Softmax(RuleContext& ctx) { return {softmax_family(ctx, false)}; }
std::vector<ValueId> rule_LogSoftmax(RuleContext& ctx) { return {softmax_family(ctx, true)}; }

}  // namespace orchid::fission
