// Lowering a μGraph to primitives: the primitive graph that computes the same function, so
// that the reference interpreter runs any μGraph and the finite-field check (verify/) compares
// it with the program it was generated from.
//
// Kernel operators become primitives one for one (sum: a reduce; repeat: a layout; reshape: a
// view). A block graph is computed for all blocks and iterations at once: each of its tensors
// becomes a value with its block's grid indices and iteration in front, [G0, (G1, G2,) L,
// local dims…]; in_iter is a layout that cuts each block's and iteration's part out of the
// kernel tensor (imap, fmap), block operators are batched over the leading dims, and
// out_accum sums over L (fmap = rep) or interleaves it into a data dim before omap places the
// blocks' parts. Thread graphs are inlined operator by operator.
#pragma once

#include "ir/graph.h"
#include "superopt/ugraph.h"

namespace orchid::superopt {

// Inputs and outputs in the μGraph's order, with its names and types. g must verify.
ir::Graph lower(const UGraph& g);

}  // namespace orchid::superopt
