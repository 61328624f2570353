#include "driver/superopt_search.h"

#include "ir/canonical.h"
#include "superopt/result_text.h"

namespace orchid::driver {

CachedSearch superopt_search(const ir::Graph& program, const superopt::SearchOptions& o, tune::TuningDb* db,
                             const std::string& target) {
  CachedSearch out;
  std::string key = ir::canonical_signature(program).text;
  std::string options = superopt::options_key(o);
  if (db) {
    if (std::optional<std::string> text = db->superopt_result(target, key, options)) {
      out.result = superopt::parse_result_text(*text, &out.stats);
      out.from_cache = true;
      return out;
    }
  }
  out.result = superopt::search(program, o);
  out.stats = superopt::describe(out.result.stats);
  if (db && out.result.unsupported.empty() && !out.result.stats.timed_out)
    db->record_superopt(target, key, options, superopt::result_text(out.result));
  return out;
}

}  // namespace orchid::driver
