// The superoptimizer's search with its results cached in the tuning database, keyed by the
// target, the program's canonical signature and the search options (superopt/result_text.h).
// A search that reached its time limit is not stored: its result depends on the machine's
// speed, not only on the keys.
#pragma once

#include <string>

#include "ir/graph.h"
#include "superopt/generator.h"
#include "tune/db.h"

namespace orchid::driver {

struct CachedSearch {
  superopt::SearchResult result;
  bool from_cache = false;
  std::string stats;  // the statistics line (of the search that ran, when cached)
};

// `target` keys the cache (a target fingerprint); db may be null (no cache).
CachedSearch superopt_search(const ir::Graph& program, const superopt::SearchOptions& o, tune::TuningDb* db,
                             const std::string& target);

}  // namespace orchid::driver
