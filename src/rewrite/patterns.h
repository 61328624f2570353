// What the rewrite rules match on and build with: producers and readers of values, the shapes
// of primitive bodies (an operand read as it is, a value that does not vary along an index),
// and the primitives they emit (matmul, concatenation, slice, view).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "rewrite/edit.h"

namespace orchid::rewrite {

// The node computing v, or none (an input or constant).
std::optional<ir::NodeId> producer(const ir::Graph& g, ir::ValueId v);
// The node computing v when it is of operator `op`.
const ir::Primitive* producer_of(const ir::Graph& g, ir::ValueId v, ir::PrimOp op);

// Readers of values, and which are graph outputs.
struct Readers {
  explicit Readers(const ir::Graph& g);
  std::vector<std::vector<ir::NodeId>> of;  // per value, a node once per load slot
  std::vector<bool> output;                 // per value
  // Whether v is read by `reader` alone (in any number of slots) and is no graph output.
  bool only(ir::ValueId v, ir::NodeId reader) const;
};

// Whether value v depends on an output of node n.
bool depends_on(const ir::Graph& g, ir::ValueId v, ir::NodeId n);

// Whether `e` mentions domain variable i{index} (anywhere: indices, predicates, values).
bool uses_domain_var(const ir::Expr& e, int32_t index);
// Whether `e` loads input `slot`.
bool loads_slot(const ir::Expr& e, int32_t slot);
// `e` with input slots renumbered (slot k becomes slots[k]) and domain variables substituted
// (i_k becomes vars[k]).
ir::Expr remap(const ir::Expr& e, const std::vector<int32_t>& slots, const std::vector<ir::Expr>& vars);

// The dims of matmul operand `slot` (0: A, 1: B) of rank `rank`: the contracted one and the
// one kept in the result (m of A, n of B), by the trans flags.
struct OperandAxes {
  size_t contracted = 0;
  size_t kept = 0;
};
OperandAxes operand_axes(size_t rank, int32_t slot, const ir::MatMulAttrs& attrs);

// ---- Building. ----
ir::ValueId add_matmul(Edit& e, ir::ValueId a, ir::ValueId b, ir::MatMulAttrs attrs, const std::string& name);
// parts joined along `axis` (their other dims equal).
ir::ValueId add_concat(Edit& e, const std::vector<ir::ValueId>& parts, size_t axis, const std::string& name);
// v[.., offset : offset + size, ..] along `axis`.
ir::ValueId add_slice(Edit& e, ir::ValueId v, size_t axis, int64_t offset, int64_t size, const std::string& name);
// v viewed with another shape of the same number of elements.
ir::ValueId add_view(Edit& e, ir::ValueId v, const ir::Dims& shape, const std::string& name);
// i0, .., i{rank-1}.
std::vector<ir::Expr> domain_vars(size_t rank);

}  // namespace orchid::rewrite
