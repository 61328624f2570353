// `orchid time-artifacts DIR...`: times several CPU artifacts in one process, in alternating
// rounds (each round loads every artifact in turn and runs it, warm-up first, until
// --min-runs and --min-time are met, keeping its fastest run), so that a burst of load from
// other processes hits one round of every artifact rather than all of one artifact's runs.
// The compiler's measurements time their candidates through it, in a helper process: one
// process per batch of candidates rather than one per candidate and round. An artifact that
// cannot be loaded or run is reported with its error and the others are timed. With
// --timeout, an artifact whose load and runs in one round take longer is reported as timed
// out and the process ends at once, reporting what it has: the artifacts not reached have
// neither times nor an error. A crash loses the batch; the compiler then times each artifact
// in a process of its own. `--json` prints
// {"artifacts": [{"rounds_ms": [...], "error": ""}, ...]} in the order given.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <thread>

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
  double timeout_s = 0;  // per artifact and round; 0: none
};

struct Timed {
  std::vector<double> rounds_ms;  // the fastest run of each round
  std::string error;
};

void print(const std::vector<std::string>& dirs, const std::vector<Timed>& timed, bool json) {
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const Timed& t : timed) out.push_back({{"rounds_ms", t.rounds_ms}, {"error", t.error}});
    std::printf("%s\n", nlohmann::json{{"artifacts", out}}.dump().c_str());
  } else {
    for (size_t i = 0; i < timed.size(); ++i) {
      const std::vector<double>& r = timed[i].rounds_ms;
      if (!timed[i].error.empty())
        std::printf("%s: failed: %s\n", dirs[i].c_str(), timed[i].error.c_str());
      else if (r.empty())
        std::printf("%s: not timed\n", dirs[i].c_str());
      else
        std::printf("%s: fastest %.4f ms over %zu rounds\n", dirs[i].c_str(), *std::min_element(r.begin(), r.end()),
                    r.size());
    }
  }
  std::fflush(stdout);
}

// The fastest run of the artifact in `dir`, loaded afresh (only one artifact is in memory at a
// time).
double fastest_ms(const std::string& dir, const BenchOptions& bench) {
  if (runtime::read_plan(dir).device != runtime::PlanDevice::Cpu) throw std::runtime_error(dir + ": not a CPU artifact");
  CpuArtifactRun run(dir, RunIo{}, bench.threads);
  std::vector<double> ms = bench_times([&] { return run.run_ms(bench.flush_bytes); }, bench);
  return *std::min_element(ms.begin(), ms.end());
}

// The rounds, under a watchdog where o.timeout_s > 0: the watchdog owns the results while
// `current` runs past the limit, reports them and ends the process.
class Rounds {
 public:
  explicit Rounds(const TimeArtifactsOptions& o) : o_(o), timed_(o.dirs.size()) {}

  std::vector<Timed> run() {
    std::thread watchdog;
    if (o_.timeout_s > 0) watchdog = std::thread([this] { watch(); });
    for (int round = 0; round < o_.rounds; ++round)
      for (size_t i = 0; i < o_.dirs.size(); ++i) time_one(i);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      finished_ = true;
    }
    wake_.notify_all();
    if (watchdog.joinable()) watchdog.join();
    return timed_;
  }

 private:
  void time_one(size_t i) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!timed_[i].error.empty()) return;
      current_ = i;
      since_ = std::chrono::steady_clock::now();
    }
    std::string error;
    double ms = 0;
    try {
      ms = fastest_ms(o_.dirs[i], o_.bench);
    } catch (const std::exception& e) {
      error = e.what();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    current_ = SIZE_MAX;
    if (error.empty())
      timed_[i].rounds_ms.push_back(ms);
    else
      timed_[i].error = error;
  }

  void watch() {
    std::unique_lock<std::mutex> lock(mutex_);
    auto limit = std::chrono::duration<double>(o_.timeout_s);
    while (!finished_) {
      wake_.wait_for(lock, std::chrono::milliseconds(100));
      if (finished_ || current_ == SIZE_MAX || std::chrono::steady_clock::now() - since_ < limit) continue;
      char why[64];
      std::snprintf(why, sizeof why, "timed out (over %g s in one round)", o_.timeout_s);
      timed_[current_].error = why;
      print(o_.dirs, timed_, o_.bench.json);
      _exit(0);  // the artifact's run cannot be stopped; the process ends with it
    }
  }

  const TimeArtifactsOptions& o_;
  std::vector<Timed> timed_;
  std::mutex mutex_;
  std::condition_variable wake_;
  size_t current_ = SIZE_MAX;
  std::chrono::steady_clock::time_point since_;
  bool finished_ = false;
};

int time_artifacts(const TimeArtifactsOptions& o) {
  print(o.dirs, Rounds(o).run(), o.bench.json);
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
  cmd->add_option("--flush-bytes", o->bench.flush_bytes,
                  "before each run, write this many bytes on each thread (not timed), so that the run finds its data "
                  "in the shared cache or memory, as a step of a whole model does (default 0)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--timeout", o->timeout_s,
                  "seconds an artifact may take in one round; past them it is reported as timed out and the "
                  "process ends with what it has (default: no limit)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--json", o->bench.json, "print {\"artifacts\": [{\"rounds_ms\": [...], \"error\": \"\"}, ...]}");
  return {cmd, [o] { return time_artifacts(*o); }};
}

}  // namespace orchid::cli
