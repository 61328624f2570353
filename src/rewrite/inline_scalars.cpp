#include "rewrite/inline_scalars.h"

#include "ir/verifier.h"

namespace orchid::rewrite {

namespace {

// Indices that are all the constant 0: the one element (another constant is out of bounds,
// which stays an error of the load where it is evaluated).
bool constant_indices(const ir::Expr& load) {
  if (load->predicated) return false;
  for (const ir::Expr& i : load->args)
    if (i.op() != ir::ExprOp::Const || i->value.as_double() != 0) return false;
  return true;
}

// The one element of t as a literal of its dtype.
ir::Scalar only_element(const ir::Tensor& t) {
  if (ir::is_float(t.dtype())) return ir::Scalar::of(t.dtype(), t.get_f64(0));
  return ir::Scalar::of_int(t.dtype(), t.get_i64(0));
}

// Replaces the loads of one-element constants in p's bodies; returns whether any was.
bool inline_loads(const ir::Graph& g, ir::Primitive& p) {
  auto scalar_slot = [&](int32_t slot) {
    const ir::Value& v = g.value(p.inputs[static_cast<size_t>(slot)]);
    return v.origin == ir::ValueOrigin::Constant && v.type.numel() == 1;
  };
  bool changed = false;
  for (ir::Expr& body : p.bodies)
    body = ir::map_post(body, [&](const ir::Expr& e) {
      if (e.op() != ir::ExprOp::Load || !scalar_slot(e->index) || !constant_indices(e)) return e;
      changed = true;
      return ir::constant(only_element(g.constant(p.inputs[static_cast<size_t>(e->index)])));
    });
  return changed;
}

// Drops the input slots no load reads any more, renumbering the others.
void drop_unread_slots(ir::Primitive& p) {
  std::vector<int32_t> renumber(p.inputs.size(), -1);
  for (const ir::Expr& body : p.bodies)
    ir::visit_post(body, [&](const ir::Expr& e) {
      if (e.op() == ir::ExprOp::Load) renumber[static_cast<size_t>(e->index)] = 0;
    });
  std::vector<ir::ValueId> inputs;
  for (size_t k = 0; k < p.inputs.size(); ++k)
    if (renumber[k] == 0) {
      renumber[k] = static_cast<int32_t>(inputs.size());
      inputs.push_back(p.inputs[k]);
    }
  if (inputs.size() == p.inputs.size()) return;
  p.inputs = std::move(inputs);
  for (ir::Expr& body : p.bodies)
    body = ir::map_post(body, [&](const ir::Expr& e) {
      if (e.op() != ir::ExprOp::Load) return e;
      auto n = std::make_shared<ir::ExprNode>(*e);
      n->index = renumber[static_cast<size_t>(e->index)];
      return ir::Expr(std::move(n));
    });
}

}  // namespace

bool inline_scalar_constants(ir::Graph& g) {
  bool changed = false;
  for (int32_t n = 0; n < g.num_nodes(); ++n) {
    ir::Primitive& p = g.mutable_node(ir::NodeId(n));
    if (p.op != ir::PrimOp::Elementwise && p.op != ir::PrimOp::Reduce) continue;
    if (!inline_loads(g, p)) continue;
    drop_unread_slots(p);
    changed = true;
  }
  if (changed) ir::verify_or_throw(g, "after inlining scalar constants");
  return changed;
}

}  // namespace orchid::rewrite
