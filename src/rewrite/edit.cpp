#include "rewrite/edit.h"

#include <algorithm>
#include <queue>
#include <tuple>

#include "ir/verifier.h"
#include "rewrite/patterns.h"
#include "support/error.h"

namespace orchid::rewrite {

namespace {

using ir::NodeId;
using ir::ValueId;

size_t at(ValueId v) { return static_cast<size_t>(v.v); }

// Where each value's readers end up after the replacements (chains followed).
std::vector<ValueId> resolve_all(const ir::Graph& g, const std::vector<std::pair<ValueId, ValueId>>& replaced) {
  std::vector<ValueId> to(static_cast<size_t>(g.num_values()));
  for (int32_t v = 0; v < g.num_values(); ++v) to[static_cast<size_t>(v)] = ValueId(v);
  for (const auto& [old, now] : replaced) to[at(old)] = now;
  for (size_t v = 0; v < to.size(); ++v) {
    ValueId x = to[v];
    for (size_t guard = 0; to[at(x)] != x; ++guard) {
      ORCHID_CHECK(guard < to.size()) << "Edit: values replaced in a cycle";
      x = to[at(x)];
    }
    to[v] = x;
  }
  return to;
}

struct Order {
  std::vector<bool> live;       // per node
  std::vector<NodeId> nodes;    // live nodes in the order of the result
  bool acyclic = true;          // else `nodes` misses those on a cycle
};

Order order_nodes(const ir::Graph& g, const std::vector<ValueId>& to, int32_t original_nodes) {
  size_t n = static_cast<size_t>(g.num_nodes());
  auto producer = [&](ValueId v) -> int32_t {
    const ir::Value& x = g.value(v);
    return x.origin == ir::ValueOrigin::Node ? x.node.v : -1;
  };
  Order o;
  o.live.assign(n, false);
  std::vector<int32_t> stack;
  for (ValueId out : g.outputs())
    if (int32_t p = producer(to[at(out)]); p >= 0) stack.push_back(p);
  while (!stack.empty()) {
    int32_t k = stack.back();
    stack.pop_back();
    if (o.live[static_cast<size_t>(k)]) continue;
    o.live[static_cast<size_t>(k)] = true;
    for (ValueId i : g.node(NodeId(k)).inputs)
      if (int32_t p = producer(to[at(i)]); p >= 0) stack.push_back(p);
  }
  // Keys: a kept node's position; an appended node just after the latest node it reads.
  std::vector<double> key(n);
  std::vector<int> pending(n, 0);
  std::vector<std::vector<int32_t>> readers(n);
  for (size_t k = 0; k < n; ++k) {
    double latest = -1;
    for (ValueId i : g.node(NodeId(static_cast<int32_t>(k))).inputs)
      if (int32_t p = producer(to[at(i)]); p >= 0) {
        latest = std::max(latest, key[static_cast<size_t>(p)]);
        if (o.live[k]) {
          ++pending[k];
          readers[static_cast<size_t>(p)].push_back(static_cast<int32_t>(k));
        }
      }
    key[k] = static_cast<int32_t>(k) < original_nodes ? static_cast<double>(k) : latest + 0.5;
  }
  using Item = std::tuple<double, int32_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> ready;
  for (size_t k = 0; k < n; ++k)
    if (o.live[k] && pending[k] == 0) ready.emplace(key[k], static_cast<int32_t>(k));
  while (!ready.empty()) {
    int32_t k = std::get<1>(ready.top());
    ready.pop();
    o.nodes.push_back(NodeId(k));
    for (int32_t r : readers[static_cast<size_t>(k)])
      if (--pending[static_cast<size_t>(r)] == 0) ready.emplace(key[static_cast<size_t>(r)], r);
  }
  size_t live = 0;
  for (bool b : o.live) live += b;
  o.acyclic = o.nodes.size() == live;
  return o;
}

// p with each input listed once: a written body that now reads one value through two slots
// reads it through the first (derived operators read by position and may repeat one).
void merge_repeated_inputs(ir::Primitive& p) {
  if (ir::prim_op_derived(p.op)) return;
  std::vector<ValueId> unique;
  std::vector<int32_t> slots;
  for (ValueId v : p.inputs) {
    auto it = std::find(unique.begin(), unique.end(), v);
    slots.push_back(static_cast<int32_t>(it - unique.begin()));
    if (it == unique.end()) unique.push_back(v);
  }
  if (unique.size() == p.inputs.size()) return;
  p.inputs = std::move(unique);
  for (ir::Expr& b : p.bodies) b = remap(b, slots, domain_vars(p.domain.size()));
}

}  // namespace

Edit::Edit(const ir::Graph& g) : g_(g), original_nodes_(g.num_nodes()), original_values_(g.num_values()) {}

ValueId Edit::add(ir::Primitive p, const ir::TensorType& type, const std::string& name) {
  return add(std::move(p), std::vector<ir::TensorType>{type}, std::vector<std::string>{name})[0];
}

std::vector<ValueId> Edit::add(ir::Primitive p, const std::vector<ir::TensorType>& types,
                               const std::vector<std::string>& names) {
  if (p.name.empty()) p.name = provenance_;
  NodeId n = g_.add_node(std::move(p), types, names);
  return g_.node(n).outputs;
}

ValueId Edit::add_constant(const std::string& name, ir::Tensor data) { return g_.add_constant(name, std::move(data)); }

void Edit::replace(ValueId old, ValueId now) {
  ORCHID_CHECK(g_.type(old) == g_.type(now)) << "Edit: " << g_.value(old).name << " replaced by a value of another type";
  replaced_.emplace_back(old, now);
}

bool Edit::acyclic() const { return order_nodes(g_, resolve_all(g_, replaced_), original_nodes_).acyclic; }

ir::Graph Edit::finish(std::string_view what) const {
  std::vector<ValueId> to = resolve_all(g_, replaced_);
  std::vector<std::string> names;
  for (const ir::Value& v : g_.values()) names.push_back(v.name);
  std::vector<bool> renamed(names.size(), false);
  for (const auto& [old, now] : replaced_) {
    ValueId target = to[at(now)];
    if (target.v < original_values_ || renamed[at(target)]) continue;  // an existing value keeps its name
    names[at(target)] = g_.value(old).name;
    renamed[at(target)] = true;
  }
  Order order = order_nodes(g_, to, original_nodes_);
  ORCHID_CHECK(order.acyclic) << "Edit: the edited graph has a cycle (" << what << ")";
  ir::Graph out;
  out.name = g_.name;
  std::vector<ValueId> map(names.size());
  for (ValueId in : g_.inputs()) map[at(in)] = out.add_input(g_.value(in).name, g_.type(in));
  std::vector<bool> constant_read(names.size(), false);
  for (NodeId n : order.nodes)
    for (ValueId i : g_.node(n).inputs) constant_read[at(to[at(i)])] = true;
  for (ValueId o : g_.outputs()) constant_read[at(to[at(o)])] = true;
  for (int32_t v = 0; v < g_.num_values(); ++v)
    if (constant_read[static_cast<size_t>(v)] && g_.value(ValueId(v)).origin == ir::ValueOrigin::Constant)
      map[static_cast<size_t>(v)] = out.add_constant(names[static_cast<size_t>(v)], g_.constant(ValueId(v)));
  for (NodeId n : order.nodes) {
    ir::Primitive p = g_.node(n);
    std::vector<ir::TensorType> types;
    std::vector<std::string> out_names;
    for (ValueId o : p.outputs) {
      types.push_back(g_.type(o));
      out_names.push_back(names[at(o)]);
    }
    for (ValueId& i : p.inputs) i = map[at(to[at(i)])];
    merge_repeated_inputs(p);
    std::vector<ValueId> old = p.outputs;
    NodeId id = out.add_node(std::move(p), types, out_names);
    for (size_t k = 0; k < old.size(); ++k) map[at(old[k])] = out.node(id).outputs[k];
  }
  // A graph output replaced by a value of another name keeps its name through a view.
  std::vector<ValueId> outs;
  for (ValueId o : g_.outputs()) {
    ValueId v = map[at(to[at(o)])];
    if (out.value(v).name != g_.value(o).name) {
      ir::Primitive view;
      view.op = ir::PrimOp::View;
      view.inputs = {v};
      view.name = g_.value(o).origin == ir::ValueOrigin::Node ? g_.node(g_.value(o).node).name : "";
      v = out.node(out.add_node(std::move(view), {out.type(v)}, {g_.value(o).name})).outputs[0];
    }
    outs.push_back(v);
  }
  out.set_outputs(outs);
  ir::verify_or_throw(out, std::string(what));
  return out;
}

}  // namespace orchid::rewrite
