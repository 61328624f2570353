#include "support/union_find.h"
#include "rewrite/search.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>

#include "ir/canonical.h"
#include "ir/dce.h"
#include "ir/subgraph.h"
#include "orchestrate/optimal.h"
#include "rewrite/edit.h"
#include "rewrite/fold_constants.h"
#include "rewrite/patterns.h"
#include "rewrite/rules.h"
#include "support/error.h"

namespace orchid::rewrite {

namespace {

using ir::Graph;
using ir::NodeId;
using ir::ValueId;

// Nodes that lie on a path between two nodes of `set` (set included): convex.
std::set<int32_t> convex_closure(const Graph& g, const std::set<int32_t>& set, const Readers& readers) {
  if (set.empty()) return set;
  int32_t lo = *set.begin(), hi = *set.rbegin();
  std::vector<bool> down(static_cast<size_t>(g.num_nodes()), false), up(down.size(), false);
  for (int32_t n = lo; n <= hi; ++n) {  // reachable from the set, in topological order
    bool d = set.count(n) > 0;
    for (ValueId i : g.node(NodeId(n)).inputs)
      if (std::optional<NodeId> p = producer(g, i); p && p->v >= lo && down[static_cast<size_t>(p->v)]) d = true;
    down[static_cast<size_t>(n)] = d;
  }
  for (int32_t n = hi; n >= lo; --n) {  // reaching the set
    bool u = set.count(n) > 0;
    for (ValueId o : g.node(NodeId(n)).outputs)
      for (NodeId r : readers.of[static_cast<size_t>(o.v)])
        if (r.v <= hi && up[static_cast<size_t>(r.v)]) u = true;
    up[static_cast<size_t>(n)] = u;
  }
  std::set<int32_t> out;
  for (int32_t n = lo; n <= hi; ++n)
    if (down[static_cast<size_t>(n)] && up[static_cast<size_t>(n)]) out.insert(n);
  return out;
}

std::set<int32_t> with_neighbours(const Graph& g, std::set<int32_t> nodes, int radius, const Readers& readers) {
  for (int step = 0; step < radius; ++step) {
    std::set<int32_t> next = nodes;
    for (int32_t n : nodes) {
      for (ValueId i : g.node(NodeId(n)).inputs)
        if (std::optional<NodeId> p = producer(g, i)) next.insert(p->v);
      for (ValueId o : g.node(NodeId(n)).outputs)
        for (NodeId r : readers.of[static_cast<size_t>(o.v)]) next.insert(r.v);
    }
    nodes = std::move(next);
  }
  return nodes;
}

// The windows of step 2: disjoint convex node sets, in order of their first node.
std::vector<std::set<int32_t>> windows_of(const Graph& g, const std::vector<Site>& sites, const SearchOptions& o) {
  Readers readers(g);
  UnionFind uf(sites.size());
  std::map<int32_t, size_t> site_of;
  for (size_t s = 0; s < sites.size(); ++s)
    for (NodeId n : sites[s].nodes) {
      auto [it, fresh] = site_of.emplace(n.v, s);
      if (!fresh) uf.join(s, it->second);
    }
  for (const auto& [n, s] : site_of)
    for (ValueId i : g.node(NodeId(n)).inputs)
      if (std::optional<NodeId> p = producer(g, i); p && site_of.count(p->v)) uf.join(s, site_of[p->v]);
  std::map<size_t, std::set<int32_t>> clusters;
  for (const auto& [n, s] : site_of) clusters[uf.find(s)].insert(n);
  std::vector<std::set<int32_t>> windows;
  for (const auto& [root, nodes] : clusters)
    windows.push_back(convex_closure(g, with_neighbours(g, nodes, o.radius, readers), readers));
  for (bool joined = true; joined;) {  // join overlapping windows
    joined = false;
    for (size_t a = 0; a < windows.size() && !joined; ++a)
      for (size_t b = a + 1; b < windows.size() && !joined; ++b) {
        std::vector<int32_t> common;
        std::set_intersection(windows[a].begin(), windows[a].end(), windows[b].begin(), windows[b].end(),
                              std::back_inserter(common));
        if (common.empty()) continue;
        windows[a].insert(windows[b].begin(), windows[b].end());
        windows[a] = convex_closure(g, windows[a], readers);
        windows.erase(windows.begin() + static_cast<std::ptrdiff_t>(b));
        joined = true;
      }
  }
  std::sort(windows.begin(), windows.end(), [](const auto& x, const auto& y) { return *x.begin() < *y.begin(); });
  return windows;
}

Graph extract_window(const Graph& g, const std::set<int32_t>& nodes, const Readers& readers) {
  std::vector<bool> inside(static_cast<size_t>(g.num_nodes()), false);
  for (int32_t n : nodes) inside[static_cast<size_t>(n)] = true;
  std::set<int32_t> ins, outs;
  for (int32_t n : nodes) {
    for (ValueId i : g.node(NodeId(n)).inputs) {
      std::optional<NodeId> p = producer(g, i);
      if (g.value(i).origin != ir::ValueOrigin::Constant && (!p || !inside[static_cast<size_t>(p->v)])) ins.insert(i.v);
    }
    for (ValueId o : g.node(NodeId(n)).outputs) {
      bool read_outside = readers.output[static_cast<size_t>(o.v)];
      for (NodeId r : readers.of[static_cast<size_t>(o.v)]) read_outside |= !inside[static_cast<size_t>(r.v)];
      if (read_outside) outs.insert(o.v);
    }
  }
  std::vector<NodeId> ns;
  for (int32_t n : nodes) ns.push_back(NodeId(n));
  std::vector<ValueId> in_ids, out_ids;
  for (int32_t v : ins) in_ids.push_back(ValueId(v));
  for (int32_t v : outs) out_ids.push_back(ValueId(v));
  return ir::extract_subgraph_with_constants(g, ns, in_ids, out_ids);
}

// Adds the primitives of `after` that `before` (the window as extracted from g) lacks to the
// edit of g, and redirects the readers of the values they replace.
void splice(Edit& e, const Graph& g, const Graph& before, const Graph& after, const ChangedRegions& regions) {
  std::set<std::string> changed_after, exports;
  for (const ir::Primitive& p : regions.after.nodes())
    for (ValueId o : p.outputs) changed_after.insert(regions.after.value(o).name);
  for (ValueId o : regions.before.outputs()) exports.insert(regions.before.value(o).name);
  std::map<int32_t, ValueId> map;  // value of `after` -> value of the edit
  auto value_in_g = [&](ValueId v) -> ValueId {
    if (auto it = map.find(v.v); it != map.end()) return it->second;
    const ir::Value& x = after.value(v);
    std::optional<ValueId> old = before.find_value(x.name);
    if (x.origin == ir::ValueOrigin::Constant && !(old && before.value(*old).origin == ir::ValueOrigin::Constant)) {
      ValueId c = e.add_constant(x.name, after.constant(v));
      map[v.v] = c;
      return c;
    }
    std::optional<ValueId> in_g = g.find_value(x.name);
    ORCHID_CHECK(in_g) << "splicing a rewrite: " << x.name << " is not in the graph";
    return *in_g;
  };
  for (const ir::Primitive& p : after.nodes()) {
    if (!changed_after.count(after.value(p.outputs[0]).name)) continue;
    ir::Primitive q = p;
    for (ValueId& i : q.inputs) i = value_in_g(i);
    std::vector<ir::TensorType> types;
    std::vector<std::string> names;
    for (ValueId o : p.outputs) {
      types.push_back(after.type(o));
      names.push_back(after.value(o).name);
    }
    std::vector<ValueId> added = e.add(std::move(q), types, names);
    for (size_t k = 0; k < added.size(); ++k) map[p.outputs[k].v] = added[k];
  }
  for (const std::string& name : exports) e.replace(*g.find_value(name), map.at(after.find_value(name)->v));
}

std::string where_of(const Graph& window, const ChangedRegions& r) {
  for (const ir::Primitive& p : r.before.nodes())
    if (!p.name.empty()) return p.name;
  return window.value(window.outputs()[0]).name;
}

}  // namespace

GraphCost orchestrated_cost(const target::Target& t, orchestrate::Strategy s) {
  return [t, s](const Graph& g) {
    orchestrate::CostOracle price = orchestrate::roofline_cost(g, t);
    if (s == orchestrate::Strategy::Optimal) return orchestrate::orchestrate_optimal(g, price).cost;
    double total = 0;
    for (const tile::Kernel& k : orchestrate::orchestrate(g, s)) total += price(k);
    return total;
  };
}

std::vector<Variant> search_window(const Graph& window, const GraphCost& cost, const SearchOptions& o) {
  std::vector<Variant> all = {{window, cost(window), {}}};
  std::set<std::string> seen = {ir::canonical_signature(window).text};
  std::vector<size_t> frontier = {0};
  double best = all[0].cost;
  for (int step = 0; step < o.max_steps && !frontier.empty(); ++step) {
    std::vector<Variant> next;
    for (size_t f : frontier) {
      const Graph& from = all[f].graph;
      for (const Site& s : find_sites(from)) {
        // Weights a rewrite joins or moves are folded at once, as the clean-up will.
        Graph g = apply_site(from, s);
        if (fold_constants(g)) g = ir::eliminate_dead(g);
        if (!seen.insert(ir::canonical_signature(g).text).second) continue;
        std::vector<std::string> rules = all[f].rules;
        rules.emplace_back(rule_table()[static_cast<size_t>(s.rule)].name);
        double c = cost(g);
        next.push_back({std::move(g), c, std::move(rules)});
      }
    }
    std::stable_sort(next.begin(), next.end(), [](const Variant& a, const Variant& b) { return a.cost < b.cost; });
    frontier.clear();
    for (Variant& v : next) {
      if (static_cast<int>(frontier.size()) >= o.beam || v.cost > o.slack * best) break;
      best = std::min(best, v.cost);
      frontier.push_back(all.size());
      all.push_back(std::move(v));
    }
  }
  std::stable_sort(all.begin(), all.end(), [](const Variant& a, const Variant& b) { return a.cost < b.cost; });
  return all;
}

RewriteResult rewrite_graph(const Graph& g, const GraphCost& cost, const SearchOptions& o) {
  auto start = std::chrono::steady_clock::now();
  RewriteResult result;
  std::vector<Site> sites = find_sites(g);
  result.sites = static_cast<int32_t>(sites.size());
  Readers readers(g);
  struct Accepted {
    Graph window, best;
    ChangedRegions regions;
  };
  std::vector<Accepted> accepted;
  std::optional<Edit> edit;  // made at the first accepted window (it copies the graph)
  for (const std::set<int32_t>& nodes : windows_of(g, sites, o)) {
    if (static_cast<int>(nodes.size()) > o.max_window_nodes) continue;
    ++result.windows;
    Graph window = extract_window(g, nodes, readers);
    std::vector<Variant> variants = search_window(window, cost, o);
    result.variants += static_cast<int32_t>(variants.size());
    const Variant& best = variants[0];
    double before = std::find_if(variants.begin(), variants.end(), [](const Variant& v) { return v.rules.empty(); })->cost;
    auto size = static_cast<int32_t>(nodes.size());
    if (best.rules.empty() || best.cost > (1 - o.min_gain) * before) {
      const Variant& runner_up = best.rules.empty() && variants.size() > 1 ? variants[1] : best;
      if (!runner_up.rules.empty())
        result.kept.push_back({runner_up.rules, where_of(window, changed_regions(window, runner_up.graph)), size, before,
                               runner_up.cost, false, "not cheaper"});
      continue;
    }
    ChangedRegions regions = changed_regions(window, best.graph);
    RewriteCheck check = check_rewrite(window, best.graph, regions, o.check);
    AppliedRewrite a{best.rules, where_of(window, regions), size, before, best.cost, check.proven, check.verdict};
    if (!check.accepted) {
      result.rejected.push_back(std::move(a));
      continue;
    }
    if (!edit) edit.emplace(g);
    splice(*edit, g, window, best.graph, regions);
    // Disjoint windows can still depend on each other both ways once rewritten (a merged
    // product reading what the other window computes, and the reverse): then this window is
    // left out, and the edit made again from the others (rare, so no copy is kept for it).
    if (!edit->acyclic()) {
      a.verdict = "rejected: with the rewrites of earlier windows it would make a cycle";
      result.rejected.push_back(std::move(a));
      edit.emplace(g);
      for (const Accepted& w : accepted) splice(*edit, g, w.window, w.best, w.regions);
      continue;
    }
    accepted.push_back({std::move(window), best.graph, std::move(regions)});
    result.applied.push_back(std::move(a));
  }
  result.graph = accepted.empty() ? g : edit->finish("after rewriting");
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

std::vector<std::string> RewriteResult::summary() const {
  std::vector<std::string> lines;
  std::ostringstream head;
  head << sites << " rewrite sites, " << windows << " windows, " << variants << " variants priced, "
       << applied.size() << " rewritten, " << rejected.size() << " rejected, " << seconds << " s";
  lines.push_back(head.str());
  auto line = [](const char* what, const AppliedRewrite& a) {
    std::ostringstream s;
    s << what << " at " << a.where << " (" << a.window_nodes << " primitives): ";
    for (size_t k = 0; k < a.rules.size(); ++k) s << (k ? ", " : "") << a.rules[k];
    s << "; orchestrated cost " << a.cost_before * 1e6 << " -> " << a.cost_after * 1e6 << " us; " << a.verdict;
    return s.str();
  };
  for (const AppliedRewrite& a : applied) lines.push_back(line("rewrote", a));
  for (const AppliedRewrite& a : rejected) lines.push_back(line("rejected", a));
  for (const AppliedRewrite& a : kept) lines.push_back(line("kept", a));
  return lines;
}

}  // namespace orchid::rewrite
