#include "frontend/onnx_loader.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <filesystem>
#include <limits>
#include <fstream>
#include <map>
#include <optional>
#include <queue>
#include <set>
#include <sstream>

#include "frontend/tensor_proto.h"
#include "support/error.h"

namespace orchid::frontend {

namespace {

namespace fs = std::filesystem;

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  ORCHID_USER_CHECK(f.good()) << path << ": cannot open";
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The file an external-data entry names, confined to the model's directory.
fs::path external_path(const std::string& model_path, const std::string& location,
                       const std::string& what) {
  fs::path loc(location);
  ORCHID_USER_CHECK(!location.empty() && loc.is_relative())
      << what << ": external data location '" << location << "' must be a relative path";
  for (const auto& part : loc.lexically_normal())
    ORCHID_USER_CHECK(part != "..") << what << ": external data location '" << location
                                    << "' leaves the model's directory";
  return fs::path(model_path).parent_path() / loc.lexically_normal();
}

void load_external_data(onnx::TensorProto& t, const std::string& model_path) {
  if (t.data_location() != onnx::TensorProto_DataLocation_EXTERNAL) return;
  std::string what = model_path + ": initializer '" + t.name() + "'";
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : t.external_data()) {
    try {
      if (kv.key() == "location") location = kv.value();
      if (kv.key() == "offset") offset = std::stoll(kv.value());
      if (kv.key() == "length") length = std::stoll(kv.value());
    } catch (const std::exception&) {
      ORCHID_USER_ERROR() << what << ": bad external data entry " << kv.key() << "='" << kv.value() << "'";
    }
  }
  fs::path file = external_path(model_path, location, what);
  std::ifstream f(file, std::ios::binary);
  ORCHID_USER_CHECK(f.good()) << what << ": cannot open external data file " << file.string();
  f.seekg(0, std::ios::end);
  int64_t size = f.tellg();
  if (length < 0 && offset >= 0 && offset <= size) length = size - offset;
  ORCHID_USER_CHECK(offset >= 0 && length >= 0 && offset <= size && length <= size - offset)
      << what << ": external data of " << length << " bytes at offset " << offset << " lies outside "
      << file.string() << " (" << size << " bytes)";
  std::string bytes(static_cast<size_t>(length), '\0');
  f.seekg(offset);
  f.read(bytes.data(), length);
  t.set_raw_data(std::move(bytes));
  t.clear_external_data();
  t.set_data_location(onnx::TensorProto_DataLocation_DEFAULT);
}

int64_t check_opsets(const onnx::ModelProto& m, const std::string& path) {
  int64_t opset = -1;
  for (const auto& o : m.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
  if (opset < 0 && m.opset_import_size() == 0) opset = 1;  // IR v1 models carry no opset
  ORCHID_SUPPORTED(opset >= 0) << path << ": not supported: the model imports only the domains "
                               << [&] {
                                    std::string d;
                                    for (const auto& o : m.opset_import()) d += (d.empty() ? "'" : ", '") + o.domain() + "'";
                                    return d;
                                  }();
  ORCHID_SUPPORTED(opset >= kMinOpset && opset <= kMaxOpset)
      << path << ": opset " << opset << " is outside the supported range " << kMinOpset << "-"
      << kMaxOpset;
  return opset;
}

int64_t domain_opset(const onnx::ModelProto& m, const std::string& domain, int64_t default_opset) {
  if (domain.empty() || domain == "ai.onnx") return default_opset;
  for (const auto& o : m.opset_import())
    if (o.domain() == domain) return o.version();
  return 0;
}

// A fully static type, or nullopt (unknown dtype or any unknown dim).
std::optional<ir::TensorType> static_type(const onnx::TypeProto& t) {
  if (!t.has_tensor_type() || !t.tensor_type().has_shape()) return std::nullopt;
  auto dtype = dtype_from_onnx(t.tensor_type().elem_type());
  if (!dtype) return std::nullopt;
  ir::Dims dims;
  for (const auto& d : t.tensor_type().shape().dim()) {
    if (!d.has_dim_value() || d.dim_value() < 0) return std::nullopt;
    dims.push_back(d.dim_value());
  }
  return ir::TensorType{*dtype, dims};
}

// A graph input's type, refused when its size overflows or exceeds 4 GiB.
ir::TensorType sized(ir::TensorType t, const std::string& what) {
  auto n = ir::checked_numel(t.shape, t.dtype);
  ORCHID_USER_CHECK(n && *n * ir::dtype_bytes(t.dtype) <= (int64_t(4) << 30))
      << what << ": shape " << ir::dims_str(t.shape) << " is too large";
  return t;
}

ir::TensorType input_type(const onnx::ValueInfoProto& v, const ImportOptions& opts,
                          const std::string& path) {
  std::string what = path + ": input '" + v.name() + "'";
  ORCHID_SUPPORTED(v.type().has_tensor_type())
      << what << ": not supported: only tensor inputs (sequences, maps and optionals are not)";
  const auto& tt = v.type().tensor_type();
  auto dtype = dtype_from_onnx(tt.elem_type());
  ORCHID_SUPPORTED(dtype.has_value())
      << what << ": not supported: element type " << onnx_dtype_name(tt.elem_type());
  auto given = opts.shapes.find(v.name());
  ORCHID_USER_CHECK(tt.has_shape() || given != opts.shapes.end())
      << what << " has no shape in the model: give one with --shape " << v.name() << "=...";
  if (given != opts.shapes.end()) {
    const ir::Dims& dims = given->second;
    if (tt.has_shape()) {
      ORCHID_USER_CHECK(static_cast<int>(dims.size()) == tt.shape().dim_size())
          << what << ": --shape gives rank " << dims.size() << ", the model declares rank "
          << tt.shape().dim_size();
      for (int k = 0; k < tt.shape().dim_size(); ++k) {
        const auto& d = tt.shape().dim(k);
        ORCHID_USER_CHECK(!d.has_dim_value() || d.dim_value() == dims[k])
            << what << ": --shape gives dim " << k << " = " << dims[k] << ", the model fixes it to "
            << d.dim_value();
      }
    }
    return sized({*dtype, dims}, what);
  }
  ir::Dims dims;
  for (int k = 0; k < tt.shape().dim_size(); ++k) {
    const auto& d = tt.shape().dim(k);
    ORCHID_USER_CHECK(!d.has_dim_value() || d.dim_value() >= 0)
        << what << ": dimension " << k << " is negative (" << d.dim_value() << ")";
    ORCHID_USER_CHECK(d.has_dim_value())
        << what << " has a dynamic dimension " << k
        << (d.has_dim_param() ? " ('" + d.dim_param() + "')" : std::string())
        << ": fix it with --shape " << v.name() << "=...";
    dims.push_back(d.dim_value());
  }
  return sized({*dtype, dims}, what);
}

// A graph input bound to a value at compile time: its dtype must match and its shape fit
// the declared one (dynamic dims accept any size).
ir::Tensor bind_input(const onnx::ValueInfoProto& v, const ir::Tensor& value, const std::string& path) {
  std::string what = path + ": --bind " + v.name();
  ImportOptions with_shape;
  with_shape.shapes[v.name()] = value.shape();
  ir::TensorType declared = input_type(v, with_shape, path);
  ORCHID_USER_CHECK(declared.dtype == value.dtype())
      << what << ": the input is " << ir::dtype_name(declared.dtype) << ", the value "
      << ir::type_str(value.type());
  return value;
}

// Every input named by --shape or --bind exists (and is not bound and shaped at once).
void check_option_names(const ImportOptions& opts, const onnx::ModelProto& m, const std::string& path) {
  auto is_input = [&](const std::string& name) {
    for (const auto& v : m.graph().input())
      if (v.name() == name) return true;
    return false;
  };
  for (const auto& [name, dims] : opts.shapes) {
    ORCHID_USER_CHECK(is_input(name)) << path << ": --shape names '" << name << "', which is not a graph input";
    ORCHID_USER_CHECK(!opts.bind.count(name)) << path << ": input '" << name << "' is given both --shape and --bind";
  }
  for (const auto& [name, t] : opts.bind)
    ORCHID_USER_CHECK(is_input(name)) << path << ": --bind names '" << name << "', which is not a graph input";
}

Attribute convert_attr(const onnx::AttributeProto& a, const std::string& what, bool* supported) {
  *supported = true;
  switch (a.type()) {
    case onnx::AttributeProto::INT: return a.i();
    case onnx::AttributeProto::FLOAT: return static_cast<double>(a.f());
    case onnx::AttributeProto::STRING: return a.s();
    case onnx::AttributeProto::INTS: return std::vector<int64_t>(a.ints().begin(), a.ints().end());
    case onnx::AttributeProto::FLOATS: return std::vector<double>(a.floats().begin(), a.floats().end());
    case onnx::AttributeProto::STRINGS:
      return std::vector<std::string>(a.strings().begin(), a.strings().end());
    case onnx::AttributeProto::TENSOR:
      return tensor_from_proto(a.t(), what + ": attribute '" + a.name() + "'");
    default: break;  // graphs, sparse tensors, type protos
  }
  *supported = false;
  return int64_t{0};
}

OpNode convert_node(const onnx::NodeProto& n, size_t index, const onnx::ModelProto& m,
                    int64_t opset, const std::string& path) {
  OpNode out;
  out.op_type = n.op_type();
  out.name = n.name().empty() ? n.op_type() + "_" + std::to_string(index) : n.name();
  out.domain = n.domain() == "ai.onnx" ? "" : n.domain();
  out.opset = domain_opset(m, out.domain, opset);
  const auto* schema = onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(out.opset), out.domain);
  out.since_version = schema ? schema->SinceVersion() : 0;
  out.inputs.assign(n.input().begin(), n.input().end());
  out.outputs.assign(n.output().begin(), n.output().end());
  std::string what = path + ": node '" + out.name + "' (" + out.op_type + ", opset " +
                     std::to_string(out.opset) + ")";
  for (const auto& a : n.attribute()) {
    bool ok = true;
    Attribute v = convert_attr(a, what, &ok);
    if (ok) out.attrs[a.name()] = std::move(v);
    else out.unsupported_attrs.push_back(a.name());
  }
  return out;
}

// Initializer t of the graph or of an inlined branch, under `name`; each name once.
void add_initializer(OpGraph& g, std::set<std::string>& defined, const onnx::TensorProto& t, const std::string& name) {
  ORCHID_USER_CHECK(defined.insert(name).second) << g.path << ": initializer '" << name << "' is defined twice";
  g.initializers.emplace_back(name, tensor_from_proto(t, g.path + ": initializer '" + name + "'"));
}

// Converts nodes into `nodes`, inlining each If whose condition is a constant (an
// initializer, or an input bound at compile time): the chosen branch's nodes and
// initializers join the graph, the values the branch defines renamed under
// "<if node>/then/" or "/else/" (names from the enclosing scopes stay), and an Identity per
// output gives the If's output names. An If on a run-time condition stays, and fission
// refuses it (control flow).
struct Inliner {
  const onnx::ModelProto& m;
  OpGraph& g;
  std::set<std::string>& defined;
  std::vector<OpNode>& nodes;
  const std::string& path;
  size_t index = 0;

  using Renames = std::map<std::string, std::string>;

  static std::string renamed(const Renames& r, const std::string& name) {
    auto it = r.find(name);
    return it == r.end() ? name : it->second;
  }

  // The value of a constant condition, if `name` is one.
  std::optional<bool> constant_condition(const std::string& name) const {
    for (const auto& [n, t] : g.initializers)
      if (n == name && t.numel() == 1) return t.get_as_double(0) != 0;
    return std::nullopt;
  }

  void append(const google::protobuf::RepeatedPtrField<onnx::NodeProto>& list, const std::string& prefix,
              const Renames& outer) {
    for (const onnx::NodeProto& proto : list) {
      bool is_if = proto.op_type() == "If" && (proto.domain().empty() || proto.domain() == "ai.onnx");
      if (prefix.empty() && !is_if) {  // the top level: no copy (Constant nodes can be large)
        nodes.push_back(convert_node(proto, index++, m, g.opset, path));
        continue;
      }
      onnx::NodeProto n = proto;
      for (auto& in : *n.mutable_input()) in = renamed(outer, in);
      for (auto& out : *n.mutable_output()) out = renamed(outer, out);
      if (!prefix.empty()) n.set_name(prefix + (n.name().empty() ? n.op_type() + "_" + std::to_string(index) : n.name()));
      std::optional<bool> cond;
      if (is_if && n.input_size() == 1) cond = constant_condition(n.input(0));
      if (cond) {
        inline_branch(n, *cond, outer);
      } else {
        nodes.push_back(convert_node(n, index, m, g.opset, path));
      }
      ++index;
    }
  }

  void inline_branch(const onnx::NodeProto& n, bool cond, const Renames& outer) {
    const char* attr = cond ? "then_branch" : "else_branch";
    const onnx::GraphProto* branch = nullptr;
    for (const auto& a : n.attribute())
      if (a.name() == attr && a.type() == onnx::AttributeProto::GRAPH) branch = &a.g();
    std::string name = n.name().empty() ? "If_" + std::to_string(index) : n.name();
    ORCHID_USER_CHECK(branch) << path << ": node '" << name << "' (If): no graph attribute '" << attr << "'";
    ORCHID_USER_CHECK(branch->output_size() == n.output_size())
        << path << ": node '" << name << "' (If): the " << attr << " has " << branch->output_size() << " outputs, the node "
        << n.output_size();
    std::string prefix = name + (cond ? "/then/" : "/else/");
    Renames inner = outer;
    for (const auto& t : branch->initializer()) {
      inner[t.name()] = prefix + t.name();
      onnx::TensorProto loaded = t;
      load_external_data(loaded, path);
      add_initializer(g, defined, loaded, prefix + t.name());
    }
    for (const auto& bn : branch->node())
      for (const auto& o : bn.output())
        if (!o.empty()) inner[o] = prefix + o;
    append(branch->node(), prefix, inner);
    for (int k = 0; k < n.output_size(); ++k) {
      if (n.output(k).empty()) continue;
      onnx::NodeProto id;
      id.set_op_type("Identity");
      id.set_name(prefix + "output_" + std::to_string(k));
      id.add_input(renamed(inner, branch->output(k).name()));
      id.add_output(n.output(k));
      nodes.push_back(convert_node(id, index, m, g.opset, path));
    }
  }
};

// Orders nodes so that each comes after the producers of its inputs (ONNX requires this
// order; models that break it are repaired when the dependencies allow). Kahn's algorithm,
// taking ready nodes in their original order, so an ordered model is left as it is.
std::vector<OpNode> topological(std::vector<OpNode> nodes, const std::set<std::string>& defined,
                                const std::string& path) {
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const auto& o : nodes[i].outputs)
      if (!o.empty()) producer.emplace(o, i);
  std::vector<std::vector<size_t>> consumers(nodes.size());
  std::vector<size_t> missing(nodes.size(), 0);
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const auto& in : nodes[i].inputs) {
      if (in.empty() || defined.count(in)) continue;
      auto it = producer.find(in);
      ORCHID_USER_CHECK(it != producer.end())
          << path << ": node '" << nodes[i].name << "' (" << nodes[i].op_type << ", opset " << nodes[i].opset
          << "): input '" << in << "' is neither a graph input, an initializer nor a node output";
      consumers[it->second].push_back(i);
      ++missing[i];
    }
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (missing[i] == 0) ready.push(i);
  std::vector<OpNode> out;
  while (!ready.empty()) {
    size_t i = ready.top();
    ready.pop();
    for (size_t c : consumers[i])
      if (--missing[c] == 0) ready.push(c);
    out.push_back(std::move(nodes[i]));
  }
  ORCHID_USER_CHECK(out.size() == nodes.size()) << path << ": the graph has a cycle";
  return out;
}

// ONNX's shape inference divides by these attributes without checking them (a zero stride
// raises SIGFPE inside libonnx), so they are validated before it runs.
void check_divisor_attrs(const OpGraph& g) {
  for (const OpNode& n : g.nodes) {
    for (const char* name : {"strides", "dilations", "kernel_shape"}) {
      auto it = n.attrs.find(name);
      if (it == n.attrs.end()) continue;
      const auto* v = std::get_if<std::vector<int64_t>>(&it->second);
      bool ok = v != nullptr;
      if (v) {
        for (int64_t x : *v) ok &= x >= 1;
      }
      ORCHID_USER_CHECK(ok) << node_context(g, n) << ": attribute '" << name << "' needs integers >= 1";
    }
    for (const char* name : {"group", "blocksize"}) {
      auto it = n.attrs.find(name);
      if (it == n.attrs.end()) continue;
      const auto* v = std::get_if<int64_t>(&it->second);
      ORCHID_USER_CHECK(v && *v >= 1) << node_context(g, n) << ": attribute '" << name << "' needs an integer >= 1";
    }
  }
}

// Checks each node's input and output counts against its ONNX schema before shape
// inference, which trusts them (a Split without outputs divides by zero). Attributes are
// checked by the fission rules, which name them.
void check_arity(const OpGraph& g) {
  for (const OpNode& n : g.nodes) {
    if (n.since_version == 0) continue;
    const auto* schema = onnx::OpSchemaRegistry::Schema(n.op_type, static_cast<int>(n.opset), n.domain);
    if (!schema) continue;
    auto range = [](int lo, int hi) {
      if (hi == std::numeric_limits<int>::max()) return "at least " + std::to_string(lo);
      return lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi);
    };
    auto ins = static_cast<int>(n.inputs.size()), outs = static_cast<int>(n.outputs.size());
    ORCHID_USER_CHECK(ins >= schema->min_input() && ins <= schema->max_input())
        << node_context(g, n) << ": has " << ins << " inputs, the operator takes "
        << range(schema->min_input(), schema->max_input());
    ORCHID_USER_CHECK(outs >= schema->min_output() && outs <= schema->max_output())
        << node_context(g, n) << ": has " << outs << " outputs, the operator gives "
        << range(schema->min_output(), schema->max_output());
  }
}

void check_node_count(int64_t nodes, const ImportOptions& opts, const std::string& path) {
  ORCHID_USER_CHECK(nodes <= opts.max_nodes)
      << path << ": the model has " << nodes << " nodes (If branches inlined), more than the limit of "
      << opts.max_nodes << " (raise it with --max-nodes)";
}

// Whether ONNX has a schema for every node of graph `gp` and of its subgraphs.
bool all_ops_known(const onnx::GraphProto& gp, const onnx::ModelProto& m, int64_t opset) {
  for (const auto& n : gp.node()) {
    int64_t version = domain_opset(m, n.domain(), opset);
    if (!onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(version), n.domain())) return false;
    for (const auto& a : n.attribute()) {
      if (a.has_g() && !all_ops_known(a.g(), m, opset)) return false;
      for (const auto& sub : a.graphs())
        if (!all_ops_known(sub, m, opset)) return false;
    }
  }
  return true;
}

// Runs ONNX's shape inference on m (which it annotates; the caller needs m no more). Not on a
// graph with an operator ONNX does not know: the inference of a node reading such an
// operator's output crashes in libonnx (found by fuzzing: MaxPool after an unknown op).
// Other malformed graphs crash it too, so it runs only where ImportOptions ask for it.
void collect_inferred(onnx::ModelProto& m, OpGraph& g) {
  if (!all_ops_known(m.graph(), m, g.opset)) return;
  try {
    onnx::shape_inference::InferShapes(m);
  } catch (const std::exception&) {
    return;  // ONNX's inference is advisory; Orchid computes every shape itself
  }
  for (const auto& v : m.graph().value_info())
    if (auto t = static_type(v.type())) g.inferred[v.name()] = *t;
  for (const auto& v : m.graph().output())
    if (auto t = static_type(v.type())) g.inferred[v.name()] = *t;
}

}  // namespace

std::string node_context(const OpGraph& g, const OpNode& n) {
  std::string domain = n.domain.empty() ? "" : n.domain + ".";
  return g.path + ": node '" + n.name + "' (" + domain + n.op_type + ", opset " +
         std::to_string(n.opset) + ")";
}

ir::Dims parse_dims(const std::string& text, const std::string& what) {
  ir::Dims dims;
  if (text.empty()) return dims;
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, 'x');) {
    ORCHID_USER_CHECK(!item.empty() && item.size() < 12 &&
                      item.find_first_not_of("0123456789") == std::string::npos)
        << what << ": bad shape '" << text << "' (expected dims like 1x3x224x224)";
    dims.push_back(std::stoll(item));
  }
  ORCHID_USER_CHECK(text.back() != 'x') << what << ": bad shape '" << text << "'";
  return dims;
}

OpGraph load_onnx_bytes(const std::string& bytes, const std::string& path,
                        const ImportOptions& opts) {
  onnx::ModelProto m;
  ORCHID_USER_CHECK(m.ParseFromString(bytes))
      << path << ": not an ONNX model (the file does not parse as a ModelProto; truncated or corrupt?)";
  ORCHID_USER_CHECK(m.has_graph()) << path << ": the model has no graph";
  check_node_count(m.graph().node_size(), opts, path);
  OpGraph g;
  g.path = path;
  g.name = m.graph().name();
  g.opset = check_opsets(m, path);
  for (auto& t : *m.mutable_graph()->mutable_initializer()) load_external_data(t, path);
  std::set<std::string> defined;
  for (const auto& t : m.graph().initializer()) add_initializer(g, defined, t, t.name());
  for (const auto& v : m.graph().input()) {
    if (defined.count(v.name())) continue;  // older models list initializers as inputs too
    auto bound = opts.bind.find(v.name());
    if (bound != opts.bind.end()) {
      g.initializers.emplace_back(v.name(), bind_input(v, bound->second, path));
    } else {
      g.inputs.emplace_back(v.name(), input_type(v, opts, path));
    }
    defined.insert(v.name());
  }
  check_option_names(opts, m, path);
  std::vector<OpNode> nodes;
  Inliner inliner{m, g, defined, nodes, path};
  inliner.append(m.graph().node(), "", {});
  check_node_count(static_cast<int64_t>(nodes.size()), opts, path);
  g.nodes = topological(std::move(nodes), defined, path);
  for (const auto& o : m.graph().output()) g.outputs.push_back(o.name());
  check_divisor_attrs(g);
  check_arity(g);
  if (opts.onnx_shape_inference) collect_inferred(m, g);
  return g;
}

OpGraph load_onnx(const std::string& path, const ImportOptions& opts) {
  return load_onnx_bytes(read_file(path), path, opts);
}

}  // namespace orchid::frontend
