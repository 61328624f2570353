// Candidate implementations of kernels as timed artifacts, and the choices made by timing
// them (measure.h); timing.cpp runs the helper processes.
#include "driver/measure.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <optional>

#include "codegen/cpu/codegen.h"
#include "driver/artifact.h"
#include "ir/canonical.h"
#include "ir/subgraph.h"
#include "runtime/library_step.h"
#include "support/error.h"
#include "support/sha256.h"

namespace orchid::driver {

namespace fs = std::filesystem;

namespace {

std::string impl_key(StepKind k) {
  return std::string("impl=") + std::string(step_kind_name(k)) + " " + measured_versions();
}

// The kernel alone as a graph: its inputs, its weights kept as constants, its outputs.
StepChoice alone(const ir::Graph& g, const StepChoice& s, ir::Graph* mini) {
  std::vector<ir::ValueId> inputs;
  for (ir::ValueId v : s.inputs)
    if (g.value(v).origin != ir::ValueOrigin::Constant) inputs.push_back(v);
  *mini = ir::extract_subgraph_with_constants(g, s.kernel.nodes, inputs, s.kernel.outputs);
  StepChoice c;
  for (int32_t n = 0; n < mini->num_nodes(); ++n) c.kernel.nodes.push_back(ir::NodeId(n));
  c.kernel.outputs = mini->outputs();
  c.inputs = tile::kernel_inputs(*mini, c.kernel);
  c.kind = s.kind;
  return c;
}

}  // namespace

std::string kernel_key(const ir::Graph& g, const StepChoice& s) {
  std::string consts;
  for (size_t i = 0; i < s.inputs.size(); ++i)
    if (g.value(s.inputs[i]).origin == ir::ValueOrigin::Constant) consts += " " + std::to_string(i);
  return sha256_hex(ir::canonical_signature(kernel_graph(g, s)).text + "\nweights:" + consts);
}

std::string tuning_key(const ir::Graph& g, const StepChoice& s) { return "tune " + kernel_key(g, s); }

std::optional<codegen::cpu::Schedule> tuned_schedule(const ir::Graph& g, const StepChoice& s, const MeasureOptions& o,
                                                      int cores) {
  if (!o.tuned || o.db == nullptr || s.kind != StepKind::Generated) return std::nullopt;
  std::optional<std::pair<std::string, tune::Measurement>> d = o.db->decision(o.target, tuning_key(g, s));
  if (!d) return std::nullopt;
  codegen::cpu::Schedule decided = codegen::cpu::parse_schedule(d->first);
  if (decided == codegen::cpu::default_schedule(g, s.kernel, cores)) return std::nullopt;
  return decided;
}

std::vector<std::optional<codegen::cpu::Schedule>> tuned_schedules(const ir::Graph& g,
                                                                    const std::vector<StepChoice>& steps,
                                                                    const MeasureOptions& o, int cores) {
  std::vector<std::optional<codegen::cpu::Schedule>> out;
  for (const StepChoice& s : steps) out.push_back(tuned_schedule(g, s, o, cores));
  return out;
}

namespace {

// Writes s alone as a one-step artifact into dir, with its schedule where it has one.
void write_candidate(const ir::Graph& g, const StepChoice& s, const BuildOptions& build,
                     const std::optional<codegen::cpu::Schedule>& schedule, const fs::path& dir) {
  ir::Graph mini;
  StepChoice c = alone(g, s, &mini);
  BuiltArtifact a = build_artifact(mini, {c}, build, {schedule});
  write_artifact(a, dir.string());
}

// A tuned kernel's time is kept under its schedule: it is another implementation.
std::string impl_under(StepKind kind, const std::optional<codegen::cpu::Schedule>& schedule) {
  return impl_key(kind) + (schedule ? " schedule=" + codegen::cpu::schedule_str(*schedule) : "");
}

TimedArtifact candidate_item(const ir::Graph& g, const StepChoice& s, const BuildOptions& build,
                             const MeasureOptions& o) {
  std::optional<codegen::cpu::Schedule> schedule = tuned_schedule(g, s, o, build.cores);
  return {kernel_key(g, s), impl_under(s.kind, schedule),
          [&g, s, &build, schedule](const fs::path& dir) { write_candidate(g, s, build, schedule, dir); }};
}

}  // namespace

std::string candidate_impl(const ir::Graph& g, const StepChoice& s, const MeasureOptions& o, int cores) {
  std::string impl = impl_under(s.kind, tuned_schedule(g, s, o, cores));
  return o.flush_bytes > 0 ? impl + " flush=" + std::to_string(o.flush_bytes) : impl;
}

ScheduleComparison compare_candidates(const ir::Graph& g, const StepChoice& a, const StepChoice& b,
                                      const BuildOptions& build, const MeasureOptions& o, double alpha, int rounds) {
  TimedArtifact ia = candidate_item(g, a, build, o), ib = candidate_item(g, b, build, o);
  return compare_timed(ia, ib, "candidates " + ia.key + " " + ia.impl + " against " + ib.key + " " + ib.impl, o, alpha,
                       rounds);
}

std::vector<CandidateTime> measure_alternating(const ir::Graph& g, const std::vector<StepChoice>& candidates,
                                               const BuildOptions& build, const MeasureOptions& o, int rounds) {
  std::vector<TimedArtifact> items;
  for (const StepChoice& s : candidates) items.push_back(candidate_item(g, s, build, o));
  return time_alternating(items, o, rounds);
}

namespace {

// Whether the step's convolution multiplies by constant weights.
bool constant_conv_weights(const ir::Graph& g, const StepChoice& s) {
  for (ir::NodeId n : s.kernel.nodes)
    if (g.node(n).op == ir::PrimOp::Conv) return g.value(g.node(n).inputs[1]).origin == ir::ValueOrigin::Constant;
  return false;
}

// An option's time: the sum of its steps' times, or the first failure among them.
CandidateTime summed(const std::vector<CandidateTime>& steps) {
  CandidateTime sum{0.0, !steps.empty() && steps.front().cached, ""};
  for (const CandidateTime& t : steps) {
    if (!t.ms) return t;
    *sum.ms += *t.ms;
  }
  return sum;
}

}  // namespace

std::vector<TimedChoice> choose_fastest(const ir::Graph& g, const std::vector<std::vector<std::vector<StepChoice>>>& choices,
                                        const BuildOptions& build, const MeasureOptions& o) {
  std::vector<TimedChoice> out(choices.size());
  std::vector<TimedArtifact> fresh;                    // the undecided choices' steps, timed together
  std::vector<std::vector<std::vector<size_t>>> at(choices.size());  // per choice, option: steps in `fresh`
  std::vector<std::string> keys;
  for (size_t c = 0; c < choices.size(); ++c) {
    std::vector<std::vector<TimedArtifact>> items;
    std::string key = "choice";
    for (const std::vector<StepChoice>& option : choices[c]) {
      std::vector<TimedArtifact>& steps = items.emplace_back();
      for (const StepChoice& step : option) {
        steps.push_back(candidate_item(g, step, build, o));
        key += (&step == &option.front() ? " | " : " + ") + steps.back().key + " " + steps.back().impl;
      }
    }
    keys.push_back(key);
    std::optional<std::pair<std::string, tune::Measurement>> d = o.db ? o.db->decision(o.target, key) : std::nullopt;
    size_t best = items.size();  // the decision's option; items.size(): none (or not a valid one)
    if (d) {
      const std::string& text = d->first;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), best);
      if (ec != std::errc() || end != text.data() + text.size()) best = items.size();
    }
    if (best < items.size()) {
      out[c] = {best, {}, true};
      for (const std::vector<TimedArtifact>& steps : items) {
        std::vector<CandidateTime> stored;
        for (const TimedArtifact& step : steps) {
          std::optional<tune::Measurement> m = o.db->lookup(o.target, step.key, step.impl);
          stored.push_back(m ? CandidateTime{m->median_ns * 1e-6, true, ""}
                             : CandidateTime{std::nullopt, true, "not in the database"});
        }
        out[c].times.push_back(summed(stored));
      }
      continue;
    }
    for (std::vector<TimedArtifact>& steps : items) {
      std::vector<size_t>& where = at[c].emplace_back();
      for (TimedArtifact& step : steps) {
        where.push_back(fresh.size());
        fresh.push_back(std::move(step));
      }
    }
  }
  if (fresh.empty()) return out;
  fs::create_directories(o.work_dir);
  std::vector<CandidateTime> t = time_alternating(fresh, o, o.rounds, false);
  for (size_t c = 0; c < choices.size(); ++c) {
    if (out[c].decided_before) continue;
    for (const std::vector<size_t>& where : at[c]) {
      std::vector<CandidateTime> steps;
      for (size_t i : where) steps.push_back(t[i]);
      out[c].times.push_back(summed(steps));
    }
    out[c].best = fastest(out[c].times);
    bool all_ran = std::all_of(out[c].times.begin(), out[c].times.end(), [](const CandidateTime& t) { return t.ms; });
    if (all_ran && o.db)
      o.db->decide(o.target, keys[c], std::to_string(out[c].best), {*out[c].times[out[c].best].ms * 1e6, 0, o.rounds, ""});
  }
  return out;
}

void choose_by_measuring(const ir::Graph& g, std::vector<StepChoice>& steps, const BuildOptions& build,
                         const MeasureOptions& o, std::vector<std::string>* notes) {
  if (o.orchid_exe.empty()) return;
  // Per oneDNN step, its options: oneDNN (direct), generated code, and oneDNN's Winograd
  // where it runs the kernel (a convolution by constant weights).
  std::vector<size_t> chosen;                                 // the steps with a choice
  std::vector<std::vector<std::vector<StepChoice>>> choices;  // their options, one step each
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].kind != StepKind::OneDnn) continue;
    std::vector<std::vector<StepChoice>> options(2, {steps[i]});
    options[1][0].kind = StepKind::Generated;
    if (constant_conv_weights(g, steps[i]) &&
        runtime::library_step_unsupported("onednn_winograd", kernel_graph(g, steps[i])).empty()) {
      options.push_back({steps[i]});
      options.back()[0].kind = StepKind::OneDnnWinograd;
    }
    chosen.push_back(i);
    choices.push_back(std::move(options));
  }
  std::vector<TimedChoice> decided = choose_fastest(g, choices, build, o);
  for (size_t c = 0; c < chosen.size(); ++c) {
    size_t i = chosen[c];
    const TimedChoice& d = decided[c];
    steps[i].kind = choices[c][d.best][0].kind;
    if (notes != nullptr) {
      const std::string& op = g.node(steps[i].kernel.nodes.front()).name;
      std::string line = "kernel " + std::to_string(i) + " (" + (op.empty() ? "?" : op) + "): oneDNN " + show(d.times[0]) +
                         (d.times.size() > 2 ? ", Winograd " + show(d.times[2]) : "") + ", generated " + show(d.times[1]);
      const char* names[] = {"oneDNN", "generated", "Winograd"};
      notes->push_back(line + " → " + names[d.best] + (d.decided_before ? " (decided before)" : ""));
    }
  }
}

namespace {

// Whether `steps`, implement()'s for kernel k, split a matmul around a oneDNN step into
// several computed steps.
bool split_matmul(const ir::Graph& g, const tile::Kernel& k, const std::vector<StepChoice>& steps) {
  bool matmul = false;
  for (ir::NodeId n : k.nodes) matmul |= g.node(n).op == ir::PrimOp::MatMul;
  int computed = 0;
  bool library = false;
  for (const StepChoice& s : steps) {
    computed += s.kind != StepKind::Alias;
    library |= s.kind == StepKind::OneDnn;
  }
  return matmul && library && computed > 1;
}

std::vector<StepChoice> computed_steps(const std::vector<StepChoice>& steps) {
  std::vector<StepChoice> out;
  for (const StepChoice& s : steps)
    if (s.kind != StepKind::Alias) out.push_back(s);
  return out;
}

}  // namespace

std::vector<StepChoice> choose_whole_over_split(const ir::Graph& g, const std::vector<tile::Kernel>& kernels,
                                                const std::vector<std::vector<StepChoice>>& each,
                                                std::vector<StepChoice>& chosen, const BuildOptions& build,
                                                const MeasureOptions& o, std::vector<std::string>* notes) {
  if (o.orchid_exe.empty()) return joined(each);
  ORCHID_CHECK(each.size() == kernels.size()) << "steps of other kernels";
  // Per kernel: its steps as chosen, and where it is a split matmul, its options: the split's
  // computed steps, then the kernel whole as one generated step (the split kept on a tie).
  std::vector<std::vector<StepChoice>> split(kernels.size()), whole(kernels.size());
  std::vector<size_t> compared;
  std::vector<std::vector<std::vector<StepChoice>>> choices;
  size_t at = 0;
  for (size_t i = 0; i < kernels.size(); ++i) {
    size_t n = each[i].size();
    ORCHID_CHECK(at + n <= chosen.size()) << "steps of other kernels";
    split[i].assign(chosen.begin() + static_cast<std::ptrdiff_t>(at), chosen.begin() + static_cast<std::ptrdiff_t>(at + n));
    at += n;
    whole[i] = implement_generated(g, kernels[i]);
    std::vector<StepChoice> whole_computed = computed_steps(whole[i]);
    if (!split_matmul(g, kernels[i], each[i]) || whole_computed.size() != 1 ||
        whole_computed[0].kind != StepKind::Generated)
      continue;
    compared.push_back(i);
    choices.push_back({computed_steps(split[i]), whole_computed});
  }
  ORCHID_CHECK(at == chosen.size()) << "steps of other kernels";
  std::vector<TimedChoice> decided = choose_fastest(g, choices, build, o);
  std::vector<bool> use_whole(kernels.size(), false);
  for (size_t c = 0; c < compared.size(); ++c) {
    size_t i = compared[c];
    const TimedChoice& d = decided[c];
    use_whole[i] = d.best == 1;
    if (notes == nullptr) continue;
    const std::string& op = g.node(kernels[i].nodes.front()).name;
    notes->push_back("kernel of " + (op.empty() ? std::string("?") : op) + ": split into " +
                     std::to_string(choices[c][0].size()) + " steps " + show(d.times[0]) + ", whole generated " +
                     show(d.times[1]) + " → " + (use_whole[i] ? "whole" : "split") +
                     (d.decided_before ? " (decided before)" : ""));
  }
  std::vector<StepChoice> new_before, new_chosen;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const std::vector<StepChoice>& keep_before = use_whole[i] ? whole[i] : each[i];
    const std::vector<StepChoice>& keep = use_whole[i] ? whole[i] : split[i];
    new_before.insert(new_before.end(), keep_before.begin(), keep_before.end());
    new_chosen.insert(new_chosen.end(), keep.begin(), keep.end());
  }
  chosen = std::move(new_chosen);
  return new_before;
}

}  // namespace orchid::driver
