// report.md and report.html of an artifact: every step (its primitives, source ops, bytes
// moved, FLOPs, measured time), the totals, the verification, the compile stages, and a
// Graphviz picture of the plan (in the HTML, where `dot` is installed).
#pragma once

#include <string>
#include <vector>

#include "driver/artifact.h"
#include "driver/pipeline.h"
#include "driver/plan_builder.h"

namespace orchid::driver {

struct ReportInput {
  std::string model_path;
  std::string strategy;
  const ir::Graph* graph = nullptr;       // the graph the plan computes
  const BuiltArtifact* built = nullptr;
  const VerifyReport* verify = nullptr;
  bool verified = false;
  std::string not_verified;  // why not, where it was not
  std::vector<StageTime> stages;
  std::vector<std::string> choices;  // implementation choices made by measuring
  std::vector<std::string> orchestration;  // the optimal strategy's solve
  std::vector<std::string> rewrites;       // the rewrite search: what it applied, rejected
  std::vector<std::string> tuning;         // schedule tuning: each generated kernel's decision
  std::vector<std::string> superopt;       // the superoptimizer: each program's search and decision
  std::string gpu;  // CUDA: the GPU the schedules are for, and where its figures came from
};

// Times the artifact in `dir` per step (for `measure_seconds`; 0: no timing), writes both
// reports there and returns the summary lines of report.md.
std::string write_reports(const std::string& dir, const ReportInput& in, double measure_seconds);

// Model text in Markdown table cells and in HTML.
std::string markdown_cell(const std::string& s);
std::string html_escape(const std::string& s);

}  // namespace orchid::driver
