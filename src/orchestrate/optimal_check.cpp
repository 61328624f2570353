// The checker of plans that may recompute primitives (optimal.h, plan_problems).
#include <algorithm>
#include <set>
#include <sstream>

#include "ir/printer.h"
#include "orchestrate/optimal.h"
#include "support/error.h"

namespace orchid::orchestrate {

namespace {

std::string value_str(const ir::Graph& g, ir::ValueId v) { return ir::print_value_name(g.value(v).name); }

// Nodes and outputs exist, each once; returns false (with problems) when the kernel cannot be
// checked further.
bool check_members(const ir::Graph& g, const tile::Kernel& k, const std::string& name, std::vector<std::string>& problems) {
  if (k.nodes.empty()) problems.push_back(name + " has no nodes");
  std::set<int32_t> nodes, outputs;
  bool ok = !k.nodes.empty();
  for (ir::NodeId n : k.nodes) {
    if (n.v < 0 || n.v >= g.num_nodes()) {
      problems.push_back(name + " names node " + std::to_string(n.v) + ", which the graph does not have");
      ok = false;
    } else if (!nodes.insert(n.v).second) {
      problems.push_back(name + " lists node " + std::to_string(n.v) + " twice");
    }
  }
  for (ir::ValueId v : k.outputs) {
    bool ours = ok && v.v >= 0 && v.v < g.num_values() && g.value(v).origin == ir::ValueOrigin::Node &&
                nodes.count(g.value(v).node.v) > 0;
    if (!ours)
      problems.push_back(name + " outputs value " + std::to_string(v.v) + ", which none of its nodes computes");
    else if (!outputs.insert(v.v).second)
      problems.push_back(name + " lists output " + value_str(g, v) + " twice");
  }
  return ok;
}

// Convexity: a forward sweep over node ids from the kernel's first node to its last marks the
// nodes outside it that a path from it reaches; a kernel node fed by a marked node is
// re-entered.
void check_convex(const ir::Graph& g, const tile::Kernel& k, const std::string& name, std::vector<std::string>& problems) {
  std::set<int32_t> inside;
  for (ir::NodeId n : k.nodes) inside.insert(n.v);
  int32_t first = *inside.begin(), last = *inside.rbegin();
  std::vector<bool> reached(static_cast<size_t>(last - first + 1), false);  // outside and reached
  for (int32_t n = first; n <= last; ++n) {
    bool in = inside.count(n) > 0;
    for (ir::ValueId v : g.node(ir::NodeId(n)).inputs) {
      const ir::Value& val = g.value(v);
      if (val.origin != ir::ValueOrigin::Node || val.node.v < first) continue;
      int32_t p = val.node.v;
      bool p_in = inside.count(p) > 0, p_reached = !p_in && reached[static_cast<size_t>(p - first)];
      if (in && p_reached) {
        problems.push_back(name + " is not convex: a path leaves it and re-enters at node " + std::to_string(n) +
                           " through node " + std::to_string(p));
        return;
      }
      if (!in && (p_in || p_reached)) reached[static_cast<size_t>(n - first)] = true;
    }
  }
}

}  // namespace

std::vector<std::string> plan_problems(const ir::Graph& g, const std::vector<tile::Kernel>& kernels) {
  std::vector<std::string> problems;
  std::vector<int32_t> writer(static_cast<size_t>(g.num_values()), -1);
  for (size_t i = 0; i < kernels.size(); ++i) {
    const tile::Kernel& k = kernels[i];
    std::string name = "kernel " + std::to_string(i);
    if (!check_members(g, k, name, problems)) continue;
    check_convex(g, k, name, problems);
    for (ir::ValueId v : tile::kernel_inputs(g, k))
      if (g.value(v).origin == ir::ValueOrigin::Node && writer[static_cast<size_t>(v.v)] < 0)
        problems.push_back(name + " reads " + value_str(g, v) + ", which no earlier kernel writes");
    for (ir::ValueId v : k.outputs) {
      if (v.v < 0 || v.v >= g.num_values()) continue;
      int32_t& w = writer[static_cast<size_t>(v.v)];
      if (w >= 0 && w != static_cast<int32_t>(i))
        problems.push_back(name + " writes " + value_str(g, v) + ", which kernel " + std::to_string(w) + " writes already");
      else
        w = static_cast<int32_t>(i);
    }
  }
  for (ir::ValueId v : g.outputs())
    if (g.value(v).origin == ir::ValueOrigin::Node && writer[static_cast<size_t>(v.v)] < 0)
      problems.push_back("graph output " + value_str(g, v) + " is written by no kernel");
  return problems;
}

void check_plan(const ir::Graph& g, const std::vector<tile::Kernel>& kernels) {
  std::vector<std::string> problems = plan_problems(g, kernels);
  std::ostringstream os;
  for (const std::string& p : problems) os << "\n  " << p;
  ORCHID_CHECK(problems.empty()) << "invalid plan of @" << g.name << " with " << kernels.size() << " kernels:" << os.str();
}

}  // namespace orchid::orchestrate
