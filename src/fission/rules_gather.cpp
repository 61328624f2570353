// Fission rules of the ONNX selection operators:
//  - GatherElements and GatherND: one layout primitive each, whose data index along the
//    gathered dims is an indirect load of the run-time indices (negative ones counted from the
//    end by a select);
//  - Compress and NonZero, whose output shapes depend on data: Compress needs a constant
//    condition (it becomes a gather of the selected positions), NonZero a constant input (its
//    output is a constant). With run-time data they are refused as unsupported.
#include <algorithm>

#include "fission/rules.h"
#include "fission/rules_layout2_common.h"
#include "support/error.h"

namespace orchid::fission {

namespace {

using ir::Dims;
using ir::DType;
using layout2::check_static_indices;
using layout2::from_end;
using layout2::index_load;

// One layout primitive out[i] = x[idx(i)] over `out` whose indices are built with b.
ValueId gather_layout(RuleContext& ctx, PrimBuilder& b, ValueId x, const Dims& out,
                      std::vector<Expr> idx) {
  Expr body = b.load(x, std::move(idx));
  ir::Primitive p = b.make(ir::PrimOp::Layout);
  p.domain = out;
  p.bodies = {body};
  return ctx.emit1(std::move(p), {ctx.graph().type(x).dtype, out});
}

struct NdShape {
  int64_t batch = 0;  // b: leading dims shared by data and indices
  int64_t depth = 0;  // k: the length of an index tuple (indices' last dim)
  Dims out;           // indices.shape[:-1] ++ data.shape[b + k:]
};

NdShape gather_nd_shape(const RuleContext& ctx) {
  const Dims s = ctx.shape(0), q = ctx.shape(1);
  auto r = static_cast<int64_t>(s.size()), qr = static_cast<int64_t>(q.size());
  NdShape n;
  n.batch = ctx.attr_int("batch_dims", 0);
  ORCHID_USER_CHECK(r >= 1 && qr >= 1) << ctx.where() << "data " << ir::dims_str(s)
                                       << " and indices " << ir::dims_str(q) << " need rank >= 1";
  ORCHID_USER_CHECK(n.batch >= 0 && n.batch < std::min(r, qr))
      << ctx.where() << "batch_dims=" << n.batch << " must lie in [0, " << std::min(r, qr) << ")";
  n.depth = q.back();
  ORCHID_USER_CHECK(n.depth >= 1 && n.depth <= r - n.batch)
      << ctx.where() << "indices " << ir::dims_str(q) << " end in a dim of " << n.depth
      << "; index tuples into data " << ir::dims_str(s) << " need 1 to " << r - n.batch;
  for (size_t d = 0; d < static_cast<size_t>(n.batch); ++d)
    ORCHID_USER_CHECK(s[d] == q[d])
        << ctx.where() << "the first " << n.batch << " (batch) dims of data " << ir::dims_str(s)
        << " and indices " << ir::dims_str(q) << " differ";
  n.out.assign(q.begin(), q.end() - 1);
  n.out.insert(n.out.end(), s.begin() + n.batch + n.depth, s.end());
  return n;
}

}  // namespace

std::vector<ValueId> rule_GatherElements(RuleContext& ctx) {
  require_dtype(ctx, 1, {DType::I32, DType::I64}, layout2::op_version(ctx));
  layout2::require_bf16_since(ctx, 0, 13);
  const Dims s = ctx.shape(0), q = ctx.shape(1);
  ORCHID_USER_CHECK(!s.empty() && q.size() == s.size())
      << ctx.where() << "data " << ir::dims_str(s) << " and indices " << ir::dims_str(q)
      << " need one rank >= 1";
  auto axis = static_cast<size_t>(ctx.normalize_axis(ctx.attr_int("axis", 0), ctx.type(0).rank()));
  for (size_t d = 0; d < s.size(); ++d)
    ORCHID_USER_CHECK(d == axis || q[d] <= s[d])
        << ctx.where() << "indices " << ir::dims_str(q) << " are larger than data "
        << ir::dims_str(s) << " along dim " << d;
  bool negative = check_static_indices(ctx, 1, [&](int64_t) { return s[axis]; });
  PrimBuilder b(ctx.graph());
  std::vector<Expr> i = domain_vars(q.size()), idx = i;
  Expr k = index_load(b, ctx.graph(), ctx.input(1), i);
  idx[axis] = negative ? from_end(k, s[axis]) : k;
  return {gather_layout(ctx, b, ctx.input(0), q, idx)};
}

std::vector<ValueId> rule_GatherND(RuleContext& ctx) {
  require_dtype(ctx, 1, {DType::I64}, layout2::op_version(ctx));
  layout2::require_bf16_since(ctx, 0, 13);
  require_attr_since(ctx, "batch_dims", 12);
  NdShape n = gather_nd_shape(ctx);
  const Dims s = ctx.shape(0), q = ctx.shape(1);
  auto tuple_at = [&](int64_t f) { return s[static_cast<size_t>(n.batch + f % n.depth)]; };
  bool negative = check_static_indices(ctx, 1, tuple_at);
  PrimBuilder b(ctx.graph());
  std::vector<Expr> i = domain_vars(n.out.size());
  std::vector<Expr> pos(i.begin(), i.begin() + static_cast<ptrdiff_t>(q.size() - 1));
  std::vector<Expr> idx(i.begin(), i.begin() + n.batch);
  for (int64_t j = 0; j < n.depth; ++j) {
    std::vector<Expr> at = pos;
    at.push_back(ir::const_i64(j));
    Expr k = index_load(b, ctx.graph(), ctx.input(1), at);
    idx.push_back(negative ? from_end(k, s[static_cast<size_t>(n.batch + j)]) : k);
  }
  idx.insert(idx.end(), i.begin() + static_cast<ptrdiff_t>(q.size() - 1), i.end());
  return {gather_layout(ctx, b, ctx.input(0), n.out, idx)};
}

// numpy.compress: the positions along `axis` (of the input flattened when there is no axis)
// whose condition is true; a condition shorter than the dim drops the rest.
std::vector<ValueId> rule_Compress(RuleContext& ctx) {
  require_dtype(ctx, 1, {DType::Bool}, layout2::op_version(ctx));
  const ir::Tensor* cond = ctx.constant(1);
  if (!cond)
    ctx.unsupported(
        "Compress with a run-time condition (the output's shape depends on its values)");
  ORCHID_USER_CHECK(cond->shape().size() == 1)
      << ctx.where() << "condition " << ir::type_str(cond->type()) << " must have rank 1";
  ValueId x = ctx.input(0);
  Dims s = ctx.shape(0);
  ORCHID_USER_CHECK(!s.empty()) << ctx.where() << "cannot compress a scalar";
  size_t axis = 0;
  if (ctx.has_attr("axis")) {
    int64_t a = ctx.attr_int("axis", 0);
    ORCHID_USER_CHECK(a >= 0 || ctx.version() >= 11)
        << ctx.where() << "axis=" << a << ": negative axes are defined from version 11";
    axis = static_cast<size_t>(ctx.normalize_axis(a, ctx.type(0).rank()));
  } else {
    s = {ctx.type(0).numel()};
    x = view(ctx, x, s, "flat");
  }
  std::vector<int64_t> picked;
  for (int64_t j = 0; j < cond->numel(); ++j) {
    if (cond->get_i64(j) == 0) continue;
    ORCHID_USER_CHECK(j < s[axis])
        << ctx.where() << "condition selects index " << j << " of an axis of size " << s[axis];
    picked.push_back(j);
  }
  Dims out = s;
  out[axis] = static_cast<int64_t>(picked.size());
  if (out == s) return {x};  // everything selected
  ValueId at = int_vector_constant(ctx, picked, "picked");
  PrimBuilder b(ctx.graph());
  std::vector<Expr> idx = domain_vars(out.size());
  idx[axis] = b.load(at, {idx[axis]});
  return {gather_layout(ctx, b, x, out, idx)};
}

// numpy.nonzero stacked: out[d, j] is coordinate d of the j-th non-zero element in row-major
// order ([0, n] for a scalar).
std::vector<ValueId> rule_NonZero(RuleContext& ctx) {
  layout2::require_bf16_since(ctx, 0, 13);
  const ir::Tensor* x = ctx.constant(0);
  if (!x) ctx.unsupported("NonZero of a run-time input (the output's shape depends on its values)");
  const Dims& s = x->shape();
  std::vector<int64_t> flat;
  for (int64_t f = 0; f < x->numel(); ++f)
    if (ir::is_float(x->dtype()) ? x->get_f64(f) != 0 : x->get_i64(f) != 0) flat.push_back(f);
  auto n = static_cast<int64_t>(flat.size());
  ir::Tensor out(ir::TensorType{DType::I64, {static_cast<int64_t>(s.size()), n}});
  for (int64_t j = 0; j < n; ++j) {
    int64_t rest = flat[static_cast<size_t>(j)];
    for (size_t d = s.size(); d-- > 0;) {
      out.set_i64(static_cast<int64_t>(d) * n + j, rest % s[d]);
      rest /= s[d];
    }
  }
  return {ctx.add_constant(std::move(out))};
}

}  // namespace orchid::fission
