// Mirage's expression-guided μGraph generator (§4, Algorithm 1).
//
// Kernel graphs are extended one operator at a time from the program's inputs; a
// graph-defined operator (`block`) is built by a nested search over its block graph, for each
// grid and for-loop extent given. Every prefix is checked before it is extended:
//  - canonical form: operators come in increasing rank (max operand, operands, type,
//    attributes), so each μGraph is generated once (SearchOptions::canonical);
//  - shapes and memory: device memory for kernel tensors, the block's fast memory (shared
//    memory; one core's L2 on a CPU) for block tensors;
//  - abstract expressions (Table 1): a new tensor whose expression is not entailed to be a
//    subexpression of the program's (Table 2, Z3) is pruned (SearchOptions::prune_abstract).
// A kernel tensor with an output's element count and the output's abstract expression (equal
// in a model of the axioms, so no μGraph Theorem 1 promises is lost) ends a candidate: it is
// screened over finite fields on a few tests during the search, and the survivors are
// verified with Theorem 4's number of tests at the end; only verified μGraphs are returned.
//
// In a block graph an in_iter is created with its first reader, its imap and fmap chosen
// then; the block graph is closed when every one of its inputs is read, by an out_accum for
// each tensor nothing reads (summed across the for-loop or concatenated along a dim, placed by
// an omap). Reshapes are generated only at the block level and only as moves of dims of size 1
// (the GQA query heads becoming rows); an output whose shape differs from the program's gets a
// final reshape (a view). Repeat is not generated.
//
// Deterministic: the search is split between worker threads by the first kernel operator,
// round robin, each with its own solver; results are merged in a fixed order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "superopt/subexpr_oracle.h"
#include "superopt/ugraph.h"

namespace orchid::superopt {

// Bump when the generator's rules change what a search finds: cached results (result_text.h)
// of other versions are not read.
inline constexpr int kGeneratorVersion = 1;

struct SearchOptions {
  int max_kernel_ops = 4;     // kernel operators, a graph-defined one counting as one
  int max_block_ops = 5;      // block operators besides in_iter and out_accum
  int max_graph_defined = 1;  // graph-defined operators per μGraph
  int max_block_inputs = 4;
  int max_block_outputs = 2;
  std::vector<ir::Dims> grids = {{2}, {2, 2}};
  std::vector<int64_t> loops = {1, 2};
  int64_t block_memory_bytes = int64_t{2} << 20;  // one core's L2
  int64_t device_memory_bytes = int64_t{8} << 30;
  bool canonical = true;
  bool prune_abstract = true;
  bool concat_matmul = true;  // generate concat_matmul in block graphs
  // Tilings follow the program's dims (dim_classes.h): each grid dim and the for-loop split
  // one class of dims in every input that has it (others replicate), and operators combine
  // only dims of one class. Off: every imap and fmap of every input, any combination.
  bool consistent_maps = true;
  double time_limit_s = 600;
  int threads = 2;
  int screen_tests = 8;     // finite-field tests of each candidate during the search
  int max_results = 16;     // μGraphs verified and returned, cheapest first
  OracleOptions oracle;
};

struct SearchStats {
  int64_t kernel_ops_tried = 0;   // operators constructed at the kernel level
  int64_t block_ops_tried = 0;    // at the block level (in_iter choices included)
  int64_t blocks_opened = 0;      // block graph searches started (one per tiling plan)
  int64_t blocks_closed = 0;      // graph-defined operators completed (one per omap choice)
  int64_t pruned_shape = 0;
  int64_t pruned_dims = 0;        // combining dims of different classes
  int64_t pruned_memory = 0;
  int64_t pruned_abstract = 0;
  int64_t pruned_canonical = 0;
  int64_t candidates = 0;   // μGraphs whose output matched abstractly
  int64_t screened = 0;     // of those, passing the screening tests
  int64_t verified = 0;     // passing the full check
  int64_t rejected = 0;     // failing the screen or the full check
  double seconds = 0;
  bool timed_out = false;
  OracleStats oracle;       // summed over the workers
};

struct SearchResult {
  std::vector<UGraph> found;  // verified, cheapest first (estimate_cost)
  std::vector<double> cost;   // estimated seconds, one per found
  // Screened μGraphs after the max_results cheapest (or failing nothing but the limit): passed
  // the screening tests, not verified in full. Cheapest first.
  std::vector<UGraph> unverified;
  SearchStats stats;
  std::string unsupported;    // the program is outside the fragment (nothing searched)
};

// Searches μGraphs computing `program` (a LAX primitive graph).
SearchResult search(const ir::Graph& program, const SearchOptions& o);

// One paragraph of statistics for the CLI and docs.
std::string describe(const SearchStats& s);

}  // namespace orchid::superopt
