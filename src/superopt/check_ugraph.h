// A μGraph against the program it should compute: its lowering (lower.h) and the program
// compared over finite fields (verify/check.h). Only μGraphs this calls equivalent leave a
// search.
#pragma once

#include "ir/graph.h"
#include "superopt/ugraph.h"
#include "verify/check.h"

namespace orchid::superopt {

// The limits of a check of a μGraph: attention-like programs sum many exponentials, whose
// terms ask for tens of thousands of tests (Theorem 4) of small graphs.
verify::CheckOptions ugraph_check_options();

verify::Verdict check_ugraph(const ir::Graph& program, const UGraph& g,
                             const verify::CheckOptions& o = ugraph_check_options());

}  // namespace orchid::superopt
