// Loading .onnx files: the protobuf model (external data included), checked and converted to
// an OpGraph. Every problem with the file is a UserError naming the file (and the node, op
// type and opset where one is involved); nothing in a model can crash the loader.
#pragma once

#include <map>
#include <string>

#include "frontend/op_graph.h"

namespace orchid::frontend {

// Supported range of the ai.onnx opset.
constexpr int64_t kMinOpset = 1;
constexpr int64_t kMaxOpset = 17;

struct ImportOptions {
  // Shapes for graph inputs with dynamic dimensions, by input name (`--shape x=1x3x224x224`).
  std::map<std::string, ir::Dims> shapes;
  // Graph inputs bound to values at compile time (`--bind name=file.npy`): they become
  // constants, so shapes that depend on them (a Reshape's shape, a Slice's starts) are known.
  std::map<std::string, ir::Tensor> bind;
  // Also run ONNX's own shape inference and record what it determined (OpGraph::inferred),
  // for tests that hold Orchid's shapes against it. Off for models from users: Orchid
  // computes every shape itself, and libonnx's inference crashes on some malformed models
  // (a MaxPool reading a value whose type it could not infer; found by fuzzing).
  bool onnx_shape_inference = false;
  // The most nodes a model may have (If branches inlined included); larger ones are refused
  // before any work on them (`--max-nodes`). The largest models seen have tens of thousands.
  int64_t max_nodes = 200000;
};

OpGraph load_onnx(const std::string& path, const ImportOptions& opts = {});
// The same from the bytes of a model; `path` names it in messages and anchors external data.
OpGraph load_onnx_bytes(const std::string& bytes, const std::string& path,
                        const ImportOptions& opts = {});

// Parses "1x3x224x224" (a scalar is ""). UserError naming `what` on bad text.
ir::Dims parse_dims(const std::string& text, const std::string& what);

}  // namespace orchid::frontend
