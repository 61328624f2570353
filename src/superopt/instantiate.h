// A μGraph found for a small program, rebuilt for a program of the same structure at its own
// sizes (Orchid's, not Mirage's: the finite-field check verifies small programs — a decoding
// step over 4096 cached tokens has too many exponential terms for its field, and costs
// millions of evaluations a test — so the search runs on a small copy, and its μGraphs are
// instantiated at the sizes that run).
//
// The operators, maps and attributes stay; shapes are inferred again from the new input
// shapes, each block graph with a grid and for-loop of its own (a tiling):
//   - a sum of a whole dim sums the whole new dim (k = its new extent); other sums keep k;
//   - a reshape that moves dims of one element moves the same ones (the generator makes no
//     other block-level reshape), and the kernel graph's final reshape is a view to the new
//     output shape;
//   - a shape that does not split by the new grid or loop is an error naming the operator.
// The result computes the big program only if the structure carries over; callers check it
// (the finite-field check where it decides, the interpreter on random inputs otherwise).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/graph.h"
#include "superopt/generator.h"
#include "superopt/ugraph.h"

namespace orchid::superopt {

// A block graph's grid and for-loop.
struct Tiling {
  ir::Dims grid;
  int64_t loop = 1;
  bool operator==(const Tiling&) const = default;
};

struct Instance {
  std::optional<UGraph> ugraph;
  std::string error;  // why not, when no ugraph
};

// `inputs`: the new shapes of g's inputs, in order; `output`: of its (one) output;
// `tilings`: one per block graph of g (empty: each block graph's own).
Instance instantiate(const UGraph& g, const std::vector<ir::Dims>& inputs, const ir::Dims& output,
                     const std::vector<Tiling>& tilings = {});

// Tilings of g's block graph (g has exactly one) worth timing at the new sizes: each grid dim
// that partitions data and the for-loop take powers of two (grid dims that partition nothing
// stay 1); kept where the instance builds, gives at least `cores` blocks and at most 64 per
// core, and what a block stores besides its in_iter parts fits `block_memory` bytes (one
// core's L2; a CPU block reads those parts where they lie). Those whose in_iter parts fit too
// come first. Then fewer iterations come first: on a CPU the hardware prefetcher streams long
// chunks, and a sum across iterations reads and writes its accumulator once per iteration.
// For each loop extent, from the smallest, its best grid (blocks closest to 8 per core, for
// balance), then the second best of each, and so on: the first `max`.
std::vector<Tiling> tiling_choices(const UGraph& g, const std::vector<ir::Dims>& inputs, const ir::Dims& output,
                                   int cores, int64_t block_memory, size_t max);

// A search's μGraphs at a program's sizes.
struct Instantiated {
  UGraph ugraph;      // at the new sizes
  Tiling tiling;
  size_t source = 0;  // the μGraph it came from: an index into found, then unverified
  double cost = 0;    // estimate_cost at the new sizes, with the first tiling
};

// "μgraph <source + 1> at grid AxB, loop L": how reports name an instance.
std::string instance_label(const Instantiated& x);

// The μGraphs of a search of `small` (found, then unverified) that instantiate at the sizes of
// `program` (same inputs, one output) with a tiling from tiling_choices, ordered by their
// estimated cost at those sizes (the search's order is by the small program's), and verified
// against `small` in that order (the unverified ones, by check_ugraph) until `max_ugraphs`
// are; each with up to `tilings` tilings. `notes` receives why μGraphs were passed over.
std::vector<Instantiated> instantiate_results(const SearchResult& r, const ir::Graph& small, const ir::Graph& program,
                                              int cores, int64_t block_memory, size_t max_ugraphs, size_t tilings,
                                              std::vector<std::string>* notes);

}  // namespace orchid::superopt
