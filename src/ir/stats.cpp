#include "ir/stats.h"

#include <vector>

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

std::vector<int32_t> last_uses(const Graph& g) {
  std::vector<int32_t> last_use(static_cast<size_t>(g.num_values()), -1);
  for (int32_t n = 0; n < g.num_nodes(); ++n)
    for (ValueId v : g.node(NodeId(n)).inputs) last_use[static_cast<size_t>(v.v)] = n;
  for (ValueId v : g.outputs()) last_use[static_cast<size_t>(v.v)] = g.num_nodes();
  return last_use;
}

MemoryPeak peak_memory(const Graph& g, int64_t element_bytes) {
  auto bytes = [&](ValueId v) {
    const TensorType& t = g.type(v);
    return t.numel() * (element_bytes > 0 ? element_bytes : dtype_bytes(t.dtype));
  };
  std::vector<int32_t> last_use = last_uses(g);
  int64_t live = 0;
  for (int32_t v = 0; v < g.num_values(); ++v) {
    ValueOrigin o = g.value(ValueId(v)).origin;
    if (o == ValueOrigin::Constant) last_use[static_cast<size_t>(v)] = g.num_nodes();
    if (o != ValueOrigin::Node) live += bytes(ValueId(v));
  }
  MemoryPeak peak{live, -1};
  for (int32_t n = 0; n < g.num_nodes(); ++n) {
    const Primitive& p = g.node(NodeId(n));
    for (ValueId v : p.outputs) live += bytes(v);
    if (live > peak.bytes) peak = {live, n};
    for (ValueId v : p.outputs)
      if (last_use[static_cast<size_t>(v.v)] <= n) live -= bytes(v);
    for (ValueId v : p.inputs)
      if (last_use[static_cast<size_t>(v.v)] == n) {
        live -= bytes(v);
        last_use[static_cast<size_t>(v.v)] = -1;  // an input read twice is freed once
      }
  }
  return peak;
}

}  // namespace orchid::ir
