// `orchid time-artifacts DIR...`: times several CPU artifacts in one process, in alternating
// rounds (each round runs every artifact in turn, warm-up first, until --min-runs and
// --min-time are met, and keeps its fastest run), so that a burst of load from other processes
// hits one round of every artifact rather than all of one artifact's runs. The compiler's
// measurements time their candidates through it, in a helper process: one process per batch
// of candidates rather than one per candidate and round. An artifact that cannot be loaded or
// run is reported with its error and the others are timed; a crash loses the batch, which the
// compiler then times one artifact per process. `--json` prints
// {"artifacts": [{"rounds_ms": [...], "error": ""}, ...]} in the order given.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "run_artifact.h"
#include "runtime/plan.h"

namespace orchid::cli {

namespace {

struct TimeArtifactsOptions {
  std::vector<std::string> dirs;
  BenchOptions bench;
  int rounds = 3;
};

struct Timed {
  std::unique_ptr<CpuArtifactRun> run;
  std::vector<double> rounds_ms;  // the fastest run of each round
  std::string error;
};

// Runs `f`, keeping an error's message in `t` (the artifact is then not run again).
template <class F>
void guarded(Timed& t, F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    t.error = e.what();
    t.run.reset();
  }
}

int time_artifacts(const TimeArtifactsOptions& o) {
  std::vector<Timed> timed(o.dirs.size());
  for (int round = 0; round < o.rounds; ++round)
    for (size_t i = 0; i < o.dirs.size(); ++i) {
      Timed& t = timed[i];
      if (!t.error.empty()) continue;
      guarded(t, [&] {
        if (runtime::read_plan(o.dirs[i]).device != runtime::PlanDevice::Cpu)
          throw std::runtime_error(o.dirs[i] + ": not a CPU artifact");
        CpuArtifactRun run(o.dirs[i], RunIo{}, o.bench.threads);
        std::vector<double> ms = bench_times([&] { return run.run_ms(); }, o.bench);
        t.rounds_ms.push_back(*std::min_element(ms.begin(), ms.end()));
      });
    }
  if (o.bench.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const Timed& t : timed) out.push_back({{"rounds_ms", t.rounds_ms}, {"error", t.error}});
    std::printf("%s\n", nlohmann::json{{"artifacts", out}}.dump().c_str());
    return 0;
  }
  for (size_t i = 0; i < timed.size(); ++i) {
    if (!timed[i].error.empty()) {
      std::printf("%s: failed: %s\n", o.dirs[i].c_str(), timed[i].error.c_str());
      continue;
    }
    const std::vector<double>& r = timed[i].rounds_ms;
    std::printf("%s: fastest %.4f ms over %zu rounds\n", o.dirs[i].c_str(), *std::min_element(r.begin(), r.end()),
                r.size());
  }
  return 0;
}

}  // namespace

Command add_time_artifacts(CLI::App& app) {
  auto o = std::make_shared<TimeArtifactsOptions>();
  o->bench.bench = true;
  CLI::App* cmd = app.add_subcommand("time-artifacts", "Time several CPU artifacts in one process, in alternating rounds");
  cmd->add_option("artifacts", o->dirs, "the artifact directories")->required()->check(CLI::ExistingDirectory);
  cmd->add_option("--rounds", o->rounds, "rounds over the artifacts (default 3)")->check(CLI::Range(1, 1000));
  cmd->add_option("--min-time", o->bench.min_time, "seconds of runs per artifact and round (default 1)");
  cmd->add_option("--min-runs", o->bench.min_runs, "runs per artifact and round at least (default 10)");
  cmd->add_option("--threads", o->bench.threads, "threads (default: all the process may use)");
  cmd->add_flag("--json", o->bench.json, "print {\"artifacts\": [{\"rounds_ms\": [...], \"error\": \"\"}, ...]}");
  return {cmd, [o] { return time_artifacts(*o); }};
}

}  // namespace orchid::cli
