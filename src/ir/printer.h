// The text form of the primitive IR (files `.oir`; grammar in docs/ir.md, "Text form").
// print -> parse -> print is the identity on the text.
#pragma once

#include <string>

#include "ir/graph.h"

namespace orchid::ir {

struct PrintOptions {
  // Constants always print in full (as `splat` when all elements print alike): the text
  // form is exact. Provenance names are printed unless `canonical` is set.
  bool canonical = false;  // values renamed %0, %1, ... in definition order; no provenance
};

std::string print_graph(const Graph& g, const PrintOptions& opts = {});
// One expression, with load slots shown as `$0`, `$1`, ... (there is no graph to name them).
std::string print_expr(const Expr& e);
// The value name as it appears in text: %name, quoted when it has characters outside
// [A-Za-z0-9_.\-].
std::string print_value_name(const std::string& name);

}  // namespace orchid::ir
