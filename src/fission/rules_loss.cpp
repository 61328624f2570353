// Fission rules of NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
//
// NegativeLogLikelihoodLoss, for each sample (n, d..) of class c = target[n, d..]:
//   loss[n, d..] = -input[n, c, d..] * weight[c]   (weight 1 when absent)
// and 0 where c = ignore_index. The target is run-time data: a layout primitive gathers
// input[n, c, d..] through an indirect load — predicated on c != ignore_index, so that an
// ignored target need not be a valid class — a second one gathers weight[c] alike (without
// weight, an elementwise 0/1 of c != ignore_index), and an elementwise primitive multiplies.
// A target outside [0, C) that is not ignored is a run-time error of the interpreter.
// reduction: "none" gives the losses, "sum" their sum, "mean" their sum divided by the sum of
// the gathered weights (ignored samples weigh 0; with neither weight nor ignore_index, by the
// number of samples), as ONNX's reference and PyTorch compute it.
//
// SoftmaxCrossEntropyLoss: log_prob = log-softmax of the scores over the class axis (one
// maxsum reduction gives m = max and s = sum exp(x - m); then x - m - log s), and the loss is
// NegativeLogLikelihoodLoss of log_prob. log_prob is the optional second output.
#include <optional>

#include "fission/builders.h"
#include "fission/linear_common.h"
#include "fission/rules.h"
#include "fission/rules_layout2_common.h"
#include "support/error.h"

namespace orchid::fission {

namespace {

using ir::DType;
using ir::Dims;
using ir::ExprOp;
using ir::ReduceOp;

enum class Reduction { None, Sum, Mean };

struct LossSpec {
  Reduction reduction = Reduction::Mean;
  std::optional<int64_t> ignore;  // ignore_index
  bool weighted = false;          // input 2 (the class weights) is given
};

LossSpec loss_spec(const RuleContext& ctx) {
  LossSpec s;
  std::string r = ctx.attr_string("reduction", "mean");
  ORCHID_USER_CHECK(r == "none" || r == "sum" || r == "mean")
      << ctx.where() << "reduction '" << r << "' is not none, sum or mean";
  s.reduction = r == "none" ? Reduction::None : r == "sum" ? Reduction::Sum : Reduction::Mean;
  if (ctx.has_attr("ignore_index")) s.ignore = ctx.attr_int("ignore_index", 0);
  s.weighted = ctx.has_input(2);
  return s;
}

// Input (or scores) [N, C, d..], target [N, d..] of int32 / int64, weight [C] of input's dtype.
void check_inputs(const RuleContext& ctx) {
  using D = DType;
  std::string op = ctx.node().op_type + "-" + std::to_string(ctx.version());
  if (ctx.version() >= 13 && ctx.node().op_type == "SoftmaxCrossEntropyLoss")
    require_dtype(ctx, 0, {D::F16, D::F32, D::F64, D::BF16}, op);
  else
    require_dtype(ctx, 0, {D::F16, D::F32, D::F64}, op);
  require_dtype(ctx, 1, {D::I32, D::I64}, op);
  const Dims xs = ctx.shape(0), ts = ctx.shape(1);
  ORCHID_USER_CHECK(xs.size() >= 2) << ctx.where() << "input 0 of shape " << ir::dims_str(xs)
                                    << " needs rank >= 2 (N x C x d1 x ...)";
  Dims want = {xs[0]};
  want.insert(want.end(), xs.begin() + 2, xs.end());
  ORCHID_USER_CHECK(ts == want) << ctx.where() << "target of shape " << ir::dims_str(ts) << " does not fit input "
                                << ir::dims_str(xs) << " (expected " << ir::dims_str(want) << ")";
  if (!ctx.has_input(2)) return;
  ORCHID_USER_CHECK(ctx.shape(2) == Dims{xs[1]} && ctx.dtype(2) == ctx.dtype(0))
      << ctx.where() << "weight is " << ir::type_str(ctx.type(2)) << "; expected "
      << ir::type_str({ctx.dtype(0), {xs[1]}}) << ", one per class";
}

// The class of the sample at the domain variables, as an i64 index (a load of the target).
Expr target_class(PrimBuilder& b, const RuleContext& ctx) {
  return layout2::index_load(b, ctx.graph(), ctx.input(1), domain_vars(ctx.shape(1).size()));
}

// A layout primitive over the target's shape reading src at index_of(class) — predicated on
// the class not being ignore_index (0 there).
ValueId gather_by_class(RuleContext& ctx, ValueId src, const LossSpec& s,
                        const std::function<std::vector<Expr>(Expr)>& index_of, const std::string& suffix) {
  PrimBuilder b(ctx.graph());
  Expr c = target_class(b, ctx);
  DType t = ctx.graph().type(src).dtype;
  Expr body = s.ignore ? b.load_pred(src, index_of(c), ir::binary(ExprOp::Ne, c, ir::const_i64(*s.ignore)),
                                     ir::Scalar::of(t, 0))
                       : b.load(src, index_of(c));
  ir::Primitive p = b.make(ir::PrimOp::Layout);
  p.domain = ctx.shape(1);
  p.bodies = {body};
  ir::TensorType out{t, p.domain};
  return ctx.emit1(std::move(p), out, suffix);
}

// The weight of each sample: weight[class], or 1; 0 where the class is ignore_index. Absent
// (nullopt) when every sample weighs 1.
std::optional<ValueId> sample_weights(RuleContext& ctx, const LossSpec& s, DType t) {
  if (s.weighted)
    return gather_by_class(ctx, ctx.input(2), s, [](Expr c) { return std::vector<Expr>{c}; }, "weight");
  if (!s.ignore) return std::nullopt;
  int64_t ignore = *s.ignore;
  return ew_unary(ctx, ctx.input(1), [&](Expr c) {
    Expr kept = ir::binary(ExprOp::Ne, c.dtype() == DType::I64 ? c : ir::cast(DType::I64, c), ir::const_i64(ignore));
    return ir::select(kept, ir::const_f(t, 1), ir::const_f(t, 0));
  }, "weight");
}

ValueId sum_all(RuleContext& ctx, ValueId v, const std::string& suffix) {
  std::vector<int64_t> axes;
  for (size_t d = 0; d < ctx.graph().type(v).shape.size(); ++d) axes.push_back(static_cast<int64_t>(d));
  return reduce_axes(ctx, v, axes, false, ReduceOp::Sum, nullptr, suffix)[0];
}

// NegativeLogLikelihoodLoss of the log-probabilities logp [N, C, d..] (see the file comment).
ValueId nll(RuleContext& ctx, ValueId logp, const LossSpec& s) {
  DType t = ctx.graph().type(logp).dtype;
  ValueId picked = gather_by_class(ctx, logp, s, [&](Expr c) {
    std::vector<Expr> i = domain_vars(ctx.shape(1).size());
    i.insert(i.begin() + 1, c);
    return i;
  }, "picked");
  std::optional<ValueId> w = sample_weights(ctx, s, t);
  ValueId loss = w ? ew_map(ctx, {picked, *w}, t, [](const std::vector<Expr>& v) { return ir::unary(ExprOp::Neg, v[0]) * v[1]; }, "loss")
                   : ew_unary(ctx, picked, [](Expr v) { return ir::unary(ExprOp::Neg, v); }, "loss");
  switch (s.reduction) {
    case Reduction::None: return loss;
    case Reduction::Sum: return sum_all(ctx, loss, "sum");
    case Reduction::Mean: break;
  }
  ValueId total = sum_all(ctx, loss, "sum");
  if (w) {
    ValueId weight = sum_all(ctx, *w, "weight_sum");
    return ew_map(ctx, {total, weight}, t, [](const std::vector<Expr>& v) { return v[0] / v[1]; }, "mean");
  }
  auto count = static_cast<double>(ir::numel(ctx.shape(1)));
  return ew_unary(ctx, total, [&](Expr v) { return v / ir::const_f(t, count); }, "mean");
}

}  // namespace

std::vector<ValueId> rule_NegativeLogLikelihoodLoss(RuleContext& ctx) {
  check_inputs(ctx);
  return {nll(ctx, ctx.input(0), loss_spec(ctx))};
}

std::vector<ValueId> rule_SoftmaxCrossEntropyLoss(RuleContext& ctx) {
  check_inputs(ctx);
  LossSpec s = loss_spec(ctx);
  ValueId x = ctx.input(0);
  DType t = ctx.dtype(0);
  std::vector<ValueId> ms = reduce_axes(ctx, x, {1}, true, ReduceOp::MaxSum, nullptr, "maxsum");
  ValueId logp = ew_map(ctx, {x, ms[0], ms[1]}, t, [](const std::vector<Expr>& v) {
    return (v[0] - v[1]) - ir::unary(ExprOp::Log, v[2]);
  }, "log_prob");
  ValueId loss = nll(ctx, logp, s);
  const auto& outs = ctx.node().outputs;
  if (outs.size() > 1 && !outs[1].empty()) return {loss, logp};
  return {loss};
}

}  // namespace orchid::fission
