// Quantization (ONNX QuantizeLinear and DequantizeLinear with their per-axis forms,
// DynamicQuantizeLinear, and the integer and quantized linear operators): elementwise maps
// and reductions around an integer matmul or conv, so that int8 models import and fuse like
// any other.
//
//   quantize(x)   = saturate(round_half_even(x / scale) + zero_point)   in f32, then cast
//   dequantize(q) = (q - zero_point) * scale                            (q - zp exact in i32)
//   MatMulInteger = (A - a_zp) @ (B - b_zp) in i32                      (exact)
//   QLinearMatMul = quantize((A - a_zp) @ (B - b_zp) * (a_scale * b_scale), y_scale, y_zp)
//                   (quantize divides by y_scale, as for QuantizeLinear)
//   QLinearConv   = the same with conv and an i32 bias added to the accumulator
// Saturation clamps to the output type's range (u8: [0, 255], i8: [-128, 127]).
#include <string>

#include "fission/builders.h"
#include "fission/linear_common.h"
#include "fission/rules.h"
#include "support/error.h"

namespace orchid::fission {

namespace {

using ir::DType;
using ir::Dims;
using ir::ExprOp;

Expr fconst(double v) { return ir::const_f(DType::F32, v); }

bool is_8bit(DType t) { return t == DType::U8 || t == DType::I8; }

void require_8bit(const RuleContext& ctx, size_t k, const char* what) {
  ORCHID_USER_CHECK(is_8bit(ctx.dtype(k)))
      << ctx.where() << what << " (input " << k << ") has dtype " << ir::dtype_name(ctx.dtype(k))
      << "; the operator takes uint8 or int8";
}

// A scale or zero point of input k read against a value of rank `rank`: a scalar (or one
// element) as is; a 1-D tensor along dim `axis` (per-axis quantization) as [n, 1, ..].
ValueId along_axis(RuleContext& ctx, size_t k, size_t rank, int64_t axis, const Dims& shape, const char* what) {
  ValueId v = ctx.input(k);
  Dims s = ctx.shape(k);
  if (ir::numel(s) == 1) return view(ctx, v, {}, what);
  ORCHID_USER_CHECK(s.size() == 1 && axis >= 0 && static_cast<size_t>(axis) < rank && s[0] == shape[static_cast<size_t>(axis)])
      << ctx.where() << what << " " << ir::dims_str(s) << " is neither a scalar nor one value per element of axis "
      << axis << " of " << ir::dims_str(shape);
  Dims along(rank - static_cast<size_t>(axis), 1);
  along[0] = s[0];
  return view(ctx, v, along, what);
}

// saturate(round(real / scale) + zero_point) as dtype `to`; zp empty: 0. The quotient is
// rounded to f32 before it is rounded to an integer, as the operators define it (0.5 /
// f32(5/255) is 25.4999995, whose f32 is 25.5, quantized to 26).
Expr quantize(Expr real, Expr scale, Expr zp, DType to) {
  Expr q = ir::unary(ExprOp::Round, real / scale);
  if (zp.defined()) q = q + ir::cast(DType::F32, zp);
  double lo = to == DType::U8 ? 0 : -128, hi = to == DType::U8 ? 255 : 127;
  return ir::cast(to, ir::binary(ExprOp::Min, ir::binary(ExprOp::Max, q, fconst(lo)), fconst(hi)));
}

// The axis of a per-axis operator (opset 13; 1 before, where scales are scalars anyway),
// normalised only when scale input k is per-axis (a scalar scale ignores it).
int64_t quant_axis(const RuleContext& ctx, size_t rank, size_t k) {
  if (ctx.version() < 13 || ir::numel(ctx.shape(k)) == 1) return 1;
  return ctx.normalize_axis(ctx.attr_int("axis", 1), static_cast<int64_t>(rank));
}

// Input x minus its zero point (input zp when given, of x's dtype: a scalar, or one value
// per element of x's dim `axis`; −1: a scalar only) in i32.
ValueId shifted(RuleContext& ctx, size_t x, size_t zp, int64_t axis, const std::string& suffix) {
  std::vector<ValueId> ins = {ctx.input(x)};
  if (ctx.has_input(zp)) {
    require_same_dtype(ctx, x, zp);
    Dims xs = ctx.shape(x);
    ins.push_back(along_axis(ctx, zp, xs.size(), axis, xs, "zero_point"));
  }
  return ew_map(ctx, ins, DType::I32, [&](const std::vector<Expr>& v) {
    Expr d = ir::cast(DType::I32, v[0]);
    return ins.size() > 1 ? d - ir::cast(DType::I32, v[1]) : d;
  }, suffix);
}

}  // namespace

std::vector<ValueId> rule_QuantizeLinear(RuleContext& ctx) {
  DType xt = ctx.dtype(0);
  ORCHID_USER_CHECK(xt == DType::F32 || xt == DType::I32)
      << ctx.where() << "x has dtype " << ir::dtype_name(xt) << "; QuantizeLinear takes float or int32";
  ORCHID_USER_CHECK(ctx.dtype(1) == DType::F32) << ctx.where() << "y_scale must be float";
  DType to = DType::U8;
  if (ctx.has_input(2)) {
    require_8bit(ctx, 2, "y_zero_point");
    to = ctx.dtype(2);
  }
  Dims xs = ctx.shape(0);
  int64_t axis = quant_axis(ctx, xs.size(), 1);
  std::vector<ValueId> ins = {ctx.input(0), along_axis(ctx, 1, xs.size(), axis, xs, "scale")};
  if (ctx.has_input(2)) ins.push_back(along_axis(ctx, 2, xs.size(), axis, xs, "zero_point"));
  return {ew_map(ctx, ins, to, [&](const std::vector<Expr>& v) {
    return quantize(ir::cast(DType::F32, v[0]), v[1], ins.size() > 2 ? v[2] : Expr(), to);
  })};
}

std::vector<ValueId> rule_DequantizeLinear(RuleContext& ctx) {
  DType xt = ctx.dtype(0);
  ORCHID_USER_CHECK(is_8bit(xt) || xt == DType::I32)
      << ctx.where() << "x has dtype " << ir::dtype_name(xt) << "; DequantizeLinear takes uint8, int8 or int32";
  ORCHID_USER_CHECK(ctx.dtype(1) == DType::F32) << ctx.where() << "x_scale must be float";
  Dims xs = ctx.shape(0);
  int64_t axis = quant_axis(ctx, xs.size(), 1);
  ValueId d = shifted(ctx, 0, 2, axis, "shifted");
  ValueId scale = along_axis(ctx, 1, xs.size(), axis, xs, "scale");
  return {ew_map(ctx, {d, scale}, DType::F32,
                 [](const std::vector<Expr>& v) { return ir::cast(DType::F32, v[0]) * v[1]; })};
}

// y_scale = (max(0, max x) - min(0, min x)) / 255; y_zero_point = saturate(round(-min / y_scale));
// y = saturate(round(x / y_scale) + y_zero_point), all uint8.
std::vector<ValueId> rule_DynamicQuantizeLinear(RuleContext& ctx) {
  ORCHID_USER_CHECK(ctx.dtype(0) == DType::F32) << ctx.where() << "x must be float";
  size_t rank = ctx.shape(0).size();
  std::vector<int64_t> all;
  for (size_t d = 0; d < rank; ++d) all.push_back(static_cast<int64_t>(d));
  ValueId hi = reduce_axes(ctx, ctx.input(0), all, false, ir::ReduceOp::Max, nullptr, "max")[0];
  ValueId lo = reduce_axes(ctx, ctx.input(0), all, false, ir::ReduceOp::Min, nullptr, "min")[0];
  ValueId scale = ew_map(ctx, {hi, lo}, DType::F32, [](const std::vector<Expr>& v) {
    Expr range = ir::binary(ExprOp::Max, v[0], fconst(0)) - ir::binary(ExprOp::Min, v[1], fconst(0));
    return range / fconst(255);
  }, "scale");
  ValueId zp = ew_map(ctx, {lo, scale}, DType::U8, [](const std::vector<Expr>& v) {
    return quantize(fconst(0) - ir::binary(ExprOp::Min, v[0], fconst(0)), v[1], Expr(), DType::U8);
  }, "zero_point");
  ValueId y = ew_map(ctx, {ctx.input(0), scale, zp}, DType::U8,
                     [](const std::vector<Expr>& v) { return quantize(v[0], v[1], v[2], DType::U8); });
  return {y, scale, zp};
}

namespace {

// (A - a_zp) @ (B - b_zp) in i32 from inputs a, b and their zero points.
ValueId integer_matmul(RuleContext& ctx, size_t a, size_t a_zp, size_t b, size_t b_zp, const std::string& suffix) {
  require_8bit(ctx, a, "A");
  require_8bit(ctx, b, "B");
  ORCHID_USER_CHECK(ctx.shape(a).size() >= 2 && ctx.shape(b).size() >= 2)
      << ctx.where() << "A " << ir::dims_str(ctx.shape(a)) << " and B " << ir::dims_str(ctx.shape(b))
      << " need rank >= 2 (1-D operands are not supported)";
  // A's zero point is per row (or one), B's per column.
  ValueId ai = shifted(ctx, a, a_zp, static_cast<int64_t>(ctx.shape(a).size()) - 2, "a");
  ValueId bi = shifted(ctx, b, b_zp, static_cast<int64_t>(ctx.shape(b).size()) - 1, "b");
  return matmul(ctx, ai, bi, ir::MatMulAttrs{false, false}, suffix);
}

// A conv operand minus its zero point in i32: X's a scalar, W's a scalar or one per output
// channel.
ValueId conv_operand(RuleContext& ctx, size_t x, size_t zp, bool weights) {
  require_8bit(ctx, x, weights ? "W" : "X");
  return shifted(ctx, x, zp, weights ? 0 : -1, weights ? "w" : "x");
}

}  // namespace

std::vector<ValueId> rule_MatMulInteger(RuleContext& ctx) { return {integer_matmul(ctx, 0, 2, 1, 3, "")}; }

std::vector<ValueId> rule_ConvInteger(RuleContext& ctx) {
  ValueId x = conv_operand(ctx, 0, 2, false), w = conv_operand(ctx, 1, 3, true);
  return {conv_of(ctx, x, w)};
}

namespace {

// The requantization of an i32 accumulator `acc` (per output channel along dim `channel` of
// rank `rank` where a scale is 1-D): quantize(acc * (in_scale * w_scale), y_scale, y_zp).
ValueId requantize(RuleContext& ctx, ValueId acc, size_t in_scale, size_t w_scale, size_t y_scale, size_t y_zp,
                   int64_t channel) {
  ir::TensorType t = ctx.graph().type(acc);
  require_8bit(ctx, y_zp, "y_zero_point");
  DType to = ctx.dtype(y_zp);
  std::vector<ValueId> ins = {acc};
  for (size_t k : {in_scale, w_scale, y_scale}) {
    ORCHID_USER_CHECK(ctx.dtype(k) == DType::F32) << ctx.where() << "scale (input " << k << ") must be float";
    ins.push_back(along_axis(ctx, k, t.shape.size(), channel, t.shape, "scale"));
  }
  ins.push_back(along_axis(ctx, y_zp, t.shape.size(), channel, t.shape, "zero_point"));
  return ew_map(ctx, ins, to, [&](const std::vector<Expr>& v) {
    return quantize(ir::cast(DType::F32, v[0]) * (v[1] * v[2]), v[3], v[4], to);
  });
}

}  // namespace

// Inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point.
std::vector<ValueId> rule_QLinearMatMul(RuleContext& ctx) {
  ValueId acc = integer_matmul(ctx, 0, 2, 3, 5, "acc");
  int64_t cols = static_cast<int64_t>(ctx.graph().type(acc).shape.size()) - 1;
  return {requantize(ctx, acc, 1, 4, 6, 7, cols)};
}

// Inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B (i32).
std::vector<ValueId> rule_QLinearConv(RuleContext& ctx) {
  ValueId x = conv_operand(ctx, 0, 2, false), w = conv_operand(ctx, 3, 5, true);
  ValueId acc = conv_of(ctx, x, w, "acc");
  if (ctx.has_input(8)) {
    Dims ws = ctx.shape(3), ys = ctx.graph().type(acc).shape;
    ORCHID_USER_CHECK(ctx.dtype(8) == DType::I32 && ctx.shape(8) == Dims{ws[0]})
        << ctx.where() << "bias B should be int32 [" << ws[0] << "], given " << ir::type_str(ctx.type(8));
    ValueId bias = along_axis(ctx, 8, ys.size(), 1, ys, "bias");
    acc = ew_map(ctx, {acc, bias}, DType::I32, [](const std::vector<Expr>& v) { return v[0] + v[1]; }, "biased");
  }
  return {requantize(ctx, acc, 1, 4, 6, 7, 1)};
}

}  // namespace orchid::fission
