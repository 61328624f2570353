// Rules that merge matmuls into one (Korch Figure 2, step 3; LoRA): products sharing an
// operand become one product with the other operands joined, and a sum of two products one
// product over a longer contracted dim.
#include <algorithm>
#include <map>
#include <tuple>

#include "rewrite/patterns.h"
#include "rewrite/rules.h"

namespace orchid::rewrite {

using ir::ValueId;

namespace {

// a and b have the same dtype and shape except along `axis`.
bool same_but(const ir::TensorType& a, const ir::TensorType& b, size_t axis) {
  if (a.dtype != b.dtype || a.shape.size() != b.shape.size()) return false;
  for (size_t k = 0; k < a.shape.size(); ++k)
    if (k != axis && a.shape[k] != b.shape[k]) return false;
  return true;
}

const ir::MatMulAttrs& mm_attrs(const ir::Primitive& p) { return std::get<ir::MatMulAttrs>(p.attrs); }

}  // namespace

std::vector<Site> find_merge_shared_operand(const ir::Graph& g) {
  // Matmuls by (shared value, its slot, attributes), in node order.
  std::map<std::tuple<int32_t, int32_t, bool, bool>, std::vector<ir::NodeId>> groups;
  for (int32_t n = 0; n < g.num_nodes(); ++n) {
    const ir::Primitive& m = g.node(ir::NodeId(n));
    if (m.op != ir::PrimOp::MatMul) continue;
    for (int32_t slot = 0; slot < 2; ++slot)
      groups[{m.inputs[static_cast<size_t>(slot)].v, slot, mm_attrs(m).trans_a, mm_attrs(m).trans_b}].push_back(ir::NodeId(n));
  }
  std::vector<Site> sites;
  for (const auto& [key, members] : groups) {
    int32_t slot = std::get<1>(key);
    std::vector<ir::NodeId> taken;
    for (ir::NodeId n : members) {
      const ir::Primitive& m = g.node(n);
      ValueId other = m.inputs[static_cast<size_t>(1 - slot)];
      const ir::TensorType& ot = g.type(other);
      if (ot.shape.size() < 2) continue;
      bool fits = true;
      for (ir::NodeId t : taken) {
        const ir::Primitive& first = g.node(t);
        size_t axis = operand_axes(ot.shape.size(), 1 - slot, mm_attrs(m)).kept;
        fits = fits && same_but(g.type(first.inputs[static_cast<size_t>(1 - slot)]), ot, axis) &&
               g.type(first.outputs[0]).dtype == g.type(m.outputs[0]).dtype && !depends_on(g, other, t);
      }
      if (fits) taken.push_back(n);
    }
    if (taken.size() >= 2) sites.push_back({-1, taken, slot});
  }
  std::sort(sites.begin(), sites.end(), [](const Site& a, const Site& b) { return a.nodes < b.nodes; });
  return sites;
}

ir::Graph apply_merge_shared_operand(const ir::Graph& g, const Site& s) {
  const ir::Primitive& first = g.node(s.nodes[0]);
  const ir::MatMulAttrs attrs = mm_attrs(first);
  ValueId shared = first.inputs[static_cast<size_t>(s.slot)];
  std::vector<ValueId> others;
  for (ir::NodeId n : s.nodes) others.push_back(g.node(n).inputs[static_cast<size_t>(1 - s.slot)]);
  size_t rank = g.type(others[0]).shape.size();
  size_t axis = operand_axes(rank, 1 - s.slot, attrs).kept;
  const std::string& name = g.value(first.outputs[0]).name;
  Edit e(g);
  e.set_provenance(first.name);
  ValueId joined = add_concat(e, others, axis, name + ".operands");
  ValueId prod = s.slot == 0 ? add_matmul(e, shared, joined, attrs, name + ".merged")
                             : add_matmul(e, joined, shared, attrs, name + ".merged");
  size_t out_rank = e.type(prod).shape.size();
  size_t out_axis = s.slot == 0 ? out_rank - 1 : out_rank - 2;
  int64_t offset = 0;
  for (size_t k = 0; k < s.nodes.size(); ++k) {
    ValueId out = g.node(s.nodes[k]).outputs[0];
    int64_t size = g.type(others[k]).shape[axis];
    e.replace(out, add_slice(e, prod, out_axis, offset, size, g.value(out).name + ".part"));
    offset += size;
  }
  return e.finish("after merging matmuls that share an operand");
}

std::vector<Site> find_sum_of_matmuls(const ir::Graph& g) {
  Readers readers(g);
  std::vector<Site> sites;
  for (int32_t n = 0; n < g.num_nodes(); ++n) {
    const ir::Primitive& s = g.node(ir::NodeId(n));
    if (s.op != ir::PrimOp::Elementwise || s.bodies.size() != 1 || s.inputs.size() != 2 ||
        s.bodies[0].op() != ir::ExprOp::Add || s.inputs[0] == s.inputs[1])
      continue;
    const ir::Expr& b = s.bodies[0];
    size_t r = s.domain.size();
    if (!ir::is_identity_load(b.arg(0), b.arg(0)->index, r) || !ir::is_identity_load(b.arg(1), b.arg(1)->index, r) ||
        b.arg(0)->index == b.arg(1)->index)
      continue;
    const ir::Primitive* m[2];
    bool ok = true;
    for (size_t k = 0; k < 2; ++k) {
      ValueId v = s.inputs[static_cast<size_t>(b.arg(k)->index)];
      m[k] = producer_of(g, v, ir::PrimOp::MatMul);
      ok = ok && m[k] && readers.only(v, ir::NodeId(n)) && g.type(v).shape == s.domain;
    }
    if (!ok || !(mm_attrs(*m[0]) == mm_attrs(*m[1]))) continue;
    for (int32_t slot = 0; slot < 2 && ok; ++slot) {
      const ir::TensorType& t0 = g.type(m[0]->inputs[static_cast<size_t>(slot)]);
      const ir::TensorType& t1 = g.type(m[1]->inputs[static_cast<size_t>(slot)]);
      ok = t0.shape.size() >= 2 &&
           same_but(t0, t1, operand_axes(t0.shape.size(), slot, mm_attrs(*m[0])).contracted);
    }
    if (ok)
      sites.push_back({-1, {ir::NodeId(n), g.value(s.inputs[static_cast<size_t>(b.arg(0)->index)]).node,
                            g.value(s.inputs[static_cast<size_t>(b.arg(1)->index)]).node}, 0});
  }
  return sites;
}

ir::Graph apply_sum_of_matmuls(const ir::Graph& g, const Site& s) {
  const ir::Primitive& sum = g.node(s.nodes[0]);
  const ir::Primitive& m1 = g.node(s.nodes[1]);
  const ir::Primitive& m2 = g.node(s.nodes[2]);
  const ir::MatMulAttrs attrs = mm_attrs(m1);
  ValueId out = sum.outputs[0];
  const std::string& name = g.value(out).name;
  Edit e(g);
  e.set_provenance(sum.name);
  ValueId joined[2];
  for (int32_t slot = 0; slot < 2; ++slot) {
    ValueId a = m1.inputs[static_cast<size_t>(slot)], b = m2.inputs[static_cast<size_t>(slot)];
    size_t axis = operand_axes(g.type(a).shape.size(), slot, attrs).contracted;
    joined[slot] = add_concat(e, {a, b}, axis, name + (slot == 0 ? ".lhs" : ".rhs"));
  }
  e.replace(out, add_matmul(e, joined[0], joined[1], attrs, name + ".merged"));
  return e.finish("after merging a sum of matmuls");
}

}  // namespace orchid::rewrite
