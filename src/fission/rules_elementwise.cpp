// Fission rules of elementwise ONNX operators: each becomes one elementwise primitive with
// numpy broadcasting (legacy opset < 7 broadcasting via a view of the second operand).
#include <algorithm>
#include <cstddef>
#include <limits>
#include <string>

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

std::vector<ValueId> binary(RuleContext& ctx, ExprOp op) {
  require_same_dtype(ctx, 0, 1);
  ValueId b = legacy_aligned(ctx, ctx.input(1));
  DType out = ir::expr_op_category(op) == ir::ExprCategory::Compare ? DType::Bool : ctx.dtype(0);
  return {ew_map(ctx, {ctx.input(0), b}, out,
                 [op](const std::vector<Expr>& v) { return ir::binary(op, v[0], v[1]); })};
}

// The most inputs one primitive of a variadic op reads (the partial result so far among
// them): bodies nest at most this deep, however many inputs the node has (recursive passes
// over a body of 200k nested operators would overflow the stack).
constexpr size_t kMaxVariadicInputs = 64;

// Max, Min, Sum of any number of broadcast inputs, folded left to right: a chain of
// elementwise primitives, each folding the previous one's result and up to
// kMaxVariadicInputs - 1 further inputs.
std::vector<ValueId> variadic(RuleContext& ctx, ExprOp op) {
  std::vector<ValueId> ins;
  for (size_t k = 0; k < ctx.num_inputs(); ++k) {
    require_same_dtype(ctx, 0, k);
    ins.push_back(ctx.input(k));
  }
  auto fold = [op](const std::vector<Expr>& v) {
    Expr acc = v[0];
    for (size_t k = 1; k < v.size(); ++k) acc = ir::binary(op, acc, v[k]);
    return acc;
  };
  ValueId acc = ins[0];
  for (size_t next = 1, part = 0; next < ins.size(); ++part) {
    size_t end = std::min(ins.size(), next + kMaxVariadicInputs - 1);
    std::vector<ValueId> chunk = {acc};
    chunk.insert(chunk.end(), ins.begin() + static_cast<std::ptrdiff_t>(next),
                 ins.begin() + static_cast<std::ptrdiff_t>(end));
    acc = ew_map(ctx, chunk, ctx.dtype(0), fold, end == ins.size() ? "" : "partial" + std::to_string(part));
    next = end;
  }
  return {acc};
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
    ORCHID_USER_CHECK(mode->dtype() == DType::Bool && mode->numel() == 1)
        << ctx.where() << "training_mode must be one bool, not " << ir::type_str(mode->type());
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

// ---- Comparisons, rounding, trigonometry and activations: one primitive each. ----

namespace orchid::fission {

namespace {  // the same unnamed namespace as above: binary, unary, variadic, typed_const

Expr lt(Expr a, Expr b) { return ir::binary(ExprOp::Lt, std::move(a), std::move(b)); }
Expr gt(Expr a, Expr b) { return ir::binary(ExprOp::Gt, std::move(a), std::move(b)); }
Expr exp_of(Expr a) { return ir::unary(ExprOp::Exp, std::move(a)); }
Expr log_of(Expr a) { return ir::unary(ExprOp::Log, std::move(a)); }
Expr sqrt_of(Expr a) { return ir::unary(ExprOp::Sqrt, std::move(a)); }
Expr max_of(Expr a, Expr b) { return ir::binary(ExprOp::Max, std::move(a), std::move(b)); }
Expr min_of(Expr a, Expr b) { return ir::binary(ExprOp::Min, std::move(a), std::move(b)); }

// One elementwise primitive over input 0 computing f(x, its dtype).
std::vector<ValueId> map1(RuleContext& ctx, const std::function<Expr(Expr, DType)>& f) {
  DType t = ctx.dtype(0);
  return {ew_unary(ctx, ctx.input(0), [&](Expr x) { return f(x, t); })};
}

}  // namespace

std::vector<ValueId> rule_GreaterOrEqual(RuleContext& ctx) { return binary(ctx, ExprOp::Ge); }
std::vector<ValueId> rule_LessOrEqual(RuleContext& ctx) { return binary(ctx, ExprOp::Le); }
std::vector<ValueId> rule_Xor(RuleContext& ctx) { return binary(ctx, ExprOp::Xor); }
std::vector<ValueId> rule_Floor(RuleContext& ctx) { return unary(ctx, ExprOp::Floor); }
std::vector<ValueId> rule_Ceil(RuleContext& ctx) { return unary(ctx, ExprOp::Ceil); }
std::vector<ValueId> rule_Round(RuleContext& ctx) { return unary(ctx, ExprOp::Round); }
std::vector<ValueId> rule_Sign(RuleContext& ctx) { return unary(ctx, ExprOp::Sign); }
std::vector<ValueId> rule_IsNaN(RuleContext& ctx) { return unary(ctx, ExprOp::IsNan); }
std::vector<ValueId> rule_Sin(RuleContext& ctx) { return unary(ctx, ExprOp::Sin); }
std::vector<ValueId> rule_Atan(RuleContext& ctx) { return unary(ctx, ExprOp::Atan); }
// asin(x) = atan(x / sqrt((1 - x)(1 + x))): ±π/2 at ±1, NaN beyond; the factored radicand
// keeps its precision near ±1.
std::vector<ValueId> rule_Asin(RuleContext& ctx) {
  return map1(ctx, [](Expr x, DType t) {
    Expr one = typed_const(t, 1);
    return ir::unary(ExprOp::Atan, x / sqrt_of((one - x) * (one + x)));
  });
}
// acos(x) = 2 atan(sqrt((1 - x) / (1 + x))): accurate near 1, where π/2 - asin(x) cancels.
std::vector<ValueId> rule_Acos(RuleContext& ctx) {
  return map1(ctx, [](Expr x, DType t) {
    Expr one = typed_const(t, 1);
    return typed_const(t, 2) * ir::unary(ExprOp::Atan, sqrt_of((one - x) / (one + x)));
  });
}
std::vector<ValueId> rule_Cos(RuleContext& ctx) { return unary(ctx, ExprOp::Cos); }

std::vector<ValueId> rule_IsInf(RuleContext& ctx) {
  bool neg = ctx.attr_int("detect_negative", 1) != 0, pos = ctx.attr_int("detect_positive", 1) != 0;
  return map1(ctx, [&](Expr x, DType t) {
    Expr inf = ir::unary(ExprOp::IsInf, x);
    if (neg && pos) return inf;
    if (!neg && !pos) return ir::const_bool(false);
    Expr side = neg ? lt(x, typed_const(t, 0)) : gt(x, typed_const(t, 0));
    return ir::binary(ExprOp::And, inf, side);
  });
}

std::vector<ValueId> rule_Tan(RuleContext& ctx) {
  return map1(ctx, [](Expr x, DType) { return ir::unary(ExprOp::Sin, x) / ir::unary(ExprOp::Cos, x); });
}
std::vector<ValueId> rule_Sinh(RuleContext& ctx) {
  return map1(ctx, [](Expr x, DType t) { return (exp_of(x) - exp_of(ir::unary(ExprOp::Neg, x))) * typed_const(t, 0.5); });
}
std::vector<ValueId> rule_Cosh(RuleContext& ctx) {
  return map1(ctx, [](Expr x, DType t) { return (exp_of(x) + exp_of(ir::unary(ExprOp::Neg, x))) * typed_const(t, 0.5); });
}
std::vector<ValueId> rule_Asinh(RuleContext& ctx) {  // log(x + sqrt(x^2 + 1))
  return map1(ctx, [](Expr x, DType t) { return log_of(x + sqrt_of(x * x + typed_const(t, 1))); });
}
std::vector<ValueId> rule_Acosh(RuleContext& ctx) {  // log(x + sqrt(x^2 - 1))
  return map1(ctx, [](Expr x, DType t) { return log_of(x + sqrt_of(x * x - typed_const(t, 1))); });
}
std::vector<ValueId> rule_Atanh(RuleContext& ctx) {  // log((1 + x) / (1 - x)) / 2
  return map1(ctx, [](Expr x, DType t) {
    Expr one = typed_const(t, 1);
    return log_of((one + x) / (one - x)) * typed_const(t, 0.5);
  });
}

// x shifted by y bits, `direction` LEFT or RIGHT (unsigned integers: no bits come back).
std::vector<ValueId> rule_BitShift(RuleContext& ctx) {
  std::string dir = ctx.attr_string("direction", "");
  ORCHID_USER_CHECK(dir == "LEFT" || dir == "RIGHT")
      << ctx.where() << "direction must be LEFT or RIGHT, given '" << dir << "'";
  ORCHID_USER_CHECK(ir::dtype_class(ctx.dtype(0)) == ir::DTypeClass::Unsigned)
      << ctx.where() << "X has dtype " << ir::dtype_name(ctx.dtype(0)) << "; BitShift takes unsigned integers";
  return binary(ctx, dir == "LEFT" ? ExprOp::Shl : ExprOp::Shr);
}

// fmod=0: floored modulo (integers only, the sign of the divisor); fmod=1: C's fmod, the
// truncated remainder (the sign of the dividend; integers: C's %).
std::vector<ValueId> rule_Mod(RuleContext& ctx) {
  bool c_fmod = ctx.attr_int("fmod", 0) != 0;
  ORCHID_USER_CHECK(c_fmod || !ir::is_float(ctx.dtype(0)))
      << ctx.where() << "fmod=0 is not defined for floating-point inputs";
  require_same_dtype(ctx, 0, 1);
  ExprOp op = c_fmod ? ExprOp::Rem : ExprOp::Mod;
  return {ew_map(ctx, {ctx.input(0), ctx.input(1)}, ctx.dtype(0),
                 [op](const std::vector<Expr>& v) { return ir::binary(op, v[0], v[1]); })};
}

std::vector<ValueId> rule_Mean(RuleContext& ctx) {
  std::vector<ValueId> sum = variadic(ctx, ExprOp::Add);
  double n = static_cast<double>(ctx.num_inputs());
  return {ew_unary(ctx, sum[0], [&](Expr s) { return s / typed_const(ctx.dtype(0), n); }, "mean")};
}

std::vector<ValueId> rule_Softplus(RuleContext& ctx) {
  return map1(ctx, [](Expr x, DType t) { return log_of(exp_of(x) + typed_const(t, 1)); });
}
std::vector<ValueId> rule_Softsign(RuleContext& ctx) {
  return map1(ctx, [](Expr x, DType t) { return x / (typed_const(t, 1) + ir::unary(ExprOp::Abs, x)); });
}
std::vector<ValueId> rule_Elu(RuleContext& ctx) {
  double alpha = ctx.attr_float("alpha", 1.0);
  return map1(ctx, [&](Expr x, DType t) {
    return ir::select(lt(x, typed_const(t, 0)), typed_const(t, alpha) * (exp_of(x) - typed_const(t, 1)), x);
  });
}
std::vector<ValueId> rule_Selu(RuleContext& ctx) {
  double alpha = ctx.attr_float("alpha", 1.67326319217681884765625);
  double gamma = ctx.attr_float("gamma", 1.05070102214813232421875);
  return map1(ctx, [&](Expr x, DType t) {
    Expr neg = typed_const(t, alpha) * exp_of(x) - typed_const(t, alpha);
    return typed_const(t, gamma) * ir::select(gt(x, typed_const(t, 0)), x, neg);
  });
}
std::vector<ValueId> rule_Celu(RuleContext& ctx) {  // max(0, x) + min(0, alpha (exp(x / alpha) - 1))
  double alpha = ctx.attr_float("alpha", 1.0);
  return map1(ctx, [&](Expr x, DType t) {
    Expr a = typed_const(t, alpha), zero = typed_const(t, 0);
    return max_of(zero, x) + min_of(zero, a * (exp_of(x / a) - typed_const(t, 1)));
  });
}
std::vector<ValueId> rule_HardSigmoid(RuleContext& ctx) {
  double alpha = ctx.attr_float("alpha", 0.2), beta = ctx.attr_float("beta", 0.5);
  return map1(ctx, [&](Expr x, DType t) {
    return max_of(typed_const(t, 0), min_of(typed_const(t, 1), typed_const(t, alpha) * x + typed_const(t, beta)));
  });
}
std::vector<ValueId> rule_HardSwish(RuleContext& ctx) {  // x * HardSigmoid(x; 1/6, 1/2)
  return map1(ctx, [](Expr x, DType t) {
    return x * max_of(typed_const(t, 0), min_of(typed_const(t, 1), x * typed_const(t, 1.0 / 6) + typed_const(t, 0.5)));
  });
}
std::vector<ValueId> rule_ThresholdedRelu(RuleContext& ctx) {
  double alpha = ctx.attr_float("alpha", 1.0);
  return map1(ctx, [&](Expr x, DType t) { return ir::select(gt(x, typed_const(t, alpha)), x, typed_const(t, 0)); });
}
std::vector<ValueId> rule_Shrink(RuleContext& ctx) {
  double bias = ctx.attr_float("bias", 0.0), lambd = ctx.attr_float("lambd", 0.5);
  return map1(ctx, [&](Expr x, DType t) {
    Expr zero = typed_const(t, 0);
    Expr low = ir::select(lt(x, typed_const(t, -lambd)), x + typed_const(t, bias), zero);
    return ir::select(gt(x, typed_const(t, lambd)), x - typed_const(t, bias), low);
  });
}

// PRelu: versions 1 and 6 take a slope of one value or one per channel (dim 1); from 7 the slope
// broadcasts numpy-style (unidirectionally) to X.
std::vector<ValueId> rule_PRelu(RuleContext& ctx) {
  require_same_dtype(ctx, 0, 1);
  ValueId slope = ctx.input(1);
  ir::Dims xs = ctx.shape(0), ss = ctx.shape(1);
  if (ctx.version() < 7 && ss.size() == 1 && xs.size() >= 2 && ss[0] == xs[1] && ss[0] != 1) {
    ir::Dims along(xs.size() - 1, 1);
    along[0] = ss[0];
    slope = view(ctx, slope, along, "channels");
    ss = along;
  }
  ORCHID_USER_CHECK(broadcast_shapes(ctx, {xs, ss}) == xs)
      << ctx.where() << "slope of shape " << ir::dims_str(ctx.shape(1)) << " does not broadcast to "
      << ir::dims_str(xs);
  DType t = ctx.dtype(0);
  return {ew_map(ctx, {ctx.input(0), slope}, t, [&](const std::vector<Expr>& v) {
    return ir::select(lt(v[0], typed_const(t, 0)), v[0] * v[1], v[0]);
  })};
}

}  // namespace orchid::fission
