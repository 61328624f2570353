// The checker of orchestrations (strategies.h, kernel_problems).
#include <algorithm>
#include <set>
#include <sstream>

#include "ir/printer.h"
#include "orchestrate/grouping.h"
#include "orchestrate/strategies.h"
#include "support/error.h"

namespace orchid::orchestrate {

namespace {

using detail::NodeGraph;

// `node 3 (%y = reduce, from "Softmax_1")`, as the verifier names nodes.
std::string node_str(const ir::Graph& g, int32_t n) {
  const ir::Primitive& p = g.node(ir::NodeId(n));
  std::ostringstream os;
  os << "node " << n << " (";
  if (!p.outputs.empty()) os << ir::print_value_name(g.value(p.outputs[0]).name) << " = ";
  os << ir::prim_op_name(p.op);
  if (!p.name.empty()) os << ", from \"" << p.name << "\"";
  os << ")";
  return os.str();
}

std::string value_str(const ir::Graph& g, int32_t v) {
  return ir::print_value_name(g.value(ir::ValueId(v)).name);
}

// The kernel of every node, or the problems that keep `kernels` from being a partition.
std::vector<int32_t> cover(const ir::Graph& g, const std::vector<tile::Kernel>& kernels,
                           std::vector<std::string>& problems) {
  std::vector<int32_t> kernel_of(static_cast<size_t>(g.num_nodes()), -1);
  for (size_t k = 0; k < kernels.size(); ++k) {
    if (kernels[k].nodes.empty()) problems.push_back("kernel " + std::to_string(k) + " has no nodes");
    for (ir::NodeId n : kernels[k].nodes) {
      if (n.v < 0 || n.v >= g.num_nodes()) {
        problems.push_back("kernel " + std::to_string(k) + " names node " + std::to_string(n.v) +
                           ", which the graph does not have (it has " + std::to_string(g.num_nodes()) + " nodes)");
        continue;
      }
      int32_t& owner = kernel_of[static_cast<size_t>(n.v)];
      if (owner >= 0)
        problems.push_back(node_str(g, n.v) + " is in kernel " + std::to_string(owner) + " and again in kernel " +
                           std::to_string(k));
      else
        owner = static_cast<int32_t>(k);
    }
  }
  for (int32_t n = 0; n < g.num_nodes(); ++n)
    if (kernel_of[static_cast<size_t>(n)] < 0) problems.push_back(node_str(g, n) + " is in no kernel");
  return kernel_of;
}

void check_kinds(const ir::Graph& g, const tile::Kernel& kernel, size_t k, std::vector<std::string>& problems) {
  std::vector<int32_t> linear;
  for (ir::NodeId n : kernel.nodes) {
    ir::PrimKind kind = g.node(n).kind();
    if (kind == ir::PrimKind::Opaque && kernel.nodes.size() > 1)
      problems.push_back("kernel " + std::to_string(k) + ": opaque " + node_str(g, n.v) +
                         " shares its kernel with other nodes (an opaque primitive is alone)");
    if (kind == ir::PrimKind::Linear) linear.push_back(n.v);
  }
  if (linear.size() > 1)
    problems.push_back("kernel " + std::to_string(k) + " holds " + std::to_string(linear.size()) +
                       " linear primitives (at most one): " + node_str(g, linear[0]) + " and " + node_str(g, linear[1]));
}

// Convexity of kernel k: a forward sweep from its first node to its last marks the nodes
// outside it that a path from it reaches; one of its nodes fed by such a node is re-entered.
void check_convex(const ir::Graph& g, const NodeGraph& ng, const std::vector<int32_t>& kernel_of,
                  const tile::Kernel& kernel, int32_t k, std::vector<std::string>& problems) {
  int32_t first = g.num_nodes(), last = -1;
  for (ir::NodeId n : kernel.nodes) first = std::min(first, n.v), last = std::max(last, n.v);
  std::vector<bool> reached(static_cast<size_t>(std::max(0, last - first + 1)), false);  // outside, reached
  for (int32_t n = first; n <= last; ++n) {
    bool inside = kernel_of[static_cast<size_t>(n)] == k;
    for (int32_t p : ng.producers[static_cast<size_t>(n)]) {
      if (p < first) continue;
      bool p_inside = kernel_of[static_cast<size_t>(p)] == k;
      bool p_reached = !p_inside && reached[static_cast<size_t>(p - first)];
      if (inside && p_reached) {
        problems.push_back("kernel " + std::to_string(k) + " is not convex: a path leaves it and re-enters at " +
                           node_str(g, n) + " through " + node_str(g, p) + " of kernel " +
                           std::to_string(kernel_of[static_cast<size_t>(p)]));
        return;
      }
      if (!inside && (p_inside || p_reached)) reached[static_cast<size_t>(n - first)] = true;
    }
  }
}

// Outputs of kernel k: exactly its values that another kernel reads or the graph outputs.
void check_outputs(const ir::Graph& g, const NodeGraph& ng, const std::vector<int32_t>& kernel_of,
                   const tile::Kernel& kernel, int32_t k, std::vector<std::string>& problems) {
  std::string name = "kernel " + std::to_string(k);
  std::set<int32_t> listed;
  for (ir::ValueId v : kernel.outputs) {
    bool ours = v.v >= 0 && v.v < g.num_values() && ng.producer[static_cast<size_t>(v.v)] >= 0 &&
                kernel_of[static_cast<size_t>(ng.producer[static_cast<size_t>(v.v)])] == k;
    if (!ours) {
      std::string what = v.v >= 0 && v.v < g.num_values() ? value_str(g, v.v) : "value " + std::to_string(v.v);
      problems.push_back(name + " outputs " + what + ", which none of its nodes computes");
    } else if (!listed.insert(v.v).second) {
      problems.push_back(name + " lists output " + value_str(g, v.v) + " twice");
    }
  }
  for (ir::NodeId n : kernel.nodes) {
    for (ir::ValueId v : g.node(n).outputs) {
      int32_t reader = -1;
      for (int32_t c : ng.consumers[static_cast<size_t>(v.v)])
        if (kernel_of[static_cast<size_t>(c)] != k) reader = kernel_of[static_cast<size_t>(c)];
      bool needed = reader >= 0 || ng.graph_output[static_cast<size_t>(v.v)];
      bool has = listed.count(v.v) > 0;
      if (needed && !has)
        problems.push_back(name + " does not output " + value_str(g, v.v) + ", which " +
                           (reader >= 0 ? "kernel " + std::to_string(reader) + " reads" : std::string("is a graph output")) +
                           " (missing output)");
      if (!needed && has)
        problems.push_back(name + " outputs " + value_str(g, v.v) +
                           ", which no other kernel reads and the graph does not output (extra output)");
    }
  }
}

// Every value kernel k reads from another kernel comes from an earlier one.
void check_order(const ir::Graph& g, const NodeGraph& ng, const std::vector<int32_t>& kernel_of,
                 const tile::Kernel& kernel, int32_t k, std::vector<std::string>& problems) {
  for (ir::ValueId v : tile::kernel_inputs(g, kernel)) {
    int32_t p = ng.producer[static_cast<size_t>(v.v)];
    if (p < 0) continue;
    int32_t from = kernel_of[static_cast<size_t>(p)];
    if (from > k)
      problems.push_back("kernel " + std::to_string(k) + " reads " + value_str(g, v.v) + " before kernel " +
                         std::to_string(from) + " computes it (kernels out of topological order)");
  }
}

}  // namespace

std::vector<std::string> kernel_problems(const ir::Graph& g, const std::vector<tile::Kernel>& kernels) {
  std::vector<std::string> problems;
  std::vector<int32_t> kernel_of = cover(g, kernels, problems);
  if (!problems.empty()) return problems;  // the other checks need a partition
  NodeGraph ng(g);
  for (size_t k = 0; k < kernels.size(); ++k) {
    int32_t ki = static_cast<int32_t>(k);
    check_kinds(g, kernels[k], k, problems);
    check_convex(g, ng, kernel_of, kernels[k], ki, problems);
    check_outputs(g, ng, kernel_of, kernels[k], ki, problems);
    check_order(g, ng, kernel_of, kernels[k], ki, problems);
  }
  return problems;
}

void check_kernels(const ir::Graph& g, const std::vector<tile::Kernel>& kernels) {
  std::vector<std::string> problems = kernel_problems(g, kernels);
  std::ostringstream os;
  for (const std::string& p : problems) os << "\n  " << p;
  ORCHID_CHECK(problems.empty()) << "invalid orchestration of @" << g.name << " into " << kernels.size() << " kernels:" << os.str();
}

}  // namespace orchid::orchestrate
