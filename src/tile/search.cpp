#include "tile/search.h"

#include <algorithm>
#include <queue>
#include <set>

#include "support/error.h"

namespace orchid::tile {

bool TileChoice::operator<(const TileChoice& o) const {
  if (estimate.seconds != o.estimate.seconds) return estimate.seconds < o.estimate.seconds;
  return tile < o.tile;
}

namespace {

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

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

}  // namespace

std::vector<TileChoice> search_tiles(const ir::Graph& g, const Kernel& k, size_t anchor,
                                     const std::function<CostConfig(const ir::Dims& tile)>& config,
                                     const target::Target& t, const TileSearchOptions& o) {
  ORCHID_CHECK(anchor < k.outputs.size()) << "anchor " << anchor << " of " << k.outputs.size() << " outputs";
  const ir::Dims& shape = g.type(k.outputs[anchor]).shape;
  if (ir::numel(shape) == 0) return {};
  const int64_t limit = o.footprint_limit > 0 ? o.footprint_limit : level_limit(t);
  const int64_t align = std::max<int64_t>(1, t.levels.back().transaction_bytes /
                                                 ir::dtype_bytes(g.type(k.outputs[anchor]).dtype));
  ir::Dims start(shape.size(), 1);
  if (!shape.empty()) start.back() = std::min(shape.back(), align);

  std::set<ir::Dims> seen{start};
  std::vector<TileChoice> kept;
  auto later = [](const TileChoice& a, const TileChoice& b) { return b < a; };  // the cheapest on top
  std::priority_queue<TileChoice, std::vector<TileChoice>, decltype(later)> frontier(later);
  auto price = [&](const ir::Dims& tile) { return TileChoice{tile, estimate_kernel(g, k, config(tile), t)}; };
  TileChoice first = price(start);
  frontier.push(first);
  size_t visits = 1;
  bool any_fits = first.estimate.footprint_bytes <= limit;
  if (any_fits) kept.push_back(first);
  while (!frontier.empty() && visits < o.max_visits) {
    TileChoice best = frontier.top();
    frontier.pop();
    for (const ir::Dims& next : expansions(best.tile, shape, align)) {
      if (!seen.insert(next).second || visits >= o.max_visits) continue;
      TileChoice c = price(next);
      ++visits;
      if (c.estimate.footprint_bytes > limit) continue;
      kept.push_back(c);
      frontier.push(c);
      any_fits = true;
    }
  }
  if (!any_fits) return {first};
  std::sort(kept.begin(), kept.end());
  if (kept.size() > o.top_k) kept.resize(o.top_k);
  return kept;
}

}  // namespace orchid::tile
