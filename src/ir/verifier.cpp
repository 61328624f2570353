// The verifier (docs/ir.md, "Rules the verifier checks"): the value table, the graph's inputs
// and outputs, and per node its structure (rules 1-3), its bodies (verifier_exprs.cpp, rules
// 4-5) and the rule of its operator (rule 6). It never throws on a malformed graph: every
// check guards what the next one reads.
#include "ir/verifier.h"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>
#include <variant>

#include "ir/printer.h"
#include "ir/text_internal.h"
#include "ir/verifier_internal.h"
#include "support/error.h"

namespace orchid::ir {

namespace {

using detail::NodeCheck;

using AttrCheck = bool (*)(const PrimAttrs&);
constexpr AttrCheck kAttrChecks[] = {
#define ORCHID_PRIM(e, text, kind, attrs, derived) \
  [](const PrimAttrs& a) { return std::holds_alternative<attrs>(a); },
#include "ir/prim.def"
#undef ORCHID_PRIM
};

bool defined(const Graph& g, ValueId v) { return v.valid() && v.v < g.num_values(); }
std::string name_of(const Graph& g, ValueId v) {
  return defined(g, v) ? print_value_name(g.value(v).name) : std::string("%?") + std::to_string(v.v);
}
std::string str(int64_t v) { return std::to_string(v); }

// ---- Values, graph inputs and outputs ----

void check_constant(const Graph& g, const Value& val, const std::string& prefix,
                    std::vector<std::string>& errors) {
  if (val.constant < 0 || static_cast<size_t>(val.constant) >= g.constants().size()) {
    errors.push_back(prefix + "constant without data");
    return;
  }
  const Tensor& t = g.constants()[static_cast<size_t>(val.constant)];
  if (t.type() != val.type || static_cast<int64_t>(t.bytes().size()) != val.type.bytes()) {
    errors.push_back(prefix + "data of type " + type_str(t.type()) + " (" +
                     str(static_cast<int64_t>(t.bytes().size())) + " bytes) for a constant of " +
                     type_str(val.type));
    return;
  }
  if (!is_bool(t.dtype())) return;
  for (int64_t i = 0; i < t.numel(); ++i) {
    auto b = std::to_integer<int>(t.bytes()[static_cast<size_t>(i)]);
    if (b == 0 || b == 1) continue;
    errors.push_back(prefix + "bool element " + str(i) + " holds " + str(b) + ", not 0 or 1");
    return;
  }
}

void check_value(const Graph& g, ValueId id, std::vector<std::string>& errors) {
  const Value& val = g.value(id);
  std::string prefix = "value " + print_value_name(val.name) + ": ";
  for (int64_t d : val.type.shape)
    if (d < 0) errors.push_back(prefix + "negative dimension in " + type_str(val.type));
  switch (val.origin) {
    case ValueOrigin::Input: return;
    case ValueOrigin::Constant: check_constant(g, val, prefix, errors); return;
    case ValueOrigin::Node: {
      bool ok = val.node.valid() && val.node.v < g.num_nodes() && val.output_index >= 0;
      const std::vector<ValueId>* outs = ok ? &g.node(val.node).outputs : nullptr;
      ok = ok && static_cast<size_t>(val.output_index) < outs->size() &&
           (*outs)[static_cast<size_t>(val.output_index)] == id;
      if (!ok)
        errors.push_back(prefix + "claims to be output " + str(val.output_index) + " of node " +
                         str(val.node.v) + ", which does not define it");
      return;
    }
  }
}

void check_values(const Graph& g, std::vector<std::string>& errors) {
  std::set<std::string, std::less<>> names;
  for (int32_t v = 0; v < g.num_values(); ++v) {
    const std::string& name = g.values()[static_cast<size_t>(v)].name;
    if (!names.insert(name).second)
      errors.push_back("value " + print_value_name(name) + ": the name is not unique");
    check_value(g, ValueId(v), errors);
  }
  for (ValueId in : g.inputs())
    if (!defined(g, in) || g.value(in).origin != ValueOrigin::Input)
      errors.push_back("graph input " + name_of(g, in) + " is not an input value");
  for (size_t k = 0; k < g.outputs().size(); ++k)
    if (!defined(g, g.outputs()[k]))
      errors.push_back("graph output " + str(static_cast<int64_t>(k)) + " (" +
                       name_of(g, g.outputs()[k]) + ") is not a defined value");
}

// ---- Node structure: rules 1-3 ----

std::string node_prefix(const Graph& g, int32_t n, const Primitive& p) {
  std::string s = "node " + str(n) + " (";
  if (!p.outputs.empty()) s += name_of(g, p.outputs[0]) + " = ";
  s += prim_op_name(p.op);
  if (!p.name.empty()) s += ", from " + detail::quote_string(p.name);
  return s + "): ";
}

// Rule 1 for the node's inputs; fills in_types when all are defined.
void check_inputs(NodeCheck& c) {
  bool ok = true;
  std::set<int32_t> seen;
  for (ValueId in : c.p.inputs) {
    if (!defined(c.g, in)) {
      c.fail("input " + name_of(c.g, in) + " is not a defined value");
      ok = false;
      continue;
    }
    const Value& val = c.g.value(in);
    if (val.origin == ValueOrigin::Node && val.node.v >= c.id)
      c.fail("input " + name_of(c.g, in) + " is defined by node " + str(val.node.v) +
             ", not by an earlier node");
    // Derived operators read inputs by position (matmul(x, x)); written bodies by name.
    if (!seen.insert(in.v).second && !prim_op_derived(c.p.op))
      c.fail("input " + name_of(c.g, in) + " is listed twice");
    c.in_types.push_back(val.type);
  }
  c.inputs_ok = ok;
  if (!ok) c.in_types.clear();
}

// The outputs exist, point back to this node, and have the shape of the domain (rule 2).
bool check_outputs(const NodeCheck& c) {
  if (c.p.outputs.empty()) {
    c.fail("a primitive has at least one output");
    return false;
  }
  bool ok = true;
  for (size_t k = 0; k < c.p.outputs.size(); ++k) {
    ValueId v = c.p.outputs[k];
    const Value* val = defined(c.g, v) ? &c.g.value(v) : nullptr;
    if (!val || val->origin != ValueOrigin::Node || val->node.v != c.id ||
        val->output_index != static_cast<int32_t>(k)) {
      c.fail("output " + str(static_cast<int64_t>(k)) + " (" + name_of(c.g, v) +
             ") is not a value defined by this node");
      ok = false;
      continue;
    }
    if (val->type.shape != c.p.domain)
      c.fail("output " + name_of(c.g, v) + " is " + type_str(val->type) + " but the domain is " +
             dims_str(c.p.domain));
  }
  return ok;
}

// Rule 2: the numbers of bodies and outputs the combiner takes.
bool check_combiner_counts(const NodeCheck& c) {
  std::string comb = "combiner " + std::string(reduce_op_name(c.p.reduce));
  int nb = reduce_op_bodies(c.p.reduce), no = reduce_op_outputs(c.p.reduce);
  auto bodies = static_cast<int64_t>(c.p.bodies.size());
  auto outs = static_cast<int64_t>(c.p.outputs.size());
  bool ok = true;
  if (nb < 0 ? bodies < 1 : bodies != nb) {
    c.fail(comb + " takes " + (nb < 0 ? std::string("at least 1 body") : str(nb) + " bodies") +
           ", found " + str(bodies));
    ok = false;
  }
  int64_t want = no < 0 ? bodies : no;
  if (outs != want) {
    c.fail(comb + " with " + str(bodies) + " bodies has " + str(want) + " outputs, found " +
           str(outs));
    ok = false;
  }
  return ok;
}

// Rule 2: each output's dtype matches its body (needs typed bodies and the right counts).
void check_output_dtypes(const NodeCheck& c) {
  auto out = [&c](size_t k) { return c.g.type(c.p.outputs[k]).dtype; };
  auto body = [&c](size_t k) { return c.p.bodies[k].dtype(); };
  auto expect = [&c](size_t k, DType got, DType want, const std::string& why) {
    if (got == want) return;
    c.fail("output " + name_of(c.g, c.p.outputs[k]) + " is " + std::string(dtype_name(got)) +
           " but " + why + " is " + std::string(dtype_name(want)));
  };
  switch (c.p.reduce) {
    case ReduceOp::None:
    case ReduceOp::Sum:
    case ReduceOp::Prod:
    case ReduceOp::Max:
    case ReduceOp::Min:
      for (size_t k = 0; k < c.p.bodies.size(); ++k)
        expect(k, out(k), body(k), "body " + str(static_cast<int64_t>(k)));
      return;
    case ReduceOp::ArgMax:
    case ReduceOp::ArgMin:
      expect(0, out(0), body(0), "the value body");
      if (body(1) != DType::I64)
        c.fail("the index body of " + std::string(reduce_op_name(c.p.reduce)) + " is " +
               std::string(dtype_name(body(1))) + ", not i64");
      expect(1, out(1), DType::I64, "an index");
      return;
    case ReduceOp::Welford:
    case ReduceOp::MaxSum:
      if (!is_float(body(0)))
        c.fail("combiner " + std::string(reduce_op_name(c.p.reduce)) +
               " needs a float body, found " + std::string(dtype_name(body(0))));
      expect(0, out(0), body(0), "the body");
      expect(1, out(1), body(0), "the body");
      return;
  }
}

// Rule 3, and extents are never negative.
void check_domains(const NodeCheck& c) {
  for (int64_t d : c.p.domain)
    if (d < 0) c.fail("negative extent in the domain " + dims_str(c.p.domain));
  for (int64_t d : c.p.reduce_domain)
    if (d < 0) c.fail("negative extent in the reduction domain " + dims_str(c.p.reduce_domain));
  bool reducing = c.p.reduce != ReduceOp::None;
  if (reducing && c.p.reduce_domain.empty())
    c.fail("combiner " + std::string(reduce_op_name(c.p.reduce)) + " without a reduction domain");
  if (!reducing && !c.p.reduce_domain.empty())
    c.fail("a reduction domain " + dims_str(c.p.reduce_domain) + " without a combiner");
}

// ---- Rule 6: derived operators ----

// Why the node's types do not fit its derived operator, or "".
std::string derived_shape_problem(const NodeCheck& c, const TensorType& out) {
  std::string op(prim_op_name(c.p.op));
  size_t want_inputs = c.p.op == PrimOp::View ? 1 : 2;
  if (c.in_types.size() != want_inputs)
    return op + " takes " + str(static_cast<int64_t>(want_inputs)) + " inputs, found " +
           str(static_cast<int64_t>(c.in_types.size()));
  try {
    switch (c.p.op) {
      case PrimOp::View:
        if (c.in_types[0].dtype != out.dtype || c.in_types[0].numel() != out.numel())
          return "view of " + type_str(c.in_types[0]) + " as " + type_str(out) +
                 " changes the dtype or the element count";
        return "";
      case PrimOp::MatMul: {
        TensorType t =
            matmul_result_type(c.in_types[0], c.in_types[1], std::get<MatMulAttrs>(c.p.attrs));
        return t == out ? "" : "matmul gives " + type_str(t) + ", declared " + type_str(out);
      }
      case PrimOp::Conv: {
        TensorType t =
            conv_result_type(c.in_types[0], c.in_types[1], std::get<ConvAttrs>(c.p.attrs));
        return t == out ? "" : "conv gives " + type_str(t) + ", declared " + type_str(out);
      }
      case PrimOp::Elementwise:
      case PrimOp::Reduce:
      case PrimOp::Broadcast:
      case PrimOp::Layout:
      case PrimOp::Opaque: break;
    }
  } catch (const UserError& e) {
    return e.what();
  }
  return op + " is not a derived operator";
}

// The first difference between the stored and the freshly derived expression, or "".
std::string derivation_difference(const Primitive& p, const Primitive& fresh) {
  if (p.domain != fresh.domain)
    return "domain " + dims_str(p.domain) + ", derived " + dims_str(fresh.domain);
  if (p.reduce != fresh.reduce || p.reduce_domain != fresh.reduce_domain)
    return "reduction " + std::string(reduce_op_name(p.reduce)) + " over " +
           dims_str(p.reduce_domain) + ", derived " + std::string(reduce_op_name(fresh.reduce)) +
           " over " + dims_str(fresh.reduce_domain);
  if (p.bodies.size() != fresh.bodies.size())
    return str(static_cast<int64_t>(p.bodies.size())) + " bodies, derived " +
           str(static_cast<int64_t>(fresh.bodies.size()));
  for (size_t k = 0; k < p.bodies.size(); ++k)
    if (!equal(p.bodies[k], fresh.bodies[k]))
      return "body " + str(static_cast<int64_t>(k)) + " '" + print_expr(p.bodies[k]) +
             "', derived '" + print_expr(fresh.bodies[k]) + "'";
  return "";
}

void check_derived(const NodeCheck& c) {
  if (c.p.outputs.size() != 1) {
    c.fail(std::string(prim_op_name(c.p.op)) + " has one output, found " +
           str(static_cast<int64_t>(c.p.outputs.size())));
    return;
  }
  const TensorType& out = c.g.type(c.p.outputs[0]);
  if (std::string problem = derived_shape_problem(c, out); !problem.empty()) {
    c.fail(problem);
    return;
  }
  Primitive fresh = c.p;
  derive_tensor_expr(c.in_types, out, fresh);
  if (std::string diff = derivation_difference(c.p, fresh); !diff.empty())
    c.fail("the stored expression differs from a fresh derivation: " + diff);
}

// ---- Rule 6: opaque routines ----

void check_flag(const NodeCheck& c, const OpaqueAttrs& a, const char* name) {
  int64_t v = a.param(name);
  if (v != 0 && v != 1) c.fail(std::string(name) + "=" + str(v) + " must be 0 or 1");
}

// The number of inputs and outputs of a routine (docs/ir.md, "Opaque routines").
std::pair<size_t, size_t> routine_arity(OpaqueRoutine r) {
  switch (r) {
    case OpaqueRoutine::CumSum: return {1, 1};
    case OpaqueRoutine::TopK: return {1, 2};
    case OpaqueRoutine::ScatterElements:
    case OpaqueRoutine::ScatterND: return {3, 1};
    case OpaqueRoutine::Det: return {1, 1};
  }
  return {0, 0};
}

// The `axis` parameter in [0, rank of x); false (reported) otherwise.
bool check_axis(const NodeCheck& c, const OpaqueAttrs& a, const TensorType& x) {
  int64_t axis = a.param("axis");
  if (axis >= 0 && axis < x.rank()) return true;
  c.fail(std::string(opaque_routine_name(a.routine)) + " axis=" + str(axis) + " out of range for " +
         type_str(x));
  return false;
}

// cumsum and topk: the output types, or nullopt after reporting a violation.
std::optional<std::vector<TensorType>> scan_outputs(const NodeCheck& c, const OpaqueAttrs& a) {
  const TensorType& x = c.in_types[0];
  if (!check_axis(c, a, x)) return std::nullopt;
  if (a.routine == OpaqueRoutine::CumSum) {
    check_flag(c, a, "exclusive");
    check_flag(c, a, "reverse");
    return std::vector<TensorType>{x};
  }
  auto axis = static_cast<size_t>(a.param("axis"));
  int64_t k = a.param("k");
  if (k < 1 || k > x.shape[axis])
    c.fail("topk k=" + str(k) + " out of range for dim " + str(static_cast<int64_t>(axis)) +
           " of " + type_str(x));
  check_flag(c, a, "largest");
  check_flag(c, a, "sorted");
  TensorType values = x;
  values.shape[axis] = k;
  return std::vector<TensorType>{values, {DType::I64, values.shape}};
}

// What scatter_elements and scatter_nd require of (data, indices, updates) besides their
// shapes: an integer indices tensor, updates of data's dtype, a reduction in [0, 2].
bool check_scatter_operands(const NodeCheck& c, const OpaqueAttrs& a) {
  std::string r(opaque_routine_name(a.routine));
  const TensorType &data = c.in_types[0], &ind = c.in_types[1], &upd = c.in_types[2];
  bool ok = true;
  if (!is_int(ind.dtype)) {
    c.fail(r + " indices " + type_str(ind) + " are not of an integer dtype");
    ok = false;
  }
  if (upd.dtype != data.dtype) {
    c.fail(r + " updates " + type_str(upd) + " differ in dtype from data " + type_str(data));
    ok = false;
  }
  int64_t red = a.param("reduction");
  if (red < 0 || red > 2) {
    c.fail(r + " reduction=" + str(red) + " is not 0 (none), 1 (add) or 2 (mul)");
    ok = false;
  }
  return ok;
}

// scatter_elements: data, indices and updates of one rank; indices of updates' shape, no
// larger than data's off the axis.
bool scatter_elements_shapes_ok(const NodeCheck& c, const OpaqueAttrs& a) {
  const TensorType &data = c.in_types[0], &ind = c.in_types[1], &upd = c.in_types[2];
  bool ok = ind.shape == upd.shape && ind.rank() == data.rank();
  for (int64_t d = 0; ok && d < data.rank(); ++d) {
    auto k = static_cast<size_t>(d);
    ok = d == a.param("axis") || ind.shape[k] <= data.shape[k];
  }
  if (!ok)
    c.fail("scatter_elements indices " + type_str(ind) + " and updates " + type_str(upd) +
           " do not fit data " + type_str(data));
  return ok;
}

// scatter_nd: indices [.., k] with 1 <= k <= rank of data, updates of shape
// indices.shape[:-1] ++ data.shape[k:].
bool scatter_nd_shapes_ok(const NodeCheck& c) {
  const TensorType &data = c.in_types[0], &ind = c.in_types[1], &upd = c.in_types[2];
  bool ok = ind.rank() >= 1 && ind.shape.back() >= 1 && ind.shape.back() <= data.rank();
  if (ok) {
    Dims want(ind.shape.begin(), ind.shape.end() - 1);
    want.insert(want.end(), data.shape.begin() + ind.shape.back(), data.shape.end());
    ok = upd.shape == want;
  }
  if (!ok)
    c.fail("scatter_nd indices " + type_str(ind) + " and updates " + type_str(upd) +
           " do not fit data " + type_str(data));
  return ok;
}

// det: float [.., M, M] -> [..].
std::optional<std::vector<TensorType>> det_outputs(const NodeCheck& c) {
  const TensorType& x = c.in_types[0];
  if (x.rank() < 2 || x.shape[x.shape.size() - 1] != x.shape[x.shape.size() - 2] || !is_float(x.dtype)) {
    c.fail("det of " + type_str(x) + ": needs float square matrices [.., M, M]");
    return std::nullopt;
  }
  return std::vector<TensorType>{{x.dtype, Dims(x.shape.begin(), x.shape.end() - 2)}};
}

std::optional<std::vector<TensorType>> scatter_outputs(const NodeCheck& c, const OpaqueAttrs& a) {
  const TensorType& data = c.in_types[0];
  if (!check_scatter_operands(c, a)) return std::nullopt;
  if (a.routine == OpaqueRoutine::ScatterElements) {
    if (!check_axis(c, a, data) || !scatter_elements_shapes_ok(c, a)) return std::nullopt;
  } else if (!scatter_nd_shapes_ok(c)) {
    return std::nullopt;
  }
  return std::vector<TensorType>{data};
}

void check_routine(const NodeCheck& c, const OpaqueAttrs& a) {
  std::string r(opaque_routine_name(a.routine));
  auto [want_ins, want_outs] = routine_arity(a.routine);
  if (c.in_types.size() != want_ins || c.p.outputs.size() != want_outs) {
    c.fail(r + " takes " + str(static_cast<int64_t>(want_ins)) + " input" +
           (want_ins == 1 ? "" : "s") + " and " + str(static_cast<int64_t>(want_outs)) +
           " outputs, found " + str(static_cast<int64_t>(c.p.inputs.size())) + " and " +
           str(static_cast<int64_t>(c.p.outputs.size())));
    return;
  }
  std::optional<std::vector<TensorType>> want;
  switch (a.routine) {
    case OpaqueRoutine::CumSum:
    case OpaqueRoutine::TopK: want = scan_outputs(c, a); break;
    case OpaqueRoutine::ScatterElements:
    case OpaqueRoutine::ScatterND: want = scatter_outputs(c, a); break;
    case OpaqueRoutine::Det: want = det_outputs(c); break;
  }
  for (size_t k = 0; want && k < want_outs; ++k) {
    const TensorType& got = c.g.type(c.p.outputs[k]);
    if (got != (*want)[k])
      c.fail(r + " output " + name_of(c.g, c.p.outputs[k]) + " is " + type_str(got) +
             ", should be " + type_str((*want)[k]));
  }
}

void check_opaque(const NodeCheck& c, bool outputs_ok) {
  if (!c.p.bodies.empty() || c.p.reduce != ReduceOp::None || !c.p.reduce_domain.empty())
    c.fail("an opaque primitive has no body and no reduction");
  const auto* a = std::get_if<OpaqueAttrs>(&c.p.attrs);
  if (!a) return;
  std::vector<std::string> want = opaque_routine_params(a->routine);
  std::string r(opaque_routine_name(a->routine));
  bool params_ok = true;
  for (const std::string& name : want)
    if (!a->params.count(name)) {
      c.fail(r + " needs the parameter " + name);
      params_ok = false;
    }
  for (const auto& [name, v] : a->params)
    if (std::find(want.begin(), want.end(), name) == want.end()) {
      c.fail(r + " has no parameter " + name);
      params_ok = false;
    }
  if (params_ok && outputs_ok && c.inputs_ok) check_routine(c, *a);
}

// ---- Rule 6: the operator's rule ----

void check_no_reduction(const NodeCheck& c) {
  if (c.p.reduce != ReduceOp::None)
    c.fail(std::string(prim_op_name(c.p.op)) + " cannot reduce (combiner " +
           std::string(reduce_op_name(c.p.reduce)) + ")");
}

void check_operator(const NodeCheck& c, bool outputs_ok) {
  switch (c.p.op) {
    case PrimOp::Elementwise:
      check_no_reduction(c);
      if (c.inputs_ok) detail::check_elementwise_loads(c);
      return;
    case PrimOp::Reduce:
      if (c.p.reduce == ReduceOp::None) c.fail("reduce needs a combiner other than none");
      return;
    case PrimOp::Broadcast:
      check_no_reduction(c);
      if (c.inputs_ok) detail::check_broadcast_body(c);
      return;
    case PrimOp::Layout:
      check_no_reduction(c);
      detail::check_layout_bodies(c);
      return;
    case PrimOp::View:
    case PrimOp::MatMul:
    case PrimOp::Conv:
      if (c.inputs_ok && outputs_ok) check_derived(c);
      return;
    case PrimOp::Opaque: return;
  }
}

void check_node(const Graph& g, int32_t n, std::vector<std::string>& errors) {
  const Primitive& p = g.nodes()[static_cast<size_t>(n)];
  NodeCheck c{g, n, p, node_prefix(g, n, p), errors, false, {}};
  check_inputs(c);
  bool outputs_ok = check_outputs(c);
  bool attrs_ok = kAttrChecks[static_cast<size_t>(p.op)](p.attrs);
  if (!attrs_ok) c.fail("attributes of another operator than " + std::string(prim_op_name(p.op)));
  if (p.op == PrimOp::Opaque) {
    check_opaque(c, outputs_ok);
    return;
  }
  bool counts_ok = outputs_ok && check_combiner_counts(c);
  check_domains(c);
  bool typed = detail::check_bodies(c);
  if (typed && counts_ok) check_output_dtypes(c);
  if (typed && attrs_ok) check_operator(c, outputs_ok);
}

}  // namespace

std::vector<std::string> verify(const Graph& g) {
  std::vector<std::string> errors;
  check_values(g, errors);
  for (int32_t n = 0; n < g.num_nodes(); ++n) check_node(g, n, errors);
  return errors;
}

void verify_or_throw(const Graph& g, const std::string& what) {
  std::vector<std::string> errors = verify(g);
  if (errors.empty()) return;
  std::string msg = what + ": malformed graph @" + g.name + ":";
  for (const std::string& e : errors) msg += "\n" + e;
  throw UserError(msg);
}

}  // namespace orchid::ir
