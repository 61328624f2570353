// What a fission rule sees: one ONNX node, its inputs as IR values (with their constant data
// when known), typed attribute accessors, and builders that add primitives to the graph.
//
// A rule either returns one IR value per ONNX output, throws Unsupported (a combination of
// attributes or dtypes Orchid does not handle, with the reason), or raises a UserError for a
// malformed node. Messages are prefixed with the node's context (file, name, op, opset).
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "frontend/op_graph.h"
#include "ir/graph.h"

namespace orchid::fission {

class Unsupported : public std::runtime_error {
 public:
  explicit Unsupported(const std::string& reason) : std::runtime_error(reason) {}
};

// The largest tensor a rule may create (a user error beyond): shapes come from models.
constexpr int64_t kMaxTensorBytes = int64_t(4) << 30;

class RuleContext {
 public:
  RuleContext(const frontend::OpGraph& model, const frontend::OpNode& node, ir::Graph& g,
              std::vector<std::optional<ir::ValueId>> inputs);

  const frontend::OpNode& node() const { return node_; }
  int64_t version() const { return node_.since_version; }
  ir::Graph& graph() { return g_; }
  const ir::Graph& graph() const { return g_; }

  // ---- Inputs. `k` counts ONNX inputs, omitted optional ones included. ----
  size_t num_inputs() const { return inputs_.size(); }
  bool has_input(size_t k) const { return k < inputs_.size() && inputs_[k].has_value(); }
  ir::ValueId input(size_t k) const;  // UserError when absent
  // By value: references into the graph would dangle once a rule adds primitives.
  ir::TensorType type(size_t k) const { return g_.type(input(k)); }
  ir::Dims shape(size_t k) const { return type(k).shape; }
  ir::DType dtype(size_t k) const { return type(k).dtype; }
  // The data of input k when it is a constant, else nullptr.
  const ir::Tensor* constant(size_t k) const;
  // Input k as integers; Unsupported when it is not a constant (a valid model whose shape
  // depends on run-time data, which static shapes cannot express).
  std::vector<int64_t> const_ints(size_t k) const;
  std::vector<double> const_floats(size_t k) const;

  // ---- Attributes (UserError when present with the wrong type). ----
  bool has_attr(const std::string& name) const { return node_.attrs.count(name) > 0; }
  int64_t attr_int(const std::string& name, int64_t dflt) const;
  double attr_float(const std::string& name, double dflt) const;
  std::string attr_string(const std::string& name, const std::string& dflt) const;
  std::vector<int64_t> attr_ints(const std::string& name, const std::vector<int64_t>& dflt) const;
  std::vector<double> attr_floats(const std::string& name, const std::vector<double>& dflt) const;
  const ir::Tensor* attr_tensor(const std::string& name) const;
  int64_t required_attr_int(const std::string& name) const;

  // ---- Errors. ----
  [[noreturn]] void unsupported(const std::string& reason) const;
  // "model.onnx: node 'n' (Op, opset 13): " — prefix for UserErrors about this node.
  std::string where() const;
  // An axis attribute in [-rank, rank) normalised to [0, rank); UserError otherwise.
  int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& what = "axis") const;

  // ---- Building. Without a suffix, outputs take the node's ONNX output names; with one,
  // names derive from the first output ("y/exp"). ----
  std::string value_name(const std::string& suffix) const;
  // Adds p (inputs set, bodies etc. set) with the given output types; provenance = node name.
  std::vector<ir::ValueId> emit(ir::Primitive p, const std::vector<ir::TensorType>& outs,
                                const std::string& suffix = "");
  ir::ValueId emit1(ir::Primitive p, const ir::TensorType& out, const std::string& suffix = "");
  ir::ValueId add_constant(ir::Tensor t, const std::string& suffix = "");
  // UserError naming the node when a result of type t would have a negative dim, overflow,
  // or exceed kMaxTensorBytes. emit and add_constant check; rules that build constant data
  // call it before allocating.
  void check_size(const ir::TensorType& t) const;

 private:
  std::string not_constant(size_t k) const;

  const frontend::OpGraph& model_;
  const frontend::OpNode& node_;
  ir::Graph& g_;
  std::vector<std::optional<ir::ValueId>> inputs_;
};

}  // namespace orchid::fission
