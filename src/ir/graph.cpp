#include "ir/graph.h"

#include <sstream>

#include "support/error.h"

namespace orchid::ir {

namespace {
struct PrimInfo {
  std::string_view name;
  PrimKind kind;
  bool derived;
};
constexpr PrimInfo kPrims[] = {
#define ORCHID_PRIM(e, text, kind, attrs, derived) {text, PrimKind::kind, derived},
#include "ir/prim.def"
#undef ORCHID_PRIM
};
struct ReduceInfo {
  std::string_view name;
  int bodies;
  int outputs;
};
constexpr ReduceInfo kReduces[] = {
#define ORCHID_REDUCE(e, text, bodies, outputs) {text, bodies, outputs},
#include "ir/reduce.def"
#undef ORCHID_REDUCE
};
struct OpaqueInfo {
  std::string_view name;
  std::string_view params;
};
constexpr OpaqueInfo kOpaques[] = {
#define ORCHID_OPAQUE(e, text, params) {text, params},
#include "ir/opaque.def"
#undef ORCHID_OPAQUE
};

template <class Enum, class Table>
std::optional<Enum> find_by_name(const Table& table, std::string_view text) {
  for (size_t i = 0; i < std::size(table); ++i)
    if (table[i].name == text) return static_cast<Enum>(i);
  return std::nullopt;
}
}  // namespace

std::string_view prim_kind_name(PrimKind k) {
  switch (k) {
    case PrimKind::Elementwise: return "elementwise";
    case PrimKind::Reduce: return "reduce";
    case PrimKind::Layout: return "layout";
    case PrimKind::Linear: return "linear";
    case PrimKind::Opaque: return "opaque";
  }
  return "?";
}
std::string_view prim_op_name(PrimOp op) { return kPrims[static_cast<size_t>(op)].name; }
std::optional<PrimOp> parse_prim_op(std::string_view t) { return find_by_name<PrimOp>(kPrims, t); }
PrimKind prim_op_kind(PrimOp op) { return kPrims[static_cast<size_t>(op)].kind; }
bool prim_op_derived(PrimOp op) { return kPrims[static_cast<size_t>(op)].derived; }
std::string_view reduce_op_name(ReduceOp op) { return kReduces[static_cast<size_t>(op)].name; }
std::optional<ReduceOp> parse_reduce_op(std::string_view t) {
  return find_by_name<ReduceOp>(kReduces, t);
}
int reduce_op_bodies(ReduceOp op) { return kReduces[static_cast<size_t>(op)].bodies; }
int reduce_op_outputs(ReduceOp op) { return kReduces[static_cast<size_t>(op)].outputs; }
std::string_view opaque_routine_name(OpaqueRoutine r) {
  return kOpaques[static_cast<size_t>(r)].name;
}
std::optional<OpaqueRoutine> parse_opaque_routine(std::string_view t) {
  return find_by_name<OpaqueRoutine>(kOpaques, t);
}
std::vector<std::string> opaque_routine_params(OpaqueRoutine r) {
  std::istringstream in{std::string(kOpaques[static_cast<size_t>(r)].params)};
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

int64_t OpaqueAttrs::param(const std::string& name) const {
  auto it = params.find(name);
  ORCHID_CHECK(it != params.end()) << opaque_routine_name(routine) << " has no parameter " << name;
  return it->second;
}

std::string Graph::unique_name(std::string_view want) {
  std::string base = want.empty() ? std::string("v") : std::string(want);
  if (!by_name_.count(base)) return base;
  auto [hint, fresh] = next_suffix_.try_emplace(base, 1);
  for (int& k = hint->second;; ++k) {
    std::string cand = base + "." + std::to_string(k);
    if (!by_name_.count(cand)) return cand;
  }
}

ValueId Graph::add_value(Value v) {
  v.name = unique_name(v.name);
  ValueId id(static_cast<int32_t>(values_.size()));
  by_name_.emplace(v.name, id);
  values_.push_back(std::move(v));
  return id;
}

void Graph::rename_value(ValueId v, std::string_view name) {
  ORCHID_CHECK(v.valid() && v.v < num_values()) << "value id " << v.v;
  Value& val = values_[static_cast<size_t>(v.v)];
  if (val.name == name) return;
  auto it = by_name_.find(name);
  if (it != by_name_.end()) {
    ValueId holder = it->second;
    std::string fresh = unique_name(std::string(name) + "/0");
    by_name_.erase(it);
    values_[static_cast<size_t>(holder.v)].name = fresh;
    by_name_.emplace(fresh, holder);
  }
  by_name_.erase(val.name);
  val.name = std::string(name);
  by_name_.emplace(val.name, v);
}

ValueId Graph::add_input(std::string_view name, TensorType type) {
  Value v;
  v.type = std::move(type);
  v.name = std::string(name);
  v.origin = ValueOrigin::Input;
  ValueId id = add_value(std::move(v));
  inputs_.push_back(id);
  return id;
}

ValueId Graph::add_constant(std::string_view name, Tensor data) {
  Value v;
  v.type = data.type();
  v.name = std::string(name);
  v.origin = ValueOrigin::Constant;
  v.constant = static_cast<int32_t>(constants_.size());
  constants_.push_back(std::move(data));
  return add_value(std::move(v));
}

NodeId Graph::add_node(Primitive p, const std::vector<TensorType>& out_types,
                       const std::vector<std::string>& out_names) {
  ORCHID_CHECK(out_types.size() == out_names.size())
      << out_types.size() << " output types, " << out_names.size() << " names";
  for (ValueId in : p.inputs)
    ORCHID_CHECK(in.valid() && in.v < num_values()) << "node input " << in.v << " undefined";
  NodeId id(static_cast<int32_t>(nodes_.size()));
  if (prim_op_derived(p.op) && !out_types.empty()) {
    std::vector<TensorType> in_types;
    for (ValueId in : p.inputs) in_types.push_back(type(in));
    derive_tensor_expr(in_types, out_types[0], p);
  }
  p.outputs.clear();
  for (size_t k = 0; k < out_types.size(); ++k) {
    Value v;
    v.type = out_types[k];
    v.name = out_names[k];
    v.origin = ValueOrigin::Node;
    v.node = id;
    v.output_index = static_cast<int32_t>(k);
    p.outputs.push_back(add_value(std::move(v)));
  }
  nodes_.push_back(std::move(p));
  return id;
}

const Value& Graph::value(ValueId v) const {
  ORCHID_CHECK(v.valid() && v.v < num_values()) << "value id " << v.v;
  return values_[static_cast<size_t>(v.v)];
}
const Primitive& Graph::node(NodeId n) const {
  ORCHID_CHECK(n.valid() && n.v < num_nodes()) << "node id " << n.v;
  return nodes_[static_cast<size_t>(n.v)];
}
Primitive& Graph::mutable_node(NodeId n) {
  ORCHID_CHECK(n.valid() && n.v < num_nodes()) << "node id " << n.v;
  return nodes_[static_cast<size_t>(n.v)];
}
const Tensor& Graph::constant(ValueId v) const {
  const Value& val = value(v);
  ORCHID_CHECK(val.origin == ValueOrigin::Constant) << "%" << val.name << " is not a constant";
  return constants_[static_cast<size_t>(val.constant)];
}

std::optional<ValueId> Graph::find_value(std::string_view name) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::vector<NodeId>> Graph::users() const {
  std::vector<std::vector<NodeId>> out(values_.size());
  for (int32_t n = 0; n < num_nodes(); ++n)
    for (ValueId in : nodes_[static_cast<size_t>(n)].inputs)
      out[static_cast<size_t>(in.v)].push_back(NodeId(n));
  return out;
}

}  // namespace orchid::ir
