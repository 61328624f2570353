// Writing an artifact directory and checking it against the reference interpreter.
//
// An artifact is written to a staging directory beside its destination, loaded back through
// the runtime and run on seeded random inputs; only when every output matches the interpreter
// (relative L2 error within the tolerance) is it moved into place. A wrong artifact is never
// written.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "driver/plan_builder.h"
#include "ir/graph.h"

namespace orchid::driver {

inline constexpr const char* kGraphFileName = "graph.oir";

// Writes the plan, weights, libraries and graph.oir into `dir` (which must not exist).
void write_artifact(BuiltArtifact& a, const std::string& dir);

struct OutputCheck {
  std::string name;
  double rel_l2 = 0;     // ||got - want|| / ||want|| (floats), 0 or 1 for exact dtypes
  bool ok = true;
  std::string detail;    // why not
};

struct VerifyReport {
  uint64_t seed = 0;
  double tolerance = 0;
  std::vector<OutputCheck> outputs;
  bool ok() const;
  std::string summary() const;
};

// Runs the artifact in `dir` (on the CPU, or on the GPU for a CUDA artifact) and the reference
// graph on the same seeded random inputs.
VerifyReport verify_artifact(const std::string& dir, const ir::Graph& reference, uint64_t seed,
                             double tolerance);

// Moves a verified staging directory to `dir`, replacing an earlier artifact there (a
// directory holding plan.json); anything else in the way is a UserError.
void publish_artifact(const std::string& staging, const std::string& dir);
// The UserError publish_artifact would throw for `dir`, thrown before any work is done.
void check_publishable(const std::string& dir);

// `dir` as a directory's own name: "out/" and "out/." are "out", so that what goes beside it
// (out.staging, out.candidates) is not put inside it.
std::string directory_name(const std::string& dir);

// The first step of the artifact in `dir` whose output differs from the interpreter's value
// of the same name (graph.oir, constants bound from the weights), or "" when none does.
std::string bisect_artifact(const std::string& dir, uint64_t seed, double tolerance);

}  // namespace orchid::driver
