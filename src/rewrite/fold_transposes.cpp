#include "rewrite/fold_transposes.h"

#include <optional>

#include "ir/movement.h"
#include "rewrite/edit.h"
#include "rewrite/patterns.h"

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

// The transpose an operand is, or reads through views that keep its last two dims (batch
// reshapes); none where it is neither.
std::optional<ir::ValueId> viewed_transpose(const ir::Graph& g, ir::ValueId o) {
  const ir::Dims& shape = g.type(o).shape;
  if (shape.size() < 2) return std::nullopt;
  auto last_two = [](const ir::Dims& d) { return ir::Dims(d.end() - 2, d.end()); };
  ir::ValueId t = o;
  while (std::optional<ir::NodeId> n = producer(g, t)) {
    const ir::Primitive& p = g.node(*n);
    const ir::Dims& in = g.type(p.inputs[0]).shape;
    if (p.op != ir::PrimOp::View || in.size() < 2 || last_two(in) != last_two(shape)) break;
    t = p.inputs[0];
  }
  return transposed_source(g, t);
}

}  // namespace

// Matmul operands that are transposes, or batch reshapes of one (PyTorch's matmul
// decomposition views a 4-D K^T [1, H, D, L] as [H, D, L]), read the transpose's source (so
// reshaped, the last two dims swapped back) with the trans flag flipped: a row-major reshape
// that keeps the last two dims moves whole matrices, so it commutes with transposing each.
// The views and the transpose stay only for other readers.
bool fold_transposes_into_matmuls(ir::Graph& g) {
  Edit e(g);
  bool changed = false;
  for (int32_t n = 0; n < g.num_nodes(); ++n) {
    const ir::Primitive& p = g.node(ir::NodeId(n));
    if (p.op != ir::PrimOp::MatMul) continue;
    ir::MatMulAttrs attrs = std::get<ir::MatMulAttrs>(p.attrs);
    std::vector<ir::ValueId> in = p.inputs;
    bool folded = false;
    for (size_t k = 0; k < 2; ++k) {
      std::optional<ir::ValueId> x = viewed_transpose(g, in[k]);
      if (!x) continue;
      ir::Dims shape = g.type(in[k]).shape;
      std::swap(shape[shape.size() - 1], shape[shape.size() - 2]);
      in[k] = add_view(e, *x, shape, g.value(in[k]).name + "/untransposed");
      bool& flag = k == 0 ? attrs.trans_a : attrs.trans_b;
      flag = !flag;
      folded = true;
    }
    if (!folded) continue;
    e.set_provenance(p.name);
    e.replace(p.outputs[0], add_matmul(e, in[0], in[1], attrs, g.value(p.outputs[0]).name));
    changed = true;
  }
  if (changed) g = e.finish("folding transposes into matmuls");
  return changed;
}

}  // namespace orchid::rewrite
