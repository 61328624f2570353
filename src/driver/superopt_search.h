// The superoptimizer's search with its results cached in the tuning database, keyed by the
// target, the program's canonical signature and the search options (superopt/result_text.h).
// A search cut at its time limit is stored apart, under its options marked "cut at its time
// limit", with the seconds it ran (its statistics line): a later search with the same keys and
// a limit at most about a tenth longer than that takes it from there (a compile's limits vary a
// little with what the searches before took); a longer one searches again and replaces it.
// So a compile that spends its budget on a search does not spend it again, and a complete
// result is never mistaken for a cut one.
#pragma once

#include <string>

#include "ir/graph.h"
#include "superopt/generator.h"
#include "tune/db.h"

namespace orchid::driver {

struct CachedSearch {
  superopt::SearchResult result;
  bool from_cache = false;
  bool cut = false;   // the search (or the one cached) reached its time limit
  std::string stats;  // the statistics line (of the search that ran, when cached)
};

// `target` keys the cache (a target fingerprint); db may be null (no cache).
CachedSearch superopt_search(const ir::Graph& program, const superopt::SearchOptions& o, tune::TuningDb* db,
                             const std::string& target);

}  // namespace orchid::driver
