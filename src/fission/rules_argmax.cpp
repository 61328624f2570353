// Fission rules of ArgMax, ArgMin and Hardmax.
//
// ArgMax / ArgMin are one argmax (argmin) reduction over the axis whose index body is the
// position along it. ONNX's reference is numpy's argmax / argmin:
//  - ties give the first index; with select_last_index (opset 12) the last: the axis is then
//    read backwards (position len-1-r0), so that the IR's "first in iteration order wins"
//    finds the last one;
//  - a NaN wins over every number (argmax and argmin alike): the first NaN, or the last one.
// The IR's combiners skip NaN, so floats are compared through an f64 key that orders NaN
// beyond every number: for f16, bf16 and f32 the key maps the winning infinity (+inf for
// argmax, -inf for argmin) to the largest finite double of that sign and NaN to that
// infinity. f64 leaves no room beyond its infinities: a second argmax over isnan(x) finds the
// first (last) NaN, and an elementwise select prefers it where there is one.
//
// Hardmax is 1 at the first maximum (numpy's argmax again) and 0 elsewhere: the arg-reduction
// over `axis` (opset 13), or before 13 over the trailing block [axis, rank) of the 2-D
// coercion (x viewed as [outer, inner]), then an elementwise comparison of each element's
// position with the winning index.
#include <limits>

#include "fission/builders.h"
#include "fission/linear_common.h"
#include "fission/rules.h"
#include "support/error.h"

namespace orchid::fission {

namespace {

using ir::DType;
using ir::Dims;
using ir::ExprOp;
using ir::ReduceOp;

struct ArgSpec {
  int64_t axis = 0;
  bool keepdims = true;
  bool last = false;  // select_last_index: the last of equal winners
  bool max = true;    // argmax, else argmin
};

// The position along the axis that reduction variable r0 visits.
Expr axis_position(int64_t len, bool last) {
  return last ? ir::const_i64(len - 1) - ir::rvar(0) : ir::rvar(0);
}

// (value, index) of the arg-reduction of key(x) (the element itself when key is null).
std::vector<ValueId> arg_reduce(RuleContext& ctx, ValueId x, const ArgSpec& s,
                                const std::function<Expr(Expr)>& key, const std::string& suffix) {
  const Dims xs = ctx.graph().type(x).shape;
  int64_t len = xs[static_cast<size_t>(s.axis)];
  Dims out;
  std::vector<Expr> idx;
  for (size_t d = 0; d < xs.size(); ++d) {
    if (static_cast<int64_t>(d) != s.axis) {
      idx.push_back(ir::dvar(static_cast<int32_t>(out.size())));
      out.push_back(xs[d]);
      continue;
    }
    idx.push_back(axis_position(len, s.last));
    if (s.keepdims) out.push_back(1);
  }
  PrimBuilder b(ctx.graph());
  Expr v = b.load(x, idx);
  if (key) v = key(v);
  ir::Primitive p = b.make(ir::PrimOp::Reduce);
  p.domain = out;
  p.reduce_domain = {len};
  p.reduce = s.max ? ReduceOp::ArgMax : ReduceOp::ArgMin;
  p.bodies = {v, axis_position(len, s.last)};
  return ctx.emit(std::move(p), {{v.dtype(), out}, {DType::I64, out}}, suffix);
}

// An f64 key of a float narrower than f64 that orders NaN beyond every number, as numpy
// does: argmax compares NaN > +inf > every finite value, argmin NaN < -inf < every finite.
Expr nan_wins_key(Expr v, bool max) {
  double inf = std::numeric_limits<double>::infinity();
  double big = std::numeric_limits<double>::max();
  double sign = max ? 1 : -1;
  Expr extreme = ir::binary(ExprOp::Eq, v, ir::const_f(v.dtype(), sign * inf));
  Expr wide = ir::select(extreme, ir::const_f(DType::F64, sign * big), ir::cast(DType::F64, v));
  return ir::select(ir::unary(ExprOp::IsNan, v), ir::const_f(DType::F64, sign * inf), wide);
}

// The arg-reduction's index with numpy's ties and NaN (see the file comment).
ValueId arg_index(RuleContext& ctx, ValueId x, const ArgSpec& s, const std::string& suffix) {
  DType t = ctx.graph().type(x).dtype;
  if (!ir::is_float(t)) return arg_reduce(ctx, x, s, nullptr, suffix)[1];
  bool max = s.max;
  if (t != DType::F64)
    return arg_reduce(ctx, x, s, [max](Expr v) { return nan_wins_key(v, max); }, suffix)[1];
  ValueId plain = arg_reduce(ctx, x, s, nullptr, suffix)[1];
  ArgSpec nan_spec = s;
  nan_spec.max = true;
  std::vector<ValueId> nan = arg_reduce(ctx, x, nan_spec, [](Expr v) {
    return ir::cast(DType::I64, ir::unary(ExprOp::IsNan, v));
  }, suffix + "_nan");
  return ew_map(ctx, {nan[0], nan[1], plain}, DType::I64, [](const std::vector<Expr>& v) {
    return ir::select(ir::binary(ExprOp::Ne, v[0], ir::const_i64(0)), v[1], v[2]);
  }, suffix + "_pick");
}

// The dtypes of ArgMax / ArgMin: numeric but bool; bfloat16 from opset 13.
void require_arg_dtype(const RuleContext& ctx) {
  using D = DType;
  std::string op = ctx.node().op_type + "-" + std::to_string(ctx.version());
  if (ctx.version() >= 13 && ctx.dtype(0) == D::BF16) return;
  require_dtype(ctx, 0, {D::U8, D::U16, D::U32, D::U64, D::I8, D::I16, D::I32, D::I64, D::F16, D::F32, D::F64},
                op);
}

std::vector<ValueId> arg_rule(RuleContext& ctx, bool max) {
  require_arg_dtype(ctx);
  require_attr_since(ctx, "select_last_index", 12);
  const ir::TensorType xt = ctx.type(0);
  ArgSpec s;
  s.axis = ctx.normalize_axis(ctx.attr_int("axis", 0), xt.rank());
  s.keepdims = ctx.attr_int("keepdims", 1) != 0;
  s.last = ctx.attr_int("select_last_index", 0) != 0;
  s.max = max;
  int64_t others = 1;  // the number of lines (output elements)
  for (size_t d = 0; d < xt.shape.size(); ++d)
    if (static_cast<int64_t>(d) != s.axis) others *= xt.shape[d];
  ORCHID_USER_CHECK(xt.shape[static_cast<size_t>(s.axis)] > 0 || others == 0)
      << ctx.where() << "axis " << s.axis << " of " << ir::type_str(xt) << " is empty: no "
      << (max ? "maximum" : "minimum") << " to index";
  return {arg_index(ctx, ctx.input(0), s, "arg")};
}

// out[i] = 1 where i's position along `axis` equals idx (kept as a dim of 1 there), else 0.
ValueId one_hot(RuleContext& ctx, ValueId idx, const Dims& shape, int64_t axis, DType t,
                const std::string& suffix) {
  PrimBuilder b(ctx.graph());
  Expr hit = ir::binary(ExprOp::Eq, ir::dvar(static_cast<int32_t>(axis)), b.bload(idx, shape));
  ir::Primitive p = b.make(ir::PrimOp::Elementwise);
  p.domain = shape;
  p.bodies = {ir::select(hit, ir::const_f(t, 1), ir::const_f(t, 0))};
  return ctx.emit1(std::move(p), {t, shape}, suffix);
}

}  // namespace

std::vector<ValueId> rule_ArgMax(RuleContext& ctx) { return arg_rule(ctx, true); }
std::vector<ValueId> rule_ArgMin(RuleContext& ctx) { return arg_rule(ctx, false); }

std::vector<ValueId> rule_Hardmax(RuleContext& ctx) {
  using D = DType;
  std::string op = "Hardmax-" + std::to_string(ctx.version());
  if (ctx.version() < 13) require_dtype(ctx, 0, {D::F16, D::F32, D::F64}, op);
  else require_dtype(ctx, 0, {D::F16, D::F32, D::F64, D::BF16}, op);
  ValueId x = ctx.input(0);
  const Dims xs = ctx.shape(0);
  DType t = ctx.dtype(0);
  auto rank = static_cast<int64_t>(xs.size());
  int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", ctx.version() >= 13 ? -1 : 1), rank);
  if (ctx.version() >= 13) {
    ValueId idx = arg_index(ctx, x, {axis, true, false, true}, "argmax");
    return {one_hot(ctx, idx, xs, axis, t, "")};
  }
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) (d < axis ? outer : inner) *= xs[static_cast<size_t>(d)];
  Dims flat = {outer, inner};
  ValueId x2 = view(ctx, x, flat, "2d");
  ValueId idx = arg_index(ctx, x2, {1, true, false, true}, "argmax");
  return {view(ctx, one_hot(ctx, idx, flat, 1, t, "hot"), xs)};
}

}  // namespace orchid::fission
