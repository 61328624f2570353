#include "fission/builders.h"

#include <algorithm>

#include "support/error.h"

namespace orchid::fission {

void require_same_dtype(const RuleContext& ctx, size_t a, size_t b) {
  ORCHID_USER_CHECK(ctx.dtype(a) == ctx.dtype(b))
      << ctx.where() << "inputs " << a << " and " << b << " have different dtypes ("
      << ir::dtype_name(ctx.dtype(a)) << " and " << ir::dtype_name(ctx.dtype(b)) << ")";
}

ir::Dims broadcast_shapes(const RuleContext& ctx, const std::vector<ir::Dims>& shapes) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  ir::Dims out(rank, 1);
  for (const auto& s : shapes) {
    for (size_t j = 0; j < s.size(); ++j) {
      int64_t& o = out[rank - s.size() + j];
      int64_t d = s[j];
      ORCHID_USER_CHECK(d == o || d == 1 || o == 1) << ctx.where() << "shapes do not broadcast: " << [&] {
        std::string all;
        for (const auto& x : shapes) all += (all.empty() ? "" : " and ") + ir::dims_str(x);
        return all;
      }();
      if (o == 1) o = d;
    }
  }
  return out;
}

int32_t PrimBuilder::slot(ValueId v) {
  for (size_t k = 0; k < inputs_.size(); ++k)
    if (inputs_[k] == v) return static_cast<int32_t>(k);
  inputs_.push_back(v);
  return static_cast<int32_t>(inputs_.size() - 1);
}

Expr PrimBuilder::load(ValueId v, std::vector<Expr> idx) {
  return ir::load(slot(v), g_.type(v).dtype, std::move(idx));
}

Expr PrimBuilder::load_pred(ValueId v, std::vector<Expr> idx, Expr pred, ir::Scalar fill) {
  return ir::load_pred(slot(v), g_.type(v).dtype, std::move(idx), std::move(pred), fill);
}

Expr PrimBuilder::bload(ValueId v, const ir::Dims& out_shape) {
  const ir::Dims& s = g_.type(v).shape;
  ORCHID_CHECK(s.size() <= out_shape.size()) << "bload of rank " << s.size() << " into " << out_shape.size();
  size_t off = out_shape.size() - s.size();
  std::vector<Expr> idx;
  for (size_t j = 0; j < s.size(); ++j)
    idx.push_back(s[j] == 1 && out_shape[off + j] != 1 ? ir::const_i64(0)
                                                       : ir::dvar(static_cast<int32_t>(off + j)));
  return load(v, std::move(idx));
}

ir::Primitive PrimBuilder::make(ir::PrimOp op) const {
  ir::Primitive p;
  p.op = op;
  p.inputs = inputs_;
  return p;
}

std::vector<Expr> domain_vars(size_t n) {
  std::vector<Expr> v;
  for (size_t k = 0; k < n; ++k) v.push_back(ir::dvar(static_cast<int32_t>(k)));
  return v;
}

ValueId ew_map(RuleContext& ctx, const std::vector<ValueId>& ins, ir::DType out, const ExprFn& f,
               const std::string& suffix) {
  std::vector<ir::Dims> shapes;
  for (ValueId v : ins) shapes.push_back(ctx.graph().type(v).shape);
  ir::Dims shape = broadcast_shapes(ctx, shapes);
  PrimBuilder b(ctx.graph());
  std::vector<Expr> loads;
  for (ValueId v : ins) loads.push_back(b.bload(v, shape));
  ir::Primitive p = b.make(ir::PrimOp::Elementwise);
  p.bodies = {f(loads)};
  ORCHID_CHECK(p.bodies[0].dtype() == out) << "ew_map body of " << ir::dtype_name(p.bodies[0].dtype())
                                           << " for an output of " << ir::dtype_name(out);
  p.domain = shape;
  return ctx.emit1(std::move(p), {out, shape}, suffix);
}

ValueId ew_unary(RuleContext& ctx, ValueId x, const std::function<Expr(Expr)>& f,
                 const std::string& suffix) {
  PrimBuilder b(ctx.graph());
  Expr body = f(b.bload(x, ctx.graph().type(x).shape));
  ir::Primitive p = b.make(ir::PrimOp::Elementwise);
  p.domain = ctx.graph().type(x).shape;
  p.bodies = {body};
  // Built before the call: its arguments are evaluated in no set order, so p.domain could be
  // read after p is moved from.
  ir::TensorType out{body.dtype(), p.domain};
  return ctx.emit1(std::move(p), out, suffix);
}

std::vector<ValueId> reduce_axes(RuleContext& ctx, ValueId x, std::vector<int64_t> axes,
                                 bool keepdims, ir::ReduceOp op,
                                 const std::function<Expr(Expr)>& body, const std::string& suffix) {
  const ir::TensorType& xt = ctx.graph().type(x);
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  ir::Dims out_shape, rdom;
  std::vector<Expr> idx;
  for (size_t d = 0, r = 0; d < xt.shape.size(); ++d) {
    bool reduced = std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(d));
    if (reduced) {
      idx.push_back(ir::rvar(static_cast<int32_t>(r++)));
      rdom.push_back(xt.shape[d]);
      if (keepdims) out_shape.push_back(1);
    } else {
      idx.push_back(ir::dvar(static_cast<int32_t>(out_shape.size())));
      out_shape.push_back(xt.shape[d]);
    }
  }
  PrimBuilder b(ctx.graph());
  Expr v = b.load(x, idx);
  if (body) v = body(v);
  ir::Primitive p = b.make(ir::PrimOp::Reduce);
  p.domain = out_shape;
  p.reduce_domain = rdom;
  p.reduce = op;
  std::vector<ir::TensorType> outs = {{v.dtype(), out_shape}};
  if (op == ir::ReduceOp::ArgMax || op == ir::ReduceOp::ArgMin) {
    ORCHID_CHECK(rdom.size() == 1) << "argmax over " << rdom.size() << " axes";
    p.bodies = {v, ir::rvar(0)};
    outs.push_back({ir::DType::I64, out_shape});
  } else {
    p.bodies = {v};
    if (ir::reduce_op_outputs(op) == 2) outs.push_back({v.dtype(), out_shape});
  }
  if (rdom.empty()) {  // nothing to reduce: the combiner over one element
    ORCHID_CHECK(op == ir::ReduceOp::Sum || op == ir::ReduceOp::Max || op == ir::ReduceOp::Min ||
                 op == ir::ReduceOp::Prod)
        << "reduction of no axes with " << ir::reduce_op_name(op);
    p.op = ir::PrimOp::Elementwise;
    p.reduce = ir::ReduceOp::None;
  }
  return ctx.emit(std::move(p), outs, suffix);
}

ValueId cast_to(RuleContext& ctx, ValueId x, ir::DType to, const std::string& suffix) {
  if (ctx.graph().type(x).dtype == to) return x;
  return ew_unary(ctx, x, [to](Expr e) { return ir::cast(to, e); }, suffix);
}

ValueId view(RuleContext& ctx, ValueId x, const ir::Dims& shape, const std::string& suffix) {
  const ir::TensorType& xt = ctx.graph().type(x);
  if (xt.shape == shape) return x;
  ORCHID_CHECK(ir::numel(shape) == xt.numel()) << "view of " << ir::type_str(xt) << " as " << ir::dims_str(shape);
  ir::Primitive p;
  p.op = ir::PrimOp::View;
  p.inputs = {x};
  return ctx.emit1(std::move(p), {xt.dtype, shape}, suffix);
}

ValueId matmul(RuleContext& ctx, ValueId a, ValueId b, const ir::MatMulAttrs& attrs, const std::string& suffix) {
  ir::TensorType out;
  try {
    out = ir::matmul_result_type(ctx.graph().type(a), ctx.graph().type(b), attrs);
  } catch (const UserError& e) {
    ORCHID_USER_ERROR() << ctx.where() << e.what();
  }
  ir::Primitive p;
  p.op = ir::PrimOp::MatMul;
  p.inputs = {a, b};
  p.attrs = attrs;
  return ctx.emit1(std::move(p), out, suffix);
}

ValueId gather(RuleContext& ctx, ValueId x, const ir::Dims& out_shape,
               const std::function<std::vector<Expr>(PrimBuilder&, const std::vector<Expr>&)>& index_fn,
               const std::string& suffix) {
  PrimBuilder b(ctx.graph());
  ir::DType t = ctx.graph().type(x).dtype;
  Expr body = b.load(x, index_fn(b, domain_vars(out_shape.size())));
  ir::Primitive p = b.make(ir::PrimOp::Layout);
  p.domain = out_shape;
  p.bodies = {body};
  return ctx.emit1(std::move(p), {t, out_shape}, suffix);
}

ValueId remap(RuleContext& ctx, ValueId x, const ir::Dims& out_shape,
              const std::function<std::vector<Expr>(const std::vector<Expr>&)>& index_map,
              const std::string& suffix) {
  return gather(ctx, x, out_shape, [&](PrimBuilder&, const std::vector<Expr>& i) { return index_map(i); }, suffix);
}

ValueId transpose(RuleContext& ctx, ValueId x, const std::vector<int64_t>& perm,
                  const std::string& suffix) {
  const ir::Dims& s = ctx.graph().type(x).shape;
  bool identity = true;
  ir::Dims out(perm.size());
  for (size_t k = 0; k < perm.size(); ++k) {
    out[k] = s[static_cast<size_t>(perm[k])];
    identity &= perm[k] == static_cast<int64_t>(k);
  }
  if (identity) return x;
  return remap(ctx, x, out, [&](const std::vector<Expr>& i) {
    std::vector<Expr> idx(perm.size());
    for (size_t k = 0; k < perm.size(); ++k) idx[static_cast<size_t>(perm[k])] = i[k];
    return idx;
  }, suffix);
}

ValueId broadcast_to(RuleContext& ctx, ValueId x, const ir::Dims& shape, const std::string& suffix) {
  const ir::TensorType& xt = ctx.graph().type(x);
  if (xt.shape == shape) return x;
  PrimBuilder b(ctx.graph());
  Expr body = b.bload(x, shape);
  ir::Primitive p = b.make(ir::PrimOp::Broadcast);
  p.domain = shape;
  p.bodies = {body};
  return ctx.emit1(std::move(p), {xt.dtype, shape}, suffix);
}

ValueId scalar_constant(RuleContext& ctx, ir::DType t, double v, const std::string& suffix) {
  return constant_of(ctx, t, {}, {v}, suffix);
}

ValueId constant_of(RuleContext& ctx, ir::DType t, const ir::Dims& shape, const std::vector<double>& values,
                    const std::string& suffix) {
  ir::TensorType type{t, shape};
  ctx.check_size(type);
  ORCHID_CHECK(static_cast<int64_t>(values.size()) == type.numel())
      << values.size() << " values for a constant of " << ir::type_str(type);
  ir::Tensor c(type);
  for (size_t k = 0; k < values.size(); ++k) {
    if (ir::is_float(t)) c.set_f64(static_cast<int64_t>(k), values[k]);
    else c.set_i64(static_cast<int64_t>(k), static_cast<int64_t>(values[k]));
  }
  return ctx.add_constant(std::move(c), suffix);
}

namespace {

// One layout primitive selecting among `parts` (at most a chunk) by the index along `axis`.
ValueId concat_chunk(RuleContext& ctx, const std::vector<ValueId>& parts, size_t axis, const std::string& suffix) {
  std::vector<int64_t> offsets;
  ir::Dims shape = ctx.graph().type(parts[0]).shape;
  shape[axis] = 0;
  for (ValueId v : parts) {
    offsets.push_back(shape[axis]);
    shape[axis] += ctx.graph().type(v).shape[axis];
  }
  PrimBuilder b(ctx.graph());
  for (ValueId v : parts) b.slot(v);  // load slots in part order
  std::vector<Expr> i = domain_vars(shape.size());
  auto part_load = [&](size_t k) {
    std::vector<Expr> idx = i;
    int64_t size = ctx.graph().type(parts[k]).shape[axis];
    idx[axis] = size == 1 ? ir::const_i64(0) : offsets[k] == 0 ? i[axis] : i[axis] - offsets[k];
    return b.load(parts[k], idx);
  };
  Expr body = part_load(parts.size() - 1);
  for (size_t k = parts.size() - 1; k-- > 0;)
    body = ir::select(ir::binary(ir::ExprOp::Lt, i[axis], ir::const_i64(offsets[k + 1])), part_load(k), body);
  ir::Primitive p = b.make(ir::PrimOp::Layout);
  p.domain = shape;
  p.bodies = {body};
  return ctx.emit1(std::move(p), {ctx.graph().type(parts[0]).dtype, shape}, suffix);
}

}  // namespace

ValueId concat(RuleContext& ctx, const std::vector<ValueId>& parts, size_t axis, const std::string& suffix) {
  constexpr size_t kMaxParts = 32;
  ORCHID_CHECK(!parts.empty()) << "concat of nothing";
  std::vector<ValueId> level = parts;
  while (level.size() > kMaxParts) {
    std::vector<ValueId> next;
    for (size_t at = 0; at < level.size(); at += kMaxParts) {
      size_t end = std::min(level.size(), at + kMaxParts);
      next.push_back(concat_chunk(ctx, {level.begin() + static_cast<std::ptrdiff_t>(at), level.begin() + static_cast<std::ptrdiff_t>(end)},
                                  axis, suffix.empty() ? "part" : suffix + "/part"));
    }
    level = std::move(next);
  }
  return concat_chunk(ctx, level, axis, suffix);
}

ValueId stack(RuleContext& ctx, const std::vector<ValueId>& parts, size_t axis, const std::string& suffix) {
  std::vector<ValueId> unit;
  for (ValueId v : parts) {
    ir::Dims shape = ctx.graph().type(v).shape;
    shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(axis), 1);
    unit.push_back(view(ctx, v, shape, suffix + "part"));
  }
  return concat(ctx, unit, axis, suffix);
}

ValueId int_vector_constant(RuleContext& ctx, const std::vector<int64_t>& v, const std::string& suffix) {
  ir::Tensor c(ir::TensorType{ir::DType::I64, {static_cast<int64_t>(v.size())}});
  for (size_t k = 0; k < v.size(); ++k) c.set_i64(static_cast<int64_t>(k), v[k]);
  return ctx.add_constant(std::move(c), suffix);
}

}  // namespace orchid::fission
