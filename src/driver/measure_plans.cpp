// Choices by measuring, checked on whole plans where layouts make them interact (measure.h).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <filesystem>

#include "codegen/cpu/codegen.h"
#include "driver/artifact.h"
#include "driver/measure.h"
#include "driver/superopt_kernels.h"
#include "runtime/layout.h"
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

// The key of a whole plan in the tuning database: its steps' kernels, implementations and
// tuned schedules.
std::string plan_key(const ir::Graph& g, const std::vector<StepChoice>& steps,
                     const std::vector<std::optional<codegen::cpu::Schedule>>& schedules) {
  std::string text = "plan";
  for (size_t i = 0; i < steps.size(); ++i) {
    const StepChoice& s = steps[i];
    if (s.kind == StepKind::Alias) continue;
    text += "\n" + kernel_key(g, s) + " " + std::string(step_kind_name(s.kind)) + (s.ugraph ? " " + s.ugraph->key : "");
    if (i < schedules.size() && schedules[i]) text += " schedule=" + codegen::cpu::schedule_str(*schedules[i]);
  }
  return sha256_hex(text);
}

// Whole plans take seconds a round on a shared machine, and the load of other processes hits
// some rounds: their slowest quarter is left out of each comparison (compare_timed).
constexpr double kPlanRoundsDropped = 0.25;

std::string plan_impl() {
  char dropped[32];
  std::snprintf(dropped, sizeof dropped, "%g", kPlanRoundsDropped);
  return "plan slowest_dropped=" + std::string(dropped) + " " + measured_versions();
}

ScheduleComparison compare_items(const TimedArtifact& a, const TimedArtifact& b, const MeasureOptions& o, double alpha,
                                 int rounds, int more_rounds) {
  return compare_timed(a, b, plan_impl() + " " + a.key + " against " + b.key, o, alpha, rounds, more_rounds,
                       kPlanRoundsDropped);
}

// The whole plan with these steps and schedules, timed like a candidate (time_alternating).
TimedArtifact plan_item(const ir::Graph& g, const std::vector<StepChoice>& steps, const BuildOptions& build,
                        const std::vector<std::optional<codegen::cpu::Schedule>>& schedules) {
  return {plan_key(g, steps, schedules), plan_impl(), [&g, steps, &build, schedules](const fs::path& dir) {
            BuiltArtifact a = build_artifact(g, steps, build, schedules);
            write_artifact(a, dir.string());
          }};
}

// ... with their tuned schedules (measure.h).
TimedArtifact plan_item(const ir::Graph& g, const std::vector<StepChoice>& steps, const BuildOptions& build,
                        const MeasureOptions& o) {
  return plan_item(g, steps, build, tuned_schedules(g, steps, o, build.cores));
}

}  // namespace

ScheduleComparison compare_schedules(const ir::Graph& g, const std::vector<StepChoice>& steps,
                                     const std::vector<std::optional<codegen::cpu::Schedule>>& a,
                                     const std::vector<std::optional<codegen::cpu::Schedule>>& b,
                                     const BuildOptions& build, const MeasureOptions& o, double alpha, int rounds) {
  return compare_plans(g, steps, a, steps, b, build, o, alpha, rounds);
}

ScheduleComparison compare_plans(const ir::Graph& g, const std::vector<StepChoice>& steps_a,
                                 const std::vector<std::optional<codegen::cpu::Schedule>>& a,
                                 const std::vector<StepChoice>& steps_b,
                                 const std::vector<std::optional<codegen::cpu::Schedule>>& b, const BuildOptions& build,
                                 const MeasureOptions& o, double alpha, int rounds, int more_rounds) {
  return compare_items(plan_item(g, steps_a, build, a), plan_item(g, steps_b, build, b), o, alpha, rounds, more_rounds);
}

ScheduleComparison compare_tuned_plans(const ir::Graph& ga, const std::vector<StepChoice>& steps_a,
                                       const ir::Graph& gb, const std::vector<StepChoice>& steps_b,
                                       const BuildOptions& build, const MeasureOptions& o, double alpha, int rounds,
                                       int more_rounds) {
  return compare_items(plan_item(ga, steps_a, build, o), plan_item(gb, steps_b, build, o), o, alpha, rounds,
                       more_rounds);
}

void check_choices_on_plans(const ir::Graph& g, const std::vector<StepChoice>& before, std::vector<StepChoice>& steps,
                            const BuildOptions& build, const MeasureOptions& o, std::vector<std::string>* notes) {
  if (o.orchid_exe.empty() || !build.layouts) return;
  ORCHID_CHECK(before.size() == steps.size()) << "choices of another plan";
  std::vector<size_t> flipped;
  for (size_t i = 0; i < steps.size(); ++i)
    if (steps[i].kind != before[i].kind) flipped.push_back(i);
  if (flipped.empty()) return;
  BuiltArtifact built_before = build_artifact(g, before, build, tuned_schedules(g, before, o, build.cores));
  const runtime::Plan& plan_before = built_before.plan;
  // The choices that keep every blocked buffer of the plan before: flips of steps touching
  // none (an alias has no plan step).
  std::vector<StepChoice> outside = before;
  bool breaks_chain = false;
  for (size_t i : flipped) {
    size_t step = built_before.choice_steps[i];
    if (step != SIZE_MAX && touches_blocked(plan_before, step)) breaks_chain = true;
    else outside[i] = steps[i];
  }
  if (!breaks_chain) return;
  fs::create_directories(o.work_dir);
  std::vector<std::pair<const char*, std::vector<StepChoice>>> options = {{"as measured alone", steps},
                                                                          {"oneDNN kept", before}};
  bool distinct = false;
  for (size_t i : flipped) distinct |= outside[i].kind != before[i].kind;
  if (distinct) options.emplace_back("oneDNN kept in layout chains", outside);
  std::vector<TimedArtifact> items;
  for (const auto& [what, choice] : options) items.push_back(plan_item(g, choice, build, o));
  items[1].write = [&built_before](const fs::path& dir) { write_artifact(built_before, dir.string()); };
  std::vector<CandidateTime> t = time_alternating(items, o, o.rounds);
  size_t best = fastest(t);
  steps = options[best].second;
  if (notes == nullptr) return;
  std::string line = "whole plans (steps chosen alone break layout chains):";
  for (size_t k = 0; k < options.size(); ++k) line += std::string(k ? "," : "") + " " + options[k].first + " " + show(t[k]);
  notes->push_back(line + " → " + options[best].first);
}

}  // namespace orchid::driver
