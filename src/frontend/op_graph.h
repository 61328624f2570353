// The ONNX model as the frontend hands it to fission: ONNX operators with typed attributes,
// initializers as tensors, graph inputs with static shapes. Protobuf stays inside the
// frontend; later stages see only these structs.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ir/dtype.h"
#include "ir/tensor.h"

namespace orchid::frontend {

using Attribute = std::variant<int64_t, double, std::string, std::vector<int64_t>,
                               std::vector<double>, std::vector<std::string>, ir::Tensor>;

struct OpNode {
  std::string name;           // the node's name; "<op_type>_<index>" when the model has none
  std::string op_type;
  std::string domain;         // "" for the default ai.onnx domain
  int64_t opset = 0;          // the model's opset for this node's domain
  int64_t since_version = 0;  // version of the operator schema in effect; 0 if unknown
  std::vector<std::string> inputs;   // "" marks an omitted optional input
  std::vector<std::string> outputs;  // "" marks an omitted optional output
  std::map<std::string, Attribute> attrs;
  // Attributes of kinds Orchid cannot represent (graphs, sparse tensors, type protos).
  std::vector<std::string> unsupported_attrs;
};

struct OpGraph {
  std::string path;  // the model file, for messages
  std::string name;
  int64_t opset = 0;  // of the ai.onnx domain
  std::vector<std::pair<std::string, ir::TensorType>> inputs;  // without initializers
  std::vector<std::pair<std::string, ir::Tensor>> initializers;
  std::vector<OpNode> nodes;  // topologically ordered
  std::vector<std::string> outputs;
  // Types ONNX shape inference determined completely (dtype and every dim), by value name;
  // empty unless ImportOptions::onnx_shape_inference.
  std::map<std::string, ir::TensorType> inferred;
};

// "model.onnx: node 'conv1' (Conv, opset 13)" — the prefix of every message about a node.
std::string node_context(const OpGraph& g, const OpNode& n);

}  // namespace orchid::frontend
