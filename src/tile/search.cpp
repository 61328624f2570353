#include "tile/search.h"

#include <algorithm>
#include <map>
#include <queue>
#include <set>
#include <tuple>

#include "support/error.h"

namespace orchid::tile {

bool TileChoice::operator<(const TileChoice& o) const {
  if (estimate.seconds != o.estimate.seconds) return estimate.seconds < o.estimate.seconds;
  return tile < o.tile;
}

namespace {

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }
int64_t ceil_div(int64_t x, int64_t m) { return (x + m - 1) / m; }

// The tiles one step larger than `tile` along each dim: doubled (the innermost dim in whole
// transactions), and the whole dim.
std::vector<ir::Dims> expansions(const ir::Dims& tile, const ir::Dims& shape, int64_t align) {
  std::vector<ir::Dims> out;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (tile[d] >= shape[d]) continue;
    int64_t twice = tile[d] * 2;
    if (d + 1 == shape.size()) twice = round_up(twice, align);
    for (int64_t next : {std::min(twice, shape[d]), shape[d]}) {
      ir::Dims t = tile;
      t[d] = next;
      out.push_back(t);
    }
  }
  return out;
}

int64_t level_limit(const target::Target& t) {
  ORCHID_CHECK(t.levels.size() >= 3) << "target '" << t.name << "' has no cache level to tile for";
  return core_share(t, t.levels.size() - 2);
}

// Elements of the anchor's dtype in one transaction of `level`.
int64_t align_of(const ir::Graph& g, const Kernel& k, size_t anchor, const target::Target& t, size_t level) {
  return std::max<int64_t>(1, t.levels[level].transaction_bytes / ir::dtype_bytes(g.type(k.outputs[anchor]).dtype));
}

// The smallest aligned tile within `bound`: 1 along every dim, one transaction (or the whole
// dim) along the innermost.
ir::Dims start_tile(const ir::Dims& bound, int64_t align) {
  ir::Dims start(bound.size(), 1);
  if (!bound.empty()) start.back() = std::min(bound.back(), align);
  return start;
}

using Price = std::function<std::optional<Estimate>(const ir::Dims&)>;

struct Expansion {
  std::optional<TileChoice> first;  // the start, priced (nullopt: not a candidate)
  std::vector<TileChoice> kept;     // every tile visited whose footprint fits, the start included
};

// Roller-style best-first expansion from the start within `bound`: the cheapest tile found so
// far is expanded along each dim; a tile over `limit` (of `footprint`) is dropped, as is one
// the pricing refuses. The start is expanded even when over the limit.
Expansion expand(const ir::Dims& bound, int64_t align, int64_t limit, size_t max_visits, const Price& price,
                 int64_t Estimate::*footprint) {
  Expansion out;
  const ir::Dims start = start_tile(bound, align);
  std::optional<Estimate> e = price(start);
  if (!e) return out;
  out.first = TileChoice{start, *e};
  std::set<ir::Dims> seen{start};
  auto later = [](const TileChoice& a, const TileChoice& b) { return b < a; };  // the cheapest on top
  std::priority_queue<TileChoice, std::vector<TileChoice>, decltype(later)> frontier(later);
  frontier.push(*out.first);
  size_t visits = 1;
  if ((*e).*footprint <= limit) out.kept.push_back(*out.first);
  while (!frontier.empty() && visits < max_visits) {
    TileChoice best = frontier.top();
    frontier.pop();
    for (const ir::Dims& next : expansions(best.tile, bound, align)) {
      if (!seen.insert(next).second || visits >= max_visits) continue;
      std::optional<Estimate> c = price(next);
      ++visits;
      if (!c || (*c).*footprint > limit) continue;
      out.kept.push_back({next, *c});
      frontier.push(out.kept.back());
    }
  }
  std::sort(out.kept.begin(), out.kept.end());
  return out;
}

// The sub-tile an inner level cuts a task's tile into: `ratio` of them along each dim.
ir::Dims cut_sub_tile(const ir::Dims& tile, const InnerLevel& in) {
  ir::Dims sub = tile;
  for (size_t d = 0; d < sub.size() && d < in.ratio.size(); ++d)
    sub[d] = ceil_div(tile[d], std::max<int64_t>(1, in.ratio[d]));
  return sub;
}

}  // namespace

std::vector<TileChoice> search_tiles(const ir::Graph& g, const Kernel& k, size_t anchor,
                                     const std::function<CostConfig(const ir::Dims& tile)>& config,
                                     const target::Target& t, const TileSearchOptions& o) {
  ORCHID_CHECK(anchor < k.outputs.size()) << "anchor " << anchor << " of " << k.outputs.size() << " outputs";
  const ir::Dims& shape = g.type(k.outputs[anchor]).shape;
  if (ir::numel(shape) == 0) return {};
  const int64_t limit = o.footprint_limit > 0 ? o.footprint_limit : level_limit(t);
  Price price = [&](const ir::Dims& tile) -> std::optional<Estimate> { return estimate_kernel(g, k, config(tile), t); };
  Expansion x = expand(shape, align_of(g, k, anchor, t, t.levels.size() - 1), limit, o.max_visits, price,
                       &Estimate::footprint_bytes);
  if (x.kept.empty()) return {*x.first};
  if (x.kept.size() > o.top_k) x.kept.resize(o.top_k);
  return x.kept;
}

bool HierarchicalTile::operator<(const HierarchicalTile& o) const {
  if (estimate.seconds != o.estimate.seconds) return estimate.seconds < o.estimate.seconds;
  return std::tie(tile, sub, split) < std::tie(o.tile, o.sub, o.split);
}

std::vector<HierarchicalTile> search_hierarchy(const ir::Graph& g, const Kernel& k, size_t anchor,
                                               const HierarchicalConfig& config, const target::Target& t,
                                               const HierarchySearchOptions& o) {
  auto one_level = [&](const ir::Dims& tile) {
    std::optional<CostConfig> c = config(tile, {}, 0);
    ORCHID_CHECK(c.has_value()) << "no one-level cost config for tile " << ir::dims_str(tile);
    return *c;
  };
  std::vector<HierarchicalTile> out;
  for (const TileChoice& c : search_tiles(g, k, anchor, one_level, t, o.outer)) out.push_back({c.tile, {}, 0, c.estimate});
  const size_t outer = out.size();
  const int64_t limit = o.inner_footprint_limit > 0 ? o.inner_footprint_limit : core_share(t, 1);
  const int64_t align = align_of(g, k, anchor, t, 1);
  for (size_t i = 0; i < outer; ++i) {
    const ir::Dims tile = out[i].tile;
    std::set<std::set<ir::NodeId>> inner_sets;  // splits computing the same nodes per sub-tile are one choice
    const int splits = static_cast<int>(k.nodes.size());
    for (int split = 0; split < splits && inner_sets.size() < o.inner_max_splits; ++split) {
      const ir::Dims start = start_tile(tile, align);
      const std::optional<CostConfig> first = config(tile, start, split);
      if (!first || !first->inner || !inner_sets.insert(first->inner->nodes).second) continue;
      std::map<ir::Dims, ir::Dims> cut;  // each sub-tile priced: the sub-tile the config cuts
      Price price = [&](const ir::Dims& sub) -> std::optional<Estimate> {
        if (sub == tile) return std::nullopt;  // one sub-tile per task: one level
        std::optional<CostConfig> c = sub == start ? first : config(tile, sub, split);
        if (!c || !c->inner) return std::nullopt;
        cut[sub] = cut_sub_tile(tile, *c->inner);
        return estimate_kernel(g, k, *c, t);
      };
      Expansion x = expand(tile, align, limit, o.inner_max_visits, price, &Estimate::sub_footprint_bytes);
      std::set<ir::Dims> found;
      for (const TileChoice& c : x.kept) {
        if (found.size() >= o.inner_top_k) break;
        const ir::Dims& sub = cut.at(c.tile);
        if (found.insert(sub).second) out.push_back({tile, sub, split, c.estimate});
      }
    }
  }
  std::sort(out.begin(), out.end());
  if (out.size() > o.top_k) out.resize(o.top_k);
  return out;
}

}  // namespace orchid::tile
