// A search's result as text, for the tuning database (search results are cached by the
// program's canonical signature, the target and the options): the statistics line, then each
// verified μGraph with its cost, then the unverified ones.
//
//   stats <describe(stats)>
//   found <estimated seconds>
//   ugraph @... { ... }
//   unverified
//   ugraph @... { ... }
#pragma once

#include <string>

#include "superopt/generator.h"

namespace orchid::superopt {

// Options that decide a search's result, as a canonical text (threads and the time limit are
// left out: a search that reached its limit is not stored). kGeneratorVersion is part of it.
std::string options_key(const SearchOptions& o);

std::string result_text(const SearchResult& r);
// The μGraphs read back (parsed and verified structurally) and the statistics line in
// `stats_line`; a text this code did not write is a UserError.
SearchResult parse_result_text(const std::string& text, std::string* stats_line);

}  // namespace orchid::superopt
