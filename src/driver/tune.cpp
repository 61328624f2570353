#include "driver/tune.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "codegen/cpu/codegen.h"
#include "codegen/cpu/compiler.h"
#include "runtime/profile.h"
#include "support/error.h"
#include "support/subprocess.h"
#include "tune/cpu_space.h"
#include "tune/droplet.h"
#include "tune/estimate.h"
#include "tune/explore.h"
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

// One batch: its kernels in one shared object, timed by the helper. Empty samples (and a
// failure) where it cannot be built or run.
std::vector<std::vector<double>> time_batch(const std::vector<codegen::cpu::GeneratedKernel>& kernels,
                                            const codegen::cpu::Compiler& compiler, const MeasureOptions& m,
                                            int rounds, int runs, std::vector<std::string>* failures) {
  std::vector<std::vector<double>> out(kernels.size());
  std::string why;
  try {
    codegen::cpu::CompiledObject lib = compiler.compile(codegen::cpu::library_source(kernels));
    SubprocessOptions so;
    so.timeout_s = m.timeout_s;
    so.address_space_limit = m.address_space_limit;
    so.environment_overrides = {"OMP_WAIT_POLICY=PASSIVE"};  // as time_artifact (measure.cpp)
    std::vector<std::string> argv = {m.orchid_exe, "time-kernels", lib.path.string(), "--json",
                                     "--rounds", std::to_string(rounds), "--runs", std::to_string(runs)};
    if (m.threads > 0) argv.insert(argv.end(), {"--threads", std::to_string(m.threads)});
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

ScheduleTimer::ScheduleTimer(const BuildOptions& build, const MeasureOptions& measure)
    : compiler_(build.compiler),
      per_library_(static_cast<size_t>(std::max(16, build.kernels_per_library))),
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
      batch.push_back(codegen::cpu::generate_kernel(g, k, schedules[i], "orc_tune" + std::to_string(i - first)));
    std::vector<std::vector<double>> t = time_batch(batch, compiler_, measure_, rounds, runs, failures);
    out.insert(out.end(), t.begin(), t.end());
  }
  return out;
}

TuneResult tune_kernel(const ir::Graph& g, const tile::Kernel& k, const target::Target& t, const BuildOptions& build,
                       const MeasureOptions& m, const TuneOptions& o) {
  auto start = std::chrono::steady_clock::now();
  ScheduleTimer timer(build, m);
  tune::CpuSpace space = tune::cpu_space(g, k, build.cores);
  TuneResult r;
  r.initial = space.base;
  const tune::Point initial = space.point_of(space.base);
  // Exploration, priced by the model.
  auto cost = [&](const tune::Point& p) { return tune::estimate_cpu_schedule(g, k, space.schedule(p), t).seconds; };
  Rng rng(o.seed);
  tune::ExploreOptions eo;
  eo.trials = o.explore_trials;
  std::vector<tune::Ranked> explored = tune::explore(space.space, cost, {initial}, eo, rng);
  // Measuring a batch of points together.
  tune::MeasureFn measure = [&](const std::vector<tune::Point>& points) {
    std::vector<codegen::cpu::Schedule> scheds;
    for (const tune::Point& p : points) scheds.push_back(space.schedule(p));
    r.measured += static_cast<int>(points.size());
    return timer.time(g, k, scheds, o.rounds, o.runs, &r.failures);
  };
  // The default and the cheapest explored points of each kind, leaving room for the second
  // timing of the fastest and a step of the descent.
  const int explored_top = std::max(0, std::min(o.measure_top, o.budget - 5));
  std::vector<tune::Point> top{initial};
  for (const tune::Point& p : tune::diverse_top(space.space, explored, static_cast<size_t>(explored_top), initial))
    top.push_back(p);
  std::vector<std::vector<double>> first = measure(top);
  // The descent starts from the fastest explored point by mean where a second timing, of it
  // and the default alone together, finds it faster with significance (one hypothesis: no
  // correction to pay); the fastest of several by mean alone is as often the luckiest.
  size_t fastest = 0;
  for (size_t i = 1; i < top.size(); ++i)
    if (!first[i].empty() && tune::mean_of(first[i]) < tune::mean_of(first[fastest])) fastest = i;
  if (fastest != 0) {
    std::vector<std::vector<double>> pair = measure({initial, top[fastest]});
    bool faster = pair[0].empty() ? !pair[1].empty() : tune::welch_less(pair[1], pair[0]).p <= o.alpha;
    if (!faster) fastest = 0;
  }
  r.initial_ms = median_ms(first[0]);
  // Exploitation from the fastest.
  tune::DropletOptions d;
  d.budget = std::max(2, o.budget - r.measured);
  d.alpha = o.alpha;
  tune::DropletResult dr = tune::droplet_search(space.space, top[fastest], measure, d);
  r.best = space.schedule(dr.best);
  r.best_ms = median_ms(dr.samples.empty() ? first[fastest] : dr.samples);
  r.moves = dr.moves();
  r.converged = dr.converged;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

namespace {

std::string ms_text(double ms) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4f ms", ms);
  return b;
}

// What the tuner decided for one kernel, for the database: the tuned schedule where it
// measured faster than the default with significance, else the default.
std::pair<codegen::cpu::Schedule, double> decided(const TuneResult& r) {
  bool better = r.best_ms > 0 && !(r.best == r.initial) && (r.initial_ms <= 0 || r.best_ms < r.initial_ms);
  return better ? std::make_pair(r.best, r.best_ms) : std::make_pair(r.initial, r.initial_ms);
}

}  // namespace

std::vector<std::optional<codegen::cpu::Schedule>> tune_steps(const ir::Graph& g, const std::vector<StepChoice>& steps,
                                                              const target::Target& t, const BuildOptions& build,
                                                              const MeasureOptions& m, const PlanTuneOptions& o,
                                                              const std::function<void(const std::string&)>& progress,
                                                              std::vector<std::string>* notes) {
  std::vector<std::optional<codegen::cpu::Schedule>> out(steps.size());
  if (o.minutes <= 0) return out;
  // Decisions already made; the rest, the slowest (by the model) first.
  std::vector<std::pair<double, size_t>> queue;
  std::vector<std::string> keys(steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].kind != StepKind::Generated) continue;
    keys[i] = "tune " + kernel_key(g, steps[i]);
    if (m.db)
      if (auto d = m.db->decision(m.target, keys[i])) {
        out[i] = codegen::cpu::parse_schedule(d->first);
        if (notes) notes->push_back("step " + std::to_string(i) + ": " + d->first + " (tuned before, " +
                                    ms_text(d->second.median_ns * 1e-6) + ")");
        continue;
      }
    codegen::cpu::Schedule s = codegen::cpu::default_schedule(g, steps[i].kernel, build.cores);
    queue.emplace_back(-tune::estimate_cpu_schedule(g, steps[i].kernel, s, t).seconds, i);
  }
  std::stable_sort(queue.begin(), queue.end());
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  const double budget = o.minutes * 60;
  size_t done = 0;
  for (const auto& [cost, i] : queue) {
    if (elapsed() >= budget) {
      if (notes) notes->push_back("step " + std::to_string(i) + ": default schedule (the tuning time ran out)");
      continue;
    }
    if (progress) {
      double per = done > 0 ? elapsed() / double(done) : 0;
      double eta = std::min(budget - elapsed(), per * double(queue.size() - done));
      char line[160];
      std::snprintf(line, sizeof line, "tuning kernel %zu of %zu (step %zu)%s", done + 1, queue.size(), i,
                    done > 0 ? (", about " + std::to_string(static_cast<int>(eta + 0.5)) + " s left").c_str() : "");
      progress(line);
    }
    TuneOptions ko = o.kernel;
    ko.seed = o.kernel.seed + i;
    TuneResult r = tune_kernel(g, steps[i].kernel, t, build, m, ko);
    auto [schedule, ms] = decided(r);
    out[i] = schedule;
    ++done;
    if (m.db && ms > 0) m.db->decide(m.target, keys[i], codegen::cpu::schedule_str(schedule), {ms * 1e6, 0, ko.rounds, ""});
    if (notes) {
      std::string line = "step " + std::to_string(i) + ": " + codegen::cpu::schedule_str(schedule) + ", " +
                         ms_text(ms) + " (default " + ms_text(r.initial_ms) + "; " + std::to_string(r.measured) +
                         " measured in " + std::to_string(static_cast<int>(r.seconds + 0.5)) + " s)";
      for (const std::string& f : r.failures) line += "; " + f;
      notes->push_back(line);
    }
  }
  return out;
}

}  // namespace orchid::driver
