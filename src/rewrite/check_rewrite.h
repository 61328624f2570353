// Checking one rewrite of a window (a subgraph) before it goes into the model: the primitives
// the rewrite changed are compared by the finite-field verifier (verify/check.h), and the
// whole window by the f32 differential test against the interpreter. A rewrite is accepted
// when the differential test passes and the verifier does not find the two different; it is
// *proven* when the verifier found them equivalent (it may be undecided on large windows:
// too many tests or too much work, said in the verdict).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "verify/check.h"

namespace orchid::rewrite {

struct CheckRewriteOptions {
  // The verifier's δ, seed and budgets: a model's matmuls need more work than the default.
  verify::CheckOptions field = [] {
    verify::CheckOptions f;
    f.max_work = 400'000'000;
    return f;
  }();
  // Largest relative L2 error of an f32 output of the window, or ten times the original
  // window's own f32 error where that is larger.
  double tolerance = 1e-4;
  uint64_t seed = 1;           // of the differential test's inputs
};

// The primitives of `before` and `after` that differ, as graphs of their own with the same
// inputs and outputs: each side's primitives without an identical one (same output names,
// operator, attributes, bodies and input names) on the other side. The inputs are what either
// side reads from the unchanged part, the outputs what the unchanged part or the window's
// outputs read from the changed part. Where the two sides read different values, the
// unchanged primitives computing what they read join both sides, until they read the same
// values or only the window's inputs.
struct ChangedRegions {
  ir::Graph before, after;
  std::string problem;  // non-empty when the two sides do not line up (the rewrite lost a value)
};
ChangedRegions changed_regions(const ir::Graph& before, const ir::Graph& after);

struct RewriteCheck {
  bool accepted = false;
  bool proven = false;
  std::string verdict;  // for the report: what the verifier and the differential test said
};

RewriteCheck check_rewrite(const ir::Graph& before, const ir::Graph& after, const CheckRewriteOptions& o = {});
// The same with the changed regions of the two already found.
RewriteCheck check_rewrite(const ir::Graph& before, const ir::Graph& after, const ChangedRegions& regions,
                           const CheckRewriteOptions& o);

}  // namespace orchid::rewrite
