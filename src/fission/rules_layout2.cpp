// Fission rules of layout-like ONNX operators, each one layout primitive (loads, constants and
// selects on index conditions) unless noted:
//  - Trilu: a predicated load keeping one triangle (k constant, or read at run time inside
//    the predicate);
//  - OneHot: select(indices[..] == position along the new axis, on, off);
//  - DepthToSpace (DCR, CRD) and SpaceToDepth: block permutations by floordiv / mod;
//  - ReverseSequence: the time index reversed below each batch's run-time length;
//  - EyeLike: a constant (its output does not depend on the input's values);
//  - CastLike: the cast of Cast.
#include "fission/rules.h"
#include "fission/rules_layout2_common.h"
#include "fission/rules_layout_common.h"
#include "frontend/tensor_proto.h"
#include "support/error.h"

namespace orchid::fission {

namespace {

using ir::Dims;
using ir::DType;
using ir::ExprOp;
using layout2::index_load;

// A layout primitive of the single body `body` over `out`, of dtype t.
ValueId layout_prim(RuleContext& ctx, const PrimBuilder& b, const Dims& out, Expr body) {
  ir::Primitive p = b.make(ir::PrimOp::Layout);
  p.domain = out;
  ir::DType t = body.dtype();
  p.bodies = {std::move(body)};
  return ctx.emit1(std::move(p), {t, out});
}

// Trilu's diagonal offset k as an index expression: the constant, or the run-time scalar read
// by an indirect load.
Expr trilu_offset(const RuleContext& ctx, PrimBuilder& b) {
  if (!ctx.has_input(1)) return ir::const_i64(0);
  ORCHID_USER_CHECK(ctx.dtype(1) == DType::I64 && ctx.type(1).numel() == 1)
      << ctx.where() << "k must be one int64, found " << ir::type_str(ctx.type(1));
  if (const ir::Tensor* c = ctx.constant(1)) return ir::const_i64(c->get_i64(0));
  return b.load(ctx.input(1), std::vector<Expr>(ctx.shape(1).size(), ir::const_i64(0)));
}

// OneHot's depth: one number, converted to an integer as a cast to int64 would.
int64_t onehot_depth(const RuleContext& ctx) {
  ORCHID_USER_CHECK(ctx.type(1).numel() == 1)
      << ctx.where() << "depth must be one number, found " << ir::type_str(ctx.type(1));
  int64_t depth = ir::is_float(ctx.dtype(1))
                      ? ir::float_to_integral(layout::static_floats(ctx, 1)[0], DType::I64)
                      : layout::static_ints(ctx, 1)[0];
  ORCHID_USER_CHECK(depth >= 1) << ctx.where() << "depth " << depth << " is not positive";
  return depth;
}

}  // namespace

// Upper: keep x[.., i, j] where j - i >= k; lower: where j - i <= k; zero elsewhere.
std::vector<ValueId> rule_Trilu(RuleContext& ctx) {
  const Dims s = ctx.shape(0);
  ORCHID_USER_CHECK(s.size() >= 2)
      << ctx.where() << "input " << ir::dims_str(s) << " needs rank >= 2";
  bool upper = ctx.attr_int("upper", 1) != 0;
  PrimBuilder b(ctx.graph());
  Expr k = trilu_offset(ctx, b);
  std::vector<Expr> i = domain_vars(s.size());
  Expr diag = i[s.size() - 1] - i[s.size() - 2];
  Expr keep = ir::binary(upper ? ExprOp::Ge : ExprOp::Le, diag, k);
  ir::Scalar zero = ir::Scalar::of(ctx.dtype(0), 0);
  return {layout_prim(ctx, b, s, b.load_pred(ctx.input(0), i, keep, zero))};
}

// out[.., j (at axis), ..] = values[1] where indices[..] (negative: + depth, from version 11)
// equals j, else values[0]; float indices are cast to int64 first.
std::vector<ValueId> rule_OneHot(RuleContext& ctx) {
  const Dims q = ctx.shape(0);
  int64_t depth = onehot_depth(ctx);
  ORCHID_USER_CHECK(ctx.shape(2) == Dims{2})
      << ctx.where() << "values must be [off_value, on_value], found " << ir::type_str(ctx.type(2));
  auto axis = static_cast<size_t>(
      ctx.normalize_axis(ctx.attr_int("axis", -1), static_cast<int64_t>(q.size()) + 1));
  ValueId ind = ctx.input(0);
  if (ir::is_float(ctx.dtype(0))) ind = cast_to(ctx, ind, DType::I64, "indices");
  Dims out = q;
  out.insert(out.begin() + static_cast<ptrdiff_t>(axis), depth);
  PrimBuilder b(ctx.graph());
  std::vector<Expr> i = domain_vars(out.size()), at = i;
  at.erase(at.begin() + static_cast<ptrdiff_t>(axis));
  Expr k = index_load(b, ctx.graph(), ind, at);
  if (ctx.version() >= 11) k = layout2::from_end(k, depth);
  Expr hit = ir::binary(ExprOp::Eq, k, i[axis]);
  ValueId v = ctx.input(2);
  Expr on = b.load(v, {ir::const_i64(1)}), off = b.load(v, {ir::const_i64(0)});
  return {layout_prim(ctx, b, out, ir::select(hit, on, off))};
}

// Ones where column - row == k, of the dtype attribute (default: the input's).
std::vector<ValueId> rule_EyeLike(RuleContext& ctx) {
  const Dims s = ctx.shape(0);
  ORCHID_USER_CHECK(s.size() == 2)
      << ctx.where() << "input " << ir::dims_str(s) << " must have rank 2";
  DType t = ctx.dtype(0);
  if (ctx.has_attr("dtype")) {
    auto code = static_cast<int32_t>(ctx.attr_int("dtype", 0));
    std::optional<DType> d = frontend::dtype_from_onnx(code);
    if (!d) ctx.unsupported(std::string("dtype ") + frontend::onnx_dtype_name(code));
    t = *d;
  }
  int64_t k = ctx.attr_int("k", 0);
  ctx.check_size({t, s});
  ir::Tensor out(ir::TensorType{t, s});
  for (int64_t r = 0; r < s[0]; ++r) {
    int64_t c = r + k;
    if (c < 0 || c >= s[1]) continue;
    if (ir::is_float(t))
      out.set_f64(r * s[1] + c, 1);
    else
      out.set_i64(r * s[1] + c, 1);
  }
  return {ctx.add_constant(std::move(out))};
}

// DCR: out[n, c, h*b + y, w*b + x] = in[n, (y*b + x)*C' + c, h, w]; CRD: in[n, (c*b + y)*b + x, h,
// w] with C' = C / b^2 output channels.
std::vector<ValueId> rule_DepthToSpace(RuleContext& ctx) {
  layout2::require_bf16_since(ctx, 0, 13);
  require_attr_since(ctx, "mode", 11);
  const Dims s = ctx.shape(0);
  int64_t bs = ctx.required_attr_int("blocksize");
  std::string mode = ctx.attr_string("mode", "DCR");
  ORCHID_USER_CHECK(mode == "DCR" || mode == "CRD")
      << ctx.where() << "mode '" << mode << "' is not DCR or CRD";
  ORCHID_USER_CHECK(s.size() == 4 && bs >= 1 && s[1] % (bs * bs) == 0)
      << ctx.where() << "input " << ir::dims_str(s)
      << " must have rank 4 and channels divisible by "
      << "blocksize^2 (blocksize " << bs << ")";
  if (bs == 1) return {ctx.input(0)};
  int64_t c_out = s[1] / (bs * bs);
  Dims out = {s[0], c_out, s[2] * bs, s[3] * bs};
  return {remap(ctx, ctx.input(0), out, [&](const std::vector<Expr>& i) {
    Expr y = ir::mod(i[2], bs), x = ir::mod(i[3], bs);
    Expr c = mode == "DCR" ? y * (bs * c_out) + x * c_out + i[1] : i[1] * (bs * bs) + y * bs + x;
    return std::vector<Expr>{i[0], c, ir::floordiv(i[2], bs), ir::floordiv(i[3], bs)};
  })};
}

// out[n, (y*b + x)*C + c, h, w] = in[n, c, h*b + y, w*b + x].
std::vector<ValueId> rule_SpaceToDepth(RuleContext& ctx) {
  layout2::require_bf16_since(ctx, 0, 13);
  const Dims s = ctx.shape(0);
  int64_t bs = ctx.required_attr_int("blocksize");
  ORCHID_USER_CHECK(s.size() == 4 && bs >= 1 && s[2] % bs == 0 && s[3] % bs == 0)
      << ctx.where() << "input " << ir::dims_str(s)
      << " must have rank 4 and height and width divisible by blocksize " << bs;
  if (bs == 1) return {ctx.input(0)};
  int64_t c = s[1];
  Dims out = {s[0], c * bs * bs, s[2] / bs, s[3] / bs};
  return {remap(ctx, ctx.input(0), out, [&](const std::vector<Expr>& i) {
    Expr y = ir::floordiv(i[1], bs * c), x = ir::mod(ir::floordiv(i[1], c), bs);
    return std::vector<Expr>{i[0], ir::mod(i[1], c), i[2] * bs + y, i[3] * bs + x};
  })};
}

std::vector<ValueId> rule_CastLike(RuleContext& ctx) {
  return {cast_to(ctx, ctx.input(0), ctx.dtype(1))};
}

// out[t, b, ..] = in[L - 1 - t, b, ..] where t < L = sequence_lens[b], else in[t, b, ..]
// (time and batch axes 0 and 1 in either order).
std::vector<ValueId> rule_ReverseSequence(RuleContext& ctx) {
  require_dtype(ctx, 1, {DType::I64}, layout2::op_version(ctx));
  const Dims s = ctx.shape(0);
  int64_t ta = ctx.attr_int("time_axis", 0), ba = ctx.attr_int("batch_axis", 1);
  ORCHID_USER_CHECK(s.size() >= 2 && ((ta == 0 && ba == 1) || (ta == 1 && ba == 0)))
      << ctx.where() << "time_axis=" << ta << " and batch_axis=" << ba
      << " must be 0 and 1 in some order, of an input of rank >= 2 (found " << ir::dims_str(s)
      << ")";
  auto t_ax = static_cast<size_t>(ta), b_ax = static_cast<size_t>(ba);
  ORCHID_USER_CHECK(ctx.shape(1) == Dims{s[b_ax]})
      << ctx.where() << "sequence_lens " << ir::dims_str(ctx.shape(1)) << " should be [" << s[b_ax]
      << "] (the batch size)";
  if (const ir::Tensor* c = ctx.constant(1)) {
    for (int64_t j = 0; j < c->numel(); ++j) {
      ORCHID_USER_CHECK(c->get_i64(j) >= 0 && c->get_i64(j) <= s[t_ax])
          << ctx.where() << "sequence length " << c->get_i64(j) << " (batch " << j
          << ") is outside [0, " << s[t_ax] << "]";
    }
  }
  PrimBuilder b(ctx.graph());
  std::vector<Expr> i = domain_vars(s.size()), idx = i;
  Expr len = b.load(ctx.input(1), {i[b_ax]});
  Expr t = i[t_ax];
  idx[t_ax] = ir::select(ir::binary(ExprOp::Lt, t, len), (len - 1) - t, t);
  return {layout_prim(ctx, b, s, b.load(ctx.input(0), idx))};
}

}  // namespace orchid::fission
