// Internal to the interpreter: the evaluators of one primitive, by family.
#pragma once

#include <string>
#include <vector>

#include "interp/buffer.h"
#include "ir/graph.h"

namespace orchid::interp::detail {

// One primitive being evaluated: its inputs (by load slot) and its outputs, created with
// their types by the caller; the evaluator writes every element of every output.
struct NodeEval {
  const ir::Graph& graph;
  ir::NodeId id;
  Precision precision;
  std::vector<const Buffer*> in;
  std::vector<Buffer> out;

  const ir::Primitive& prim() const { return graph.node(id); }
  std::string label() const { return node_label(graph, id); }
};

// Any primitive through its tensor expression, a block of iteration points at a time.
void eval_generic(NodeEval& ne);
// Float matmul and conv: blocked f64 GEMM (conv through im2col), rounded once at the end.
void eval_matmul(NodeEval& ne);
void eval_conv(NodeEval& ne);
// Library routines (opaque.def).
void eval_opaque(NodeEval& ne);

}  // namespace orchid::interp::detail
