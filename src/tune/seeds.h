// The tuner's seeds from the tile-graph model (Welder's hierarchical tiling, tile/search.h):
// the cheapest one- and two-level tilings of a kernel the analytic model finds, as CPU
// schedules. Exploration starts from them beside the default schedule.
#pragma once

#include <vector>

#include "codegen/cpu/schedule.h"
#include "ir/graph.h"
#include "target/target.h"
#include "tile/kernel.h"
#include "tile/search.h"

namespace orchid::tune {

// `base` with the task tile, and where two levels, the sub-tile and split, of each choice of
// search_hierarchy over the kernel's anchor, priced as cpu_cost_config prices `base` so
// changed; cheapest first. None where the target has no cache level. The search prices each
// choice through the lowering's outline, which does not check that each sub-tile reads inside
// its task's regions (codegen/cpu/lower.h); the two-level choices returned are checked by the
// full lowering, and one it would run as one level is left out.
std::vector<codegen::cpu::Schedule> tile_search_seeds(const ir::Graph& g, const tile::Kernel& k,
                                                      const codegen::cpu::Schedule& base, const target::Target& t,
                                                      const tile::HierarchySearchOptions& o = {});

}  // namespace orchid::tune
