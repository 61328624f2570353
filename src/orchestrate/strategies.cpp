// The primitive and per-op strategies and the dispatch; greedy is in greedy.cpp, the checker
// in check_kernels.cpp.
#include "orchestrate/strategies.h"

#include <algorithm>
#include <map>

#include "orchestrate/grouping.h"
#include "support/error.h"

namespace orchid::orchestrate {

namespace {

using detail::Grouping;
using detail::NodeGraph;

std::vector<tile::Kernel> primitive_kernels(const ir::Graph& g) {
  NodeGraph ng(g);
  Grouping gr(ng);
  for (int32_t n = 0; n < g.num_nodes(); ++n) gr.start(n);
  return gr.kernels();
}

// What a per-op group holds besides its name: an opaque primitive stays alone, and a kernel
// has at most one linear primitive.
struct OpGroup {
  bool opaque = false;
  bool linear = false;
};

// The same-name groups node n may join, in the order they are tried: those holding a
// producer of n (latest producer first), then the others (latest created first).
std::vector<int32_t> per_op_candidates(const NodeGraph& ng, const Grouping& gr, const std::vector<int32_t>& named,
                                       int32_t n) {
  std::vector<int32_t> order;
  const auto& prods = ng.producers[static_cast<size_t>(n)];
  for (auto it = prods.rbegin(); it != prods.rend(); ++it) {
    int32_t k = gr.group_of(*it);
    if (std::find(named.begin(), named.end(), k) != named.end() &&
        std::find(order.begin(), order.end(), k) == order.end())
      order.push_back(k);
  }
  for (auto it = named.rbegin(); it != named.rend(); ++it)
    if (std::find(order.begin(), order.end(), *it) == order.end()) order.push_back(*it);
  return order;
}

std::vector<tile::Kernel> per_op_kernels(const ir::Graph& g) {
  NodeGraph ng(g);
  Grouping gr(ng);
  std::vector<OpGroup> info;
  std::map<std::string, std::vector<int32_t>> by_name;  // groups of each name, in creation order
  for (int32_t n = 0; n < g.num_nodes(); ++n) {
    const ir::Primitive& p = g.node(ir::NodeId(n));
    bool opaque = p.kind() == ir::PrimKind::Opaque, linear = p.kind() == ir::PrimKind::Linear;
    int32_t chosen = -1;
    if (!p.name.empty() && !opaque) {
      for (int32_t k : per_op_candidates(ng, gr, by_name[p.name], n)) {
        const OpGroup& o = info[static_cast<size_t>(k)];
        if (o.opaque || (linear && o.linear) || !gr.can_join(k, n)) continue;
        chosen = k;
        break;
      }
    }
    if (chosen >= 0) {
      gr.join(n, chosen);
      info[static_cast<size_t>(chosen)].linear |= linear;
      continue;
    }
    int32_t k = gr.start(n);
    info.push_back({opaque, linear});
    if (!p.name.empty()) by_name[p.name].push_back(k);
  }
  return gr.kernels();
}

}  // namespace

std::optional<Strategy> parse_strategy(std::string_view text) {
  for (Strategy s : {Strategy::Primitive, Strategy::PerOp, Strategy::Greedy, Strategy::Optimal})
    if (strategy_name(s) == text) return s;
  return std::nullopt;
}

Strategy default_strategy(bool cuda, bool measuring) {
  return !cuda && measuring ? Strategy::Optimal : Strategy::Greedy;
}

std::string_view strategy_name(Strategy s) {
  switch (s) {
    case Strategy::Primitive: return "primitive";
    case Strategy::PerOp: return "per-op";
    case Strategy::Greedy: return "greedy";
    case Strategy::Optimal: return "optimal";
  }
  return "?";
}

std::vector<tile::Kernel> orchestrate(const ir::Graph& g, Strategy s) {
  std::vector<tile::Kernel> kernels;
  switch (s) {
    case Strategy::Primitive: kernels = primitive_kernels(g); break;
    case Strategy::PerOp: kernels = per_op_kernels(g); break;
    case Strategy::Greedy: kernels = detail::greedy_kernels(g); break;
    case Strategy::Optimal:
      ORCHID_CHECK(false) << "the optimal strategy needs costs: orchestrate_optimal (optimal.h)";
      break;
  }
  check_kernels(g, kernels);
  return kernels;
}

}  // namespace orchid::orchestrate
