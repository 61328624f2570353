#include "fission/fission.h"

#include <map>

#include "fission/rules.h"
#include "interp/interp.h"
#include "ir/dce.h"
#include "ir/verifier.h"
#include "support/error.h"

namespace orchid::fission {

namespace {

enum class Types { Float, Signed, Numeric, Integral, Bool, Any };

struct Entry {
  const char* op_type;
  int64_t from, to;
  size_t input;
  Types types;
  std::vector<ir::ValueId> (*rule)(RuleContext&);
};

constexpr Entry kTable[] = {
#define ORCHID_ONNX_OP(rule, op, from, to, input, types) {op, from, to, input, Types::types, rule_##rule},
#include "fission/ops.def"
#undef ORCHID_ONNX_OP
};

const char* types_name(Types t) {
  switch (t) {
    case Types::Float: return "float";
    case Types::Signed: return "signed";
    case Types::Numeric: return "numeric";
    case Types::Integral: return "integral";
    case Types::Bool: return "bool";
    case Types::Any: return "any";
  }
  return "?";
}

bool admits(Types t, ir::DType d) {
  switch (t) {
    case Types::Float: return ir::is_float(d);
    case Types::Signed: return ir::is_float(d) || ir::dtype_class(d) == ir::DTypeClass::Signed;
    case Types::Numeric: return !ir::is_bool(d);
    case Types::Integral: return ir::is_int(d);
    case Types::Bool: return ir::is_bool(d);
    case Types::Any: return true;
  }
  return false;
}

// The table entry for a node, or an UnsupportedError saying why there is none.
const Entry& find_rule(const frontend::OpGraph& m, const frontend::OpNode& n) {
  std::string where = frontend::node_context(m, n) + ": not supported: ";
  if (!n.domain.empty()) throw UnsupportedError(where + "operators of domain '" + n.domain + "'");
  if (n.since_version == 0)
    throw UnsupportedError(where + "ONNX defines no operator " + n.op_type + " in opset " +
                           std::to_string(n.opset));
  bool known = false;
  for (const Entry& e : kTable) {
    if (n.op_type != e.op_type) continue;
    known = true;
    if (n.since_version >= e.from && n.since_version <= e.to) return e;
  }
  if (!known) throw UnsupportedError(where + "operator " + n.op_type);
  throw UnsupportedError(where + "version " + std::to_string(n.since_version) + " of " + n.op_type);
}

struct Lowering {
  const frontend::OpGraph& model;
  ir::Graph graph;
  std::map<std::string, ir::ValueId> values;  // ONNX name -> IR value

  std::optional<ir::ValueId> lookup(const frontend::OpNode& n, const std::string& name) const {
    if (name.empty()) return std::nullopt;
    auto it = values.find(name);
    ORCHID_USER_CHECK(it != values.end()) << frontend::node_context(model, n) << ": input '" << name
                                          << "' is not defined";
    return it->second;
  }
};

std::vector<ir::ValueId> apply(const Entry& e, const frontend::OpGraph& m, const frontend::OpNode& n,
                               ir::Graph& g, std::vector<std::optional<ir::ValueId>> ins) {
  RuleContext ctx(m, n, g, std::move(ins));
  if (e.input < ctx.num_inputs() && ctx.has_input(e.input) && !admits(e.types, ctx.dtype(e.input)))
    throw Unsupported(std::string("input ") + std::to_string(e.input) + " of dtype " +
                      std::string(ir::dtype_name(ctx.dtype(e.input))) + " (supported: " +
                      types_name(e.types) + ")");
  return e.rule(ctx);
}

// Runs the rule on a scratch graph holding copies of the (constant) inputs, evaluates it
// with the interpreter and returns the outputs' data.
std::vector<ir::Tensor> fold(const Entry& e, const Lowering& L, const frontend::OpNode& n,
                             const std::vector<std::optional<ir::ValueId>>& ins) {
  ir::Graph scratch;
  std::vector<std::optional<ir::ValueId>> local;
  for (const auto& v : ins) {
    if (!v) {
      local.push_back(std::nullopt);
      continue;
    }
    local.push_back(scratch.add_constant(L.graph.value(*v).name, L.graph.constant(*v)));
  }
  std::vector<ir::ValueId> outs = apply(e, L.model, n, scratch, local);
  scratch.set_outputs(outs);
  return interp::run(scratch, {}, interp::Options{});
}

// Values a rule created for the node's outputs take the ONNX output names (a rule may have
// built them under a derived name, "y/matmul"). Values that existed before (an Identity's
// input) keep theirs.
void name_outputs(ir::Graph& g, const frontend::OpNode& n, const std::vector<ir::ValueId>& outs,
                  int32_t first_new) {
  for (size_t k = 0; k < outs.size() && k < n.outputs.size(); ++k)
    if (!n.outputs[k].empty() && outs[k].v >= first_new) g.rename_value(outs[k], n.outputs[k]);
}

bool all_constant(const Lowering& L, const std::vector<std::optional<ir::ValueId>>& ins) {
  for (const auto& v : ins)
    if (v && L.graph.value(*v).origin != ir::ValueOrigin::Constant) return false;
  return true;
}

void lower_node(Lowering& L, const frontend::OpNode& n) {
  const Entry& e = find_rule(L.model, n);
  std::string where = frontend::node_context(L.model, n);
  if (!n.unsupported_attrs.empty())
    throw UnsupportedError(where + ": not supported: attribute '" + n.unsupported_attrs[0] +
                           "' (graph, sparse-tensor and type attributes)");
  std::vector<std::optional<ir::ValueId>> ins;
  for (const auto& name : n.inputs) ins.push_back(L.lookup(n, name));
  std::vector<ir::ValueId> outs;
  try {
    if (all_constant(L, ins)) {
      std::vector<ir::Tensor> data = fold(e, L, n, ins);
      for (size_t k = 0; k < data.size(); ++k)
        outs.push_back(L.graph.add_constant(n.outputs.size() > k ? n.outputs[k] : n.name, std::move(data[k])));
    } else {
      int32_t first_new = L.graph.num_values();
      outs = apply(e, L.model, n, L.graph, std::move(ins));
      name_outputs(L.graph, n, outs, first_new);
    }
  } catch (const Unsupported& u) {
    throw UnsupportedError(where + ": not supported: " + u.what());
  }
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    if (n.outputs[k].empty()) continue;
    ORCHID_USER_CHECK(k < outs.size()) << where << ": output " << k << " ('" << n.outputs[k]
                                       << "') is not produced by this operator";
    ORCHID_USER_CHECK(L.values.emplace(n.outputs[k], outs[k]).second)
        << where << ": output '" << n.outputs[k] << "' is defined twice";
  }
}

}  // namespace

ir::Graph fission(const frontend::OpGraph& model) {
  Lowering L{model, ir::Graph{}, {}};
  L.graph.name = model.name.empty() ? "main" : model.name;
  for (const auto& [name, type] : model.inputs) L.values[name] = L.graph.add_input(name, type);
  for (const auto& [name, t] : model.initializers) L.values[name] = L.graph.add_constant(name, t);
  for (const auto& n : model.nodes) lower_node(L, n);
  std::vector<ir::ValueId> outs;
  for (const auto& name : model.outputs) {
    auto it = L.values.find(name);
    ORCHID_USER_CHECK(it != L.values.end()) << model.path << ": graph output '" << name << "' is not defined";
    outs.push_back(it->second);
  }
  L.graph.set_outputs(outs);
  ir::Graph g = ir::eliminate_dead(L.graph);
  std::vector<std::string> problems = ir::verify(g);
  ORCHID_CHECK(problems.empty()) << "fission of " << model.path << " built a malformed graph: " << problems[0];
  return g;
}

std::vector<OpSupport> supported_ops() {
  static const std::map<std::string, std::string> kDocs = {
#define ORCHID_OP_DOC(op, text) {op, text},
#include "fission/ops_doc.def"
#undef ORCHID_OP_DOC
  };
  std::vector<OpSupport> out;
  for (const Entry& e : kTable) {
    auto doc = kDocs.find(e.op_type);
    out.push_back({e.op_type, e.from, e.to, types_name(e.types), doc == kDocs.end() ? "" : doc->second});
  }
  return out;
}

}  // namespace orchid::fission
