// Partitioning into runs of nodes (partition.h).
#include "orchestrate/partition.h"

#include <algorithm>
#include <utility>

#include "orchestrate/states.h"
#include "support/error.h"

namespace orchid::orchestrate {

namespace {

// Per value: its producer and its last reader (node ids; -1 where none).
struct Liveness {
  std::vector<int32_t> producer;
  std::vector<int32_t> last_reader;
  // Per position i in [0, n]: values with producer < i <= last reader, plus kInsideKept per
  // keep_whole range around it.
  std::vector<int64_t> crossing;

  Liveness(const ir::Graph& g, const std::vector<std::pair<int32_t, int32_t>>& keep_whole)
      : producer(static_cast<size_t>(g.num_values()), -1),
        last_reader(static_cast<size_t>(g.num_values()), -1),
        crossing(static_cast<size_t>(g.num_nodes()) + 2, 0) {
    for (int32_t n = 0; n < g.num_nodes(); ++n) {
      for (ir::ValueId v : g.node(ir::NodeId(n)).outputs) producer[static_cast<size_t>(v.v)] = n;
      for (ir::ValueId v : g.node(ir::NodeId(n)).inputs) last_reader[static_cast<size_t>(v.v)] = n;
    }
    std::vector<int64_t> delta(crossing.size(), 0);
    for (size_t v = 0; v < producer.size(); ++v) {
      if (producer[v] < 0 || last_reader[v] <= producer[v]) continue;
      ++delta[static_cast<size_t>(producer[v]) + 1];
      --delta[static_cast<size_t>(last_reader[v]) + 1];
    }
    int64_t live = 0;
    for (size_t i = 0; i < crossing.size(); ++i) crossing[i] = live += delta[i];
    for (auto [first, last] : keep_whole)
      for (int32_t i = std::max(first + 1, 0); i <= last && i < g.num_nodes(); ++i)
        crossing[static_cast<size_t>(i)] += kInsideKept;
  }
  static constexpr int64_t kInsideKept = int64_t{1} << 32;
};

// Cut positions inside [a, b) (excluding a and b) for runs of at most `len` nodes.
std::vector<int32_t> best_cuts(const Liveness& lv, int32_t a, int32_t b, int32_t len) {
  using Score = std::pair<int64_t, int64_t>;  // crossing values, runs
  size_t n = static_cast<size_t>(b - a);
  std::vector<Score> best(n + 1, {INT64_MAX, INT64_MAX});
  std::vector<int32_t> from(n + 1, -1);
  best[0] = {0, 0};
  for (int32_t j = a + 1; j <= b; ++j) {
    for (int32_t i = std::max(a, j - len); i < j; ++i) {
      Score s = best[static_cast<size_t>(i - a)];
      s.first += i > a ? lv.crossing[static_cast<size_t>(i)] : 0;
      s.second += 1;
      if (s < best[static_cast<size_t>(j - a)]) best[static_cast<size_t>(j - a)] = s, from[static_cast<size_t>(j - a)] = i;
    }
  }
  std::vector<int32_t> cuts;
  for (int32_t j = from[n]; j > a; j = from[static_cast<size_t>(j - a)]) cuts.push_back(j);
  std::reverse(cuts.begin(), cuts.end());
  return cuts;
}

std::vector<ir::NodeId> run_nodes(int32_t a, int32_t b) {
  std::vector<ir::NodeId> nodes;
  for (int32_t n = a; n < b; ++n) nodes.push_back(ir::NodeId(n));
  return nodes;
}

// Appends the runs of [a, b) to `runs`, splitting where states exceed the budget.
void split(const ir::Graph& g, const Liveness& lv, int32_t a, int32_t b, int32_t len, const PartitionOptions& o,
           std::vector<std::pair<int32_t, int32_t>>& runs) {
  std::vector<int32_t> bounds = {a};
  for (int32_t c : best_cuts(lv, a, b, len)) bounds.push_back(c);
  bounds.push_back(b);
  for (size_t k = 0; k + 1 < bounds.size(); ++k) {
    int32_t x = bounds[k], y = bounds[k + 1];
    bool fits = y - x == 1 || execution_states(local_graph(g, run_nodes(x, y)), o.max_states).complete;
    if (fits)
      runs.push_back({x, y});
    else
      split(g, lv, x, y, std::max(1, (y - x) / 2), o, runs);
  }
}

}  // namespace

Partition partition_graph(const ir::Graph& g, const PartitionOptions& o) {
  ORCHID_CHECK(o.max_nodes >= 1 && o.max_nodes <= kMaxSubgraphNodes)
      << "subgraphs of at most " << o.max_nodes << " nodes (1 to " << kMaxSubgraphNodes << ")";
  Partition part;
  if (g.num_nodes() == 0) return part;
  Liveness lv(g, o.keep_whole);
  std::vector<std::pair<int32_t, int32_t>> runs;
  split(g, lv, 0, g.num_nodes(), o.max_nodes, o, runs);
  std::vector<bool> graph_output(static_cast<size_t>(g.num_values()), false);
  for (ir::ValueId v : g.outputs()) graph_output[static_cast<size_t>(v.v)] = true;
  std::vector<int32_t> starts;
  for (auto [a, b] : runs) {
    Subgraph sg{run_nodes(a, b), {}};
    for (int32_t n = a; n < b; ++n)
      for (ir::ValueId v : g.node(ir::NodeId(n)).outputs)
        if (graph_output[static_cast<size_t>(v.v)] || lv.last_reader[static_cast<size_t>(v.v)] >= b) sg.required.push_back(v);
    std::sort(sg.required.begin(), sg.required.end());
    part.subgraphs.push_back(std::move(sg));
    if (a > 0) part.cuts.push_back({ir::NodeId(a), {}}), starts.push_back(a);
  }
  // A value crosses every cut in (producer, last reader].
  for (int32_t v = 0; v < g.num_values(); ++v) {
    int32_t p = lv.producer[static_cast<size_t>(v)];
    if (p < 0) continue;
    auto it = std::upper_bound(starts.begin(), starts.end(), p);
    for (; it != starts.end() && *it <= lv.last_reader[static_cast<size_t>(v)]; ++it)
      part.cuts[static_cast<size_t>(it - starts.begin())].values.push_back(ir::ValueId(v));
  }
  return part;
}

}  // namespace orchid::orchestrate
