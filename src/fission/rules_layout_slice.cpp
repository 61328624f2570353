// Fission rules of the ONNX operators that select or extend parts of a tensor: Slice (a
// strided slice), Pad (constant, edge and reflect modes, negative pads crop) and Gather (an
// indirect load of run-time indices). Each becomes one layout primitive.
#include <algorithm>

#include "fission/rules.h"
#include "fission/rules_layout2_common.h"
#include "fission/rules_layout_common.h"
#include "support/error.h"

namespace orchid::fission {

namespace {

using ir::ExprOp;
using layout::affine;

struct SliceArgs {
  std::vector<int64_t> starts, ends, axes, steps;
};

// Slice-1 takes attributes, Slice-10 and later constant inputs.
SliceArgs slice_args(const RuleContext& ctx) {
  SliceArgs a;
  std::optional<std::vector<int64_t>> axes, steps;
  if (ctx.version() < 10) {
    a.starts = layout::required_attr_ints(ctx, "starts");
    a.ends = layout::required_attr_ints(ctx, "ends");
    if (ctx.has_attr("axes")) axes = ctx.attr_ints("axes", {});
  } else {
    a.starts = layout::static_ints(ctx, 1);
    a.ends = layout::static_ints(ctx, 2);
    axes = layout::optional_ints(ctx, 3);
    steps = layout::optional_ints(ctx, 4);
  }
  size_t n = a.starts.size();
  a.axes = axes ? *axes : std::vector<int64_t>();
  if (!axes)
    for (size_t k = 0; k < n; ++k) a.axes.push_back(static_cast<int64_t>(k));
  a.steps = steps ? *steps : std::vector<int64_t>(n, 1);
  ORCHID_USER_CHECK(a.ends.size() == n && a.axes.size() == n && a.steps.size() == n)
      << ctx.where() << "starts, ends, axes and steps have different lengths (" << n << ", "
      << a.ends.size() << ", " << a.axes.size() << ", " << a.steps.size() << ")";
  return a;
}

// ONNX's effective start and length of a slice of a dim of size `dim` (Slice-13 spells the
// clamping out; earlier versions mean the same for positive steps).
std::pair<int64_t, int64_t> slice_range(int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (dim == 0) return {0, 0};
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    return {start, end > start ? 1 + (end - start - 1) / step : 0};
  }
  start = std::clamp<int64_t>(start, 0, dim - 1);
  end = std::clamp<int64_t>(end, -1, dim - 1);
  return {start, start > end ? 1 - (start - end - 1) / step : 0};  // no overflow of -step
}

// The fill of constant-mode padding when it is known at compile time; nullopt when it is a
// run-time input (then *runtime is set).
std::optional<ir::Scalar> pad_fill(RuleContext& ctx, std::optional<ValueId>* runtime) {
  ir::DType t = ctx.dtype(0);
  if (ctx.version() < 11) return ir::Scalar::of(t, ctx.attr_float("value", 0.0));
  if (!ctx.has_input(2)) return ir::Scalar::of(t, 0.0);
  ORCHID_USER_CHECK(ctx.dtype(2) == t && ctx.type(2).numel() == 1)
      << ctx.where() << "constant_value must be one element of the data's dtype, found "
      << ir::type_str(ctx.type(2));
  const ir::Tensor* c = ctx.constant(2);
  if (!c) {
    *runtime = ctx.input(2);
    return std::nullopt;
  }
  return ir::is_float(t) ? ir::Scalar::of(t, c->get_f64(0)) : ir::Scalar::of_int(t, c->get_i64(0));
}

ValueId pad_constant(RuleContext& ctx, const std::vector<int64_t>& pads, const ir::Dims& out) {
  ir::Dims s = ctx.shape(0);
  size_t r = s.size();
  std::optional<ValueId> runtime;
  std::optional<ir::Scalar> fill = pad_fill(ctx, &runtime);
  PrimBuilder b(ctx.graph());
  std::vector<Expr> i = domain_vars(r), idx;
  Expr inside;
  auto both = [&inside](Expr c) {
    inside = inside.defined() ? ir::binary(ExprOp::And, inside, c) : c;
  };
  for (size_t d = 0; d < r; ++d) {
    int64_t begin = pads[d], end = pads[d + r];
    idx.push_back(affine(i[d], 1, -begin));
    if (begin > 0) both(ir::binary(ExprOp::Ge, i[d], ir::const_i64(begin)));
    if (end > 0) both(ir::binary(ExprOp::Lt, i[d], ir::const_i64(begin + s[d])));
  }
  Expr body;
  if (!inside.defined()) {
    body = b.load(ctx.input(0), idx);  // a pure crop
  } else if (fill) {
    body = b.load_pred(ctx.input(0), idx, inside, *fill);
  } else {
    std::vector<Expr> zeros(ctx.type(2).shape.size(), ir::const_i64(0));
    body = ir::select(inside, b.load(ctx.input(0), idx), b.load(*runtime, zeros));
  }
  ir::Primitive p = b.make(ir::PrimOp::Layout);
  p.domain = out;
  p.bodies = {body};
  return ctx.emit1(std::move(p), {ctx.dtype(0), out});
}

// The input index of output index i along one dim in edge or reflect mode. The dim keeps
// [lo, hi) of the input (negative pads crop) and extends it by positive pads.
Expr pad_index(const RuleContext& ctx, Expr i, int64_t dim, int64_t begin, int64_t end,
               bool reflect) {
  Expr t = affine(i, 1, -begin);
  if (begin <= 0 && end <= 0) return t;
  int64_t lo = std::max<int64_t>(0, -begin), hi = dim - std::max<int64_t>(0, -end);
  ORCHID_USER_CHECK(hi - lo >= 1) << ctx.where() << "cannot pad a dim of size " << (hi - lo)
                                  << " (after cropping) in " << (reflect ? "reflect" : "edge")
                                  << " mode";
  if (!reflect || hi - lo == 1) {
    if (begin > 0) t = ir::binary(ExprOp::Max, t, ir::const_i64(lo));
    if (end > 0) t = ir::binary(ExprOp::Min, t, ir::const_i64(hi - 1));
    return t;
  }
  // Reflection about the first and last element, repeated as numpy.pad does: period 2(L-1).
  int64_t len = hi - lo, period = 2 * (len - 1);
  Expr v = ir::mod(affine(i, 1, -begin - lo), period);
  Expr r = ir::select(ir::binary(ExprOp::Lt, v, ir::const_i64(len)), v, ir::const_i64(period) - v);
  return affine(r, 1, lo);
}

std::vector<int64_t> pad_amounts(const RuleContext& ctx) {
  if (ctx.version() < 2) return layout::required_attr_ints(ctx, "paddings");
  if (ctx.version() < 11) return layout::required_attr_ints(ctx, "pads");
  return layout::static_ints(ctx, 1);
}

// Gather's index along the axis: indices[i..] as i64, negative ones counted from the end.
Expr gather_index(const RuleContext& ctx, PrimBuilder& b, const std::vector<Expr>& i, size_t axis) {
  const ir::Dims& q = ctx.shape(1);
  int64_t dim = ctx.shape(0)[axis];
  bool negative = layout2::check_static_indices(ctx, 1, [dim](int64_t) { return dim; },
                                                "axis " + std::to_string(axis));
  const ir::Tensor* c = ctx.constant(1);
  if (c && q.empty()) {  // one constant index: a plain (slicing) index
    int64_t v = c->get_i64(0);
    return ir::const_i64(v < 0 ? v + dim : v);
  }
  std::vector<Expr> at(i.begin() + static_cast<ptrdiff_t>(axis),
                       i.begin() + static_cast<ptrdiff_t>(axis + q.size()));
  Expr k = layout2::index_load(b, ctx.graph(), ctx.input(1), std::move(at));
  return negative ? layout2::from_end(k, dim) : k;
}

}  // namespace

std::vector<ValueId> rule_Slice(RuleContext& ctx) {
  ir::Dims s = ctx.shape(0);
  auto rank = static_cast<int64_t>(s.size());
  SliceArgs a = slice_args(ctx);
  std::vector<int64_t> axes = layout::normalize_axes(ctx, a.axes, rank);
  std::vector<int64_t> starts(s.size(), 0), steps(s.size(), 1);
  ir::Dims lens = s;
  for (size_t k = 0; k < axes.size(); ++k) {
    auto d = static_cast<size_t>(axes[k]);
    ORCHID_USER_CHECK(a.steps[k] != 0) << ctx.where() << "step of axis " << d << " is 0";
    auto [start, len] = slice_range(s[d], a.starts[k], a.ends[k], a.steps[k]);
    starts[d] = start;
    lens[d] = len;
    steps[d] = a.steps[k];
  }
  return {layout::strided_slice(ctx, ctx.input(0), starts, lens, steps)};
}

std::vector<ValueId> rule_Pad(RuleContext& ctx) {
  ir::Dims s = ctx.shape(0);
  size_t r = s.size();
  std::string mode = ctx.attr_string("mode", "constant");
  std::vector<int64_t> pads = pad_amounts(ctx);
  ORCHID_USER_CHECK(pads.size() == 2 * r)
      << ctx.where() << "pads has " << pads.size() << " entries for rank " << r << " (needs "
      << 2 * r << ")";
  ir::Dims out;
  for (size_t d = 0; d < r; ++d) {
    out.push_back(s[d] + pads[d] + pads[d + r]);
    ORCHID_USER_CHECK(out.back() >= 0)
        << ctx.where() << "pads " << ir::dims_str(pads) << " remove more than the " << s[d]
        << " elements of dim " << d;
  }
  if (std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p == 0; }))
    return {ctx.input(0)};
  if (mode == "constant") return {pad_constant(ctx, pads, out)};
  if (mode != "edge" && mode != "reflect") ctx.unsupported("pad mode '" + mode + "'");
  return {remap(ctx, ctx.input(0), out, [&](const std::vector<Expr>& i) {
    std::vector<Expr> idx;
    for (size_t d = 0; d < r; ++d)
      idx.push_back(pad_index(ctx, i[d], s[d], pads[d], pads[d + r], mode == "reflect"));
    return idx;
  })};
}

std::vector<ValueId> rule_Gather(RuleContext& ctx) {
  ir::Dims s = ctx.shape(0);
  ORCHID_USER_CHECK(!s.empty()) << ctx.where() << "cannot gather from a scalar";
  auto axis = static_cast<size_t>(ctx.normalize_axis(ctx.attr_int("axis", 0), ctx.type(0).rank()));
  ir::Dims q = ctx.shape(1);
  ir::Dims out(s.begin(), s.begin() + static_cast<ptrdiff_t>(axis));
  out.insert(out.end(), q.begin(), q.end());
  out.insert(out.end(), s.begin() + static_cast<ptrdiff_t>(axis) + 1, s.end());
  PrimBuilder b(ctx.graph());
  std::vector<Expr> i = domain_vars(out.size());
  std::vector<Expr> idx(i.begin(), i.begin() + static_cast<ptrdiff_t>(axis));
  idx.push_back(gather_index(ctx, b, i, axis));
  idx.insert(idx.end(), i.begin() + static_cast<ptrdiff_t>(axis + q.size()), i.end());
  Expr body = b.load(ctx.input(0), idx);
  ir::Primitive p = b.make(ir::PrimOp::Layout);
  p.domain = out;
  p.bodies = {body};
  return {ctx.emit1(std::move(p), {ctx.dtype(0), out})};
}

}  // namespace orchid::fission
