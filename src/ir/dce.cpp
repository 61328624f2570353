#include "ir/dce.h"

#include "support/error.h"

namespace orchid::ir {

namespace {
std::vector<bool> live_values(const Graph& g) {
  std::vector<bool> live(static_cast<size_t>(g.num_values()), false);
  for (ValueId o : g.outputs()) live[static_cast<size_t>(o.v)] = true;
  for (int32_t n = g.num_nodes(); n-- > 0;) {
    const Primitive& p = g.node(NodeId(n));
    bool used = false;
    for (ValueId o : p.outputs) used |= live[static_cast<size_t>(o.v)];
    if (!used) continue;
    for (ValueId i : p.inputs) live[static_cast<size_t>(i.v)] = true;
  }
  return live;
}
}  // namespace

Graph eliminate_dead(const Graph& g) {
  std::vector<bool> live = live_values(g);
  Graph out;
  out.name = g.name;
  std::vector<ValueId> map(static_cast<size_t>(g.num_values()));
  for (ValueId in : g.inputs()) map[static_cast<size_t>(in.v)] = out.add_input(g.value(in).name, g.type(in));
  for (int32_t v = 0; v < g.num_values(); ++v) {
    const Value& val = g.value(ValueId(v));
    if (val.origin == ValueOrigin::Constant && live[static_cast<size_t>(v)])
      map[static_cast<size_t>(v)] = out.add_constant(val.name, g.constant(ValueId(v)));
  }
  for (int32_t n = 0; n < g.num_nodes(); ++n) {
    Primitive p = g.node(NodeId(n));
    bool used = false;
    for (ValueId o : p.outputs) used |= live[static_cast<size_t>(o.v)];
    if (!used) continue;
    std::vector<TensorType> types;
    std::vector<std::string> names;
    for (ValueId o : p.outputs) {
      types.push_back(g.type(o));
      names.push_back(g.value(o).name);
    }
    for (ValueId& i : p.inputs) i = map[static_cast<size_t>(i.v)];
    std::vector<ValueId> old_outs = p.outputs;
    NodeId id = out.add_node(std::move(p), types, names);
    for (size_t k = 0; k < old_outs.size(); ++k)
      map[static_cast<size_t>(old_outs[k].v)] = out.node(id).outputs[k];
  }
  std::vector<ValueId> outs;
  for (ValueId o : g.outputs()) outs.push_back(map[static_cast<size_t>(o.v)]);
  out.set_outputs(outs);
  return out;
}

}  // namespace orchid::ir
