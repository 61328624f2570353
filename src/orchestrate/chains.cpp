// Candidates across linear primitives (chains.h).
#include "orchestrate/chains.h"

#include <algorithm>
#include <optional>
#include <set>

namespace orchid::orchestrate {

namespace {

bool is_matmul(const ir::Primitive& p) { return p.op == ir::PrimOp::MatMul; }

// The producer of v, where a node produces it.
std::optional<ir::NodeId> producer(const ir::Graph& g, ir::ValueId v) {
  const ir::Value& val = g.value(v);
  if (val.origin != ir::ValueOrigin::Node) return std::nullopt;
  return val.node;
}

// X's producers back through non-linear, non-opaque primitives, where they reach exactly one
// linear primitive, a MatMul: that product, and as the middle those of them that depend on its
// result, where X is one of them and they include a reduce.
struct Middle {
  std::set<int32_t> nodes;
  ir::NodeId product;
};
std::optional<Middle> middle_of(const ir::Graph& g, ir::ValueId x) {
  std::set<int32_t> reached, linear;
  std::vector<ir::ValueId> work{x};
  while (!work.empty()) {
    ir::ValueId v = work.back();
    work.pop_back();
    std::optional<ir::NodeId> p = producer(g, v);
    if (!p || reached.count(p->v) || linear.count(p->v)) continue;
    const ir::Primitive& prim = g.node(*p);
    switch (prim.kind()) {
      case ir::PrimKind::Opaque: return std::nullopt;
      case ir::PrimKind::Linear:
        if (!is_matmul(prim)) return std::nullopt;
        linear.insert(p->v);
        continue;
      default: break;
    }
    reached.insert(p->v);
    work.insert(work.end(), prim.inputs.begin(), prim.inputs.end());
  }
  if (linear.size() != 1) return std::nullopt;
  Middle m{{}, ir::NodeId(*linear.begin())};
  // Only the primitives that depend on A's result belong to the chain: the others' results
  // (a mask made from a graph input, which every layer reads) are read as the kernel's
  // inputs. Taken in, they would join every layer's chain to the layers before it.
  for (int32_t n : reached)  // increasing ids: a topological order
    for (ir::ValueId v : g.node(ir::NodeId(n)).inputs)
      if (std::optional<ir::NodeId> p = producer(g, v); p && (*p == m.product || m.nodes.count(p->v))) {
        m.nodes.insert(n);
        break;
      }
  std::optional<ir::NodeId> px = producer(g, x);
  if (!px || !m.nodes.count(px->v)) return std::nullopt;
  if (!std::any_of(m.nodes.begin(), m.nodes.end(),
                   [&](int32_t n) { return g.node(ir::NodeId(n)).kind() == ir::PrimKind::Reduce; }))
    return std::nullopt;
  return m;
}

// The elementwise primitives after `last` that read its result (or the previous one's) as
// its only reader, up to `max` of them.
std::vector<ir::NodeId> epilogue(const ir::Graph& g, const std::vector<std::vector<ir::NodeId>>& users,
                                 const std::vector<bool>& graph_output, ir::NodeId last, int max) {
  std::vector<ir::NodeId> out;
  for (int i = 0; i < max; ++i) {
    const ir::Primitive& p = g.node(last);
    if (p.outputs.size() != 1) break;
    ir::ValueId v = p.outputs[0];
    const std::vector<ir::NodeId>& readers = users[static_cast<size_t>(v.v)];
    if (graph_output[static_cast<size_t>(v.v)] || readers.size() != 1) break;
    ir::NodeId next = readers[0];
    if (g.node(next).kind() != ir::PrimKind::Elementwise) break;
    out.push_back(next);
    last = next;
  }
  return out;
}

// The nodes on paths from one of `nodes` to another (the sums a division after P V reads),
// added where none is linear or opaque: false otherwise. Nodes are ids in a topological order,
// so the paths lie between the first and the last.
bool close_paths(const ir::Graph& g, std::set<int32_t>& nodes) {
  int32_t first = *nodes.begin(), last = *nodes.rbegin();
  size_t span = static_cast<size_t>(last - first + 1);
  std::vector<bool> from(span, false), to(span, false);  // reached from the kernel; reaching it
  for (int32_t n = first; n <= last; ++n) {
    bool in = nodes.count(n) > 0;
    for (ir::ValueId v : g.node(ir::NodeId(n)).inputs) {
      std::optional<ir::NodeId> p = producer(g, v);
      if (p && p->v >= first && (nodes.count(p->v) || from[static_cast<size_t>(p->v - first)])) from[static_cast<size_t>(n - first)] = !in;
    }
  }
  for (int32_t n = last; n >= first; --n) {
    if (!nodes.count(n) && !to[static_cast<size_t>(n - first)]) continue;
    for (ir::ValueId v : g.node(ir::NodeId(n)).inputs)
      if (std::optional<ir::NodeId> p = producer(g, v); p && p->v >= first && !nodes.count(p->v))
        to[static_cast<size_t>(p->v - first)] = true;
  }
  std::vector<int32_t> between;
  for (int32_t n = first; n <= last; ++n)
    if (from[static_cast<size_t>(n - first)] && to[static_cast<size_t>(n - first)]) between.push_back(n);
  for (int32_t n : between) {
    ir::PrimKind k = g.node(ir::NodeId(n)).kind();
    if (k == ir::PrimKind::Linear || k == ir::PrimKind::Opaque) return false;
  }
  nodes.insert(between.begin(), between.end());
  return true;
}

// The values the kernel's nodes produce that a node outside it reads or the graph outputs.
std::vector<ir::ValueId> written(const ir::Graph& g, const std::vector<std::vector<ir::NodeId>>& users,
                                 const std::vector<bool>& graph_output, const std::set<int32_t>& nodes) {
  std::vector<ir::ValueId> out;
  for (int32_t n : nodes)
    for (ir::ValueId v : g.node(ir::NodeId(n)).outputs) {
      bool needed = graph_output[static_cast<size_t>(v.v)];
      for (ir::NodeId r : users[static_cast<size_t>(v.v)]) needed |= !nodes.count(r.v);
      if (needed) out.push_back(v);
    }
  return out;
}

}  // namespace

std::vector<tile::Kernel> linear_chains(const ir::Graph& g, const ChainOptions& o) {
  std::vector<std::vector<ir::NodeId>> users = g.users();
  std::vector<bool> graph_output(static_cast<size_t>(g.num_values()), false);
  for (ir::ValueId v : g.outputs()) graph_output[static_cast<size_t>(v.v)] = true;
  std::vector<tile::Kernel> out;
  std::set<std::vector<int32_t>> seen;
  for (int32_t b = 0; b < g.num_nodes(); ++b) {
    const ir::Primitive& prim = g.node(ir::NodeId(b));
    if (prim.kind() != ir::PrimKind::Linear || !is_matmul(prim)) continue;
    for (ir::ValueId x : prim.inputs) {
      std::optional<Middle> m = middle_of(g, x);
      if (!m) continue;
      std::set<int32_t> nodes = m->nodes;
      nodes.insert(m->product.v);
      nodes.insert(b);
      for (ir::NodeId e : epilogue(g, users, graph_output, ir::NodeId(b), o.max_epilogue)) nodes.insert(e.v);
      // Closed over its paths, the set is convex.
      if (!close_paths(g, nodes) || static_cast<int>(nodes.size()) > o.max_nodes) continue;
      tile::Kernel k;
      for (int32_t n : nodes) k.nodes.push_back(ir::NodeId(n));
      k.outputs = written(g, users, graph_output, nodes);
      std::vector<int32_t> key(nodes.begin(), nodes.end());
      if (k.outputs.empty() || !seen.insert(key).second) continue;
      out.push_back(tile::sorted(std::move(k)));
    }
  }
  return out;
}

}  // namespace orchid::orchestrate
