// The greedy strategy: rule-based fusion (the rules are stated in strategies.h).
#include <algorithm>
#include <optional>

#include "ir/movement.h"
#include "orchestrate/grouping.h"
#include "support/error.h"

namespace orchid::orchestrate::detail {

namespace {

enum class Pattern { Injective, Reduction, Linear, Opaque };

Pattern pattern_of(const ir::Primitive& p) {
  switch (p.op) {
    case ir::PrimOp::Elementwise:
    case ir::PrimOp::Broadcast:
    case ir::PrimOp::Layout:
    case ir::PrimOp::View: return Pattern::Injective;
    case ir::PrimOp::Reduce: return Pattern::Reduction;
    case ir::PrimOp::MatMul:
    case ir::PrimOp::Conv: return Pattern::Linear;
    case ir::PrimOp::Opaque: return Pattern::Opaque;
  }
  return Pattern::Opaque;
}

// A group's kind is the pattern of its anchor: Injective while it holds only injective
// primitives, else that of its reduction, linear or opaque primitive.
struct Group {
  Pattern kind = Pattern::Injective;
  std::optional<ir::Dims> rows;  // reduction groups of row reductions: their rows P
  bool constant = false;         // its nodes depend on no graph input
  bool movement = false;         // injective groups: only views and permutations so far
  bool conv = false;             // linear groups: of a conv
  bool writes_output = false;    // a node's output is a graph output
  ir::ValueId tail;              // linear groups: the latest node's output
  std::vector<ir::NodeId> trailing;  // conv groups: the views and permutations of the result
};

// What the rules ask of each node, computed once per graph.
struct NodeFacts {
  std::vector<bool> constant;       // depends on no graph input
  std::vector<bool> movement;       // a view or permutation (ir/movement.h)
  std::vector<bool> feeds_conv;     // movement reaching a conv's src at strides
  std::vector<bool> writes_output;  // an output is a graph output
};

// Whether the conv's result can be written through `trailing` and then n at strides.
bool writable_through(const ir::Graph& g, std::vector<ir::NodeId> trailing, ir::NodeId n) {
  trailing.push_back(n);
  std::optional<ir::Dims> strides = ir::row_major_strides(g.type(g.node(n).outputs[0]).shape);
  for (auto it = trailing.rbegin(); it != trailing.rend() && strides; ++it) strides = ir::write_strides(g, *it, *strides);
  return strides.has_value();
}

// Per value made by views and permutations (ir/movement.h) from a value computed otherwise
// (or an input): the strides at which it reads that value's memory, when strides can say it.
std::vector<std::optional<ir::Dims>> movement_strides(const ir::Graph& g, const std::vector<bool>& movement) {
  std::vector<std::optional<ir::Dims>> out(static_cast<size_t>(g.num_values()));
  std::vector<bool> moved(static_cast<size_t>(g.num_values()), false);
  for (int32_t n = 0; n < g.num_nodes(); ++n) {
    const ir::Primitive& p = g.node(ir::NodeId(n));
    if (p.outputs.size() != 1 || !movement[static_cast<size_t>(n)]) continue;
    auto in = static_cast<size_t>(p.inputs[0].v), o = static_cast<size_t>(p.outputs[0].v);
    moved[o] = true;
    if (moved[in] && !out[in]) continue;
    out[o] = ir::read_strides(g, ir::NodeId(n), moved[in] ? *out[in] : ir::row_major_strides(g.type(p.inputs[0]).shape));
  }
  return out;
}

// Per node: whether it is a view or permutation whose result reaches a conv's src through
// views and permutations only, and at strides.
std::vector<bool> feeds_conv_src(const ir::Graph& g, const std::vector<bool>& movement) {
  std::vector<std::optional<ir::Dims>> strides = movement_strides(g, movement);
  std::vector<bool> feeds(static_cast<size_t>(g.num_nodes()), false);
  auto users = g.users();
  for (int32_t n = g.num_nodes(); n-- > 0;) {
    const ir::Primitive& p = g.node(ir::NodeId(n));
    if (p.outputs.size() != 1 || !movement[static_cast<size_t>(n)] || !strides[static_cast<size_t>(p.outputs[0].v)])
      continue;
    for (ir::NodeId u : users[static_cast<size_t>(p.outputs[0].v)]) {
      const ir::Primitive& c = g.node(u);
      if ((c.op == ir::PrimOp::Conv && c.inputs[0] == p.outputs[0]) || feeds[static_cast<size_t>(u.v)])
        feeds[static_cast<size_t>(n)] = true;
    }
  }
  return feeds;
}

// Per node: whether it depends on no graph input (its inputs are constants or outputs of such
// nodes).
std::vector<bool> constant_nodes(const ir::Graph& g) {
  std::vector<bool> value_const(static_cast<size_t>(g.num_values()), false), node_const;
  for (int32_t v = 0; v < g.num_values(); ++v)
    value_const[static_cast<size_t>(v)] = g.value(ir::ValueId(v)).origin == ir::ValueOrigin::Constant;
  for (int32_t n = 0; n < g.num_nodes(); ++n) {
    const ir::Primitive& p = g.node(ir::NodeId(n));
    bool c = std::all_of(p.inputs.begin(), p.inputs.end(), [&](ir::ValueId i) { return value_const[static_cast<size_t>(i.v)]; });
    for (ir::ValueId o : p.outputs) value_const[static_cast<size_t>(o.v)] = c;
    node_const.push_back(c);
  }
  return node_const;
}

// Whether no domain variable appears in e (a load's other indices, or a body outside loads).
bool free_of_domain_vars(const ir::Expr& e) {
  bool free = true;
  ir::visit_post(e, [&](const ir::Expr& x) {
    free &= !(x.op() == ir::ExprOp::Var && x->var_kind == ir::VarKind::Domain);
  });
  return free;
}

// Whether every load in e has index j equal to ij for j < k, its other indices free of domain
// variables, and no domain variable appears outside loads.
bool rows_fit(const ir::Expr& e, size_t k) {
  if (e.op() == ir::ExprOp::Load) {
    if (e->predicated && !free_of_domain_vars(e->args.back())) return false;
    size_t nidx = e->args.size() - (e->predicated ? 1 : 0);
    if (nidx < k) return false;
    for (size_t j = 0; j < nidx; ++j) {
      const ir::Expr& idx = e.arg(j);
      bool ok = j < k ? idx.op() == ir::ExprOp::Var && idx->var_kind == ir::VarKind::Domain &&
                            idx->index == static_cast<int32_t>(j)
                      : free_of_domain_vars(idx);
      if (!ok) return false;
    }
    return true;
  }
  if (e.op() == ir::ExprOp::Var) return e->var_kind != ir::VarKind::Domain;
  for (const ir::Expr& a : e->args)
    if (!rows_fit(a, k)) return false;
  return true;
}

// The rows P of a row reduction (strategies.h, "Rows"), or nullopt when p is not one.
std::optional<ir::Dims> row_shape(const ir::Primitive& p) {
  for (size_t k = p.domain.size() + 1; k-- > 0;) {
    bool ones = std::all_of(p.domain.begin() + static_cast<ptrdiff_t>(k), p.domain.end(),
                            [](int64_t d) { return d == 1; });
    if (!ones) return std::nullopt;  // a smaller k keeps this dim in the tail
    bool fit = std::all_of(p.bodies.begin(), p.bodies.end(), [&](const ir::Expr& b) { return rows_fit(b, k); });
    if (fit) return ir::Dims(p.domain.begin(), p.domain.begin() + static_cast<ptrdiff_t>(k));
  }
  return std::nullopt;
}

bool has_prefix(const ir::Dims& d, const ir::Dims& prefix) {
  return d.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), d.begin());
}

bool is_graph_output(const ir::Graph& g, ir::ValueId v) {
  return std::find(g.outputs().begin(), g.outputs().end(), v) != g.outputs().end();
}

NodeFacts node_facts(const ir::Graph& g) {
  NodeFacts f;
  f.constant = constant_nodes(g);
  for (int32_t n = 0; n < g.num_nodes(); ++n) {
    const ir::Primitive& p = g.node(ir::NodeId(n));
    f.movement.push_back(ir::is_movement(g, ir::NodeId(n)));
    f.writes_output.push_back(std::any_of(p.outputs.begin(), p.outputs.end(), [&](ir::ValueId v) { return is_graph_output(g, v); }));
  }
  f.feeds_conv = feeds_conv_src(g, f.movement);
  return f;
}

// Rule (1) of strategies.h: whether node `id` (p) may join a group of this kind.
bool rule_allows(const ir::Graph& graph, ir::NodeId id, const Group& g, const NodeFacts& f) {
  const ir::Primitive& p = graph.node(id);
  Pattern n = pattern_of(p);
  auto at = static_cast<size_t>(id.v);
  if (n == Pattern::Linear)
    return p.op == ir::PrimOp::Conv && g.kind == Pattern::Injective && g.movement && !g.writes_output &&
           graph.value(p.inputs[0]).origin == ir::ValueOrigin::Node &&
           f.feeds_conv[static_cast<size_t>(graph.value(p.inputs[0]).node.v)];
  // What reaches a conv's src through views and permutations stays movement only: the conv
  // then reads it in place through strides.
  if (f.feeds_conv[at] && !(g.kind == Pattern::Injective && g.movement)) return false;
  switch (g.kind) {
    case Pattern::Injective: return n == Pattern::Injective || n == Pattern::Reduction;
    case Pattern::Reduction:
      if (n == Pattern::Reduction) return g.rows && row_shape(p) == g.rows;
      if (p.op != ir::PrimOp::Elementwise && p.op != ir::PrimOp::Broadcast && p.op != ir::PrimOp::View) return false;
      return !g.rows || has_prefix(p.domain, *g.rows);
    case Pattern::Linear:
      if (p.op == ir::PrimOp::Elementwise) return g.trailing.empty();
      return g.conv && f.movement[at] && p.inputs[0] == g.tail && !is_graph_output(graph, g.tail) && !f.feeds_conv[at] &&
             writable_through(graph, g.trailing, id);
    case Pattern::Opaque: return false;
  }
  return false;
}

struct Pass {
  const ir::Graph& g;
  const NodeGraph& ng;
  const std::vector<bool>& materialised;  // per value
  const NodeFacts& facts;
  Grouping gr;
  std::vector<Group> groups;

  Pass(const ir::Graph& graph, const NodeGraph& nodes, const std::vector<bool>& mat, const NodeFacts& f)
      : g(graph), ng(nodes), materialised(mat), facts(f), gr(nodes) {}

  // Rule (2): no value n reads from group k is materialised.
  bool reads_only_fusible(int32_t n, int32_t k) const {
    for (ir::ValueId in : g.node(ir::NodeId(n)).inputs) {
      int32_t p = ng.producer[static_cast<size_t>(in.v)];
      if (p >= 0 && gr.group_of(p) == k && materialised[static_cast<size_t>(in.v)]) return false;
    }
    return true;
  }

  std::optional<int32_t> choose_group(int32_t n) const {
    const ir::Primitive& p = g.node(ir::NodeId(n));
    Pattern pat = pattern_of(p);
    if (pat == Pattern::Opaque) return std::nullopt;
    std::vector<int32_t> prods = ng.producers[static_cast<size_t>(n)];
    if (pat == Pattern::Linear) {  // only into the views and permutations giving a conv its src
      int32_t src = ng.producer[static_cast<size_t>(p.inputs[0].v)];
      prods.assign(src >= 0 ? 1 : 0, src);
    }
    std::vector<int32_t> tried;
    for (auto it = prods.rbegin(); it != prods.rend(); ++it) {
      int32_t k = gr.group_of(*it);
      if (std::find(tried.begin(), tried.end(), k) != tried.end()) continue;
      tried.push_back(k);
      const Group& grp = groups[static_cast<size_t>(k)];
      if (grp.constant == facts.constant[static_cast<size_t>(n)] && rule_allows(g, ir::NodeId(n), grp, facts) &&
          reads_only_fusible(n, k) && gr.can_join(k, n))
        return k;
    }
    return std::nullopt;
  }

  void run() {
    for (int32_t n = 0; n < g.num_nodes(); ++n) {
      const ir::Primitive& p = g.node(ir::NodeId(n));
      Pattern pat = pattern_of(p);
      std::optional<int32_t> k = choose_group(n);
      auto at = static_cast<size_t>(n);
      bool movement = facts.movement[at];
      if (!k) {
        gr.start(n);
        groups.push_back({pat, pat == Pattern::Reduction ? row_shape(p) : std::nullopt, facts.constant[at], movement,
                          p.op == ir::PrimOp::Conv, false, {}, {}});
        k = static_cast<int32_t>(groups.size() - 1);
      } else {
        gr.join(n, *k);
        Group& grp = groups[static_cast<size_t>(*k)];
        if (grp.kind == Pattern::Injective && (pat == Pattern::Reduction || pat == Pattern::Linear)) {
          grp.kind = pat;  // the group's anchor
          grp.rows = pat == Pattern::Reduction ? row_shape(p) : std::nullopt;
          grp.conv = p.op == ir::PrimOp::Conv;
        }
        if (grp.kind == Pattern::Linear && movement) grp.trailing.push_back(ir::NodeId(n));
        grp.movement = grp.movement && movement;
      }
      Group& grp = groups[static_cast<size_t>(*k)];
      grp.writes_output = grp.writes_output || facts.writes_output[at];
      grp.tail = p.outputs.empty() ? ir::ValueId() : p.outputs[0];
    }
  }

  // Marks every value read both inside and outside its producer's group; true if any is new.
  bool mark_split_values(std::vector<bool>& mat) const {
    bool changed = false;
    for (size_t v = 0; v < ng.producer.size(); ++v) {
      if (ng.producer[v] < 0 || mat[v]) continue;
      int32_t k = gr.group_of(ng.producer[v]);
      bool inside = false, outside = false;
      for (int32_t c : ng.consumers[v]) (gr.group_of(c) == k ? inside : outside) = true;
      if (inside && outside) mat[v] = changed = true;
    }
    return changed;
  }
};

}  // namespace

std::vector<tile::Kernel> greedy_kernels(const ir::Graph& g) {
  NodeGraph ng(g);
  NodeFacts facts = node_facts(g);
  std::vector<bool> materialised(static_cast<size_t>(g.num_values()), false);
  for (int32_t round = 0;; ++round) {
    ORCHID_CHECK(round <= g.num_values()) << "greedy fusion did not settle";
    Pass pass(g, ng, materialised, facts);
    pass.run();
    if (!pass.mark_split_values(materialised)) return pass.gr.kernels();
  }
}

}  // namespace orchid::orchestrate::detail
