// Tuning the schedule of a generated CPU kernel on this machine (DPAnsor's combination,
// ../shared/papers/droplet-dpansor.txt §2.3, with Orchid's parts): the kernel's space of
// schedules (tune/cpu_space.h) is explored by the evolutionary search ranked by the analytic
// model (tune/explore.h, tune/estimate.h); the best explored points (the cheapest of each
// combination of categorical knobs first: tune::diverse_top) are measured with the default
// schedule; Droplet Search (tune/droplet.h) descends from the fastest of them where
// it is faster than the default with significance when the two are timed again together
// (Welch's test), else from the default.
// Measuring compiles the schedules' kernels many to a shared object and times them together
// in a helper process (`orchid time-kernels`): a crashing or hanging variant costs one batch.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "codegen/cpu/compiler.h"
#include "codegen/cpu/schedule.h"
#include "driver/measure.h"
#include "driver/plan_builder.h"
#include "ir/graph.h"
#include "target/target.h"
#include "tile/kernel.h"

namespace orchid::driver {

struct TuneOptions {
  int explore_trials = 300;  // points priced by the model
  int measure_top = 12;      // explored points measured with the default (diverse_top)
  int budget = 48;           // point measurements in all (the top's and the descent's; 3 at least)
  double alpha = 0.05;       // the descent's significance (Welch + Holm)
  int rounds = 5, runs = 3;  // samples per point: one per round over a batch, the fastest of its runs
  uint64_t seed = 1;
};

struct TuneResult {
  codegen::cpu::Schedule best, initial;  // the fastest found; the default
  double best_ms = 0, initial_ms = 0;    // their median times (0: not measured)
  int measured = 0;                      // point measurements
  int moves = 0;                         // the descent's
  bool converged = false;                // the descent stopped at a local optimum
  double seconds = 0;                    // tuning time, wall clock
  std::vector<std::string> failures;     // batches that failed to build or run
};

TuneResult tune_kernel(const ir::Graph& g, const tile::Kernel& k, const target::Target& t, const BuildOptions& build,
                       const MeasureOptions& measure, const TuneOptions& options);

// Tuning the generated steps of a plan (the compile's tuning stage, `--tune-minutes`): each
// generated kernel's decision is read from the tuning database where it has one; the others
// are tuned, the slowest first by the analytic model's time of their default schedule, while
// the time budget lasts (a kernel begun is finished), each decision recorded (the default
// where nothing measured faster with significance). A progress line with the time left goes
// to `progress`, per kernel. Returns each step's schedule (none: not generated, or not tuned:
// the default); `notes` get a line per generated step for the report.
struct PlanTuneOptions {
  TuneOptions kernel;
  double minutes = 0;  // 0: no tuning, decisions in the database unused
};

std::vector<std::optional<codegen::cpu::Schedule>> tune_steps(const ir::Graph& g, const std::vector<StepChoice>& steps,
                                                              const target::Target& t, const BuildOptions& build,
                                                              const MeasureOptions& measure,
                                                              const PlanTuneOptions& options,
                                                              const std::function<void(const std::string&)>& progress,
                                                              std::vector<std::string>* notes);

// Times schedules of kernels, holding the compiler (its identity is queried once). time():
// each schedule's times, one sample per round — the fastest of its `runs` runs in that round —
// in ms (empty where its batch failed). The kernels are compiled build.kernels_per_library (at
// least 16) to a shared object, each timed in a helper process on measure.threads threads,
// round after round over the batch. A failure is appended to `failures`.
class ScheduleTimer {
 public:
  ScheduleTimer(const BuildOptions& build, const MeasureOptions& measure);
  std::vector<std::vector<double>> time(const ir::Graph& g, const tile::Kernel& k,
                                        const std::vector<codegen::cpu::Schedule>& schedules, int rounds, int runs,
                                        std::vector<std::string>* failures) const;

 private:
  codegen::cpu::Compiler compiler_;
  size_t per_library_;
  MeasureOptions measure_;
};

double median_ms(std::vector<double> samples);  // 0 for none

}  // namespace orchid::driver
