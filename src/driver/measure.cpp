// Measuring candidates in a helper process (measure.h).
#include "driver/measure.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "codegen/cpu/codegen.h"
#include "driver/artifact.h"
#include "ir/canonical.h"
#include "ir/subgraph.h"
#include "runtime/library_step.h"
#include "runtime/profile.h"
#include "support/error.h"
#include "support/parallel.h"
#include "support/sha256.h"
#include "support/subprocess.h"
#include "tune/stats.h"

namespace orchid::driver {

namespace fs = std::filesystem;

namespace {

std::string impl_key(StepKind k) {
  return std::string("impl=") + std::string(step_kind_name(k)) + " codegen=" +
         std::to_string(codegen::cpu::kCodegenVersion) + " library=" + std::to_string(runtime::kLibraryStepVersion) +
         " timing=" + std::to_string(kTimingVersion);
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

std::optional<double> fastest_of(const std::string& json_text, std::string* why) {
  try {
    nlohmann::json j = nlohmann::json::parse(json_text);
    std::vector<double> ms = j.at("times_ms").get<std::vector<double>>();
    if (ms.empty()) return std::nullopt;
    // The fastest run: on a shared machine the slower ones measure the other processes.
    return *std::min_element(ms.begin(), ms.end());
  } catch (const std::exception& e) {
    *why = std::string("unreadable timing report: ") + e.what();
    return std::nullopt;
  }
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
  return impl_under(s.kind, tuned_schedule(g, s, o, cores));
}

namespace {

// Each artifact's time in each of `rounds` alternating rounds, each round one process per
// artifact (a crash or a hang costs that artifact).
std::vector<std::vector<CandidateTime>> timed_one_per_process(const std::vector<fs::path>& dirs,
                                                              const MeasureOptions& o, int rounds) {
  std::vector<std::vector<CandidateTime>> out(dirs.size());
  for (int round = 0; round < rounds; ++round)
    for (size_t i = 0; i < dirs.size(); ++i) out[i].push_back(time_artifact(dirs[i], o));
  return out;
}

// The same, every artifact in one helper process (`orchid time-artifacts`), each artifact
// and round under the options' time limit; nullopt where that process failed as a whole (a
// crash, unreadable output). Where a candidate timed out, those the helper had not reached
// yet come back empty.
std::optional<std::vector<std::vector<CandidateTime>>> timed_in_one_process(const std::vector<fs::path>& dirs,
                                                                            const MeasureOptions& o, int rounds) {
  SubprocessOptions so = timing_helper_options(o);
  so.timeout_s = o.timeout_s * static_cast<double>(dirs.size() * static_cast<size_t>(rounds) + 1);  // a backstop
  std::vector<std::string> argv = {o.orchid_exe, "time-artifacts", "--json", "--rounds", std::to_string(rounds),
                                   "--min-time", std::to_string(o.min_seconds), "--min-runs",
                                   std::to_string(o.min_runs), "--timeout", std::to_string(o.timeout_s)};
  if (o.threads > 0) argv.insert(argv.end(), {"--threads", std::to_string(o.threads)});
  for (const fs::path& d : dirs) argv.push_back(d.string());
  SubprocessResult p = run_subprocess(argv, so);
  if (!p.ok()) return std::nullopt;
  try {
    nlohmann::json j = nlohmann::json::parse(p.out).at("artifacts");
    if (j.size() != dirs.size()) return std::nullopt;
    std::vector<std::vector<CandidateTime>> out(dirs.size());
    for (size_t i = 0; i < dirs.size(); ++i) {
      std::string error = j[i].at("error").get<std::string>();
      if (!error.empty()) out[i].push_back({std::nullopt, false, error.substr(0, 300)});
      for (double ms : j[i].at("rounds_ms").get<std::vector<double>>()) out[i].push_back({ms, false, ""});
    }
    return out;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Each item's time in each of `rounds` alternating rounds: written once (every round times
// the same artifact; MeasureOptions::write_jobs writes, which compile, at once) under the work
// directory, timed in one helper process (where it fails as a whole, again one artifact per
// process), then removed.
std::vector<std::vector<CandidateTime>> timed_in_rounds(const std::vector<const TimedArtifact*>& items,
                                                        const MeasureOptions& o, int rounds) {
  std::vector<fs::path> dirs;
  for (size_t i = 0; i < items.size(); ++i) {
    dirs.push_back(o.work_dir / ("timed-" + items[i]->key.substr(0, 16) + "-" + std::to_string(i)));
    fs::remove_all(dirs[i]);
  }
  struct Removed {
    const std::vector<fs::path>& dirs;
    ~Removed() {
      std::error_code ec;
      for (const fs::path& d : dirs) fs::remove_all(d, ec);
    }
  } removed{dirs};  // also where a write throws
  parallel_for(items.size(), o.write_jobs, [&](size_t i) { items[i]->write(dirs[i]); });
  std::optional<std::vector<std::vector<CandidateTime>>> out;
  if (dirs.size() > 1) out = timed_in_one_process(dirs, o, rounds);
  if (!out) return timed_one_per_process(dirs, o, rounds);
  for (size_t i = 0; i < dirs.size(); ++i)  // not reached before a candidate timed out
    if ((*out)[i].empty()) (*out)[i] = timed_one_per_process({dirs[i]}, o, rounds)[0];
  return *out;
}

}  // namespace

std::vector<CandidateTime> time_alternating(const std::vector<TimedArtifact>& items, const MeasureOptions& o,
                                            int rounds) {
  std::vector<CandidateTime> t(items.size());
  std::vector<const TimedArtifact*> timed;  // those not in the database, each (key, impl) once
  std::map<std::pair<std::string, std::string>, size_t> first;  // (key, impl) -> its entry in `timed`
  std::vector<size_t> timed_as(items.size(), SIZE_MAX);
  for (size_t i = 0; i < items.size(); ++i) {
    std::optional<tune::Measurement> m = o.db ? o.db->lookup(o.target, items[i].key, items[i].impl) : std::nullopt;
    if (m) {
      t[i].ms = m->median_ns * 1e-6;
      t[i].cached = true;
      continue;
    }
    auto [it, added] = first.try_emplace({items[i].key, items[i].impl}, timed.size());
    if (added) timed.push_back(&items[i]);
    timed_as[i] = it->second;
  }
  std::vector<CandidateTime> best(timed.size());
  std::vector<std::vector<CandidateTime>> runs = timed_in_rounds(timed, o, rounds);
  for (size_t j = 0; j < timed.size(); ++j) {
    for (const CandidateTime& r : runs[j]) best[j] = faster(best[j], r);
    if (best[j].ms && o.db != nullptr)
      o.db->record(o.target, timed[j]->key, timed[j]->impl, {*best[j].ms * 1e6, 0, o.min_runs, ""});
  }
  for (size_t i = 0; i < items.size(); ++i)
    if (timed_as[i] != SIZE_MAX) t[i] = best[timed_as[i]];
  return t;
}

std::vector<std::vector<double>> time_rounds(const std::vector<TimedArtifact>& items, const MeasureOptions& o,
                                             int rounds, std::string* failure) {
  std::vector<const TimedArtifact*> all;
  for (const TimedArtifact& item : items) all.push_back(&item);
  std::vector<std::vector<double>> out(items.size());
  std::vector<std::vector<CandidateTime>> runs = timed_in_rounds(all, o, rounds);
  for (size_t i = 0; i < items.size(); ++i)
    for (const CandidateTime& r : runs[i]) {
      if (r.ms) out[i].push_back(*r.ms);
      else if (failure && failure->empty()) *failure = r.failure;
    }
  return out;
}

ScheduleComparison compare_timed(const TimedArtifact& a, const TimedArtifact& b, const std::string& key,
                                 const MeasureOptions& o, double alpha, int rounds) {
  ScheduleComparison r;
  if (o.db)
    if (auto d = o.db->decision(o.target, key)) {
      r.a_faster = d->first == "first";
      (r.a_faster ? r.a_ms : r.b_ms) = d->second.median_ns * 1e-6;
      r.cached = true;
      return r;
    }
  fs::create_directories(o.work_dir);
  std::vector<std::vector<double>> t = time_rounds({a, b}, o, rounds, &r.failure);
  if (!r.failure.empty()) return r;  // not recorded: a failure may pass
  r.a_ms = runtime::timing_stats(t[0]).median;
  r.b_ms = runtime::timing_stats(t[1]).median;
  r.a_faster = tune::welch_less(t[0], t[1]).p <= alpha;
  if (o.db)
    o.db->decide(o.target, key, r.a_faster ? "first" : "second", {(r.a_faster ? r.a_ms : r.b_ms) * 1e6, 0, rounds, ""});
  return r;
}

std::string comparison_line(const ScheduleComparison& c, const std::string& a, const std::string& b) {
  std::string line;
  if (c.cached) {
    line = a + (c.a_faster ? " faster" : " not faster") + " (decided before)";
  } else if (!c.failure.empty()) {
    line = "not compared (" + c.failure + ")";
  } else {
    char times[96];
    std::snprintf(times, sizeof times, " %.4f ms, %s %.4f ms (medians)", c.a_ms, b.c_str(), c.b_ms);
    line = a + times;
  }
  return line + " → " + (c.a_faster ? a : b) + " kept";
}

ScheduleComparison compare_candidates(const ir::Graph& g, const StepChoice& a, const StepChoice& b,
                                      const BuildOptions& build, const MeasureOptions& o, double alpha, int rounds) {
  TimedArtifact ia = candidate_item(g, a, build, o), ib = candidate_item(g, b, build, o);
  return compare_timed(ia, ib, "candidates " + ia.key + " " + ia.impl + " against " + ib.key + " " + ib.impl, o, alpha,
                       rounds);
}

// A helper process that times artifacts: under the options' time and address-space limits,
// with OpenMP threads that spin briefly at a barrier, then sleep (GOMP_SPINCOUNT=10000, some
// tens of microseconds). With libgomp's default spin (300000), a main thread spinning at a
// join can hold the core its woken worker was queued on for a scheduler slice where other
// load shares the cores: measured, 2 to 4 of bert_tiny's 50 candidates then took 7.9 ms in
// every run (0.02 to 0.08 ms in a process of their own). Without spinning
// (OMP_WAIT_POLICY=PASSIVE), every parallel region pays a sleeping thread's wake-up: plans of
// many small steps measured up to 2.5 times what they take in a process with default waits.
SubprocessOptions timing_helper_options(const MeasureOptions& o) {
  SubprocessOptions so;
  so.timeout_s = o.timeout_s;
  so.address_space_limit = o.address_space_limit;
  so.environment_overrides = {"GOMP_SPINCOUNT=10000"};
  return so;
}

CandidateTime time_artifact(const fs::path& dir, const MeasureOptions& o) {
  CandidateTime r;
  SubprocessOptions so = timing_helper_options(o);
  std::vector<std::string> argv = {o.orchid_exe, "run", dir.string(), "--bench", "--json", "--min-time",
                                   std::to_string(o.min_seconds), "--min-runs", std::to_string(o.min_runs)};
  if (o.threads > 0) argv.insert(argv.end(), {"--threads", std::to_string(o.threads)});
  SubprocessResult p = run_subprocess(argv, so);
  if (!p.ok()) {
    r.failure = p.timed_out ? "timed out" : "exit " + std::to_string(p.exit_code) + " signal " +
                                                 std::to_string(p.term_signal) + ": " + p.err.substr(0, 300);
    return r;
  }
  r.ms = fastest_of(p.out, &r.failure);
  return r;
}

std::string show(const CandidateTime& t) {
  if (!t.ms) return "failed (" + t.failure + ")";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.4f ms%s", *t.ms, t.cached ? " (cached)" : "");
  return buf;
}

CandidateTime faster(const CandidateTime& a, const CandidateTime& b) {
  if (!a.ms) return b;
  if (!b.ms) return a;
  return *b.ms < *a.ms ? b : a;
}

size_t fastest(const std::vector<CandidateTime>& times) {
  size_t best = 0;
  for (size_t k = 1; k < times.size(); ++k)
    if (times[k].ms && (!times[best].ms || *times[k].ms < *times[best].ms)) best = k;
  return best;
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

}  // namespace

void choose_by_measuring(const ir::Graph& g, std::vector<StepChoice>& steps, const BuildOptions& build,
                         const MeasureOptions& o, std::vector<std::string>* notes) {
  if (o.orchid_exe.empty()) return;
  fs::create_directories(o.work_dir);
  // Per oneDNN step, its candidates: oneDNN (direct), generated code, and oneDNN's Winograd
  // where it runs the kernel (a convolution by constant weights). All steps' candidates are
  // timed together, in the same alternating rounds.
  std::vector<size_t> chosen;                   // the steps with a choice
  std::vector<std::vector<StepChoice>> choices;  // their candidates
  std::vector<StepChoice> all;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].kind != StepKind::OneDnn) continue;
    std::vector<StepChoice> candidates(2, steps[i]);
    candidates[1].kind = StepKind::Generated;
    if (constant_conv_weights(g, steps[i]) &&
        runtime::library_step_unsupported("onednn_winograd", kernel_graph(g, steps[i])).empty()) {
      candidates.push_back(steps[i]);
      candidates.back().kind = StepKind::OneDnnWinograd;
    }
    all.insert(all.end(), candidates.begin(), candidates.end());
    chosen.push_back(i);
    choices.push_back(std::move(candidates));
  }
  std::vector<CandidateTime> times = measure_alternating(g, all, build, o, o.rounds);
  size_t at = 0;
  for (size_t c = 0; c < chosen.size(); ++c) {
    size_t i = chosen[c];
    std::vector<CandidateTime> t(times.begin() + static_cast<std::ptrdiff_t>(at),
                                 times.begin() + static_cast<std::ptrdiff_t>(at + choices[c].size()));
    at += choices[c].size();
    size_t best = fastest(t);
    steps[i].kind = choices[c][best].kind;
    if (notes != nullptr) {
      const std::string& op = g.node(steps[i].kernel.nodes.front()).name;
      std::string line = "kernel " + std::to_string(i) + " (" + (op.empty() ? "?" : op) + "): oneDNN " + show(t[0]) +
                         (t.size() > 2 ? ", Winograd " + show(t[2]) : "") + ", generated " + show(t[1]);
      const char* names[] = {"oneDNN", "generated", "Winograd"};
      notes->push_back(line + " → " + names[best]);
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
  std::vector<StepChoice> new_before, new_chosen;
  size_t at = 0;
  ORCHID_CHECK(each.size() == kernels.size()) << "steps of other kernels";
  for (size_t i = 0; i < kernels.size(); ++i) {
    const tile::Kernel& k = kernels[i];
    size_t n = each[i].size();
    ORCHID_CHECK(at + n <= chosen.size()) << "steps of other kernels";
    const std::vector<StepChoice>& split_before = each[i];
    std::vector<StepChoice> split(chosen.begin() + static_cast<std::ptrdiff_t>(at),
                                  chosen.begin() + static_cast<std::ptrdiff_t>(at + n));
    at += n;
    std::vector<StepChoice> whole = implement_generated(g, k);
    std::vector<StepChoice> whole_computed = computed_steps(whole);
    bool compare = split_matmul(g, k, split_before) && whole_computed.size() == 1 &&
                   whole_computed[0].kind == StepKind::Generated;
    if (!compare) {
      new_before.insert(new_before.end(), split_before.begin(), split_before.end());
      new_chosen.insert(new_chosen.end(), split.begin(), split.end());
      continue;
    }
    std::vector<StepChoice> candidates = whole_computed, parts = computed_steps(split);
    candidates.insert(candidates.end(), parts.begin(), parts.end());
    fs::create_directories(o.work_dir);
    std::vector<CandidateTime> t = measure_alternating(g, candidates, build, o, o.rounds);
    std::optional<double> split_ms = 0.0;  // none where a step failed
    for (size_t i = 1; i < t.size(); ++i) {
      if (!t[i].ms) {
        split_ms.reset();
        break;
      }
      *split_ms += *t[i].ms;
    }
    bool use_whole = t[0].ms && (!split_ms || *t[0].ms < *split_ms);
    const std::vector<StepChoice>& keep_before = use_whole ? whole : split_before;
    const std::vector<StepChoice>& keep = use_whole ? whole : split;
    new_before.insert(new_before.end(), keep_before.begin(), keep_before.end());
    new_chosen.insert(new_chosen.end(), keep.begin(), keep.end());
    if (notes == nullptr) continue;
    CandidateTime split_time;
    split_time.ms = split_ms;
    split_time.failure = "a step failed";
    const std::string& op = g.node(k.nodes.front()).name;
    notes->push_back("kernel of " + (op.empty() ? std::string("?") : op) + ": split into " +
                     std::to_string(parts.size()) + " steps " + show(split_time) + ", whole generated " + show(t[0]) +
                     " → " + (use_whole ? "whole" : "split"));
  }
  ORCHID_CHECK(at == chosen.size()) << "steps of other kernels";
  chosen = std::move(new_chosen);
  return new_before;
}

}  // namespace orchid::driver
