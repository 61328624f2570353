// Fission rules of normalizations.
//
// LayerNormalization and InstanceNormalization take the population mean and variance with
// one welford reduction, then normalise, scale and shift in one elementwise primitive.
// BatchNormalization (inference only) is an affine map per channel: a small elementwise
// primitive folds scale / sqrt(var + epsilon) per channel, a second applies it to x.
#include <algorithm>

#include "fission/builders.h"
#include "fission/norm_common.h"
#include "fission/rules.h"
#include "support/error.h"

namespace orchid::fission {

namespace {

using ir::DType;
using ir::ExprOp;
using ir::ReduceOp;

struct Moments {
  ValueId mean, var;
};

// Population mean and variance of x, read as dtype u, over `axes` (kept as dims of 1). With no
// axes each element is its own population (mean x, variance 0): x is viewed with a trailing
// dim of 1 that is reduced away, so the statistics have x's shape.
Moments moments(RuleContext& ctx, ValueId x, std::vector<int64_t> axes, DType u) {
  auto term = [u](Expr e) { return as(u, e); };
  bool keepdims = true;
  if (axes.empty()) {
    ir::Dims s = ctx.graph().type(x).shape;
    axes = {static_cast<int64_t>(s.size())};
    s.push_back(1);
    x = view(ctx, x, s, "column");
    keepdims = false;
  }
  std::vector<ValueId> mv = reduce_axes(ctx, x, axes, keepdims, ReduceOp::Welford, term, "moments");
  return {mv[0], mv[1]};
}

// The widest float dtype among the inputs (f16 with bf16: f32), the precision of a
// computation mixing them, as numpy promotes.
DType promoted(const RuleContext& ctx, const std::vector<size_t>& inputs) {
  auto width = [](DType t) { return t == DType::F64 ? 3 : t == DType::F32 ? 2 : 1; };
  DType p = ctx.dtype(inputs[0]);
  for (size_t k : inputs) {
    DType t = ctx.dtype(k);
    if (width(t) > width(p)) p = t;
    else if (width(t) == width(p) && t != p) p = DType::F32;
  }
  return p;
}

const char* const kBatchNormInputs[] = {"X", "scale", "B", "mean", "var"};

// Input k of a normalization given per channel (shape [C], C = dim 1 of x, or 1 for a rank-1
// x), viewed as [C, 1, ..., 1] so that it broadcasts along x's channel axis.
ValueId per_channel(RuleContext& ctx, size_t k, const char* name) {
  const ir::Dims& xs = ctx.shape(0);
  int64_t c = xs.size() >= 2 ? xs[1] : 1;
  ORCHID_USER_CHECK(ctx.shape(k) == ir::Dims{c})
      << ctx.where() << "input " << k << " (" << name << ") has shape " << ir::dims_str(ctx.shape(k))
      << "; expected [" << c << "], one value per channel of X " << ir::dims_str(xs);
  ir::Dims s = {c};
  if (xs.size() >= 2) s.resize(xs.size() - 1, 1);
  return view(ctx, ctx.input(k), s, name);
}

// BatchNormalization's spatial=0 (opset < 9): statistics per feature, of shape x.shape[1:]
// (any shape of that many elements).
ValueId per_feature(RuleContext& ctx, size_t k, const char* name) {
  const ir::Dims& xs = ctx.shape(0);
  ir::Dims feature(xs.begin() + std::min<ptrdiff_t>(1, static_cast<ptrdiff_t>(xs.size())), xs.end());
  if (ctx.type(k).numel() != ir::numel(feature))
    ctx.unsupported(std::string("spatial=0 with ") + name + " of shape " + ir::dims_str(ctx.shape(k)) +
                    " (per-feature statistics must have X's shape without the batch dim, " +
                    ir::dims_str(feature) + ")");
  return view(ctx, ctx.input(k), feature, name);
}

// Only inference is supported: is_test=1 before opset 7; from 7 to 9 a node with only the Y
// output (more outputs mean training); training_mode=0 from opset 14.
void require_inference(const RuleContext& ctx) {
  bool stats_outputs = false;
  for (size_t k = 1; k < ctx.node().outputs.size(); ++k) stats_outputs |= !ctx.node().outputs[k].empty();
  if (ctx.version() >= 14) {
    if (ctx.attr_int("training_mode", 0) != 0)
      ctx.unsupported("training_mode=1 (statistics of the batch); only inference is supported");
    ORCHID_USER_CHECK(!stats_outputs) << ctx.where()
                                      << "outputs running_mean and running_var are invalid when training_mode=0";
    return;
  }
  if (ctx.version() < 7 && ctx.attr_int("is_test", 0) == 0)
    ctx.unsupported("is_test=0 (training mode, statistics of the batch); only inference (is_test=1) is supported");
  if (stats_outputs)
    ctx.unsupported("outputs mean, var, saved_mean or saved_var (training mode); only inference is supported");
}

// LayerNormalization's Scale or B as a value that broadcasts into X: a shape that, without its
// leading 1s, broadcasts into the normalized shape X.shape[axis:], else any shape with the
// normalized shape's element count (ONNX's function flattens it).
ValueId layer_param(RuleContext& ctx, size_t k, int64_t axis, const char* name) {
  ORCHID_USER_CHECK(ctx.dtype(k) == ctx.dtype(0))
      << ctx.where() << name << " is " << ir::dtype_name(ctx.dtype(k)) << ", X is " << ir::dtype_name(ctx.dtype(0));
  const ir::Dims& xs = ctx.shape(0);
  ir::Dims normalized(xs.begin() + axis, xs.end());
  ir::Dims s = ctx.shape(k);
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), [](int64_t d) { return d != 1; }));
  bool broadcasts = s.size() <= normalized.size();
  for (size_t j = 0; broadcasts && j < s.size(); ++j)
    broadcasts = s[j] == 1 || s[j] == normalized[normalized.size() - s.size() + j];
  if (broadcasts) return view(ctx, ctx.input(k), s, name);
  ORCHID_USER_CHECK(ctx.type(k).numel() == ir::numel(normalized))
      << ctx.where() << name << " of shape " << ir::dims_str(ctx.shape(k)) << " does not fit the normalized shape "
      << ir::dims_str(normalized) << " of X " << ir::dims_str(xs);
  return view(ctx, ctx.input(k), normalized, name);
}

DType stash_dtype(const RuleContext& ctx) {
  int64_t code = ctx.attr_int("stash_type", 1);
  if (code == 1) return DType::F32;
  if (code == 16) return DType::BF16;
  ctx.unsupported("stash_type=" + std::to_string(code) + " (ONNX allows 1, float, and 16, bfloat16)");
}

}  // namespace

// Y = cast<T>((x - mean) * inv_std_dev) * Scale + B, with the statistics in the stash type U
// over the axes [axis, rank); Mean and InvStdDev = 1/sqrt(var + epsilon) are outputs too.
std::vector<ValueId> rule_LayerNormalization(RuleContext& ctx) {
  ValueId x = ctx.input(0);
  DType t = ctx.dtype(0), u = stash_dtype(ctx);
  int64_t rank = ctx.type(0).rank();
  int64_t axis = ctx.attr_int("axis", -1);
  ORCHID_USER_CHECK(axis >= -rank && axis <= rank)
      << ctx.where() << "axis " << axis << " is out of range for rank " << rank;
  if (axis < 0) axis += rank;
  std::vector<int64_t> axes;
  for (int64_t a = axis; a < rank; ++a) axes.push_back(a);
  Moments st = moments(ctx, x, axes, u);
  Expr eps = ir::const_f(u, ctx.attr_float("epsilon", 1e-5));
  ValueId inv = ew_unary(ctx, st.var, [&](Expr v) { return ir::unary(ExprOp::Rsqrt, v + eps); }, "inv_std_dev");
  std::vector<ValueId> ins = {x, st.mean, inv, layer_param(ctx, 1, axis, "Scale")};
  if (ctx.has_input(2)) ins.push_back(layer_param(ctx, 2, axis, "B"));
  ValueId y = ew_map(ctx, ins, t, [&](const std::vector<Expr>& v) {
    Expr r = as(t, (as(u, v[0]) - v[1]) * v[2]) * v[3];
    return v.size() > 4 ? r + v[4] : r;
  });
  return {y, st.mean, inv};
}

// Inference: Y = (X - mean) * (scale / sqrt(var + epsilon)) + B per channel, computed in the
// widest dtype of the inputs and cast to X's.
std::vector<ValueId> rule_BatchNormalization(RuleContext& ctx) {
  require_inference(ctx);
  ORCHID_USER_CHECK(ctx.type(0).rank() >= 1) << ctx.where() << "X must have rank >= 1";
  DType t = ctx.dtype(0), p = promoted(ctx, {0, 1, 2, 3, 4});
  bool spatial = ctx.version() >= 9 || ctx.attr_int("spatial", 1) != 0;
  std::vector<ValueId> par;  // scale, B, mean, var
  for (size_t k = 1; k <= 4; ++k)
    par.push_back(spatial ? per_channel(ctx, k, kBatchNormInputs[k]) : per_feature(ctx, k, kBatchNormInputs[k]));
  Expr eps = ir::const_f(p, ctx.attr_float("epsilon", 1e-5));
  ValueId gain = ew_map(ctx, {par[0], par[3]}, p, [&](const std::vector<Expr>& v) {
    return as(p, v[0]) / ir::unary(ExprOp::Sqrt, as(p, v[1]) + eps);
  }, "gain");
  return {ew_map(ctx, {ctx.input(0), par[2], gain, par[1]}, t, [&](const std::vector<Expr>& v) {
    return as(t, (as(p, v[0]) - as(p, v[1])) * v[2] + as(p, v[3]));
  })};
}

// y = (x - mean) * (scale / sqrt(var + epsilon)) + B with the statistics per instance and
// channel over the spatial axes [2, rank); 16-bit floats are computed in f32.
std::vector<ValueId> rule_InstanceNormalization(RuleContext& ctx) {
  ValueId x = ctx.input(0);
  DType t = ctx.dtype(0), u = compute_dtype(t);
  int64_t rank = ctx.type(0).rank();
  ORCHID_USER_CHECK(rank >= 2) << ctx.where() << "input must have rank >= 2 (N x C x D1 x ...), not "
                               << ir::dims_str(ctx.shape(0));
  for (size_t k = 1; k <= 2; ++k)
    ORCHID_USER_CHECK(ctx.dtype(k) == t) << ctx.where() << "input " << k << " is " << ir::dtype_name(ctx.dtype(k))
                                         << ", input 0 is " << ir::dtype_name(t);
  std::vector<int64_t> axes;
  for (int64_t a = 2; a < rank; ++a) axes.push_back(a);
  Moments st = moments(ctx, x, axes, u);
  ValueId scale = per_channel(ctx, 1, "scale"), bias = per_channel(ctx, 2, "B");
  Expr eps = ir::const_f(u, ctx.attr_float("epsilon", 1e-5));
  ValueId gain = ew_map(ctx, {st.var, scale}, u, [&](const std::vector<Expr>& v) {
    return as(u, v[1]) * ir::unary(ExprOp::Rsqrt, v[0] + eps);
  }, "gain");
  return {ew_map(ctx, {x, st.mean, gain, bias}, t, [&](const std::vector<Expr>& v) {
    return as(t, (as(u, v[0]) - v[1]) * v[2] + as(u, v[3]));
  })};
}

}  // namespace orchid::fission
