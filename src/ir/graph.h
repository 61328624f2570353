// The primitive graph: values (tensors) and primitives (tensor expressions) that define them.
//
// A primitive computes one or more outputs of one shape over an iteration domain:
//   out_k[i0..in-1] = reduce_{r0..rm-1}( body_k( loads of inputs at index expressions ) )
// (see docs/ir.md). Every primitive carries its typed Korch kind (PrimKind), attributes typed
// per operator, and its tensor expression — written for generic operators, derived from the
// attributes for linear primitives and views. Nodes are stored in a topological order: a
// node's inputs are graph inputs, constants or outputs of earlier nodes.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ir/dtype.h"
#include "ir/expr.h"
#include "ir/tensor.h"
#include "support/ids.h"

namespace orchid::ir {

using ValueId = StrongId<struct ValueTag>;
using NodeId = StrongId<struct NodeTag>;

enum class PrimKind : uint8_t { Elementwise, Reduce, Layout, Linear, Opaque };

enum class PrimOp : uint8_t {
#define ORCHID_PRIM(e, text, kind, attrs, derived) e,
#include "ir/prim.def"
#undef ORCHID_PRIM
};

enum class ReduceOp : uint8_t {
#define ORCHID_REDUCE(e, text, bodies, outputs) e,
#include "ir/reduce.def"
#undef ORCHID_REDUCE
};

enum class OpaqueRoutine : uint8_t {
#define ORCHID_OPAQUE(e, text, params) e,
#include "ir/opaque.def"
#undef ORCHID_OPAQUE
};

std::string_view prim_kind_name(PrimKind k);
std::string_view prim_op_name(PrimOp op);
std::optional<PrimOp> parse_prim_op(std::string_view text);
PrimKind prim_op_kind(PrimOp op);
bool prim_op_derived(PrimOp op);  // expression derived from attributes and shapes
std::string_view reduce_op_name(ReduceOp op);
std::optional<ReduceOp> parse_reduce_op(std::string_view text);
int reduce_op_bodies(ReduceOp op);   // -1: any number >= 1
int reduce_op_outputs(ReduceOp op);  // -1: one per body
std::string_view opaque_routine_name(OpaqueRoutine r);
std::optional<OpaqueRoutine> parse_opaque_routine(std::string_view text);
std::vector<std::string> opaque_routine_params(OpaqueRoutine r);

// ---- Typed attributes, one struct per operator that has any. ----
struct NoAttrs {
  bool operator==(const NoAttrs&) const = default;
};

// out[b.., m, n] = sum_k A[b.., m, k] * B[b.., k, n]; A and B have rank >= 2, their batch
// dims broadcast numpy-style. trans_a / trans_b read A as [.., k, m] / B as [.., n, k].
struct MatMulAttrs {
  bool trans_a = false;
  bool trans_b = false;
  bool operator==(const MatMulAttrs&) const = default;
};

// N-d convolution (cross-correlation) of X [N, C, s..] with W [K, C/groups, k..]:
//   out[n, o, p..] = sum_{c, q..} X[n, g*C/groups + c, p*stride + q*dilation - pad_begin]
//                                 * W[o, c, q..],   g = o / (K/groups)
// with zero outside X. One entry per spatial dim in strides, dilations, pads_begin, pads_end.
struct ConvAttrs {
  Dims strides;
  Dims dilations;
  Dims pads_begin;
  Dims pads_end;
  int64_t groups = 1;
  bool operator==(const ConvAttrs&) const = default;
};

// A library routine with named integer parameters (see opaque.def and docs/ir.md).
struct OpaqueAttrs {
  OpaqueRoutine routine = OpaqueRoutine::CumSum;
  std::map<std::string, int64_t> params;
  bool operator==(const OpaqueAttrs&) const = default;
  int64_t param(const std::string& name) const;  // InternalError if absent
};

using PrimAttrs = std::variant<NoAttrs, MatMulAttrs, ConvAttrs, OpaqueAttrs>;

struct Primitive {
  PrimOp op = PrimOp::Elementwise;
  std::vector<ValueId> inputs;   // load slot k reads inputs[k]
  std::vector<ValueId> outputs;  // all of shape `domain`
  Dims domain;                   // extents of i0, i1, ... (the output shape)
  Dims reduce_domain;            // extents of r0, r1, ... (empty unless reducing)
  ReduceOp reduce = ReduceOp::None;
  std::vector<Expr> bodies;      // see reduce.def for how bodies map to outputs
  PrimAttrs attrs = NoAttrs{};
  std::string name;              // provenance (the source op's name); no meaning

  PrimKind kind() const { return prim_op_kind(op); }
};

enum class ValueOrigin : uint8_t { Input, Constant, Node };

struct Value {
  TensorType type;
  std::string name;  // unique in the graph
  ValueOrigin origin = ValueOrigin::Input;
  NodeId node;              // origin == Node: the producer
  int32_t output_index = 0; // origin == Node: which output of the producer
  int32_t constant = -1;    // origin == Constant: index into Graph::constants()
};

class Graph {
 public:
  std::string name = "main";

  // Names are made unique by appending ".1", ".2", ... where taken.
  ValueId add_input(std::string_view name, TensorType type);
  ValueId add_constant(std::string_view name, Tensor data);
  // Adds a node computing p (p.outputs is filled here) with outputs of the given types and
  // names. For derived operators (views, linear) the tensor expression is derived here.
  NodeId add_node(Primitive p, const std::vector<TensorType>& out_types,
                  const std::vector<std::string>& out_names);
  void set_outputs(std::vector<ValueId> outputs) { outputs_ = std::move(outputs); }
  // Gives v the name `name`; a value that holds it already is renamed to a fresh name.
  void rename_value(ValueId v, std::string_view name);

  const Value& value(ValueId v) const;
  const Primitive& node(NodeId n) const;
  Primitive& mutable_node(NodeId n);
  const Tensor& constant(ValueId v) const;  // value must be a constant
  const TensorType& type(ValueId v) const { return value(v).type; }

  const std::vector<Value>& values() const { return values_; }
  const std::vector<Primitive>& nodes() const { return nodes_; }
  const std::vector<Tensor>& constants() const { return constants_; }
  const std::vector<ValueId>& inputs() const { return inputs_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  int32_t num_values() const { return static_cast<int32_t>(values_.size()); }
  int32_t num_nodes() const { return static_cast<int32_t>(nodes_.size()); }
  std::optional<ValueId> find_value(std::string_view name) const;

  // Consumers of each value, in node order (a node appears once per value it reads).
  std::vector<std::vector<NodeId>> users() const;

 private:
  // `want`, or the first free "want.k" (k = 1, 2, ...). Each taken base keeps the k to try
  // next, so that n values wanting one name cost n lookups, not n^2 / 2.
  std::string unique_name(std::string_view want);
  ValueId add_value(Value v);

  std::vector<Value> values_;
  std::vector<Primitive> nodes_;
  std::vector<Tensor> constants_;
  std::vector<ValueId> inputs_;
  std::vector<ValueId> outputs_;
  std::map<std::string, ValueId, std::less<>> by_name_;
  std::map<std::string, int, std::less<>> next_suffix_;  // unique_name's next k per base
};

// The tensor expression of a derived operator (view, matmul, conv) from its attributes and
// the types of its inputs and outputs: fills domain, reduce_domain, reduce and bodies.
void derive_tensor_expr(const std::vector<TensorType>& in_types, const TensorType& out_type,
                        Primitive& p);

// Output type of a linear primitive, or a UserError naming the shapes that do not fit.
TensorType matmul_result_type(const TensorType& a, const TensorType& b, const MatMulAttrs& attrs);
TensorType conv_result_type(const TensorType& x, const TensorType& w, const ConvAttrs& attrs);

}  // namespace orchid::ir
