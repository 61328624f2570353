// Choices by measuring, checked on whole plans where layouts make them interact (measure.h).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <filesystem>

#include "codegen/cpu/codegen.h"
#include "driver/artifact.h"
#include "driver/measure.h"
#include "runtime/layout.h"
#include "runtime/library_step.h"
#include "support/error.h"
#include "support/sha256.h"

namespace orchid::driver {

namespace fs = std::filesystem;

namespace {

// Whether step i of `plan` reads or writes a buffer kept in a layout other than plain.
bool touches_blocked(const runtime::Plan& plan, size_t i) {
  for (int32_t b : plan.steps[i].args)
    if (plan.buffers[static_cast<size_t>(b)].layout != runtime::BufferLayout::Plain) return true;
  return false;
}

// The key of a whole plan in the tuning database: its steps' kernels and implementations.
std::string plan_key(const ir::Graph& g, const std::vector<StepChoice>& steps) {
  std::string text = "plan";
  for (const StepChoice& s : steps)
    if (s.kind != StepKind::Alias) text += "\n" + kernel_key(g, s) + " " + std::string(step_kind_name(s.kind));
  return sha256_hex(text);
}

std::string plan_impl() {
  return "plan codegen=" + std::to_string(codegen::cpu::kCodegenVersion) +
         " library=" + std::to_string(runtime::kLibraryStepVersion);
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

// The plan's time from the tuning database, if recorded (then the choice repeats exactly).
std::optional<CandidateTime> cached_plan(const ir::Graph& g, const std::vector<StepChoice>& steps,
                                         const MeasureOptions& o) {
  if (o.db == nullptr) return std::nullopt;
  std::optional<tune::Measurement> m = o.db->lookup(o.target, plan_key(g, steps), plan_impl());
  if (!m) return std::nullopt;
  CandidateTime t;
  t.ms = m->median_ns * 1e-6;
  t.cached = true;
  return t;
}

std::string show(const CandidateTime& t) {
  if (!t.ms) return "failed (" + t.failure + ")";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.4f ms%s", *t.ms, t.cached ? " (cached)" : "");
  return buf;
}

}  // namespace

void check_choices_on_plans(const ir::Graph& g, const std::vector<StepChoice>& before, std::vector<StepChoice>& steps,
                            const BuildOptions& build, const MeasureOptions& o, std::vector<std::string>* notes) {
  if (o.orchid_exe.empty() || !build.layouts) return;
  ORCHID_CHECK(before.size() == steps.size()) << "choices of another plan";
  std::vector<size_t> flipped;
  for (size_t i = 0; i < steps.size(); ++i)
    if (steps[i].kind != before[i].kind) flipped.push_back(i);
  if (flipped.empty()) return;
  runtime::Plan plan_before = build_artifact(g, before, build).plan;
  // Plan steps follow the choices, less aliases (views, which get no step).
  std::vector<size_t> plan_step(before.size());
  size_t next = 0;
  for (size_t i = 0; i < before.size(); ++i) plan_step[i] = before[i].kind == StepKind::Alias ? SIZE_MAX : next++;
  ORCHID_CHECK(next == plan_before.steps.size()) << "plan steps do not follow the choices";
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
  std::vector<bool> fresh;
  for (Option& opt : options) {
    std::optional<CandidateTime> c = cached_plan(g, opt.steps, o);
    fresh.push_back(!c);
    if (c) opt.t = *c;
  }
  for (int round = 0; round < o.rounds; ++round)
    for (size_t k = 0; k < options.size(); ++k)
      if (fresh[k]) options[k].t = faster(options[k].t, time_plan(g, options[k].steps, build, o, std::to_string(k)));
  for (size_t k = 0; k < options.size(); ++k)
    if (fresh[k] && options[k].t.ms && o.db != nullptr)
      o.db->record(o.target, plan_key(g, options[k].steps), plan_impl(), {*options[k].t.ms * 1e6, 0, o.min_runs, ""});
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
