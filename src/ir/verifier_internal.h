// Private to the verifier (verifier.cpp: graph, node structure and operator rules;
// verifier_exprs.cpp: expression rules).
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace orchid::ir::detail {

// One node under verification. `in_types` is filled only when every input is a defined
// value, and expression checks that need input types run only then.
struct NodeCheck {
  const Graph& g;
  int32_t id;
  const Primitive& p;
  std::string prefix;  // "node N (%out = op, from \"prov\"): "
  std::vector<std::string>& errors;
  bool inputs_ok = false;
  std::vector<TensorType> in_types;

  void fail(const std::string& msg) const { errors.push_back(prefix + msg); }
};

// Rules 4 and 5 and the typing of the expression table, for every body of the node.
// Returns false when a body is not well-typed (later rules that read dtypes then skip it).
bool check_bodies(const NodeCheck& c);

// The per-operator rules of elementwise, broadcast and layout bodies (rule 6).
void check_elementwise_loads(const NodeCheck& c);
void check_broadcast_body(const NodeCheck& c);
void check_layout_bodies(const NodeCheck& c);

}  // namespace orchid::ir::detail

namespace orchid::ir::detail {

// Why operator `op` (Unary, Binary, Compare, Select or Cast) cannot take operands of these
// dtypes, or "" when it can. Shared by the verifier and the parser; args are all defined and
// as many as the operator's arity.
std::string operand_type_problem(ExprOp op, const std::vector<Expr>& args);

}  // namespace orchid::ir::detail
