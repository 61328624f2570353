// Choices by measuring, checked on whole plans where layouts make them interact (measure.h).
#include <algorithm>
#include <cstdint>
#include <filesystem>

#include "driver/artifact.h"
#include "driver/measure.h"
#include "runtime/layout.h"

namespace orchid::driver {

namespace fs = std::filesystem;

namespace {

// Whether step i of `plan` reads or writes a buffer kept in a layout other than plain.
bool touches_blocked(const runtime::Plan& plan, size_t i) {
  for (int32_t b : plan.steps[i].args)
    if (plan.buffers[static_cast<size_t>(b)].layout != runtime::BufferLayout::Plain) return true;
  return false;
}

// The fastest run of g's whole plan with these steps, built like the artifact, in a helper
// process; `name` names its directory under the work directory.
CandidateTime time_plan(const ir::Graph& g, const std::vector<StepChoice>& steps, const BuildOptions& build,
                        const MeasureOptions& o, const std::string& name) {
  fs::path dir = o.work_dir / ("plan-" + name);
  fs::remove_all(dir);
  BuiltArtifact a = build_artifact(g, steps, build);
  write_artifact(a, dir.string());
  CandidateTime t = time_artifact(dir, o);
  fs::remove_all(dir);
  return t;
}

std::string show(const CandidateTime& t) {
  if (!t.ms) return "failed (" + t.failure + ")";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f ms", *t.ms);
  return buf;
}

}  // namespace

void check_choices_on_plans(const ir::Graph& g, const std::vector<StepChoice>& before, std::vector<StepChoice>& steps,
                            const BuildOptions& build, const MeasureOptions& o, std::vector<std::string>* notes) {
  if (o.orchid_exe.empty() || before.size() != steps.size()) return;
  std::vector<size_t> flipped;
  for (size_t i = 0; i < steps.size(); ++i)
    if (steps[i].kind != before[i].kind) flipped.push_back(i);
  if (flipped.empty()) return;
  runtime::Plan plan_before = build_artifact(g, before, build).plan;
  // Plan steps follow the choices, less aliases (views, which get no step).
  std::vector<size_t> plan_step(before.size());
  size_t next = 0;
  for (size_t i = 0; i < before.size(); ++i) plan_step[i] = before[i].kind == StepKind::Alias ? SIZE_MAX : next++;
  if (next != plan_before.steps.size()) return;
  // The choices that keep every blocked buffer of the plan before: flips of steps touching
  // none.
  std::vector<StepChoice> outside = before;
  bool breaks_chain = false;
  for (size_t i : flipped) {
    if (plan_step[i] != SIZE_MAX && touches_blocked(plan_before, plan_step[i])) breaks_chain = true;
    else outside[i] = steps[i];
  }
  if (!breaks_chain) return;
  fs::create_directories(o.work_dir);
  struct Option {
    const char* what;
    std::vector<StepChoice> steps;
    CandidateTime t;
  };
  std::vector<Option> options = {{"as measured alone", steps, {}}, {"oneDNN kept", before, {}}};
  bool distinct = false;
  for (size_t i : flipped) distinct |= outside[i].kind != before[i].kind;
  if (distinct) options.push_back({"oneDNN kept in layout chains", outside, {}});
  for (int round = 0; round < o.rounds; ++round)
    for (size_t k = 0; k < options.size(); ++k) {
      options[k].t = faster(options[k].t, time_plan(g, options[k].steps, build, o, std::to_string(k)));
    }
  size_t best = 0;
  for (size_t k = 1; k < options.size(); ++k)
    if (options[k].t.ms && (!options[best].t.ms || *options[k].t.ms < *options[best].t.ms)) best = k;
  steps = options[best].steps;
  if (notes == nullptr) return;
  std::string line = "whole plans (generated steps chosen alone break nChw8c chains):";
  for (size_t k = 0; k < options.size(); ++k) line += std::string(k ? "," : "") + " " + options[k].what + " " + show(options[k].t);
  notes->push_back(line + " → " + options[best].what);
}

}  // namespace orchid::driver
