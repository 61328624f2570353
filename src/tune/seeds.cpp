#include "tune/seeds.h"

#include "codegen/cpu/lower.h"
#include "tune/estimate.h"

namespace orchid::tune {

namespace {

codegen::cpu::Schedule with_tiles(codegen::cpu::Schedule s, const ir::Dims& tile, const ir::Dims& sub, int split) {
  s.tile = tile;
  s.inner = sub;
  s.split = sub.empty() ? 0 : split;
  return s;
}

}  // namespace

std::vector<codegen::cpu::Schedule> tile_search_seeds(const ir::Graph& g, const tile::Kernel& k,
                                                      const codegen::cpu::Schedule& base, const target::Target& t,
                                                      const tile::HierarchySearchOptions& o) {
  if (t.levels.size() < 3) return {};  // no cache level to tile for
  auto config = [&](const ir::Dims& tile, const ir::Dims& sub, int split) -> std::optional<tile::CostConfig> {
    tile::CostConfig c = cpu_cost_config(g, k, with_tiles(base, tile, sub, split));
    if (!sub.empty() && !c.inner) return std::nullopt;  // the lowering keeps it one level
    return c;
  };
  std::vector<codegen::cpu::Schedule> out;
  for (const tile::HierarchicalTile& h : tile::search_hierarchy(g, k, codegen::cpu::anchor_output(g, k), config, t, o)) {
    codegen::cpu::Schedule s = with_tiles(base, h.tile, h.sub, h.split);
    // The search priced it through the outline; the full lowering also checks that every
    // sub-tile reads inside its task's regions, and would run the rest as one level.
    if (!h.sub.empty() && !codegen::cpu::lower_kernel(g, k, s).inner) continue;
    out.push_back(s);
  }
  return out;
}

}  // namespace orchid::tune
