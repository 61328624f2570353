#include "driver/tune.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>

#include <nlohmann/json.hpp>

#include "codegen/cpu/codegen.h"
#include "codegen/cpu/compiler.h"
#include "codegen/cpu/lower.h"
#include "runtime/profile.h"
#include "support/error.h"
#include "support/subprocess.h"
#include "tune/cpu_space.h"
#include "tune/droplet.h"
#include "tune/estimate.h"
#include "tune/explore.h"
#include "tune/scheduler.h"
#include "tune/seeds.h"
#include "tune/stats.h"

namespace orchid::driver {

namespace fs = std::filesystem;

double median_ms(std::vector<double> s) { return s.empty() ? 0 : runtime::timing_stats(std::move(s)).median; }

namespace {

// The fastest run of each round (the helper's times come round by round, `runs` to a round):
// a burst of load from other processes slows whole rounds of every kernel, and the slower
// runs within a round measure it.
std::vector<double> round_minima(const std::vector<double>& ms, int runs) {
  std::vector<double> out;
  const size_t per = static_cast<size_t>(std::max(1, runs));
  for (size_t first = 0; first < ms.size(); first += per)
    out.push_back(*std::min_element(ms.begin() + first, ms.begin() + std::min(ms.size(), first + per)));
  return out;
}

// One batch: its kernels in one shared object, timed by the helper (with FTZ and DAZ where the
// plan will run so: BuildOptions::flush_denormals). Empty samples (and a failure) where it
// cannot be built or run.
std::vector<std::vector<double>> time_batch(const std::vector<codegen::cpu::GeneratedKernel>& kernels,
                                            const codegen::cpu::Compiler& compiler, const MeasureOptions& m,
                                            bool flush_denormals, int rounds, int runs,
                                            std::vector<std::string>* failures) {
  std::vector<std::vector<double>> out(kernels.size());
  std::string why;
  try {
    codegen::cpu::CompiledObject lib = compiler.compile(codegen::cpu::library_source(kernels));
    SubprocessOptions so = timing_helper_options(m);
    std::vector<std::string> argv = {m.orchid_exe, "time-kernels", lib.path.string(), "--json",
                                     "--rounds", std::to_string(rounds), "--runs", std::to_string(runs)};
    if (m.threads > 0) argv.insert(argv.end(), {"--threads", std::to_string(m.threads)});
    if (flush_denormals) argv.push_back("--flush-denormals");
    SubprocessResult p = run_subprocess(argv, so);
    if (!p.ok()) {
      why = p.timed_out ? "timed out" : "exit " + std::to_string(p.exit_code) + ": " + p.err.substr(0, 300);
    } else {
      nlohmann::json j = nlohmann::json::parse(p.out);
      const nlohmann::json& ks = j.at("kernels");
      ORCHID_USER_CHECK(ks.size() == kernels.size()) << ks.size() << " timings of " << kernels.size() << " kernels";
      for (size_t i = 0; i < ks.size(); ++i) out[i] = round_minima(ks[i].at("times_ms").get<std::vector<double>>(), runs);
      return out;
    }
  } catch (const std::exception& e) {
    why = e.what();
  }
  if (failures) failures->push_back("a batch of " + std::to_string(kernels.size()) + " schedules: " + why);
  return std::vector<std::vector<double>>(kernels.size());
}

}  // namespace

codegen::cpu::GeneratedKernel timed_kernel(const ir::Graph& g, const tile::Kernel& k, const codegen::cpu::Schedule& s,
                                           const std::string& symbol) {
  return codegen::cpu::generate_kernel(g, k, s, symbol, codegen::cpu::packable_weights(g, k, s));
}

ScheduleTimer::ScheduleTimer(const BuildOptions& build, const MeasureOptions& measure)
    : compiler_(build.compiler),
      per_library_(static_cast<size_t>(std::max(16, build.kernels_per_library))),
      flush_denormals_(build.flush_denormals),
      measure_(measure) {
  ORCHID_CHECK(!measure.orchid_exe.empty()) << "tuning measures kernels: no program to time them with";
}

std::vector<std::vector<double>> ScheduleTimer::time(const ir::Graph& g, const tile::Kernel& k,
                                                     const std::vector<codegen::cpu::Schedule>& schedules, int rounds,
                                                     int runs, std::vector<std::string>* failures) const {
  const size_t per = per_library_;
  std::vector<std::vector<double>> out;
  for (size_t first = 0; first < schedules.size(); first += per) {
    std::vector<codegen::cpu::GeneratedKernel> batch;
    for (size_t i = first; i < std::min(schedules.size(), first + per); ++i)
      batch.push_back(timed_kernel(g, k, schedules[i], "orc_tune" + std::to_string(i - first)));
    std::vector<std::vector<double>> t = time_batch(batch, compiler_, measure_, flush_denormals_, rounds, runs, failures);
    out.insert(out.end(), t.begin(), t.end());
  }
  return out;
}

KernelTuner::KernelTuner(const ir::Graph& g, const tile::Kernel& k, const target::Target& t,
                         const ScheduleTimer& timer, const TuneOptions& o, int cores)
    : g_(g), k_(k), t_(t), timer_(timer), o_(o), space_(tune::cpu_space(g, k, cores)),
      initial_point_(space_.point_of(space_.base)), start_(std::chrono::steady_clock::now()) {
  r_.initial = space_.base;
  r_.best = space_.base;
}

std::vector<std::vector<double>> KernelTuner::measure(const std::vector<tune::Point>& points) {
  std::vector<codegen::cpu::Schedule> scheds;
  for (const tune::Point& p : points) scheds.push_back(space_.schedule(p));
  r_.measured += static_cast<int>(points.size());
  return timer_.time(g_, k_, scheds, o_.rounds, o_.runs, &r_.failures);
}

// The default's point, then those of the cheapest one- and two-level tilings the tile search
// finds (fewer visits than its defaults: it prices each tile through the lowering's outline).
std::vector<tune::Point> KernelTuner::seeds() const {
  std::vector<tune::Point> out{initial_point_};
  if (o_.tile_seeds <= 0 || o_.explore_trials <= 1) return out;  // a single trial prices the default alone
  tile::HierarchySearchOptions h;
  h.outer.top_k = 4;
  h.outer.max_visits = 96;
  h.inner_top_k = 2;
  h.inner_max_visits = 24;
  h.inner_max_splits = 4;
  h.top_k = 2 * static_cast<size_t>(o_.tile_seeds);  // some may fall outside the space (too many tasks)
  for (const codegen::cpu::Schedule& s : tune::tile_search_seeds(g_, k_, space_.base, t_, h)) {
    tune::Point p = space_.point_of(s);
    if (space_.space.contains(p) && std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
    if (out.size() > static_cast<size_t>(o_.tile_seeds)) break;
  }
  return out;
}

// Exploration priced by the model, from seeds(); the default and the cheapest explored points of each kind
// measured together, leaving room for the second timing of the fastest, a step of the descent
// and the last confirmation. The descent starts from the fastest explored point by mean where a second timing,
// of it and the default alone together, finds it faster with significance (one hypothesis: no
// correction to pay); the fastest of several by mean alone is as often the luckiest.
void KernelTuner::explore() {
  const tune::Point& initial = initial_point_;
  auto cost = [&](const tune::Point& p) { return tune::estimate_cpu_schedule(g_, k_, space_.schedule(p), t_).seconds; };
  Rng rng(o_.seed);
  tune::ExploreOptions eo;
  eo.trials = o_.explore_trials;
  std::vector<tune::Ranked> explored = tune::explore(space_.space, cost, seeds(), eo, rng);
  const double model_default = cost(initial);
  const int explored_top = std::max(0, std::min(o_.measure_top, o_.budget - 7));
  std::vector<tune::Point> top{initial};
  for (const tune::Point& p : tune::diverse_top(space_.space, explored, static_cast<size_t>(explored_top), initial))
    top.push_back(p);
  std::vector<std::vector<double>> first = measure(top);
  size_t fastest = 0;
  for (size_t i = 1; i < top.size(); ++i)
    if (!first[i].empty() && tune::mean_of(first[i]) < tune::mean_of(first[fastest])) fastest = i;
  if (fastest != 0) {
    if (!faster_than_default(top[fastest]).first) fastest = 0;
  }
  r_.initial_ms = median_ms(first[0]);
  if (!explored.empty() && model_default > 0) bound_ms_ = r_.initial_ms * explored.front().cost / model_default;
  start_ms_ = median_ms(first[fastest]);
  best_point_ = top[fastest];
  r_.best = space_.schedule(best_point_);
  r_.best_ms = start_ms_;
  tune::DropletOptions d;
  d.budget = std::max(2, o_.budget - r_.measured - 2);  // 2 left for the confirmation
  d.alpha = o_.alpha;
  descent_.emplace(space_.space, top[fastest], d);
}

bool KernelTuner::unit() {
  if (finished()) return false;
  if (!descent_) {
    explore();
  } else if (!descent_->ended()) {
    tune::MeasureFn m = [this](const std::vector<tune::Point>& points) { return measure(points); };
    descent_->step(m);
    const tune::DropletResult& dr = descent_->result();
    best_point_ = dr.best;
    r_.best = space_.schedule(dr.best);
    r_.best_ms = median_ms(dr.samples);
    if (r_.best_ms <= 0) r_.best_ms = start_ms_;
    r_.moves = dr.moves();
    r_.converged = dr.converged;
  } else {
    confirm();
  }
  r_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  return true;
}

std::pair<bool, std::vector<std::vector<double>>> KernelTuner::faster_than_default(const tune::Point& p) {
  std::vector<std::vector<double>> pair = measure({initial_point_, p});
  return {tune::p_faster(pair[1], pair[0]) <= o_.alpha, std::move(pair)};
}

// The best and the default timed together once more: the best stays only where it is faster
// with significance. Its times so far came from batches the default was not in (the descent's
// last step), and a move that was significant within one batch can be noise across batches.
void KernelTuner::confirm() {
  confirmed_ = true;
  if (r_.best == r_.initial) {  // the default's own times, from the batch it was compared in
    r_.best_ms = r_.initial_ms;
    return;
  }
  auto [faster, pair] = faster_than_default(best_point_);
  if (!pair[0].empty()) r_.initial_ms = median_ms(pair[0]);
  if (faster) {
    r_.best_ms = median_ms(pair[1]);
  } else {
    r_.best = r_.initial;
    r_.best_ms = r_.initial_ms;
  }
}

bool KernelTuner::finished() const { return confirmed_; }

TuneResult tune_kernel(const ir::Graph& g, const tile::Kernel& k, const target::Target& t, const BuildOptions& build,
                       const MeasureOptions& m, const TuneOptions& o) {
  ScheduleTimer timer(build, m);
  KernelTuner tuner(g, k, t, timer, o, build.cores);
  while (tuner.unit()) {
  }
  return tuner.result();
}

namespace {

std::string ms_text(double ms) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4f ms", ms);
  return b;
}

// The plan's generated kernels, each distinct one (by its database key) once, with the steps
// that run it.
struct KernelTask {
  std::string key;
  std::vector<size_t> steps;
};

// The step as generated code (the alternative of a library step).
StepChoice as_generated(StepChoice s) {
  s.kind = StepKind::Generated;
  return s;
}

std::vector<KernelTask> kernel_tasks(const ir::Graph& g, const std::vector<StepChoice>& steps) {
  std::vector<KernelTask> out;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].kind != StepKind::Generated && !is_library(steps[i].kind)) continue;
    std::string key = tuning_key(g, steps[i]);
    auto [it, added] = index.try_emplace(key, out.size());
    if (added) out.push_back({key, {}});
    out[it->second].steps.push_back(i);
  }
  return out;
}

std::string steps_text(const std::vector<size_t>& steps) {
  std::string out = steps.size() > 1 ? "steps " : "step ";
  for (size_t i = 0; i < steps.size(); ++i) out += (i ? ", " : "") + std::to_string(steps[i]);
  return out;
}

// What the scheduler still expects to spend, in trials: each unfinished task's budget left.
int trials_left(const tune::TaskScheduler& s, int budget) {
  int left = 0;
  for (const tune::Task& t : s.tasks())
    if (!t.finished) left += std::max(0, budget - t.trials);
  return left;
}

// The kernels a plan tunes: those without a decision in the database (the others' schedules
// are set in `out`, with their report lines), and their scheduler tasks.
struct PlanTasks {
  std::vector<KernelTask> kernels;
  std::vector<tune::Task> tasks;
};

// Where every step of a task is a library step and implement()'s measurements (read back from
// the database) found its generated kernel, under the default schedule, more than
// kHopelessRatio times slower than the library: tuning rarely gains that much, so the task's
// time goes to other kernels. Its report line, else "".
constexpr double kHopelessRatio = 2.0;

std::string hopeless_library_task(const ir::Graph& g, const KernelTask& kt, const std::vector<StepChoice>& steps,
                                  const BuildOptions& build, const MeasureOptions& m) {
  for (size_t i : kt.steps)
    if (!is_library(steps[i].kind)) return "";
  if (m.db == nullptr) return "";
  MeasureOptions untuned = m;
  untuned.tuned = false;
  const StepChoice& library = steps[kt.steps.front()];
  const StepChoice generated = as_generated(library);
  const std::string key = kernel_key(g, library);
  std::optional<tune::Measurement> lib = m.db->lookup(m.target, key, candidate_impl(g, library, untuned, build.cores));
  std::optional<tune::Measurement> gen = m.db->lookup(m.target, key, candidate_impl(g, generated, untuned, build.cores));
  if (!lib || !gen || gen->median_ns <= kHopelessRatio * lib->median_ns) return "";
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.1f", gen->median_ns / lib->median_ns);
  return steps_text(kt.steps) + ": not tuned (generated code took " + ratio + "× the library's time)";
}

PlanTasks plan_tasks(const ir::Graph& g, const std::vector<StepChoice>& steps, const target::Target& t,
                     const BuildOptions& build, const MeasureOptions& m,
                     std::vector<std::optional<codegen::cpu::Schedule>>& out, std::vector<std::string>& notes) {
  PlanTasks p;
  for (KernelTask& kt : kernel_tasks(g, steps)) {
    if (std::string line = hopeless_library_task(g, kt, steps, build, m); !line.empty()) {
      notes.push_back(line);
      continue;
    }
    if (m.db)
      if (auto d = m.db->decision(m.target, kt.key)) {
        for (size_t i : kt.steps) out[i] = codegen::cpu::parse_schedule(d->first);
        notes.push_back(steps_text(kt.steps) + ": " + d->first + " (tuned before, " +
                        ms_text(d->second.median_ns * 1e-6) + ")");
        continue;
      }
    const tile::Kernel& k = steps[kt.steps.front()].kernel;
    tune::Task task;
    task.weight = double(kt.steps.size());
    task.estimate = tune::estimate_cpu_schedule(g, k, codegen::cpu::default_schedule(g, k, build.cores), t).seconds;
    p.tasks.push_back(task);
    p.kernels.push_back(std::move(kt));
  }
  return p;
}

// The progress line before a unit of kernel k.
std::string progress_line(const tune::TaskScheduler& s, const std::vector<KernelTask>& kernels, size_t k, int trials,
                          double elapsed, double budget, int kernel_budget) {
  std::string line = "tuning kernel " + std::to_string(k + 1) + " of " + std::to_string(kernels.size()) + " (" +
                     steps_text(kernels[k].steps) + "), unit " + std::to_string(s.tasks()[k].units + 1);
  if (trials > 0) {
    double eta = std::min(budget - elapsed, elapsed / trials * trials_left(s, kernel_budget));
    line += ", about " + std::to_string(static_cast<int>(eta + 0.5)) + " s left";
  }
  return line;
}

// A kernel's report line.
std::string decision_line(const KernelTask& kt, const KernelTuner& tuner, int units) {
  const TuneResult& r = tuner.result();
  std::string line = steps_text(kt.steps) + ": " + codegen::cpu::schedule_str(r.best) + ", " + ms_text(r.best_ms) +
                     " (default " + ms_text(r.initial_ms) + "; " + std::to_string(r.measured) + " measured in " +
                     std::to_string(units) + " units, " +
                     (r.converged ? "converged" : tuner.descended() ? "its budget spent" : "stopped by the time") + ")";
  for (const std::string& f : r.failures) line += "; " + f;
  return line;
}

// Each library step whose kernel has a decided schedule other than the default (tuned_schedule,
// the database's decision): generated code under that schedule against the library, timed
// together (compare_candidates: faster with significance, or the answer read back); the step
// becomes generated where it is. The schedule of a step left to the library is cleared.
void library_or_tuned(const ir::Graph& g, PlanTuning& t, const BuildOptions& build, const MeasureOptions& m,
                      std::vector<std::string>& lines) {
  MeasureOptions with_decisions = m;
  with_decisions.tuned = true;
  for (size_t i = 0; i < t.steps.size(); ++i) {
    StepChoice& s = t.steps[i];
    if (!is_library(s.kind)) continue;
    const StepChoice generated = as_generated(s);
    if (m.orchid_exe.empty() || !tuned_schedule(g, generated, with_decisions, build.cores)) {
      t.schedules[i].reset();
      continue;
    }
    ScheduleComparison c = compare_candidates(g, generated, s, build, with_decisions);
    const char* library = s.kind == StepKind::OneDnnWinograd ? "Winograd" : "oneDNN";
    std::string line = "step " + std::to_string(i) + ": generated and tuned against " + library + ": ";
    if (c.cached) line += c.a_faster ? "faster (decided before)" : "not faster (decided before)";
    else if (!c.failure.empty()) line += "not compared (" + c.failure + ")";
    else line += ms_text(c.a_ms) + " against " + ms_text(c.b_ms) + " (medians)";
    lines.push_back(line + " → " + (c.a_faster ? "generated" : library));
    if (c.a_faster) s.kind = StepKind::Generated;
    else t.schedules[i].reset();
  }
}

}  // namespace

PlanTuning tune_steps(const ir::Graph& g, const std::vector<StepChoice>& steps, const target::Target& t,
                      const BuildOptions& build, const MeasureOptions& m, const PlanTuneOptions& o,
                      const std::function<void(const std::string&)>& progress, std::vector<std::string>* notes) {
  PlanTuning result;
  result.steps = steps;
  result.schedules.resize(steps.size());
  std::vector<std::string> lines;
  PlanTasks plan = plan_tasks(g, steps, t, build, m, result.schedules, lines);
  const std::vector<KernelTask>& kernels = plan.kernels;
  tune::TaskScheduler scheduler(std::move(plan.tasks), {}, o.kernel.seed);
  std::vector<std::unique_ptr<KernelTuner>> tuners(kernels.size());
  std::optional<ScheduleTimer> timer;
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  const double budget = o.minutes * 60;
  int units = 0, trials = 0;
  auto spend = [&](KernelTuner& tuner, auto&& unit) {
    const int before = tuner.measured();
    unit();
    trials += tuner.measured() - before;
    return tuner.measured() - before;
  };
  std::optional<size_t> next;
  while (elapsed() < budget && (next = scheduler.next())) {
    const size_t k = *next;
    if (progress) progress(progress_line(scheduler, kernels, k, trials, elapsed(), budget, o.kernel.budget));
    if (!tuners[k]) {
      if (!timer) timer.emplace(build, m);
      TuneOptions ko = o.kernel;
      ko.seed = o.kernel.seed + kernels[k].steps.front();
      tuners[k] = std::make_unique<KernelTuner>(g, steps[kernels[k].steps.front()].kernel, t, *timer, ko, build.cores);
    }
    KernelTuner& tuner = *tuners[k];
    int spent = spend(tuner, [&] { tuner.unit(); });
    if (scheduler.tasks()[k].units == 0) scheduler.set_bound(k, tuner.bound_ms());
    scheduler.record(k, spent, tuner.best_ms(), tuner.finished());
    ++units;
  }
  // Each kernel begun: its best confirmed against the default where the time stopped it
  // first (one more batch each, past the time), and its decision recorded.
  double initial_total = 0, tuned_total = 0;  // Σ steps × kernel time of the kernels begun
  for (size_t k = 0; k < kernels.size(); ++k) {
    const KernelTask& kt = kernels[k];
    if (!tuners[k]) {
      lines.push_back(steps_text(kt.steps) + ": default schedule (the tuning time ran out; the next compile tunes it)");
      continue;
    }
    if (!tuners[k]->finished()) spend(*tuners[k], [&] { tuners[k]->confirm(); });
    const TuneResult& r = tuners[k]->result();
    ++result.tuned;
    for (size_t i : kt.steps) result.schedules[i] = r.best;
    initial_total += double(kt.steps.size()) * r.initial_ms;
    tuned_total += double(kt.steps.size()) * r.best_ms;
    if (m.db && r.best_ms > 0)
      m.db->decide(m.target, kt.key, codegen::cpu::schedule_str(r.best), {r.best_ms * 1e6, 0, o.kernel.rounds, ""});
    lines.push_back(decision_line(kt, *tuners[k], scheduler.tasks()[k].units));
  }
  if (!kernels.empty()) {
    char summary[240];
    std::snprintf(summary, sizeof summary,
                  "%zu distinct kernels, %d units of tuning, %d timings in %.0f s; their time in the plan "
                  "(Σ steps × kernel) %.4f ms by default, %.4f ms tuned",
                  kernels.size(), units, trials, elapsed(), initial_total, tuned_total);
    lines.push_back(summary);
  }
  library_or_tuned(g, result, build, m, lines);
  result.seconds = elapsed();
  if (notes) notes->insert(notes->end(), lines.begin(), lines.end());
  return result;
}

void keep_tuned_if_faster(const ir::Graph& g, std::vector<StepChoice>& steps, PlanTuning& tuned,
                          const BuildOptions& build, const MeasureOptions& m, std::vector<std::string>* notes) {
  ORCHID_CHECK(tuned.steps.size() == steps.size() && tuned.schedules.size() == steps.size())
      << "the tuning of another plan";
  bool differs = false;
  for (size_t i = 0; i < steps.size(); ++i) {
    const std::optional<codegen::cpu::Schedule>& s = tuned.schedules[i];
    differs |= tuned.steps[i].kind != steps[i].kind ||
               (s && !(*s == codegen::cpu::default_schedule(g, steps[i].kernel, build.cores)));
  }
  if (!differs || m.orchid_exe.empty()) return;
  ScheduleComparison c = compare_plans(g, tuned.steps, tuned.schedules, steps, {}, build, m);
  const bool keep = c.a_faster;
  if (notes) notes->push_back("whole plans: " + comparison_line(c, "tuned", "default schedules"));
  if (keep) {
    steps = tuned.steps;
    return;
  }
  tuned.steps = steps;
  tuned.schedules.assign(steps.size(), std::nullopt);
}

}  // namespace orchid::driver
