// Private to the strategies (strategies.cpp, greedy.cpp): a partition of a graph's nodes into
// groups built in node order, with the convexity test every join needs, and its conversion
// into ordered kernels with their materialised outputs.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "tile/kernel.h"

namespace orchid::orchestrate::detail {

// The most primitives one group holds. A kernel's code inlines its chains of primitives into
// expressions: without a bound a long chain (thousands of elementwise ops) makes one
// expression too deep to emit and too large for the C compiler.
inline constexpr size_t kMaxGroupNodes = 256;

// The edges between nodes, computed once per graph. Ids are plain ints (node and value ids).
struct NodeGraph {
  std::vector<std::vector<int32_t>> producers;    // per node: distinct producer nodes, increasing
  std::vector<std::vector<int32_t>> consumers;    // per value: distinct consumer nodes, increasing
  std::vector<int32_t> producer;                  // per value: its producer node, or -1
  std::vector<bool> graph_output;                 // per value
  explicit NodeGraph(const ir::Graph& g);
};

// Groups of nodes. Nodes are assigned in increasing id order, so when node n is assigned
// every node before it already is, and every path into n comes from assigned nodes.
class Grouping {
 public:
  explicit Grouping(const NodeGraph& ng);

  int32_t group_of(int32_t node) const { return group_of_[static_cast<size_t>(node)]; }
  const std::vector<int32_t>& members(int32_t group) const { return members_[static_cast<size_t>(group)]; }
  int32_t num_groups() const { return static_cast<int32_t>(members_.size()); }

  int32_t start(int32_t node);  // a new group holding `node`; returns its index
  void join(int32_t node, int32_t group);

  // Whether `node` (the next node to assign) may join `group`: no group holding a producer of
  // node is reachable from `group` in the group graph (an edge X -> Y where a node of X feeds
  // a node of Y). Joining then keeps the group graph acyclic, so the groups can be ordered,
  // and keeps `group` convex (a path from it through other nodes into node would pass through
  // a producer's group reachable from it). Convexity of each group alone is not enough: two
  // convex groups {a, a'} and {b, b'} with edges a -> b and b' -> a' need each other's outputs.
  // A group of kMaxGroupNodes nodes takes no more.
  bool can_join(int32_t group, int32_t node) const;

  // The groups as kernels (see strategies.h for their order and outputs).
  std::vector<tile::Kernel> kernels() const;

 private:
  void add_edges(int32_t node);  // group graph edges into node's group from its producers'

  const NodeGraph& ng_;
  std::vector<int32_t> group_of_;               // per node; -1 while unassigned
  std::vector<std::vector<int32_t>> members_;   // per group, increasing
  std::vector<std::vector<int32_t>> succ_;      // per group: successors in the group graph
  mutable std::vector<uint32_t> seen_;          // per group: marks of can_join's search
  mutable std::vector<uint32_t> target_;        // per group: marks of the producers' groups
  mutable uint32_t epoch_ = 0;
};

// The greedy strategy (greedy.cpp; rules in strategies.h).
std::vector<tile::Kernel> greedy_kernels(const ir::Graph& g);

}  // namespace orchid::orchestrate::detail
