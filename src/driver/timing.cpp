// Timing artifacts in helper processes (measure.h): one process for a batch (`orchid
// time-artifacts`), one per artifact where that fails, the database's times read and recorded,
// and comparisons decided by Welch's test.
#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "codegen/cpu/codegen.h"
#include "driver/measure.h"
#include "runtime/library_step.h"
#include "runtime/plan.h"
#include "runtime/profile.h"
#include "support/parallel.h"
#include "support/subprocess.h"
#include "tune/stats.h"

namespace orchid::driver {

namespace fs = std::filesystem;

namespace {

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

// The command line of a helper that times artifacts: the program, `command`, then the runs
// and threads the options ask for.
std::vector<std::string> helper_argv(const MeasureOptions& o, std::vector<std::string> command) {
  command.insert(command.begin(), o.orchid_exe);
  command.insert(command.end(), {"--min-time", std::to_string(o.min_seconds), "--min-runs", std::to_string(o.min_runs)});
  if (o.threads > 0) command.insert(command.end(), {"--threads", std::to_string(o.threads)});
  if (o.flush_bytes > 0) command.insert(command.end(), {"--flush-bytes", std::to_string(o.flush_bytes)});
  return command;
}

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
  std::vector<std::string> argv = helper_argv(o, {"time-artifacts", "--json", "--rounds", std::to_string(rounds),
                                                  "--timeout", std::to_string(o.timeout_s)});
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
                                            int rounds, bool use_cache) {
  std::vector<CandidateTime> t(items.size());
  std::vector<const TimedArtifact*> timed;  // those not in the database, each (key, impl) once
  std::map<std::pair<std::string, std::string>, size_t> first;  // (key, impl) -> its entry in `timed`
  std::vector<size_t> timed_as(items.size(), SIZE_MAX);
  for (size_t i = 0; i < items.size(); ++i) {
    std::optional<tune::Measurement> m =
        o.db && use_cache ? o.db->lookup(o.target, items[i].key, items[i].impl) : std::nullopt;
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
                                 const MeasureOptions& o, double alpha, int rounds, int more_rounds,
                                 double slowest_dropped) {
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
  const double look = more_rounds > 0 ? alpha / 2 : alpha;
  auto verdict = [&] {
    return tune::faster_verdict(tune::without_slowest(t[0], slowest_dropped), tune::without_slowest(t[1], slowest_dropped),
                                look);
  };
  tune::Verdict v = verdict();
  r.rounds = rounds;
  if (v == tune::Verdict::Leaning && more_rounds > 0) {
    std::vector<std::vector<double>> more = time_rounds({a, b}, o, more_rounds, &r.failure);
    if (!r.failure.empty()) return r;
    for (size_t i = 0; i < t.size(); ++i) t[i].insert(t[i].end(), more[i].begin(), more[i].end());
    v = verdict();
    r.rounds += more_rounds;
  }
  r.a_faster = v == tune::Verdict::Faster;
  r.a_ms = runtime::timing_stats(t[0]).median;
  r.b_ms = runtime::timing_stats(t[1]).median;
  if (o.db)
    o.db->decide(o.target, key, r.a_faster ? "first" : "second", {(r.a_faster ? r.a_ms : r.b_ms) * 1e6, 0, r.rounds, ""});
  return r;
}

std::string measured_versions() {
  return "codegen=" + std::to_string(codegen::cpu::kCodegenVersion) +
         " library=" + std::to_string(runtime::kLibraryStepVersion) + " timing=" + std::to_string(kTimingVersion);
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
  std::vector<std::string> argv = helper_argv(o, {"run", dir.string(), "--bench", "--json"});
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

}  // namespace orchid::driver
