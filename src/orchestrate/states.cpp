// Local graphs of subgraphs and their execution states (states.h); candidates are in
// states_candidates.cpp.
#include "orchestrate/states.h"

#include <algorithm>
#include <unordered_set>

#include "ir/movement.h"
#include "support/error.h"

namespace orchid::orchestrate {

namespace {

// Depth-first search of Algorithm 1: from state x, every ready node (not in x, all producers
// in x) gives a successor state, recorded and searched once.
struct StateSearch {
  const LocalGraph& lg;
  int64_t max_states;
  ExecutionStates out;
  std::unordered_set<NodeSet> seen;  // membership only; `out.states` keeps the order

  bool add(const NodeSet& s) {
    if (!seen.insert(s).second) return false;
    out.states.push_back(s);
    if (static_cast<int64_t>(out.states.size()) > max_states) out.complete = false;
    return true;
  }

  void dfs(const NodeSet& x) {
    for (int32_t v = 0; v < lg.size() && out.complete; ++v) {
      if (x.test(static_cast<size_t>(v)) || (lg.preds[static_cast<size_t>(v)] & ~x).any()) continue;
      NodeSet next = x;
      next.set(static_cast<size_t>(v));
      if (add(next)) dfs(next);
    }
  }
};

}  // namespace

LocalGraph local_graph(const ir::Graph& g, const std::vector<ir::NodeId>& nodes) {
  ORCHID_CHECK(static_cast<int>(nodes.size()) <= kMaxSubgraphNodes)
      << "a subgraph of " << nodes.size() << " nodes (at most " << kMaxSubgraphNodes << ")";
  ORCHID_CHECK(std::is_sorted(nodes.begin(), nodes.end())) << "subgraph nodes must be increasing";
  LocalGraph lg;
  lg.nodes = nodes;
  lg.preds.assign(nodes.size(), NodeSet());
  lg.succs.assign(nodes.size(), NodeSet());
  std::vector<int32_t> local(static_cast<size_t>(g.num_nodes()), -1);
  for (size_t i = 0; i < nodes.size(); ++i) local[static_cast<size_t>(nodes[i].v)] = static_cast<int32_t>(i);
  std::vector<int32_t> value_index(static_cast<size_t>(g.num_values()), -1);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const ir::Primitive& p = g.node(nodes[i]);
    if (p.kind() == ir::PrimKind::Opaque) lg.opaque.set(i);
    if (p.kind() == ir::PrimKind::Linear) lg.linear.set(i);
    if (p.kind() == ir::PrimKind::Elementwise || ir::is_movement(g, nodes[i])) lg.linear_company.set(i);
    for (ir::ValueId v : p.outputs) lg.values.push_back({v, static_cast<int32_t>(i), NodeSet(), false});
  }
  std::sort(lg.values.begin(), lg.values.end(), [](const LocalValue& a, const LocalValue& b) { return a.id < b.id; });
  for (size_t k = 0; k < lg.values.size(); ++k)
    value_index[static_cast<size_t>(lg.values[k].id.v)] = static_cast<int32_t>(k);
  for (ir::ValueId o : g.outputs()) {
    int32_t k = value_index[static_cast<size_t>(o.v)];
    if (k >= 0) lg.values[static_cast<size_t>(k)].external = true;
  }
  for (int32_t n = 0; n < g.num_nodes(); ++n) {
    int32_t ln = local[static_cast<size_t>(n)];
    for (ir::ValueId in : g.node(ir::NodeId(n)).inputs) {
      int32_t k = value_index[static_cast<size_t>(in.v)];
      if (k < 0) continue;
      LocalValue& lv = lg.values[static_cast<size_t>(k)];
      if (ln < 0) {
        lv.external = true;
        continue;
      }
      lv.consumers.set(static_cast<size_t>(ln));
      lg.preds[static_cast<size_t>(ln)].set(static_cast<size_t>(lv.producer));
      lg.succs[static_cast<size_t>(lv.producer)].set(static_cast<size_t>(ln));
    }
  }
  return lg;
}

ExecutionStates execution_states(const LocalGraph& lg, int64_t max_states) {
  StateSearch search{lg, max_states, {}, {}};
  search.add(NodeSet());
  search.dfs(NodeSet());
  return std::move(search.out);
}

void add_pruning(std::vector<PruneRow>& total, const std::vector<PruneRow>& rows) {
  if (total.empty()) {
    total = rows;
    return;
  }
  ORCHID_CHECK(total.size() == rows.size()) << "pruning tables of different rules";
  for (size_t i = 0; i < rows.size(); ++i) {
    ORCHID_CHECK(total[i].rule == rows[i].rule) << "pruning rule " << rows[i].rule << " where " << total[i].rule << " was";
    total[i].before += rows[i].before;
    total[i].after += rows[i].after;
  }
}

}  // namespace orchid::orchestrate
