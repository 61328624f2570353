// Builds small ONNX models in memory for fission tests: one node (or a few) over graph
// inputs and initializers, serialized as a real ModelProto and imported through the same
// loader as files (frontend::load_onnx_bytes), then fissioned.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "frontend/op_graph.h"
#include "ir/graph.h"

namespace orchid::testlib {

struct OnnxNode {
  std::string op_type;
  std::vector<std::string> inputs;   // value names; "" for an omitted optional input
  std::vector<std::string> outputs;
  std::vector<std::pair<std::string, frontend::Attribute>> attrs;
  std::string domain{};  // "" for the default (ai.onnx) domain
  std::string name = "node";  // the node's name; "" lets the loader name it (op type + index)
};

struct OnnxModel {
  int64_t opset = 17;
  std::vector<std::pair<std::string, ir::TensorType>> inputs;       // graph inputs
  std::vector<std::pair<std::string, ir::Tensor>> initializers;     // constants
  std::vector<OnnxNode> nodes;
  std::vector<std::string> outputs;                                 // graph outputs
};

// The serialized ModelProto.
std::string serialize_model(const OnnxModel& m);
// serialize -> frontend::load_onnx_bytes -> fission::fission.
ir::Graph import_model(const OnnxModel& m, const std::string& name = "test.onnx");

// The common case: one node named "node" reading graph inputs x0, x1, ... (one per given
// type) and writing graph outputs y0, y1, ... (`num_outputs` of them).
OnnxModel single_node(const std::string& op_type, const std::vector<ir::TensorType>& inputs,
                      int num_outputs = 1,
                      std::vector<std::pair<std::string, frontend::Attribute>> attrs = {},
                      int64_t opset = 17);

}  // namespace orchid::testlib
