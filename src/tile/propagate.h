// Tile propagation through one primitive (Welder §3.1): which part of each input a tile of
// the output reads.
//
// A tile is a box of the primitive's output domain; optionally the reduction domain is split
// too (a sub-box of r0..), as when a tile-graph steps through a reduction. The points of the
// tile are every (i, r) with i in the tile and r in the reduction box. The region of input k
// is the bounding box, over every load of slot k in the bodies and every such point where
// that load is actually evaluated, of the element it reads:
//  - index expressions are evaluated with interval arithmetic (interval.h) over the box of
//    the tile, narrowed by every condition the load sits under: the predicate of a predicated
//    load (a load whose predicate is false reads nothing), and the condition of each select
//    branch it lies in (a branch whose condition is decided false over the box is skipped);
//  - each index is restricted to the input's bounds, since out-of-bounds reads never happen,
//    and to what the predicate allows of that very index: a conjunct `cmp(x, y)` of the
//    predicate whose x (or y) is structurally the index bounds it by y's range (conv padding,
//    pad and concat pieces);
//  - affine indices restricted this way are exact (the smallest and largest in-bounds
//    position of a strided, dilated, padded window are found, not just clipped);
//  - indirect loads (loads inside index expressions) are reads too; the values they yield are
//    unknown — their dtype's range, so the indexed dimension is read whole — unless the
//    integer tensor is a constant of the graph, whose values in the region read are used.
// Views, matmul and conv work through their derived expressions. Opaque primitives read
// every input whole (for any non-empty tile).
#pragma once

#include <optional>
#include <vector>

#include "ir/graph.h"
#include "tile/interval.h"
#include "tile/region.h"

namespace orchid::tile {

// The region of each load slot (input k of p) read by `tile` of p's output domain, with the
// reduction domain limited to `reduce` when given (its rank: p.reduce_domain's). nullopt for a
// slot nothing of which is read (also: every slot, when the tile or the reduction box is
// empty). The tile and the reduction box must lie inside the domains (InternalError).
std::vector<std::optional<Region>> propagate_primitive(const ir::Graph& g, const ir::Primitive& p,
                                                       const Region& tile,
                                                       const std::optional<Region>& reduce = std::nullopt);

// The box of loop variables of a tile and an optional reduction box (the whole reduction
// domain when absent), as interval evaluation takes it.
VarBox tile_box(const ir::Primitive& p, const Region& tile, const std::optional<Region>& reduce = std::nullopt);

}  // namespace orchid::tile
