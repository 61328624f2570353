#include "driver/superopt_search.h"

#include <stdexcept>

#include "ir/canonical.h"
#include "superopt/result_text.h"

namespace orchid::driver {

namespace {

const char* const kCut = "; cut at its time limit";
// A cut search is taken for one whose limit is at most about a tenth longer: a compile's
// limits vary a little with what the searches before took.
constexpr double kReuseFraction = 0.9;

// The seconds a search ran: the statistics line begins with them.
double seconds_run(const std::string& stats) {
  try {
    return std::stod(stats);
  } catch (const std::logic_error&) {
    return 0;
  }
}

}  // namespace

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
    if (std::optional<std::string> text = db->superopt_result(target, key, options + kCut)) {
      CachedSearch cut;
      cut.result = superopt::parse_result_text(*text, &cut.stats);
      if (seconds_run(cut.stats) >= kReuseFraction * o.time_limit_s) {
        cut.from_cache = cut.cut = true;
        return cut;
      }
    }
  }
  out.result = superopt::search(program, o);
  out.stats = superopt::describe(out.result.stats);
  out.cut = out.result.stats.timed_out;
  if (db && out.result.unsupported.empty())
    db->record_superopt(target, key, out.cut ? options + kCut : options, superopt::result_text(out.result));
  return out;
}

}  // namespace orchid::driver
