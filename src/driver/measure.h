// Measuring candidate implementations of a kernel on this machine, in helper processes
// (libgomp is not fork-safe, and a crashing or hanging candidate must not cost the compile):
// each kernel becomes a one-step artifact, and the candidates timed together are timed in one
// helper process, `orchid time-artifacts DIR... --json`, under a time and an address-space
// limit; where that process fails as a whole, each candidate is timed again in a process of
// its own (`orchid run DIR --bench --json`), so that a crashing candidate costs itself. Times
// are cached in the tuning database, keyed by target fingerprint, canonical kernel signature
// and implementation.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "codegen/cpu/schedule.h"
#include "driver/implement.h"
#include "driver/plan_builder.h"
#include "support/subprocess.h"
#include "tune/db.h"

namespace orchid::driver {

// How helper processes time (their OpenMP waits, timing_helper_options): part of every
// time's implementation key in the database, so that times taken otherwise are taken again.
constexpr int kTimingVersion = 2;

// The versions a measured time depends on, as text for a key: the code generator's, the
// library steps' and the timing's ("codegen=N library=N timing=N").
std::string measured_versions();

struct MeasureOptions {
  std::string orchid_exe;           // the program that runs artifacts; empty: measure nothing
  std::filesystem::path work_dir;   // where candidate artifacts are written (and removed)
  tune::TuningDb* db = nullptr;     // optional cache
  std::string target;               // fingerprint for the cache key
  int threads = 0;                  // threads the helper runs with; 0: its default
  // Bytes each helper thread writes before every timed run (`--flush-bytes`, untimed), so that
  // a step timed alone reads its inputs from where a whole run leaves them, not from its
  // core's L2. Part of a time's implementation key where > 0. 0: none (the compile's default).
  int64_t flush_bytes = 0;
  double min_seconds = 0.05;
  int min_runs = 5;
  // Rounds in which the candidates of one choice are measured in turn (A B A B ..., each
  // keeping its fastest run): a burst of load from other processes then hits one round of
  // every candidate, not all of one candidate's runs.
  int rounds = 3;
  // Candidates written at once (each write generates code and compiles it, on up to the
  // compiler's jobs: both multiply) before a batch is timed, in one helper process (`orchid
  // time-artifacts`). Writes run on other threads: where one compiles a whole graph with
  // measuring (through the tuning database), make it 1.
  int write_jobs = 2;
  double timeout_s = 120;  // per candidate and round
  int64_t address_space_limit = int64_t{16} << 30;
  // Generated steps are built and timed with the schedule the database decided for their
  // kernel (tuned_schedule), where it has one: the compile tunes (`--tune-minutes`), so the
  // orchestration's costs and whole plans are those of tuned kernels.
  bool tuned = false;
};

struct CandidateTime {
  std::optional<double> ms;  // the fastest run; nullopt: the candidate failed (crash, timeout, error)
  bool cached = false;
  std::string failure;
};

// The canonical key of a kernel: its graph's canonical text (constants as inputs) hashed, and
// which inputs are weights.
std::string kernel_key(const ir::Graph& g, const StepChoice& s);

// The key of a kernel's schedule decision in the tuning database.
std::string tuning_key(const ir::Graph& g, const StepChoice& s);

// The implementation under which a step's time alone is kept in the database (with its
// kernel_key): its kind, the code generator's and library steps' versions, and the schedule
// it is measured with where that is not the default (tuned_schedule).
std::string candidate_impl(const ir::Graph& g, const StepChoice& s, const MeasureOptions& o, int cores);

// The schedule decided for a generated step's kernel, where the options use decisions
// (MeasureOptions::tuned) and the database has one other than the default schedule for
// `cores` (none where the decision is the default: its times are the untuned ones).
std::optional<codegen::cpu::Schedule> tuned_schedule(const ir::Graph& g, const StepChoice& s,
                                                      const MeasureOptions& options, int cores);
// Each step's (tuned_schedule), for build_artifact.
std::vector<std::optional<codegen::cpu::Schedule>> tuned_schedules(const ir::Graph& g,
                                                                    const std::vector<StepChoice>& steps,
                                                                    const MeasureOptions& options, int cores);

// The times of candidates (the cost loop's kernels): those not in the database measured in
// `rounds` alternating rounds, the fastest of each kept and recorded.
std::vector<CandidateTime> measure_alternating(const ir::Graph& g, const std::vector<StepChoice>& candidates,
                                               const BuildOptions& build, const MeasureOptions& options, int rounds);

// Something timed in a helper process: where the tuning database keeps its time (key, impl),
// and how to write the artifact that is timed.
struct TimedArtifact {
  std::string key, impl;
  std::function<void(const std::filesystem::path& dir)> write;
};

// The times of the items: from the database where it has them; the others (items of one key
// and impl once) written once each under the work directory and timed in `rounds`
// alternating rounds, keeping the fastest run, then recorded, and their directories removed.
// With `use_cache` false every item is timed, and what the database had is replaced.
std::vector<CandidateTime> time_alternating(const std::vector<TimedArtifact>& items, const MeasureOptions& options,
                                            int rounds, bool use_cache = true);

// The items written once each (under the work directory) and timed in `rounds` alternating
// rounds: per item, the fastest run of each round (fewer where a round failed: `failure` gets
// the first reason). Nothing is read from the database or recorded.
std::vector<std::vector<double>> time_rounds(const std::vector<TimedArtifact>& items, const MeasureOptions& options,
                                             int rounds, std::string* failure);

// Whether `a` is faster than `b` with significance: both timed in `rounds` alternating rounds
// (time_rounds: the fastest run of each round a sample), Welch's one-sided test at `alpha`.
// With `more_rounds`, where those rounds leave a's mean below b's without significance, that
// many more are timed and the test repeated over all of them; each of the two looks then tests
// at alpha / 2, so that looking twice keeps the chance of a false "faster" under alpha. Each
// side's slowest `slowest_dropped` fraction of rounds is left out of the test
// (tune::without_slowest): that narrows the spread the test sees, so a false "faster" is then
// somewhat more likely than alpha says; rounds slowed by load had hidden real differences.
// The answer is kept in the tuning database as a decision under `key` (not where a round
// failed), and read back from there (`cached`) without timing.
struct ScheduleComparison {
  bool a_faster = false;
  double a_ms = 0, b_ms = 0;  // median samples; where read back, the kept one's alone
  int rounds = 0;             // rounds timed (0 where read back)
  bool cached = false;
  std::string failure;        // where one could not be built or run
};
// The comparison for a report, `a` and `b` naming the two: "a 1.2345 ms, b 1.3456 ms
// (medians)", "a faster (decided before)", "a not faster (decided before)" or "not compared
// (why)", then " → a kept" or " → b kept".
std::string comparison_line(const ScheduleComparison& c, const std::string& a, const std::string& b);

ScheduleComparison compare_timed(const TimedArtifact& a, const TimedArtifact& b, const std::string& key,
                                 const MeasureOptions& options, double alpha, int rounds, int more_rounds = 0,
                                 double slowest_dropped = 0);

// Step `a` alone against step `b` alone (the same kernel, other implementations; each under
// its tuned schedule where the options use decisions): compare_timed, the decision keyed by
// the kernel and both implementations.
ScheduleComparison compare_candidates(const ir::Graph& g, const StepChoice& a, const StepChoice& b,
                                      const BuildOptions& build, const MeasureOptions& options, double alpha = 0.05,
                                      int rounds = 15);

// The options of a helper process that times artifacts or kernels: the options' time and
// address-space limits, and OpenMP threads that spin briefly, then sleep (timing.cpp says why).
SubprocessOptions timing_helper_options(const MeasureOptions& options);

// The fastest run of the artifact in `dir`, timed in a helper process under the options'
// time and address-space limits.
CandidateTime time_artifact(const std::filesystem::path& dir, const MeasureOptions& options);
// "1.2345 ms", "1.2345 ms (cached)" or "failed (why)", for the report.
std::string show(const CandidateTime& t);
// The faster of two measurements (a failure only where both failed).
CandidateTime faster(const CandidateTime& a, const CandidateTime& b);
// The index of the fastest measurement (the first of equals; 0 where all failed).
size_t fastest(const std::vector<CandidateTime>& times);

// Choices among options, each option one or more steps (its time the sum of theirs), decided
// on times taken side by side. A time in the database may come from another moment (a round
// of the cost loop, one round in a batch of other kernels) and would decide against one
// taken now: the options of the choices not decided before are timed afresh, all together in
// `options.rounds` alternating rounds, their times recorded, and each choice whose options
// all ran kept in the database as a decision (a failure may pass), which a later compile
// reads back (with the database's times).
struct TimedChoice {
  size_t best = 0;                   // the fastest option (the first of equals; 0 where all failed)
  std::vector<CandidateTime> times;  // per option
  bool decided_before = false;
};
std::vector<TimedChoice> choose_fastest(const ir::Graph& g, const std::vector<std::vector<std::vector<StepChoice>>>& choices,
                                        const BuildOptions& build, const MeasureOptions& options);

// A matmul kernel that implement() split around a oneDNN step (the product with the post-ops
// oneDNN takes, then the rest generated: a product and an activation oneDNN has no post-op
// for) is measured whole as well, as one generated kernel, against the split's steps as
// chosen (choose_fastest, the split's time the sum of its steps'). Where the whole kernel is
// faster it replaces the split in `chosen` (the steps of `kernels` in order, as
// choose_by_measuring left those of `each`, implement_each's). Returns the steps as
// implemented before any choice, aligned with the new `chosen`: joined(each), with the whole
// kernels in place of the splits they replaced.
// Convolution kernels are left split: their oneDNN steps may keep layout chains that a kernel
// measured alone does not see.
std::vector<StepChoice> choose_whole_over_split(const ir::Graph& g, const std::vector<tile::Kernel>& kernels,
                                                const std::vector<std::vector<StepChoice>>& each,
                                                std::vector<StepChoice>& chosen, const BuildOptions& build,
                                                const MeasureOptions& options, std::vector<std::string>* notes);

// Where the choice between implementations can be measured (a linear kernel oneDNN can run),
// measures oneDNN, generated code and, for a convolution oneDNN can run by Winograd's
// algorithm, that too, in alternating rounds, and keeps the fastest (choose_fastest: timed
// afresh side by side, the choice a decision in the database); `notes` receives one line
// per decision. Without measuring, oneDNN (direct) is kept.
void choose_by_measuring(const ir::Graph& g, std::vector<StepChoice>& steps, const BuildOptions& build,
                         const MeasureOptions& options, std::vector<std::string>* notes);

// Plan `steps_a` with schedules `a` against plan `steps_b` with `b` (per step; none: the
// default), both built whole: compare_timed with each side's slowest quarter of rounds left
// out, the decision keyed by both plans.
// compare_schedules: one plan's steps under two sets of schedules.
ScheduleComparison compare_plans(const ir::Graph& g, const std::vector<StepChoice>& steps_a,
                                 const std::vector<std::optional<codegen::cpu::Schedule>>& a,
                                 const std::vector<StepChoice>& steps_b,
                                 const std::vector<std::optional<codegen::cpu::Schedule>>& b, const BuildOptions& build,
                                 const MeasureOptions& options, double alpha = 0.05, int rounds = 15,
                                 int more_rounds = 0);
// Plans of two graphs computing the same function (a graph rewritten and the graph before, or
// one graph twice), each step under its tuned schedule (tuned_schedules): as compare_plans.
ScheduleComparison compare_tuned_plans(const ir::Graph& ga, const std::vector<StepChoice>& steps_a,
                                       const ir::Graph& gb, const std::vector<StepChoice>& steps_b,
                                       const BuildOptions& build, const MeasureOptions& options, double alpha,
                                       int rounds, int more_rounds);
ScheduleComparison compare_schedules(const ir::Graph& g, const std::vector<StepChoice>& steps,
                                     const std::vector<std::optional<codegen::cpu::Schedule>>& a,
                                     const std::vector<std::optional<codegen::cpu::Schedule>>& b,
                                     const BuildOptions& build, const MeasureOptions& options, double alpha = 0.05,
                                     int rounds = 15);

// Steps measured alone see their inputs and outputs plain: where choose_by_measuring made
// generated steps of kernels that read or write buffers kept in nChw8c, nChw16c or nhwc between oneDNN
// convolutions in the plan `before` (layouts.h), oneDNN's time alone included the reorders
// that the chain avoids, and the generated step breaks the chain. Then whole plans are
// measured, in alternating rounds: the choices as measured, `before`, and the choices
// outside such chains; `steps` becomes the fastest, and `notes` receives the times.
void check_choices_on_plans(const ir::Graph& g, const std::vector<StepChoice>& before, std::vector<StepChoice>& steps,
                            const BuildOptions& build, const MeasureOptions& options, std::vector<std::string>* notes);

}  // namespace orchid::driver
