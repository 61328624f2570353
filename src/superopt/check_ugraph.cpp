#include "superopt/check_ugraph.h"

#include "superopt/lower.h"

namespace orchid::superopt {

verify::CheckOptions ugraph_check_options() {
  verify::CheckOptions o;
  o.max_tests = int64_t{1} << 17;
  o.max_work = int64_t{1} << 29;
  return o;
}

verify::Verdict check_ugraph(const ir::Graph& program, const UGraph& g, const verify::CheckOptions& o) {
  return verify::check_equivalence(program, lower(g), o);
}

}  // namespace orchid::superopt
