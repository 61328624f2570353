#include "rewrite/fold_transposes.h"

#include <optional>

#include "ir/movement.h"
#include "ir/verifier.h"

namespace orchid::rewrite {

std::optional<ir::ValueId> transposed_source(const ir::Graph& g, ir::ValueId t) {
  const ir::Value& v = g.value(t);
  if (v.origin != ir::ValueOrigin::Node) return std::nullopt;
  std::optional<std::vector<int32_t>> q = ir::permutation_of(g, v.node);
  if (!q || q->size() < 2) return std::nullopt;
  size_t r = q->size();
  for (size_t d = 0; d < r; ++d) {
    size_t want = d + 2 < r ? d : (d == r - 2 ? r - 1 : r - 2);
    if ((*q)[d] != static_cast<int32_t>(want)) return std::nullopt;
  }
  return g.node(v.node).inputs[0];
}

namespace {

// p with each operand that is a transpose read from its source, the flag flipped.
bool fold_operands(const ir::Graph& g, ir::Primitive& p) {
  auto& attrs = std::get<ir::MatMulAttrs>(p.attrs);
  bool changed = false;
  for (size_t k = 0; k < 2; ++k)
    if (std::optional<ir::ValueId> x = transposed_source(g, p.inputs[k])) {
      p.inputs[k] = *x;
      bool& flag = k == 0 ? attrs.trans_a : attrs.trans_b;
      flag = !flag;
      changed = true;
    }
  return changed;
}

}  // namespace

bool fold_transposes_into_matmuls(ir::Graph& g) {
  bool changed = false;
  for (int32_t n = 0; n < g.num_nodes(); ++n) {
    ir::Primitive& p = g.mutable_node(ir::NodeId(n));
    if (p.op != ir::PrimOp::MatMul || !fold_operands(g, p)) continue;
    std::vector<ir::TensorType> in_types;
    for (ir::ValueId v : p.inputs) in_types.push_back(g.type(v));
    ir::derive_tensor_expr(in_types, g.type(p.outputs[0]), p);
    changed = true;
  }
  if (changed) ir::verify_or_throw(g, "after folding transposes into matmuls");
  return changed;
}

}  // namespace orchid::rewrite
