#include "orchestrate/grouping.h"

#include <algorithm>
#include <functional>
#include <queue>

#include "support/error.h"

namespace orchid::orchestrate::detail {

NodeGraph::NodeGraph(const ir::Graph& g)
    : producers(static_cast<size_t>(g.num_nodes())),
      consumers(static_cast<size_t>(g.num_values())),
      producer(static_cast<size_t>(g.num_values()), -1),
      graph_output(static_cast<size_t>(g.num_values()), false) {
  for (int32_t v = 0; v < g.num_values(); ++v) {
    const ir::Value& val = g.value(ir::ValueId(v));
    if (val.origin == ir::ValueOrigin::Node) producer[static_cast<size_t>(v)] = val.node.v;
  }
  for (ir::ValueId o : g.outputs()) graph_output[static_cast<size_t>(o.v)] = true;
  for (int32_t n = 0; n < g.num_nodes(); ++n) {
    auto& prods = producers[static_cast<size_t>(n)];
    for (ir::ValueId in : g.node(ir::NodeId(n)).inputs) {
      auto& users = consumers[static_cast<size_t>(in.v)];
      if (users.empty() || users.back() != n) users.push_back(n);  // nodes visited in order
      int32_t p = producer[static_cast<size_t>(in.v)];
      if (p >= 0) prods.push_back(p);
    }
    std::sort(prods.begin(), prods.end());
    prods.erase(std::unique(prods.begin(), prods.end()), prods.end());
  }
}

Grouping::Grouping(const NodeGraph& ng) : ng_(ng), group_of_(ng.producers.size(), -1) {}

void Grouping::add_edges(int32_t node) {
  int32_t k = group_of(node);
  for (int32_t p : ng_.producers[static_cast<size_t>(node)]) {
    auto& s = succ_[static_cast<size_t>(group_of(p))];
    if (group_of(p) != k && std::find(s.begin(), s.end(), k) == s.end()) s.push_back(k);
  }
}

int32_t Grouping::start(int32_t node) {
  ORCHID_CHECK(group_of(node) < 0) << "node " << node << " is already in group " << group_of(node);
  members_.push_back({node});
  succ_.emplace_back();
  seen_.push_back(0);
  target_.push_back(0);
  group_of_[static_cast<size_t>(node)] = num_groups() - 1;
  add_edges(node);
  return num_groups() - 1;
}

void Grouping::join(int32_t node, int32_t group) {
  ORCHID_CHECK(group_of(node) < 0) << "node " << node << " is already in group " << group_of(node);
  auto& m = members_[static_cast<size_t>(group)];
  ORCHID_CHECK(m.back() < node) << "nodes must join groups in increasing order";
  m.push_back(node);
  group_of_[static_cast<size_t>(node)] = group;
  add_edges(node);
}

bool Grouping::can_join(int32_t group, int32_t node) const {
  if (members(group).size() >= kMaxGroupNodes) return false;
  ++epoch_;
  bool any = false;
  for (int32_t p : ng_.producers[static_cast<size_t>(node)]) {
    int32_t k = group_of(p);
    if (k == group) continue;
    target_[static_cast<size_t>(k)] = epoch_;
    any = true;
  }
  if (!any) return true;
  std::vector<int32_t> stack = {group};
  seen_[static_cast<size_t>(group)] = epoch_;
  while (!stack.empty()) {
    int32_t x = stack.back();
    stack.pop_back();
    for (int32_t y : succ_[static_cast<size_t>(x)]) {
      if (target_[static_cast<size_t>(y)] == epoch_) return false;
      if (seen_[static_cast<size_t>(y)] == epoch_) continue;
      seen_[static_cast<size_t>(y)] = epoch_;
      stack.push_back(y);
    }
  }
  return true;
}

std::vector<tile::Kernel> Grouping::kernels() const {
  size_t count = members_.size();
  std::vector<int32_t> preds(count, 0);
  std::vector<tile::Kernel> groups(count);
  for (size_t k = 0; k < count; ++k) {
    for (int32_t n : members_[k]) groups[k].nodes.push_back(ir::NodeId(n));
    for (int32_t s : succ_[k]) ++preds[static_cast<size_t>(s)];
  }
  for (int32_t v = 0; v < static_cast<int32_t>(ng_.producer.size()); ++v) {
    int32_t p = ng_.producer[static_cast<size_t>(v)];
    if (p < 0) continue;
    int32_t k = group_of(p);
    bool out = ng_.graph_output[static_cast<size_t>(v)];
    for (int32_t c : ng_.consumers[static_cast<size_t>(v)]) out |= group_of(c) != k;
    if (out) groups[static_cast<size_t>(k)].outputs.push_back(ir::ValueId(v));
  }
  // Kahn's algorithm; among ready groups the one created first (whose first node is first).
  std::priority_queue<int32_t, std::vector<int32_t>, std::greater<>> ready;
  for (size_t k = 0; k < count; ++k)
    if (preds[k] == 0) ready.push(static_cast<int32_t>(k));
  std::vector<tile::Kernel> order;
  while (!ready.empty()) {
    int32_t k = ready.top();
    ready.pop();
    order.push_back(std::move(groups[static_cast<size_t>(k)]));
    for (int32_t s : succ_[static_cast<size_t>(k)])
      if (--preds[static_cast<size_t>(s)] == 0) ready.push(s);
  }
  ORCHID_CHECK(order.size() == count) << "the groups depend on each other in a cycle";
  return order;
}

}  // namespace orchid::orchestrate::detail
