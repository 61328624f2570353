// Fission rules of the linear ONNX operators (Korch §3: linear primitives plus elementwise
// epilogues):
//  - MatMul: one matmul primitive; 1-D operands are viewed as a row / column matrix and the
//    added dim is viewed away again (numpy.matmul); batch dims broadcast in the primitive,
//    but a stack of matrices times one matrix is one product of all the stack's rows.
//  - Gemm: a matmul primitive with trans_a / trans_b, then one elementwise primitive for
//    alpha * AB + beta * C (C broadcast unidirectionally to [M, N]).
//  - Conv: one conv primitive (padding from pads or auto_pad, see linear_common.h), then an
//    elementwise primitive adding the bias B viewed as [M, 1, .., 1].
// Integer MatMul / Gemm (opset >= 9) are matmul primitives of their dtype too: the
// interpreter computes integer linear primitives exactly, wrapping as ONNX's integer
// arithmetic does, and oneDNN is chosen for f32 ones only.
#include "fission/builders.h"
#include "fission/linear_common.h"
#include "fission/rules.h"
#include "support/error.h"

namespace orchid::fission {

namespace {

using ir::DType;
using ir::Dims;

// The type constraint T of MatMul and Gemm, which both widen it at versions 9 and 13.
void require_gemm_dtype(const RuleContext& ctx, size_t k) {
  std::string op = ctx.node().op_type + "-" + std::to_string(ctx.version());
  using D = DType;
  if (ctx.version() < 9) return require_dtype(ctx, k, {D::F16, D::F32, D::F64}, op);
  if (ctx.version() < 13)
    return require_dtype(ctx, k, {D::F16, D::F32, D::F64, D::U32, D::U64, D::I32, D::I64}, op);
  require_dtype(ctx, k, {D::F16, D::F32, D::F64, D::U32, D::U64, D::I32, D::I64, D::BF16}, op);
}

// alpha or beta of Gemm as a constant of dtype t; integer Gemm takes integral values only.
Expr gemm_scale(const RuleContext& ctx, DType t, double v, const char* name) {
  if (ir::is_float(t)) return ir::const_f(t, v);
  if (v != static_cast<double>(static_cast<int64_t>(v)))
    ctx.unsupported(std::string("integer Gemm with a non-integer ") + name + " (" + std::to_string(v) + ")");
  return ir::constant(ir::Scalar::of_int(t, static_cast<int64_t>(v)));
}

// Gemm's C: unidirectionally broadcastable to [M, N] (opset < 7 with broadcast=0: exactly
// [M, N]).
void check_gemm_c(const RuleContext& ctx, const Dims& mn) {
  const Dims& c = ctx.shape(2);
  bool legacy_exact = ctx.version() < 7 && ctx.attr_int("broadcast", 0) == 0;
  bool ok = legacy_exact ? c == mn : c.size() <= 2;
  for (size_t j = 0; ok && !legacy_exact && j < c.size(); ++j) {
    int64_t want = mn[2 - c.size() + j];
    ok = c[j] == want || c[j] == 1;
  }
  ORCHID_USER_CHECK(ok) << ctx.where() << "C of shape " << ir::dims_str(c)
                        << (legacy_exact ? " must equal " : " does not broadcast to ")
                        << ir::dims_str(mn) << (legacy_exact ? " (broadcast=0)" : "");
}

}  // namespace

std::vector<ValueId> rule_MatMul(RuleContext& ctx) {
  require_same_dtype(ctx, 0, 1);
  require_gemm_dtype(ctx, 0);
  Dims sa = ctx.shape(0), sb = ctx.shape(1);
  ORCHID_USER_CHECK(!sa.empty() && !sb.empty())
      << ctx.where() << "MatMul of a scalar (shapes " << ir::dims_str(sa) << " and "
      << ir::dims_str(sb) << ")";
  ValueId a = ctx.input(0), b = ctx.input(1);
  if (sa.size() >= 3 && sb.size() == 2) {
    // A stack of matrices times one matrix is one product of all their rows: A viewed as
    // [batch x M, K] (a batch of single rows, [197, 1, K], is then a matrix of 197 rows).
    int64_t rows = ir::numel(Dims(sa.begin(), sa.end() - 1));
    ValueId y = matmul(ctx, view(ctx, a, {rows, sa.back()}, "rows"), b, {});
    Dims ys = sa;
    ys.back() = sb.back();
    return {view(ctx, y, ys)};
  }
  if (sa.size() == 1) a = view(ctx, a, {1, sa[0]}, "row");
  if (sb.size() == 1) b = view(ctx, b, {sb[0], 1}, "col");
  ValueId y = matmul(ctx, a, b, {});
  Dims ys = ctx.graph().type(y).shape;  // drop the dims the views added (numpy.matmul)
  if (sb.size() == 1) ys.erase(ys.end() - 1);
  if (sa.size() == 1) ys.erase(ys.end() - (sb.size() == 1 ? 1 : 2));
  return {view(ctx, y, ys)};
}

std::vector<ValueId> rule_Gemm(RuleContext& ctx) {
  require_same_dtype(ctx, 0, 1);
  if (ctx.has_input(2)) require_same_dtype(ctx, 0, 2);
  require_gemm_dtype(ctx, 0);
  ORCHID_USER_CHECK(ctx.version() >= 11 || ctx.has_input(2))
      << ctx.where() << "input 2 (C) is required before version 11";
  ORCHID_USER_CHECK(ctx.version() < 7 || !ctx.has_attr("broadcast"))
      << ctx.where() << "attribute 'broadcast' is not defined after version 6";
  ORCHID_USER_CHECK(ctx.shape(0).size() == 2 && ctx.shape(1).size() == 2)
      << ctx.where() << "A and B must be matrices, given " << ir::dims_str(ctx.shape(0)) << " and "
      << ir::dims_str(ctx.shape(1));
  ir::MatMulAttrs attrs{ctx.attr_int("transA", 0) != 0, ctx.attr_int("transB", 0) != 0};
  ValueId y = matmul(ctx, ctx.input(0), ctx.input(1), attrs);
  Dims mn = ctx.graph().type(y).shape;
  DType t = ctx.dtype(0);
  double alpha = ctx.attr_float("alpha", 1.0), beta = ctx.attr_float("beta", 1.0);
  Expr a_scale = gemm_scale(ctx, t, alpha, "alpha");
  if (!ctx.has_input(2)) {
    if (alpha == 1.0) return {y};
    return {ew_unary(ctx, y, [&](Expr e) { return e * a_scale; })};
  }
  check_gemm_c(ctx, mn);
  Expr b_scale = gemm_scale(ctx, t, beta, "beta");
  return {ew_map(ctx, {y, ctx.input(2)}, t, [&](const std::vector<Expr>& v) {
    Expr ab = alpha == 1.0 ? v[0] : v[0] * a_scale;
    return ab + (beta == 1.0 ? v[1] : v[1] * b_scale);
  })};
}

ValueId conv_of(RuleContext& ctx, ValueId x, ValueId weights, const std::string& suffix) {
  const Dims xs = ctx.graph().type(x).shape;
  const Dims ws = ctx.graph().type(weights).shape;
  ORCHID_USER_CHECK(xs.size() >= 3 && ws.size() == xs.size())
      << ctx.where() << "X " << ir::dims_str(xs) << " and W " << ir::dims_str(ws)
      << " need one rank >= 3";
  Dims wk(ws.begin() + 2, ws.end());
  WindowGeometry w = read_window(ctx, xs, {&wk, true, false});
  int64_t group = ctx.attr_int("group", 1);
  ORCHID_USER_CHECK(group >= 1 && xs[1] == ws[1] * group && ws[0] % group == 0)
      << ctx.where() << "group=" << group << " does not fit X " << ir::dims_str(xs) << " and W "
      << ir::dims_str(ws) << " (X channels = W dim 1 * group, W dim 0 a multiple of group)";
  ir::Primitive p;
  p.op = ir::PrimOp::Conv;
  p.inputs = {x, weights};
  p.attrs = ir::ConvAttrs{w.strides, w.dilations, w.pads_begin, w.pads_end, group};
  ir::TensorType out =
      ir::conv_result_type(ctx.graph().type(x), ctx.graph().type(weights), std::get<ir::ConvAttrs>(p.attrs));
  ORCHID_CHECK(Dims(out.shape.begin() + 2, out.shape.end()) == w.out)
      << "conv output " << ir::type_str(out) << " differs from the window geometry " << ir::dims_str(w.out);
  return ctx.emit1(std::move(p), out, suffix);
}

std::vector<ValueId> rule_Conv(RuleContext& ctx) {
  require_same_dtype(ctx, 0, 1);
  if (ctx.has_input(2)) require_same_dtype(ctx, 0, 2);
  require_dtype(ctx, 0, {DType::F16, DType::F32, DType::F64}, "Conv-" + std::to_string(ctx.version()));
  const Dims ws = ctx.shape(1);
  const Dims xs = ctx.shape(0);
  ValueId y = conv_of(ctx, ctx.input(0), ctx.input(1), ctx.has_input(2) ? "conv" : "");
  ir::TensorType out = ctx.graph().type(y);
  if (!ctx.has_input(2)) return {y};
  ORCHID_USER_CHECK(ctx.shape(2) == Dims{ws[0]})
      << ctx.where() << "bias B of shape " << ir::dims_str(ctx.shape(2)) << " should be [" << ws[0] << "]";
  Dims bias_shape(xs.size() - 1, 1);  // [M, 1, .., 1]: aligned with dim 1 of the output
  bias_shape[0] = ws[0];
  ValueId bias = view(ctx, ctx.input(2), bias_shape, "bias");
  return {ew_map(ctx, {y, bias}, out.dtype, [](const std::vector<Expr>& v) { return v[0] + v[1]; })};
}

}  // namespace orchid::fission
