// The "reference" library step: any primitive graph, run by the reference interpreter in the
// graph's own precision (interp::Precision::Own). Used for opaque routines (topk, cumsum,
// scatter, ...) that have no generated kernel. It copies its inputs into tensors and its
// results out; it holds no mutable state, so concurrent run() calls are safe.
#pragma once

#include <memory>
#include <string>

#include "ir/graph.h"
#include "runtime/library_step.h"

namespace orchid::runtime {

// UserError when g is malformed (reference_step_unsupported's reason).
std::unique_ptr<LibraryStep> make_reference_step(const ir::Graph& g);

// Empty for every well-formed graph; else the verifier's complaints.
std::string reference_step_unsupported(const ir::Graph& g);

}  // namespace orchid::runtime
