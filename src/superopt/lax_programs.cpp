#include "superopt/lax_programs.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "ir/canonical.h"
#include "ir/subgraph.h"
#include "superopt/abstract_program.h"
#include "support/union_find.h"

namespace orchid::superopt {

namespace {

using ir::NodeId;
using ir::ValueId;

std::vector<ValueId> distinct(const std::vector<ValueId>& v) {
  std::vector<ValueId> out;
  for (ValueId x : v)
    if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(x);
  return out;
}

bool in_fragment(const ir::Graph& g, NodeId n) {
  const ir::Primitive& p = g.node(n);
  if (p.outputs.size() != 1 || p.inputs.empty()) return false;
  ir::Graph one = ir::extract_subgraph(g, {n}, distinct(p.inputs), p.outputs);
  AbsPool pool;
  return abstract_program(one, pool).unsupported.empty();
}

// Whether no path leaves `set` and comes back (nodes are in topological order).
bool convex(const ir::Graph& g, const std::vector<bool>& set) {
  std::vector<bool> after(static_cast<size_t>(g.num_nodes()), false);  // outside, reached from the set
  for (int32_t n = 0; n < g.num_nodes(); ++n) {
    bool from_outside_path = false, from_set = false;
    for (ValueId v : g.node(NodeId{n}).inputs) {
      const ir::Value& val = g.value(v);
      if (val.origin != ir::ValueOrigin::Node) continue;
      size_t p = static_cast<size_t>(val.node.v);
      from_set |= set[p];
      from_outside_path |= after[p];
    }
    if (set[static_cast<size_t>(n)]) {
      if (from_outside_path) return false;
    } else {
      after[static_cast<size_t>(n)] = from_set || from_outside_path;
    }
  }
  return true;
}

bool worth_searching(const ir::Graph& g, const std::vector<NodeId>& nodes) {
  if (nodes.size() < 2) return false;
  return std::any_of(nodes.begin(), nodes.end(), [&](NodeId n) {
    const ir::Primitive& p = g.node(n);
    return p.op == ir::PrimOp::MatMul || p.reduce == ir::ReduceOp::Sum;
  });
}

// The nodes of the program that ends at node `last`: its ancestors inside its component
// (`in_component`), and the values they read from outside, in first-read order. False where
// the program is not worth searching or not convex.
template <class InComponent>
bool program_nodes(const ir::Graph& g, const std::vector<bool>& lax, InComponent in_component, size_t last,
                   std::vector<NodeId>* nodes, std::vector<ValueId>* inputs) {
  size_t n = static_cast<size_t>(g.num_nodes());
  std::vector<bool> set(n, false);
  set[last] = true;
  for (size_t k = last + 1; k-- > 0;) {
    if (!set[k]) continue;
    for (ValueId v : g.node(NodeId{static_cast<int32_t>(k)}).inputs) {
      const ir::Value& val = g.value(v);
      if (val.origin == ir::ValueOrigin::Node && lax[static_cast<size_t>(val.node.v)] && in_component(val.node.v))
        set[static_cast<size_t>(val.node.v)] = true;
    }
  }
  for (size_t k = 0; k <= last; ++k)
    if (set[k]) nodes->push_back(NodeId{static_cast<int32_t>(k)});
  if (!worth_searching(g, *nodes) || !convex(g, set)) return false;
  for (NodeId k : *nodes)
    for (ValueId v : g.node(k).inputs) {
      const ir::Value& val = g.value(v);
      bool inside = val.origin == ir::ValueOrigin::Node && set[static_cast<size_t>(val.node.v)];
      if (!inside && std::find(inputs->begin(), inputs->end(), v) == inputs->end()) inputs->push_back(v);
    }
  return true;
}

}  // namespace

std::vector<LaxProgram> lax_programs(const ir::Graph& g, size_t max_programs) {
  size_t n = static_cast<size_t>(g.num_nodes());
  std::vector<bool> lax(n);
  for (size_t i = 0; i < n; ++i) lax[i] = in_fragment(g, NodeId{static_cast<int32_t>(i)});
  UnionFind components(n);
  std::vector<std::vector<NodeId>> users = g.users();
  for (size_t i = 0; i < n; ++i) {
    if (!lax[i]) continue;
    for (ValueId v : g.node(NodeId{static_cast<int32_t>(i)}).inputs) {
      const ir::Value& val = g.value(v);
      if (val.origin == ir::ValueOrigin::Node && lax[static_cast<size_t>(val.node.v)])
        components.join(i, static_cast<size_t>(val.node.v));
    }
  }
  std::vector<bool> is_output(static_cast<size_t>(g.num_values()), false);
  for (ValueId v : g.outputs()) is_output[static_cast<size_t>(v.v)] = true;
  std::map<std::string, size_t> by_text;
  std::vector<LaxProgram> out;
  for (size_t i = 0; i < n; ++i) {
    if (!lax[i]) continue;
    ValueId exit = g.node(NodeId{static_cast<int32_t>(i)}).outputs[0];
    size_t comp = components.find(i);
    bool handed_out = is_output[static_cast<size_t>(exit.v)];
    for (NodeId u : users[static_cast<size_t>(exit.v)]) handed_out |= !lax[static_cast<size_t>(u.v)] || components.find(static_cast<size_t>(u.v)) != comp;
    if (!handed_out) continue;
    std::vector<NodeId> nodes;
    std::vector<ValueId> inputs;
    if (!program_nodes(g, lax, [&](int32_t node) { return components.find(static_cast<size_t>(node)) == comp; }, i, &nodes, &inputs)) continue;
    ir::Graph sub = ir::extract_subgraph(g, nodes, inputs, {exit});
    std::string text = ir::canonical_signature(sub).text;
    auto seen = by_text.find(text);
    LaxSite site{std::move(nodes), std::move(inputs), exit};
    if (seen != by_text.end()) {
      ++out[seen->second].occurrences;
      out[seen->second].sites.push_back(std::move(site));
      continue;
    }
    by_text[text] = out.size();
    out.push_back(LaxProgram{std::move(sub), g.value(exit).name, 1, {std::move(site)}});
  }
  std::stable_sort(out.begin(), out.end(), [](const LaxProgram& a, const LaxProgram& b) {
    if (a.graph.num_nodes() != b.graph.num_nodes()) return a.graph.num_nodes() > b.graph.num_nodes();
    return a.output < b.output;
  });
  if (out.size() > max_programs) out.resize(max_programs);
  return out;
}

}  // namespace orchid::superopt
