#include "rewrite/patterns.h"

#include <memory>

#include "support/error.h"

namespace orchid::rewrite {

using ir::Expr;
using ir::ValueId;

std::optional<ir::NodeId> producer(const ir::Graph& g, ValueId v) {
  const ir::Value& x = g.value(v);
  if (x.origin != ir::ValueOrigin::Node) return std::nullopt;
  return x.node;
}

const ir::Primitive* producer_of(const ir::Graph& g, ValueId v, ir::PrimOp op) {
  std::optional<ir::NodeId> n = producer(g, v);
  if (!n || g.node(*n).op != op) return nullptr;
  return &g.node(*n);
}

Readers::Readers(const ir::Graph& g) : of(g.users()), output(static_cast<size_t>(g.num_values()), false) {
  for (ValueId o : g.outputs()) output[static_cast<size_t>(o.v)] = true;
}

bool Readers::only(ValueId v, ir::NodeId reader) const {
  if (output[static_cast<size_t>(v.v)]) return false;
  for (ir::NodeId n : of[static_cast<size_t>(v.v)])
    if (n != reader) return false;
  return true;
}

bool depends_on(const ir::Graph& g, ValueId v, ir::NodeId n) {
  std::vector<bool> seen(static_cast<size_t>(g.num_nodes()), false);
  std::vector<ValueId> stack = {v};
  while (!stack.empty()) {
    std::optional<ir::NodeId> p = producer(g, stack.back());
    stack.pop_back();
    // Nodes are in a topological order: one before n cannot depend on it.
    if (!p || p->v < n.v || seen[static_cast<size_t>(p->v)]) continue;
    if (*p == n) return true;
    seen[static_cast<size_t>(p->v)] = true;
    for (ValueId i : g.node(*p).inputs) stack.push_back(i);
  }
  return false;
}

bool uses_domain_var(const Expr& e, int32_t index) {
  bool used = false;
  ir::visit_post(e, [&](const Expr& x) {
    used |= x.op() == ir::ExprOp::Var && x->var_kind == ir::VarKind::Domain && x->index == index;
  });
  return used;
}

bool loads_slot(const Expr& e, int32_t slot) {
  bool used = false;
  ir::visit_post(e, [&](const Expr& x) { used |= x.op() == ir::ExprOp::Load && x->index == slot; });
  return used;
}

Expr remap(const Expr& e, const std::vector<int32_t>& slots, const std::vector<Expr>& vars) {
  return ir::map_post(e, [&](const Expr& x) -> Expr {
    if (x.op() == ir::ExprOp::Var && x->var_kind == ir::VarKind::Domain) {
      ORCHID_CHECK(static_cast<size_t>(x->index) < vars.size()) << "remap: i" << x->index << " has no substitute";
      return vars[static_cast<size_t>(x->index)];
    }
    if (x.op() == ir::ExprOp::Load) {
      auto n = std::make_shared<ir::ExprNode>(*x);
      n->index = slots.at(static_cast<size_t>(x->index));
      return Expr(std::move(n));
    }
    return x;
  });
}

OperandAxes operand_axes(size_t rank, int32_t slot, const ir::MatMulAttrs& attrs) {
  bool trans = slot == 0 ? attrs.trans_a : attrs.trans_b;
  bool contracted_last = (slot == 0) != trans;  // A: [.., m, k]; B: [.., k, n]
  return contracted_last ? OperandAxes{rank - 1, rank - 2} : OperandAxes{rank - 2, rank - 1};
}

std::vector<Expr> domain_vars(size_t rank) {
  std::vector<Expr> v;
  for (size_t k = 0; k < rank; ++k) v.push_back(ir::dvar(static_cast<int32_t>(k)));
  return v;
}

ValueId add_matmul(Edit& e, ValueId a, ValueId b, ir::MatMulAttrs attrs, const std::string& name) {
  ir::Primitive p;
  p.op = ir::PrimOp::MatMul;
  p.inputs = {a, b};
  p.attrs = attrs;
  return e.add(std::move(p), ir::matmul_result_type(e.type(a), e.type(b), attrs), name);
}

ValueId add_concat(Edit& e, const std::vector<ValueId>& parts, size_t axis, const std::string& name) {
  ORCHID_CHECK(!parts.empty()) << "concat of nothing";
  ir::TensorType out = e.type(parts[0]);
  std::vector<int64_t> offsets;
  out.shape[axis] = 0;
  for (ValueId v : parts) {
    offsets.push_back(out.shape[axis]);
    out.shape[axis] += e.type(v).shape[axis];
  }
  std::vector<Expr> i = domain_vars(out.shape.size());
  auto part = [&](size_t k) {
    std::vector<Expr> idx = i;
    if (offsets[k] != 0) idx[axis] = i[axis] - offsets[k];
    return ir::load(static_cast<int32_t>(k), out.dtype, idx);
  };
  Expr body = part(parts.size() - 1);
  for (size_t k = parts.size() - 1; k-- > 0;)
    body = ir::select(ir::binary(ir::ExprOp::Lt, i[axis], ir::const_i64(offsets[k + 1])), part(k), body);
  ir::Primitive p;
  p.op = ir::PrimOp::Layout;
  p.inputs = parts;
  p.domain = out.shape;
  p.bodies = {body};
  return e.add(std::move(p), out, name);
}

ValueId add_slice(Edit& e, ValueId v, size_t axis, int64_t offset, int64_t size, const std::string& name) {
  ir::TensorType out = e.type(v);
  out.shape[axis] = size;
  std::vector<Expr> idx = domain_vars(out.shape.size());
  if (offset != 0) idx[axis] = idx[axis] + offset;
  ir::Primitive p;
  p.op = ir::PrimOp::Layout;
  p.inputs = {v};
  p.domain = out.shape;
  p.bodies = {ir::load(0, out.dtype, idx)};
  return e.add(std::move(p), out, name);
}

ValueId add_view(Edit& e, ValueId v, const ir::Dims& shape, const std::string& name) {
  const ir::TensorType& t = e.type(v);
  if (t.shape == shape) return v;
  ORCHID_CHECK(ir::numel(shape) == t.numel()) << "view of " << ir::type_str(t) << " as " << ir::dims_str(shape);
  ir::Primitive p;
  p.op = ir::PrimOp::View;
  p.inputs = {v};
  return e.add(std::move(p), {t.dtype, shape}, name);
}

}  // namespace orchid::rewrite
