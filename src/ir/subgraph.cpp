#include "ir/subgraph.h"

#include <algorithm>
#include <map>

#include "support/error.h"

namespace orchid::ir {

namespace {

Graph extract(const Graph& g, const std::vector<NodeId>& nodes, const std::vector<ValueId>& inputs,
              const std::vector<ValueId>& outputs, bool keep_constants) {
  Graph out;
  out.name = g.name;
  std::map<ValueId, ValueId> map;
  for (ValueId in : inputs) map[in] = out.add_input(g.value(in).name, g.type(in));
  if (keep_constants)
    for (NodeId n : nodes)
      for (ValueId i : g.node(n).inputs)
        if (g.value(i).origin == ValueOrigin::Constant && !map.count(i))
          map[i] = out.add_constant(g.value(i).name, g.constant(i));
  std::vector<NodeId> order = nodes;
  std::sort(order.begin(), order.end());  // graphs store nodes topologically
  for (NodeId n : order) {
    Primitive p = g.node(n);
    std::vector<TensorType> types;
    std::vector<std::string> names;
    for (ValueId o : p.outputs) {
      types.push_back(g.type(o));
      names.push_back(g.value(o).name);
    }
    for (ValueId& i : p.inputs) {
      auto it = map.find(i);
      ORCHID_CHECK(it != map.end()) << "extract_subgraph: value " << g.value(i).name
                                    << " is read but is neither an input nor produced earlier";
      i = it->second;
    }
    std::vector<ValueId> old_outs = p.outputs;
    NodeId id = out.add_node(std::move(p), types, names);
    for (size_t k = 0; k < old_outs.size(); ++k) map[old_outs[k]] = out.node(id).outputs[k];
  }
  std::vector<ValueId> outs;
  for (ValueId o : outputs) {
    auto it = map.find(o);
    ORCHID_CHECK(it != map.end()) << "extract_subgraph: output " << g.value(o).name << " is not produced";
    outs.push_back(it->second);
  }
  out.set_outputs(outs);
  return out;
}

}  // namespace

Graph extract_subgraph(const Graph& g, const std::vector<NodeId>& nodes, const std::vector<ValueId>& inputs,
                       const std::vector<ValueId>& outputs) {
  return extract(g, nodes, inputs, outputs, false);
}

Graph extract_subgraph_with_constants(const Graph& g, const std::vector<NodeId>& nodes,
                                      const std::vector<ValueId>& inputs, const std::vector<ValueId>& outputs) {
  return extract(g, nodes, inputs, outputs, true);
}

}  // namespace orchid::ir
