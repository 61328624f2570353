#include "fission/rule_context.h"

#include "support/error.h"

namespace orchid::fission {

RuleContext::RuleContext(const frontend::OpGraph& model, const frontend::OpNode& node,
                         ir::Graph& g, std::vector<std::optional<ir::ValueId>> inputs)
    : model_(model), node_(node), g_(g), inputs_(std::move(inputs)) {}

std::string RuleContext::where() const { return frontend::node_context(model_, node_) + ": "; }

ir::ValueId RuleContext::input(size_t k) const {
  ORCHID_USER_CHECK(has_input(k)) << where() << "input " << k << " is required";
  return *inputs_[k];
}

const ir::Tensor* RuleContext::constant(size_t k) const {
  if (!has_input(k)) return nullptr;
  const ir::Value& v = g_.value(*inputs_[k]);
  return v.origin == ir::ValueOrigin::Constant ? &g_.constant(*inputs_[k]) : nullptr;
}

std::string RuleContext::not_constant(size_t k) const {
  return "input " + std::to_string(k) + " ('" + node_.inputs[k] +
         "') must be a constant (computable at compile time): shapes are static";
}

std::vector<int64_t> RuleContext::const_ints(size_t k) const {
  const ir::Tensor* t = g_.value(input(k)).origin == ir::ValueOrigin::Constant ? constant(k) : nullptr;
  if (!t) unsupported(not_constant(k));
  if (!ir::is_integral(t->dtype())) unsupported("input " + std::to_string(k) + " is not integer");
  std::vector<int64_t> out(static_cast<size_t>(t->numel()));
  for (int64_t i = 0; i < t->numel(); ++i) out[static_cast<size_t>(i)] = t->get_i64(i);
  return out;
}

std::vector<double> RuleContext::const_floats(size_t k) const {
  const ir::Tensor* t = g_.value(input(k)).origin == ir::ValueOrigin::Constant ? constant(k) : nullptr;
  if (!t) unsupported(not_constant(k));
  std::vector<double> out(static_cast<size_t>(t->numel()));
  for (int64_t i = 0; i < t->numel(); ++i) out[static_cast<size_t>(i)] = t->get_as_double(i);
  return out;
}

namespace {
template <class T>
const T* get_attr(const frontend::OpNode& n, const std::string& name, const std::string& where,
                  const char* want) {
  auto it = n.attrs.find(name);
  if (it == n.attrs.end()) return nullptr;
  const T* v = std::get_if<T>(&it->second);
  ORCHID_USER_CHECK(v) << where << "attribute '" << name << "' should be " << want;
  return v;
}
}  // namespace

int64_t RuleContext::attr_int(const std::string& name, int64_t dflt) const {
  const auto* v = get_attr<int64_t>(node_, name, where(), "an int");
  return v ? *v : dflt;
}
double RuleContext::attr_float(const std::string& name, double dflt) const {
  const auto* v = get_attr<double>(node_, name, where(), "a float");
  return v ? *v : dflt;
}
std::string RuleContext::attr_string(const std::string& name, const std::string& dflt) const {
  const auto* v = get_attr<std::string>(node_, name, where(), "a string");
  return v ? *v : dflt;
}
std::vector<int64_t> RuleContext::attr_ints(const std::string& name,
                                            const std::vector<int64_t>& dflt) const {
  const auto* v = get_attr<std::vector<int64_t>>(node_, name, where(), "a list of ints");
  return v ? *v : dflt;
}
std::vector<double> RuleContext::attr_floats(const std::string& name,
                                             const std::vector<double>& dflt) const {
  const auto* v = get_attr<std::vector<double>>(node_, name, where(), "a list of floats");
  return v ? *v : dflt;
}
const ir::Tensor* RuleContext::attr_tensor(const std::string& name) const {
  return get_attr<ir::Tensor>(node_, name, where(), "a tensor");
}
int64_t RuleContext::required_attr_int(const std::string& name) const {
  ORCHID_USER_CHECK(has_attr(name)) << where() << "attribute '" << name << "' is required";
  return attr_int(name, 0);
}

void RuleContext::unsupported(const std::string& reason) const { throw Unsupported(reason); }

int64_t RuleContext::normalize_axis(int64_t axis, int64_t rank, const std::string& what) const {
  ORCHID_USER_CHECK(axis >= -rank && axis < rank)
      << where() << what << " " << axis << " is out of range for rank " << rank;
  return axis < 0 ? axis + rank : axis;
}

std::string RuleContext::value_name(const std::string& suffix) const {
  std::string base = node_.outputs.empty() || node_.outputs[0].empty() ? node_.name : node_.outputs[0];
  return suffix.empty() ? base : base + "/" + suffix;
}

void RuleContext::check_size(const ir::TensorType& t) const {
  auto n = ir::checked_numel(t.shape, t.dtype);
  ORCHID_USER_CHECK(n.has_value()) << where() << "a result of shape " << ir::dims_str(t.shape)
                                   << " has a negative dimension or too many elements";
  ORCHID_USER_CHECK(*n * ir::dtype_bytes(t.dtype) <= kMaxTensorBytes)
      << where() << "a result of type " << ir::type_str(t) << " takes " << *n * ir::dtype_bytes(t.dtype)
      << " bytes, more than the limit of " << kMaxTensorBytes;
}

std::vector<ir::ValueId> RuleContext::emit(ir::Primitive p, const std::vector<ir::TensorType>& outs,
                                           const std::string& suffix) {
  for (const ir::TensorType& t : outs) check_size(t);
  p.name = node_.name;
  std::vector<std::string> names;
  for (size_t k = 0; k < outs.size(); ++k) {
    bool own = suffix.empty() && k < node_.outputs.size() && !node_.outputs[k].empty();
    names.push_back(own ? node_.outputs[k] : value_name(outs.size() == 1 ? suffix : suffix + std::to_string(k)));
  }
  ir::NodeId id = g_.add_node(std::move(p), outs, names);
  return g_.node(id).outputs;
}

ir::ValueId RuleContext::emit1(ir::Primitive p, const ir::TensorType& out, const std::string& suffix) {
  return emit(std::move(p), {out}, suffix)[0];
}

ir::ValueId RuleContext::add_constant(ir::Tensor t, const std::string& suffix) {
  check_size(t.type());
  return g_.add_constant(value_name(suffix), std::move(t));
}

}  // namespace orchid::fission
