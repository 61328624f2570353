// Tuning the schedule of a generated CPU kernel on this machine (DPAnsor's combination,
// ../shared/papers/droplet-dpansor.txt §2.3, with Orchid's parts): the kernel's space of
// schedules (tune/cpu_space.h) is explored by the evolutionary search ranked by the analytic
// model (tune/explore.h, tune/estimate.h); the best explored points (the cheapest of each
// combination of categorical knobs first: tune::diverse_top) are measured with the default
// schedule; Droplet Search (tune/droplet.h) descends from the fastest of them where
// it is faster than the default with significance when the two are timed again together
// (Welch's test), else from the default; and the best it ends at is timed with the default
// once more, in one batch, and kept only where faster with significance there.
// Measuring compiles the schedules' kernels many to a shared object and times them together
// in a helper process (`orchid time-kernels`): a crashing or hanging variant costs one batch.
#pragma once

#include <chrono>
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
#include "tune/cpu_space.h"
#include "tune/droplet.h"

namespace orchid::driver {

struct TuneOptions {
  int explore_trials = 300;  // points priced by the model
  int tile_seeds = 8;        // exploration's seeds from the hierarchical tile search (tune/seeds.h), beside the default
  int measure_top = 12;      // explored points measured with the default (diverse_top)
  int budget = 160;          // point measurements in all (the top's, the descent's, the confirmations'; 5 at least)
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

// Tuning the generated steps of a plan (the compile's tuning stage, `--tune-minutes`), and the
// generated alternative of its library steps (oneDNN, direct or Winograd): library or
// generated code is a knob of a linear kernel's space. Each distinct kernel (by its database
// key) is one task, weighted by the steps that run it. Its decision is read from the tuning
// database where it has one; the others are tuned a unit at a time (KernelTuner), the task
// scheduler (tune/scheduler.h) choosing which next, while the time budget lasts (a unit begun
// is finished). Each kernel begun gets its decision recorded: the best found (the default
// where nothing measured faster with significance). A progress line with the time left goes
// to `progress`, per unit.
//
// A library step whose generated kernel's decision is not the default schedule is then timed
// against that kernel under it, together in alternating rounds (compare_candidates), and
// becomes a generated step where that is faster with significance; the answer is kept in the
// database. Library steps whose generated code took more than twice their time in
// choose_by_measuring (which already chose between the library and the default schedule) are
// not tuned.
//
// Returns the steps (library steps the tuning made generated) and each step's schedule (none:
// not generated, or not tuned: the default); `notes` get a line per kernel, per library step
// compared and a summary for the report.
struct PlanTuneOptions {
  TuneOptions kernel;
  double minutes = 0;  // time to tune (decisions in the database are read whatever it is)
};

struct PlanTuning {
  std::vector<StepChoice> steps;                                  // the plan's, as tuned
  std::vector<std::optional<codegen::cpu::Schedule>> schedules;  // per step
  int tuned = 0;       // kernels tuned now (not read from the database)
  double seconds = 0;  // spent tuning
};

PlanTuning tune_steps(const ir::Graph& g, const std::vector<StepChoice>& steps, const target::Target& t,
                      const BuildOptions& build, const MeasureOptions& measure, const PlanTuneOptions& options,
                      const std::function<void(const std::string&)>& progress, std::vector<std::string>* notes);

// Kernels are tuned alone, on inputs the cache holds; the plan is checked whole: the tuned
// plan (its steps and schedules) is kept where it is faster with significance than `steps`
// under default schedules (compare_plans): then `steps` becomes tuned.steps; else tuned's
// schedules are cleared and its steps are `steps`. Nothing is timed where the tuned plan is
// the plan under default schedules, or where the database holds the answer. A line for the
// report goes to `notes`.
void keep_tuned_if_faster(const ir::Graph& g, std::vector<StepChoice>& steps, PlanTuning& tuned,
                          const BuildOptions& build, const MeasureOptions& measure, std::vector<std::string>* notes);

// The kernel a schedule is timed as: constant weights that its GEMM can read as panels are
// read so, as the artifact stores them (plan_builder.cpp, panel_weights), not packed again on
// every run.
codegen::cpu::GeneratedKernel timed_kernel(const ir::Graph& g, const tile::Kernel& k, const codegen::cpu::Schedule& s,
                                           const std::string& symbol);

// Times schedules of kernels, holding the compiler (its identity is queried once). time():
// each schedule's times, one sample per round — the fastest of its `runs` runs in that round —
// in ms (empty where its batch failed). The kernels are compiled build.kernels_per_library (at
// least 16) to a shared object, each timed in a helper process on measure.threads threads,
// round after round over the batch (each as timed_kernel). A failure is appended to
// `failures`.
class ScheduleTimer {
 public:
  ScheduleTimer(const BuildOptions& build, const MeasureOptions& measure);
  std::vector<std::vector<double>> time(const ir::Graph& g, const tile::Kernel& k,
                                        const std::vector<codegen::cpu::Schedule>& schedules, int rounds, int runs,
                                        std::vector<std::string>* failures) const;

 private:
  codegen::cpu::Compiler compiler_;
  size_t per_library_;
  bool flush_denormals_;  // BuildOptions::flush_denormals: kernels timed as the plan runs them
  MeasureOptions measure_;
};

// One kernel's tuning a unit at a time, for the task scheduler of a plan (tune/scheduler.h):
// the first unit explores and measures the explored top; each later one is a step of the
// descent; the last confirms the best against the default. `g`, `k`, `t` and `timer` must
// outlive it.
class KernelTuner {
 public:
  KernelTuner(const ir::Graph& g, const tile::Kernel& k, const target::Target& t, const ScheduleTimer& timer,
              const TuneOptions& options, int cores);
  KernelTuner(const KernelTuner&) = delete;  // the descent refers to the space
  KernelTuner& operator=(const KernelTuner&) = delete;
  bool unit();            // false, doing nothing, once finished
  // Its best was confirmed against the default (confirm): after the descent ended (converged,
  // or spent the kernel's budget), or where tuning stopped before.
  bool finished() const;
  bool descended() const { return descent_ && descent_->ended(); }
  // The best against the default in one batch, now (the last unit, also where tuning stops
  // before the descent ends): the best kept where faster with significance, else the default.
  void confirm();
  int measured() const { return r_.measured; }
  double best_ms() const { return r_.best_ms; }
  // The default's measured time scaled by the model's ratio of the best explored point to the
  // default: what the model expects tuning can reach (0 before the first unit).
  double bound_ms() const { return bound_ms_; }
  const TuneResult& result() const { return r_; }

 private:
  void explore();
  std::vector<tune::Point> seeds() const;
  std::vector<std::vector<double>> measure(const std::vector<tune::Point>& points);
  // The default and p timed together: whether p is faster with significance, and the samples
  // (the default's, then p's).
  std::pair<bool, std::vector<std::vector<double>>> faster_than_default(const tune::Point& p);

  const ir::Graph& g_;
  const tile::Kernel& k_;
  const target::Target& t_;
  const ScheduleTimer& timer_;
  TuneOptions o_;
  tune::CpuSpace space_;
  tune::Point initial_point_;  // the default schedule's
  std::optional<tune::Descent> descent_;
  tune::Point best_point_;
  TuneResult r_;
  double start_ms_ = 0, bound_ms_ = 0;
  bool confirmed_ = false;
  std::chrono::steady_clock::time_point start_;
};

double median_ms(std::vector<double> samples);  // 0 for none

}  // namespace orchid::driver
