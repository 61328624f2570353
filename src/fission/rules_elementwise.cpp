// Fission rules of elementwise ONNX operators: each becomes one elementwise primitive with
// numpy broadcasting (legacy opset < 7 broadcasting via a view of the second operand).
#include <limits>

#include "fission/builders.h"
#include "fission/rules.h"
#include "frontend/tensor_proto.h"
#include "support/error.h"

namespace orchid::fission {

namespace {

using ir::DType;
using ir::ExprOp;

std::vector<ValueId> unary(RuleContext& ctx, ExprOp op) {
  return {ew_unary(ctx, ctx.input(0), [op](Expr x) { return ir::unary(op, x); })};
}

// Opset < 7: `broadcast=1` with `axis` aligns B's dims with A's starting at axis.
ValueId legacy_aligned(RuleContext& ctx, ValueId b) {
  if (ctx.version() >= 7 || ctx.attr_int("broadcast", 0) == 0 || !ctx.has_attr("axis")) return b;
  auto ra = static_cast<int64_t>(ctx.shape(0).size());
  int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", 0), ra);
  ir::Dims s = ctx.graph().type(b).shape;
  ORCHID_USER_CHECK(axis + static_cast<int64_t>(s.size()) <= ra)
      << ctx.where() << "legacy broadcast of " << ir::dims_str(s) << " at axis " << axis
      << " does not fit " << ir::dims_str(ctx.shape(0));
  s.resize(static_cast<size_t>(ra - axis), 1);
  return view(ctx, b, s, "aligned");
}

void require_same_dtype(const RuleContext& ctx, size_t a, size_t b) {
  ORCHID_USER_CHECK(ctx.dtype(a) == ctx.dtype(b))
      << ctx.where() << "inputs " << a << " and " << b << " have different dtypes ("
      << ir::dtype_name(ctx.dtype(a)) << " and " << ir::dtype_name(ctx.dtype(b)) << ")";
}

std::vector<ValueId> binary(RuleContext& ctx, ExprOp op) {
  require_same_dtype(ctx, 0, 1);
  ValueId b = legacy_aligned(ctx, ctx.input(1));
  DType out = ir::expr_op_category(op) == ir::ExprCategory::Compare ? DType::Bool : ctx.dtype(0);
  return {ew_map(ctx, {ctx.input(0), b}, out,
                 [op](const std::vector<Expr>& v) { return ir::binary(op, v[0], v[1]); })};
}

// Max, Min, Sum of any number of broadcast inputs, folded left in one primitive.
std::vector<ValueId> variadic(RuleContext& ctx, ExprOp op) {
  std::vector<ValueId> ins;
  for (size_t k = 0; k < ctx.num_inputs(); ++k) {
    require_same_dtype(ctx, 0, k);
    ins.push_back(ctx.input(k));
  }
  if (ins.size() == 1) return {ins[0]};
  return {ew_map(ctx, ins, ctx.dtype(0), [op](const std::vector<Expr>& v) {
    Expr acc = v[0];
    for (size_t k = 1; k < v.size(); ++k) acc = ir::binary(op, acc, v[k]);
    return acc;
  })};
}

Expr typed_const(DType t, double v) { return ir::constant(ir::Scalar::of(t, v)); }

}  // namespace

std::vector<ValueId> rule_Neg(RuleContext& ctx) { return unary(ctx, ExprOp::Neg); }
std::vector<ValueId> rule_Abs(RuleContext& ctx) { return unary(ctx, ExprOp::Abs); }
std::vector<ValueId> rule_Exp(RuleContext& ctx) { return unary(ctx, ExprOp::Exp); }
std::vector<ValueId> rule_Log(RuleContext& ctx) { return unary(ctx, ExprOp::Log); }
std::vector<ValueId> rule_Sqrt(RuleContext& ctx) { return unary(ctx, ExprOp::Sqrt); }
std::vector<ValueId> rule_Reciprocal(RuleContext& ctx) { return unary(ctx, ExprOp::Recip); }
std::vector<ValueId> rule_Sigmoid(RuleContext& ctx) { return unary(ctx, ExprOp::Sigmoid); }
std::vector<ValueId> rule_Tanh(RuleContext& ctx) { return unary(ctx, ExprOp::Tanh); }
std::vector<ValueId> rule_Erf(RuleContext& ctx) { return unary(ctx, ExprOp::Erf); }
std::vector<ValueId> rule_Not(RuleContext& ctx) { return unary(ctx, ExprOp::Not); }

std::vector<ValueId> rule_Relu(RuleContext& ctx) {
  DType t = ctx.dtype(0);
  return {ew_unary(ctx, ctx.input(0), [t](Expr x) { return ir::binary(ExprOp::Max, x, typed_const(t, 0)); })};
}

std::vector<ValueId> rule_LeakyRelu(RuleContext& ctx) {
  DType t = ctx.dtype(0);
  double alpha = ctx.attr_float("alpha", 0.01);
  return {ew_unary(ctx, ctx.input(0), [&](Expr x) {
    return ir::select(ir::binary(ExprOp::Lt, x, typed_const(t, 0)), x * typed_const(t, alpha), x);
  })};
}

std::vector<ValueId> rule_Identity(RuleContext& ctx) { return {ctx.input(0)}; }

std::vector<ValueId> rule_Dropout(RuleContext& ctx) {
  if (ctx.version() < 7 && ctx.attr_int("is_test", 0) == 0)
    ctx.unsupported("training-mode dropout (is_test=0) is random");
  if (ctx.has_input(2)) {
    const ir::Tensor* mode = ctx.constant(2);
    if (!mode) ctx.unsupported("training_mode given at run time (training-mode dropout is random)");
    if (mode->get_i64(0) != 0) ctx.unsupported("training-mode dropout is random");
  }
  std::vector<ValueId> outs = {ctx.input(0)};
  if (ctx.node().outputs.size() > 1 && !ctx.node().outputs[1].empty()) {
    DType mask_t = ctx.version() >= 10 ? DType::Bool : ctx.dtype(0);
    ir::Primitive p;
    p.op = ir::PrimOp::Elementwise;
    p.domain = ctx.shape(0);
    p.bodies = {typed_const(mask_t, 1)};
    outs.push_back(ctx.emit1(std::move(p), {mask_t, ctx.shape(0)}, "mask"));
  }
  return outs;
}

std::vector<ValueId> rule_Cast(RuleContext& ctx) {
  int64_t code = 0;
  auto it = ctx.node().attrs.find("to");
  ORCHID_USER_CHECK(it != ctx.node().attrs.end()) << ctx.where() << "attribute 'to' is required";
  if (const auto* name = std::get_if<std::string>(&it->second)) {  // opset < 6 names the type
    for (int32_t c = 0; c < 17; ++c)
      if (*name == frontend::onnx_dtype_name(c)) code = c;
  } else {
    code = ctx.attr_int("to", 0);
  }
  auto to = frontend::dtype_from_onnx(static_cast<int32_t>(code));
  if (!to) ctx.unsupported(std::string("cast to ") + frontend::onnx_dtype_name(static_cast<int32_t>(code)));
  return {cast_to(ctx, ctx.input(0), *to)};
}

std::vector<ValueId> rule_Clip(RuleContext& ctx) {
  DType t = ctx.dtype(0);
  std::vector<ValueId> ins = {ctx.input(0)};
  std::vector<int> bound_slot = {-1, -1};  // position in ins of the min / max inputs
  Expr lo, hi;
  if (ctx.version() < 11) {
    lo = typed_const(t, ctx.attr_float("min", -std::numeric_limits<double>::infinity()));
    hi = typed_const(t, ctx.attr_float("max", std::numeric_limits<double>::infinity()));
  }
  for (size_t k = 1; k <= 2 && ctx.version() >= 11; ++k) {
    if (!ctx.has_input(k)) continue;
    require_same_dtype(ctx, 0, k);
    ORCHID_USER_CHECK(ctx.type(k).numel() == 1) << ctx.where() << "clip bound " << k << " must be a scalar";
    bound_slot[k - 1] = static_cast<int>(ins.size());
    ins.push_back(view(ctx, ctx.input(k), {}, k == 1 ? "min" : "max"));
  }
  return {ew_map(ctx, ins, t, [&](const std::vector<Expr>& v) {
    Expr x = v[0];
    Expr l = bound_slot[0] >= 0 ? v[static_cast<size_t>(bound_slot[0])] : lo;
    Expr h = bound_slot[1] >= 0 ? v[static_cast<size_t>(bound_slot[1])] : hi;
    if (l.defined()) x = ir::binary(ExprOp::Max, x, l);
    if (h.defined()) x = ir::binary(ExprOp::Min, x, h);
    return x;
  })};
}

std::vector<ValueId> rule_Add(RuleContext& ctx) { return binary(ctx, ExprOp::Add); }
std::vector<ValueId> rule_Sub(RuleContext& ctx) { return binary(ctx, ExprOp::Sub); }
std::vector<ValueId> rule_Mul(RuleContext& ctx) { return binary(ctx, ExprOp::Mul); }
std::vector<ValueId> rule_Div(RuleContext& ctx) { return binary(ctx, ExprOp::Div); }
std::vector<ValueId> rule_Equal(RuleContext& ctx) { return binary(ctx, ExprOp::Eq); }
std::vector<ValueId> rule_Less(RuleContext& ctx) { return binary(ctx, ExprOp::Lt); }
std::vector<ValueId> rule_Greater(RuleContext& ctx) { return binary(ctx, ExprOp::Gt); }
std::vector<ValueId> rule_And(RuleContext& ctx) { return binary(ctx, ExprOp::And); }
std::vector<ValueId> rule_Or(RuleContext& ctx) { return binary(ctx, ExprOp::Or); }
std::vector<ValueId> rule_Max(RuleContext& ctx) { return variadic(ctx, ExprOp::Max); }
std::vector<ValueId> rule_Min(RuleContext& ctx) { return variadic(ctx, ExprOp::Min); }
std::vector<ValueId> rule_Sum(RuleContext& ctx) { return variadic(ctx, ExprOp::Add); }

// Pow(X: T, Y: T1) -> T. Integer powers are computed in f64 and truncated back.
std::vector<ValueId> rule_Pow(RuleContext& ctx) {
  DType t = ctx.dtype(0);
  DType compute = ir::is_float(t) ? t : DType::F64;
  ValueId y = legacy_aligned(ctx, ctx.input(1));
  return {ew_map(ctx, {ctx.input(0), y}, t, [&](const std::vector<Expr>& v) {
    Expr r = ir::binary(ExprOp::Pow, ir::cast(compute, v[0]), ir::cast(compute, v[1]));
    return t == compute ? r : ir::cast(t, r);
  })};
}

std::vector<ValueId> rule_Where(RuleContext& ctx) {
  ORCHID_USER_CHECK(ctx.dtype(0) == DType::Bool) << ctx.where() << "the condition must be bool";
  require_same_dtype(ctx, 1, 2);
  return {ew_map(ctx, {ctx.input(0), ctx.input(1), ctx.input(2)}, ctx.dtype(1),
                 [](const std::vector<Expr>& v) { return ir::select(v[0], v[1], v[2]); })};
}

}  // namespace orchid::fission
