// The superoptimizer's μGraphs measured on this machine against the program compiled without
// them (what `orchid compile` makes of it), for `orchid superopt --bench`.
//
// Each μGraph is built into an artifact (ugraph_artifact.h) and checked against the
// interpreter on seeded random inputs; those that match are timed with the program's own
// artifact in alternating rounds (measure.h, time_alternating: each keeps its fastest run),
// each in a helper process. Times are measured afresh, never taken from the tuning database.
// The measure options' work directory is bench_ugraphs' own: it is removed when it returns or
// throws.
#pragma once

#include <cstdint>
#include <vector>

#include "driver/artifact.h"
#include "driver/measure.h"
#include "driver/pipeline.h"
#include "superopt/ugraph.h"

namespace orchid::driver {

struct UGraphBenchOptions {
  BuildOptions build;        // how the μGraphs' artifacts are built
  MeasureOptions measure;    // the helper, its work directory, runs; its db is not read
  CompileOptions baseline;   // how the program is compiled (its out_dir is set here)
  int rounds = 3;
  uint64_t seed = 1;
  double tolerance = 1e-4;
};

struct UGraphBench {
  std::vector<VerifyReport> checks;   // per μGraph: its artifact against the interpreter
  std::vector<CandidateTime> times;   // per μGraph; a failure where its check failed
  CandidateTime baseline;             // the program compiled without the superoptimizer
};

UGraphBench bench_ugraphs(const ir::Graph& program, const std::vector<superopt::UGraph>& ugraphs,
                          const UGraphBenchOptions& o);

// The index of the fastest μGraph that was timed, or none.
std::optional<size_t> fastest_ugraph(const UGraphBench& b);

}  // namespace orchid::driver
