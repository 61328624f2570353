// Fission rules of the ONNX scatter operators. A scatter writes each update to a position
// computed from run-time indices; no layout primitive can express that (a layout reads each
// output element from a position computed from the output's index), so these become the
// opaque library routines scatter_elements and scatter_nd (opaque.def, docs/ir.md):
//  - ScatterElements (reduction none / add / mul) and the deprecated Scatter: scatter_elements;
//  - ScatterND (reduction none / add / mul): scatter_nd;
//  - MaxUnpool: the input scattered (scatter_nd with one-element index tuples) into a flat
//    zero tensor, as its indices are flat offsets, then padded at the end to output_shape.
#include <algorithm>
#include <map>

#include "fission/rules.h"
#include "fission/rules_layout2_common.h"
#include "fission/rules_layout_common.h"
#include "support/error.h"

namespace orchid::fission {

namespace {

using ir::Dims;
using ir::DType;

// The reduction attribute (version 16) as the routine's parameter: 0 none, 1 add, 2 mul.
int64_t reduction_param(const RuleContext& ctx) {
  require_attr_since(ctx, "reduction", 16);
  std::string r = ctx.attr_string("reduction", "none");
  if (r == "none") return 0;
  if (r == "add") return 1;
  ORCHID_USER_CHECK(r == "mul") << ctx.where() << "reduction '" << r << "' is not none, add or mul";
  return 2;
}

// opaque routine(data, indices, updates) of data's type. An input repeated (data also the
// updates) is copied first: a primitive's inputs are distinct values.
ValueId scatter(RuleContext& ctx, ir::OpaqueRoutine routine, std::vector<ValueId> ins,
                std::map<std::string, int64_t> params, const std::string& suffix = "") {
  for (size_t k = 1; k < ins.size(); ++k) {
    auto before = ins.begin() + static_cast<ptrdiff_t>(k);
    auto identity = [](Expr e) { return e; };
    if (std::find(ins.begin(), before, ins[k]) != before)
      ins[k] = ew_unary(ctx, ins[k], identity, "copy");
  }
  ir::TensorType t = ctx.graph().type(ins[0]);
  ir::Primitive p;
  p.op = ir::PrimOp::Opaque;
  p.inputs = std::move(ins);
  p.domain = t.shape;
  p.attrs = ir::OpaqueAttrs{routine, std::move(params)};
  return ctx.emit1(std::move(p), t, suffix);
}

void require_updates_dtype(const RuleContext& ctx) {
  ORCHID_USER_CHECK(ctx.dtype(2) == ctx.dtype(0))
      << ctx.where() << "updates of dtype " << ir::dtype_name(ctx.dtype(2))
      << " differ from data of dtype " << ir::dtype_name(ctx.dtype(0));
}

// ScatterElements and Scatter: data, indices and updates of one rank, indices of updates'
// shape and no larger than data off the axis.
std::vector<ValueId> scatter_elements(RuleContext& ctx, int64_t reduction) {
  require_dtype(ctx, 1, {DType::I32, DType::I64}, layout2::op_version(ctx));
  require_updates_dtype(ctx);
  const Dims s = ctx.shape(0), q = ctx.shape(1), u = ctx.shape(2);
  ORCHID_USER_CHECK(!s.empty() && q.size() == s.size() && u == q)
      << ctx.where() << "data " << ir::dims_str(s) << ", indices " << ir::dims_str(q)
      << " and updates " << ir::dims_str(u)
      << " need one rank >= 1, and indices the shape of updates";
  int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", 0), ctx.type(0).rank());
  for (size_t d = 0; d < s.size(); ++d)
    ORCHID_USER_CHECK(static_cast<int64_t>(d) == axis || q[d] <= s[d])
        << ctx.where() << "indices " << ir::dims_str(q) << " are larger than data "
        << ir::dims_str(s) << " along dim " << d;
  layout2::check_static_indices(ctx, 1, [&](int64_t) { return s[static_cast<size_t>(axis)]; });
  return {scatter(ctx, ir::OpaqueRoutine::ScatterElements,
                  {ctx.input(0), ctx.input(1), ctx.input(2)},
                  {{"axis", axis}, {"reduction", reduction}})};
}

}  // namespace

std::vector<ValueId> rule_ScatterElements(RuleContext& ctx) {
  layout2::require_bf16_since(ctx, 0, 13);
  return scatter_elements(ctx, reduction_param(ctx));
}

std::vector<ValueId> rule_Scatter(RuleContext& ctx) { return scatter_elements(ctx, 0); }

std::vector<ValueId> rule_ScatterND(RuleContext& ctx) {
  require_dtype(ctx, 1, {DType::I64}, layout2::op_version(ctx));
  layout2::require_bf16_since(ctx, 0, 13);
  require_updates_dtype(ctx);
  int64_t reduction = reduction_param(ctx);
  const Dims s = ctx.shape(0), q = ctx.shape(1), u = ctx.shape(2);
  auto r = static_cast<int64_t>(s.size());
  ORCHID_USER_CHECK(r >= 1 && !q.empty() && q.back() >= 1 && q.back() <= r)
      << ctx.where() << "indices " << ir::dims_str(q) << " must end in a dim of 1 to " << r
      << " (the rank of data " << ir::dims_str(s) << ")";
  Dims want(q.begin(), q.end() - 1);
  want.insert(want.end(), s.begin() + q.back(), s.end());
  ORCHID_USER_CHECK(u == want) << ctx.where() << "updates " << ir::dims_str(u) << " should be "
                               << ir::dims_str(want) << " for data " << ir::dims_str(s)
                               << " and indices " << ir::dims_str(q);
  int64_t k = q.back();
  layout2::check_static_indices(ctx, 1, [&](int64_t f) { return s[static_cast<size_t>(f % k)]; });
  return {scatter(ctx, ir::OpaqueRoutine::ScatterND, {ctx.input(0), ctx.input(1), ctx.input(2)},
                  {{"reduction", reduction}})};
}

namespace {

// MaxUnpool's shape before output_shape: per spatial dim (in - 1) * stride + kernel -
// pad_begin - pad_end, pads ignored when output_shape is given.
Dims unpooled_shape(const RuleContext& ctx, const Dims& xs) {
  size_t S = xs.size() - 2;
  ORCHID_USER_CHECK(ctx.has_attr("kernel_shape"))
      << ctx.where() << "attribute 'kernel_shape' is required";
  Dims kernel = window_detail::spatial_ints(ctx, "kernel_shape", S, 1, 1);
  Dims strides = window_detail::spatial_ints(ctx, "strides", S, 1, 1);
  Dims pads = window_detail::spatial_ints(ctx, "pads", 2 * S, 0, 0);
  if (ctx.has_input(2)) pads.assign(2 * S, 0);
  Dims unpooled = {xs[0], xs[1]};
  for (size_t d = 0; d < S; ++d)
    unpooled.push_back((xs[d + 2] - 1) * strides[d] + kernel[d] - pads[d] - pads[d + S]);
  ORCHID_USER_CHECK(std::all_of(unpooled.begin(), unpooled.end(), [](int64_t d) { return d >= 0; }))
      << ctx.where() << "the unpooled shape " << ir::dims_str(unpooled) << " has a negative dim";
  return unpooled;
}

// u placed at the origin of a zero tensor of shape `out` (a layout primitive).
ValueId pad_at_end(RuleContext& ctx, ValueId u, const Dims& out) {
  const Dims s = ctx.graph().type(u).shape;
  PrimBuilder b(ctx.graph());
  std::vector<Expr> i = domain_vars(out.size()), inside;
  for (size_t d = 0; d < out.size(); ++d)
    if (out[d] > s[d]) inside.push_back(ir::binary(ir::ExprOp::Lt, i[d], ir::const_i64(s[d])));
  ir::DType t = ctx.graph().type(u).dtype;
  Expr body = b.load_pred(u, i, layout2::all_of(inside), ir::Scalar::of(t, 0));
  ir::Primitive p = b.make(ir::PrimOp::Layout);
  p.bodies = {body};
  p.domain = out;
  return ctx.emit1(std::move(p), {t, out});
}

}  // namespace

// MaxUnpool, as ONNX's reference implementation: u = zeros(unpooled shape), u.flat[I.flat[j]]
// = X.flat[j]; with output_shape (no smaller), u is placed at the origin of a zero tensor of
// that shape.
std::vector<ValueId> rule_MaxUnpool(RuleContext& ctx) {
  require_dtype(ctx, 1, {DType::I64}, layout2::op_version(ctx));
  const Dims xs = ctx.shape(0);
  ORCHID_USER_CHECK(xs.size() >= 3 && ctx.shape(1) == xs)
      << ctx.where() << "X " << ir::dims_str(xs)
      << " needs rank >= 3 and indices I of its shape, found " << ir::dims_str(ctx.shape(1));
  Dims unpooled = unpooled_shape(ctx, xs);
  Dims out = ctx.has_input(2) ? layout::static_ints(ctx, 2) : unpooled;
  bool fits = out.size() == xs.size();
  for (size_t d = 0; fits && d < out.size(); ++d)
    fits = out[d] >= unpooled[d] && (d >= 2 || out[d] == xs[d]);
  ORCHID_USER_CHECK(fits) << ctx.where() << "output_shape " << ir::dims_str(out)
                          << " must keep X's batch and channels and be no smaller than "
                          << ir::dims_str(unpooled);
  int64_t n = ctx.type(0).numel();
  ValueId zero = scalar_constant(ctx, ctx.dtype(0), 0, "zero");
  ValueId zeros = broadcast_to(ctx, zero, {ir::numel(unpooled)}, "zeros");
  ValueId at = view(ctx, ctx.input(1), {n, 1}, "at");
  ValueId x = view(ctx, ctx.input(0), {n}, "flat");
  ValueId u =
      scatter(ctx, ir::OpaqueRoutine::ScatterND, {zeros, at, x}, {{"reduction", 0}}, "scatter");
  u = view(ctx, u, unpooled, "unpooled");
  return {out == unpooled ? u : pad_at_end(ctx, u, out)};
}

}  // namespace orchid::fission
