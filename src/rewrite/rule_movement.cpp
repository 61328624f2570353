// Rules on data movement: a transpose read by a matmul becomes its trans flag, two
// permutations one (or none), two views one (or none).
#include "ir/movement.h"
#include "rewrite/fold_transposes.h"
#include "rewrite/patterns.h"
#include "rewrite/rules.h"

namespace orchid::rewrite {

using ir::ValueId;

namespace {

bool is_identity(const std::vector<int32_t>& q) {
  for (size_t k = 0; k < q.size(); ++k)
    if (q[k] != static_cast<int32_t>(k)) return false;
  return true;
}

// The permutation of node n's input that its output is, and that input.
struct Permute {
  std::vector<int32_t> q;
  ValueId source;
};

std::optional<Permute> permute_of(const ir::Graph& g, ir::NodeId n) {
  if (g.node(n).op != ir::PrimOp::Layout) return std::nullopt;
  std::optional<std::vector<int32_t>> q = ir::permutation_of(g, n);
  if (!q) return std::nullopt;
  return Permute{*q, g.node(n).inputs[0]};
}

}  // namespace

std::vector<Site> find_transpose_into_matmul(const ir::Graph& g) {
  std::vector<Site> sites;
  for (int32_t n = 0; n < g.num_nodes(); ++n) {
    const ir::Primitive& m = g.node(ir::NodeId(n));
    if (m.op != ir::PrimOp::MatMul) continue;
    for (int32_t slot = 0; slot < 2; ++slot)
      if (transposed_source(g, m.inputs[static_cast<size_t>(slot)]))
        sites.push_back({-1, {ir::NodeId(n), g.value(m.inputs[static_cast<size_t>(slot)]).node}, slot});
  }
  return sites;
}

ir::Graph apply_transpose_into_matmul(const ir::Graph& g, const Site& s) {
  const ir::Primitive& m = g.node(s.nodes[0]);
  ir::MatMulAttrs attrs = std::get<ir::MatMulAttrs>(m.attrs);
  std::vector<ValueId> operands = m.inputs;
  ValueId& t = operands[static_cast<size_t>(s.slot)];
  t = *transposed_source(g, t);
  bool& flag = s.slot == 0 ? attrs.trans_a : attrs.trans_b;
  flag = !flag;
  Edit e(g);
  e.set_provenance(m.name);
  ValueId out = m.outputs[0];
  e.replace(out, add_matmul(e, operands[0], operands[1], attrs, g.value(out).name + ".folded"));
  return e.finish("after folding a transpose into a matmul");
}

std::vector<Site> find_permutation_pair(const ir::Graph& g) {
  std::vector<Site> sites;
  for (int32_t n = 0; n < g.num_nodes(); ++n) {
    std::optional<Permute> outer = permute_of(g, ir::NodeId(n));
    if (!outer) continue;
    if (is_identity(outer->q)) {
      sites.push_back({-1, {ir::NodeId(n)}, 0});
      continue;
    }
    std::optional<ir::NodeId> p = producer(g, outer->source);
    if (p && permute_of(g, *p)) sites.push_back({-1, {ir::NodeId(n), *p}, 0});
  }
  return sites;
}

ir::Graph apply_permutation_pair(const ir::Graph& g, const Site& s) {
  Permute outer = *permute_of(g, s.nodes[0]);
  ValueId out = g.node(s.nodes[0]).outputs[0];
  Edit e(g);
  e.set_provenance(g.node(s.nodes[0]).name);
  if (s.nodes.size() == 1) {
    e.replace(out, outer.source);
    return e.finish("after removing an identity permutation");
  }
  Permute inner = *permute_of(g, s.nodes[1]);
  // x's dim k is read by t's variable inner.q[k], t's dim j by y's variable outer.q[j].
  std::vector<int32_t> q(inner.q.size());
  for (size_t k = 0; k < q.size(); ++k) q[k] = outer.q[static_cast<size_t>(inner.q[k])];
  if (is_identity(q)) {
    e.replace(out, inner.source);
    return e.finish("after cancelling two permutations");
  }
  const ir::TensorType& ot = g.type(out);
  std::vector<ir::Expr> idx;
  for (int32_t v : q) idx.push_back(ir::dvar(v));
  ir::Primitive p;
  p.op = ir::PrimOp::Layout;
  p.inputs = {inner.source};
  p.domain = ot.shape;
  p.bodies = {ir::load(0, ot.dtype, idx)};
  e.replace(out, e.add(std::move(p), ot, g.value(out).name + ".permuted"));
  return e.finish("after composing two permutations");
}

std::vector<Site> find_view_chain(const ir::Graph& g) {
  std::vector<Site> sites;
  for (int32_t n = 0; n < g.num_nodes(); ++n) {
    const ir::Primitive& v = g.node(ir::NodeId(n));
    if (v.op != ir::PrimOp::View) continue;
    if (g.type(v.inputs[0]).shape == v.domain) {
      sites.push_back({-1, {ir::NodeId(n)}, 0});
    } else if (producer_of(g, v.inputs[0], ir::PrimOp::View)) {
      sites.push_back({-1, {ir::NodeId(n), g.value(v.inputs[0]).node}, 0});
    }
  }
  return sites;
}

ir::Graph apply_view_chain(const ir::Graph& g, const Site& s) {
  const ir::Primitive& v = g.node(s.nodes[0]);
  ValueId out = v.outputs[0];
  ValueId source = s.nodes.size() == 1 ? v.inputs[0] : g.node(s.nodes[1]).inputs[0];
  Edit e(g);
  e.set_provenance(v.name);
  e.replace(out, add_view(e, source, g.type(out).shape, g.value(out).name + ".view"));
  return e.finish("after joining views");
}

}  // namespace orchid::rewrite
