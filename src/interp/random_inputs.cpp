#include "interp/random_inputs.h"

#include <algorithm>

#include "interp/reduce.h"
#include "support/random.h"

namespace orchid::interp {

namespace {

using ir::Expr;

// Slots of the integral loads whose values e computes with (through casts and arithmetic),
// not looking into the indices of those loads.
void value_loads(const Expr& e, std::vector<int32_t>& slots) {
  if (e.op() == ir::ExprOp::Load) {
    if (ir::is_integral(e.dtype())) slots.push_back(e->index);
    return;
  }
  for (const Expr& a : e->args) value_loads(a, slots);
}

void constrain(std::vector<int64_t>& limit, ir::ValueId v, int64_t extent) {
  int64_t& l = limit[static_cast<size_t>(v.v)];
  l = l < 0 ? extent : std::min(l, extent);
}

// Every load in e indexes its input: the integral values its indices are computed from are
// indices into the corresponding axes.
void index_uses(const ir::Graph& g, const ir::Primitive& p, const Expr& e,
                std::vector<int64_t>& limit) {
  if (e.op() == ir::ExprOp::Load && static_cast<size_t>(e->index) < p.inputs.size()) {
    const ir::Dims& shape = g.type(p.inputs[static_cast<size_t>(e->index)]).shape;
    for (size_t d = 0; d < shape.size() && d < e->args.size(); ++d) {
      std::vector<int32_t> slots;
      value_loads(e.arg(d), slots);
      for (int32_t s : slots)
        if (static_cast<size_t>(s) < p.inputs.size())
          constrain(limit, p.inputs[static_cast<size_t>(s)], shape[d]);
    }
  }
  for (const Expr& a : e->args) index_uses(g, p, a, limit);
}

// The indices operand of a scatter indexes the data: scatter_elements along `axis`,
// scatter_nd the leading dims (limited by the smallest of them).
void opaque_index_uses(const ir::Graph& g, const ir::Primitive& p, std::vector<int64_t>& limit) {
  if (p.kind() != ir::PrimKind::Opaque || p.inputs.size() < 2) return;
  const auto& a = std::get<ir::OpaqueAttrs>(p.attrs);
  const ir::Dims& data = g.type(p.inputs[0]).shape;
  if (a.routine == ir::OpaqueRoutine::ScatterElements) {
    int64_t axis = a.param("axis");
    if (axis >= 0 && static_cast<size_t>(axis) < data.size()) constrain(limit, p.inputs[1], data[axis]);
  } else if (a.routine == ir::OpaqueRoutine::ScatterND) {
    const ir::Dims& idx = g.type(p.inputs[1]).shape;
    int64_t k = idx.empty() ? 0 : idx.back();
    for (int64_t d = 0; d < k && static_cast<size_t>(d) < data.size(); ++d) constrain(limit, p.inputs[1], data[d]);
  }
}

// limit[v]: the smallest extent of an axis that integral value v indexes, -1 where none.
// Limits flow backwards through primitives without reduction (casts, arithmetic, layout
// changes of an index tensor), so nodes are visited last to first.
std::vector<int64_t> index_limits(const ir::Graph& g) {
  std::vector<int64_t> limit(static_cast<size_t>(g.num_values()), -1);
  for (int32_t n = g.num_nodes(); n-- > 0;) {
    const ir::Primitive& p = g.node(ir::NodeId(n));
    for (const Expr& b : p.bodies) index_uses(g, p, b, limit);
    opaque_index_uses(g, p, limit);
    if (p.reduce != ir::ReduceOp::None) continue;
    for (size_t k = 0; k < p.bodies.size() && k < p.outputs.size(); ++k) {
      int64_t l = limit[static_cast<size_t>(p.outputs[k].v)];
      if (l < 0) continue;
      std::vector<int32_t> slots;
      value_loads(p.bodies[k], slots);
      for (int32_t s : slots)
        if (static_cast<size_t>(s) < p.inputs.size()) constrain(limit, p.inputs[static_cast<size_t>(s)], l);
    }
  }
  return limit;
}

ir::Tensor random_tensor(const ir::TensorType& type, int64_t index_limit, Rng& rng) {
  ir::Tensor t(type);
  ir::DType d = type.dtype;
  bool is_unsigned = ir::dtype_class(d) == ir::DTypeClass::Unsigned;
  for (int64_t k = 0; k < t.numel(); ++k) {
    if (ir::is_float(d)) {
      t.set_f64(k, rng.uniform(-1.0, 1.0));
    } else if (ir::is_bool(d)) {
      t.set_i64(k, rng.coin());
    } else if (index_limit >= 0) {
      bool wide = d == ir::DType::I64 || d == ir::DType::U64;
      int64_t hi = wide ? index_limit : std::min(index_limit, ir::dtype_highest(d) + 1);
      t.set_i64(k, hi <= 0 ? 0 : rng.range(0, hi));
    } else {
      t.set_i64(k, rng.range(is_unsigned ? 0 : -8, 8));
    }
  }
  return t;
}

}  // namespace

std::vector<ir::Tensor> random_inputs(const ir::Graph& g, uint64_t seed) {
  std::vector<int64_t> limit = index_limits(g);
  std::vector<ir::Tensor> out;
  for (size_t k = 0; k < g.inputs().size(); ++k) {
    ir::ValueId v = g.inputs()[k];
    Rng rng(seed + 0x632be59bd9b4e019ull * (k + 1));  // one independent stream per input
    out.push_back(random_tensor(g.type(v), limit[static_cast<size_t>(v.v)], rng));
  }
  return out;
}

}  // namespace orchid::interp
