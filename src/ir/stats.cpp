#include "ir/stats.h"

namespace orchid::ir {

namespace {
// Index arithmetic inside loads is addressing, not work: count only the value path.
int64_t value_ops(const Expr& e) {
  if (e.op() == ExprOp::Load) return 0;
  int64_t n = 0;
  switch (expr_op_category(e.op())) {
    case ExprCategory::Unary:
    case ExprCategory::Binary:
    case ExprCategory::Compare: n = 1; break;
    case ExprCategory::Leaf:
    case ExprCategory::Load:
    case ExprCategory::Select:
    case ExprCategory::Cast: break;
  }
  for (const Expr& a : e->args) n += value_ops(a);
  return n;
}
}  // namespace

int64_t primitive_flops(const Primitive& p) {
  if (p.kind() == PrimKind::Opaque) return 0;
  int64_t points = numel(p.domain) * numel(p.reduce_domain);
  int64_t per_point = 0;
  for (const Expr& b : p.bodies) per_point += value_ops(b);
  if (p.reduce != ReduceOp::None) per_point += static_cast<int64_t>(p.bodies.size());
  return points * per_point;
}

int64_t primitive_bytes(const Graph& g, const Primitive& p) {
  int64_t bytes = 0;
  for (ValueId v : p.inputs) bytes += g.type(v).bytes();
  for (ValueId v : p.outputs) bytes += g.type(v).bytes();
  return bytes;
}

GraphStats graph_stats(const Graph& g) {
  GraphStats s;
  for (const Tensor& c : g.constants()) s.parameter_bytes += static_cast<int64_t>(c.bytes().size());
  for (const Primitive& p : g.nodes()) {
    s.flops += primitive_flops(p);
    ++s.primitives_by_kind[static_cast<size_t>(p.kind())];
  }
  return s;
}

}  // namespace orchid::ir
