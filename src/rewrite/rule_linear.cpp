// Rules that turn work around a matmul into the matmul: a row sum as a product with ones,
// and a scale or division of an operand moved after the product (Korch Figure 2, steps 1-2).
#include "ir/dtype.h"
#include "rewrite/patterns.h"
#include "rewrite/rules.h"

namespace orchid::rewrite {

using ir::Expr;
using ir::ValueId;

namespace {

// A row sum: R = reduce sum over the last dim of its one input, read as it is otherwise.
bool is_row_sum(const ir::Graph& g, const ir::Primitive& p) {
  if (p.op != ir::PrimOp::Reduce || p.reduce != ir::ReduceOp::Sum || p.bodies.size() != 1 ||
      p.reduce_domain.size() != 1 || p.inputs.size() != 1)
    return false;
  const ir::TensorType& x = g.type(p.inputs[0]);
  size_t r = x.shape.size();
  if (r < 2 || !ir::is_float(x.dtype) || x.shape[r - 1] != p.reduce_domain[0]) return false;
  ir::Dims kept(x.shape.begin(), x.shape.end() - 1);
  ir::Dims with_one = kept;
  with_one.push_back(1);
  if (p.domain != kept && p.domain != with_one) return false;
  const Expr& b = p.bodies[0];
  if (b.op() != ir::ExprOp::Load || b->predicated || b->index != 0 || b.num_args() != r) return false;
  for (size_t k = 0; k + 1 < r; ++k)
    if (b.arg(k).op() != ir::ExprOp::Var || b.arg(k)->var_kind != ir::VarKind::Domain ||
        b.arg(k)->index != static_cast<int32_t>(k))
      return false;
  const Expr& last = b.arg(r - 1);
  return last.op() == ir::ExprOp::Var && last->var_kind == ir::VarKind::Reduce && last->index == 0;
}

// The division or scale of P's producer D: the slot of E read as it is, and the factor.
struct Scale {
  ir::ExprOp op = ir::ExprOp::Div;
  int32_t slot = 0;     // of E in D
  Expr factor;
  bool factor_first = false;  // f · E rather than E · f
};

std::optional<Scale> scale_of(const ir::Graph& g, const ir::Primitive& d) {
  if (d.op != ir::PrimOp::Elementwise || d.bodies.size() != 1 || d.outputs.size() != 1) return std::nullopt;
  const Expr& b = d.bodies[0];
  if (!ir::is_float(b.dtype()) || (b.op() != ir::ExprOp::Div && b.op() != ir::ExprOp::Mul)) return std::nullopt;
  size_t r = d.domain.size();
  for (size_t side = 0; side < 2; ++side) {
    if (side == 1 && b.op() == ir::ExprOp::Div) break;
    const Expr& e = b.arg(side);
    if (e.op() != ir::ExprOp::Load || !ir::is_identity_load(e, e->index, r)) continue;
    if (g.type(d.inputs[static_cast<size_t>(e->index)]).shape != d.domain) continue;
    const Expr& f = b.arg(1 - side);
    if (loads_slot(f, e->index)) continue;
    return Scale{b.op(), e->index, f, side == 1};
  }
  return std::nullopt;
}

// Whether P's scale can move past matmul m, P being operand `slot`.
bool scale_moves(const ir::Graph& g, const ir::Primitive& m, int32_t slot, const Scale& s) {
  const auto& attrs = std::get<ir::MatMulAttrs>(m.attrs);
  ValueId p = m.inputs[static_cast<size_t>(slot)];
  const ir::Dims& ps = g.type(p).shape;
  const ir::Dims& out = g.type(m.outputs[0]).shape;
  size_t r = ps.size(), big = out.size();
  OperandAxes ax = operand_axes(r, slot, attrs);
  // The kept dim must sit where the product has it (m second to last, n last), so that the
  // factor's loads stay numpy-style broadcasts.
  if (ax.kept != (slot == 0 ? r - 2 : r - 1)) return false;
  if (uses_domain_var(s.factor, static_cast<int32_t>(ax.contracted))) return false;
  for (size_t b = 0; b + 2 < r; ++b)
    if (ps[b] != out[b + big - r] && uses_domain_var(s.factor, static_cast<int32_t>(b))) return false;
  return true;
}

}  // namespace

std::vector<Site> find_sum_to_matmul(const ir::Graph& g) {
  std::vector<Site> sites;
  for (int32_t n = 0; n < g.num_nodes(); ++n)
    if (is_row_sum(g, g.node(ir::NodeId(n)))) sites.push_back({-1, {ir::NodeId(n)}, 0});
  return sites;
}

ir::Graph apply_sum_to_matmul(const ir::Graph& g, const Site& s) {
  const ir::Primitive& p = g.node(s.nodes[0]);
  ValueId x = p.inputs[0], out = p.outputs[0];
  const ir::TensorType& xt = g.type(x);
  Edit e(g);
  e.set_provenance(p.name);
  const std::string& name = g.value(out).name;
  ir::Tensor ones(ir::TensorType{xt.dtype, {xt.shape.back(), 1}});
  for (int64_t k = 0; k < ones.numel(); ++k) ones.set_f64(k, 1.0);
  ValueId col = e.add_constant(name + ".ones", std::move(ones));
  ValueId prod = add_matmul(e, x, col, {}, name + ".matmul");
  e.replace(out, add_view(e, prod, g.type(out).shape, name + ".view"));
  return e.finish("after rewriting a row sum as a matmul");
}

std::vector<Site> find_scale_after_matmul(const ir::Graph& g) {
  Readers readers(g);
  std::vector<Site> sites;
  for (int32_t n = 0; n < g.num_nodes(); ++n) {
    const ir::Primitive& m = g.node(ir::NodeId(n));
    if (m.op != ir::PrimOp::MatMul || m.inputs[0] == m.inputs[1]) continue;
    for (int32_t slot = 0; slot < 2; ++slot) {
      ValueId p = m.inputs[static_cast<size_t>(slot)];
      const ir::Primitive* d = producer_of(g, p, ir::PrimOp::Elementwise);
      if (!d || !readers.only(p, ir::NodeId(n))) continue;
      std::optional<Scale> s = scale_of(g, *d);
      if (s && scale_moves(g, m, slot, *s)) sites.push_back({-1, {ir::NodeId(n), g.value(p).node}, slot});
    }
  }
  return sites;
}

ir::Graph apply_scale_after_matmul(const ir::Graph& g, const Site& site) {
  const ir::Primitive& m = g.node(site.nodes[0]);
  const ir::Primitive& d = g.node(site.nodes[1]);
  Scale s = *scale_of(g, d);
  const auto& attrs = std::get<ir::MatMulAttrs>(m.attrs);
  ValueId out = m.outputs[0];
  const ir::TensorType& ot = g.type(out);
  const std::string& name = g.value(out).name;
  Edit e(g);
  e.set_provenance(m.name);
  std::vector<ValueId> operands = m.inputs;
  operands[static_cast<size_t>(site.slot)] = d.inputs[static_cast<size_t>(s.slot)];
  ValueId prod = add_matmul(e, operands[0], operands[1], attrs, name + ".unscaled");
  // The factor read at the product's indices: P's dims align right with the product's, its
  // kept dim is where the product has it; the contracted dim is not read, nor batch dims where
  // P is broadcast.
  size_t r = d.domain.size(), big = ot.shape.size();
  OperandAxes ax = operand_axes(r, site.slot, attrs);
  std::vector<Expr> vars(r, ir::const_i64(0));
  for (size_t j = 0; j < r; ++j)
    if (j != ax.contracted && (j + 2 >= r || d.domain[j] == ot.shape[j + big - r]))
      vars[j] = ir::dvar(static_cast<int32_t>(j + big - r));
  ir::Primitive q;
  q.op = ir::PrimOp::Elementwise;
  q.inputs = {prod};
  std::vector<int32_t> slots(d.inputs.size(), 0);
  for (size_t k = 0; k < d.inputs.size(); ++k)
    if (static_cast<int32_t>(k) != s.slot) {
      slots[k] = static_cast<int32_t>(q.inputs.size());
      q.inputs.push_back(d.inputs[k]);
    }
  Expr f = remap(s.factor, slots, vars);
  Expr pe = ir::load(0, ot.dtype, domain_vars(big));
  q.bodies = {s.factor_first ? ir::binary(s.op, f, pe) : ir::binary(s.op, pe, f)};
  q.domain = ot.shape;
  q.name = d.name;
  e.replace(out, e.add(std::move(q), ot, name + ".scaled"));
  return e.finish("after moving a scale past a matmul");
}

}  // namespace orchid::rewrite
