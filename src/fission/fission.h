// Fission: an ONNX model (frontend::OpGraph) becomes a primitive graph, one rule per operator
// family (ops.def), with shapes computed by the rules themselves and every node whose
// inputs are all constants folded through the reference interpreter (so Shape → Gather →
// Concat → Reshape chains become constants). Dead primitives and constants are removed.
//
// Errors: a malformed model is a UserError; a valid node Orchid does not support is an
// UnsupportedError naming the file, node, op type, opset and the reason.
#pragma once

#include <string>
#include <vector>

#include "frontend/op_graph.h"
#include "ir/graph.h"

namespace orchid::fission {

ir::Graph fission(const frontend::OpGraph& model);

// One row of the op table, for documentation and coverage reports.
struct OpSupport {
  std::string op_type;
  int64_t from_version;
  int64_t to_version;
  std::string types;  // the dtype class of the checked input
  std::string decomposition;  // one line: what fission builds (ops_doc.def); empty if missing
};
std::vector<OpSupport> supported_ops();

}  // namespace orchid::fission
