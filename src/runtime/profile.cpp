#include "runtime/profile.h"

#include <omp.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>

#include <nlohmann/json.hpp>

#include "support/error.h"

namespace orchid::runtime {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The value at fraction q of sorted `v`, nearest rank.
double percentile(const std::vector<double>& v, double q) {
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

}  // namespace

TimingStats timing_stats(std::vector<double> seconds) {
  ORCHID_CHECK(!seconds.empty()) << "no timings";
  std::sort(seconds.begin(), seconds.end());
  TimingStats s;
  s.runs = static_cast<int>(seconds.size());
  size_t n = seconds.size();
  s.median = n % 2 ? seconds[n / 2] : (seconds[n / 2 - 1] + seconds[n / 2]) / 2;
  s.min = seconds.front();
  s.p10 = percentile(seconds, 0.1);
  s.p90 = percentile(seconds, 0.9);
  s.spread = s.median > 0 ? (s.p90 - s.p10) / s.median : 0;
  return s;
}

TimingStats parallel_region_stats(int threads, double min_seconds) {
  using clock = std::chrono::steady_clock;
  std::vector<int> touched(static_cast<size_t>(std::max(1, threads)), 0);
  auto region = [&] {
#pragma omp parallel num_threads(threads)
    touched[static_cast<size_t>(omp_get_thread_num()) % touched.size()] += 1;
  };
  for (int i = 0; i < 100; ++i) region();
  std::vector<double> seconds;
  auto start = clock::now();
  while (seconds.size() < 1000 || std::chrono::duration<double>(clock::now() - start).count() < min_seconds) {
    auto t0 = clock::now();
    region();
    seconds.push_back(std::chrono::duration<double>(clock::now() - t0).count());
  }
  return timing_stats(std::move(seconds));
}

Profile profile_session(Session& session, std::span<const void* const> inputs,
                        std::span<void* const> outputs, const ProfileOptions& options) {
  for (int i = 0; i < options.warmup_runs; ++i) session.run(inputs, outputs);
  size_t num_steps = session.model().plan().steps.size();
  std::vector<double> totals;
  std::vector<std::vector<double>> per_step(options.per_step ? num_steps : 0);
  std::vector<StepSpan> spans;
  double elapsed = 0;
  while (static_cast<int>(totals.size()) < std::max(1, options.max_runs) &&
         (static_cast<int>(totals.size()) < options.min_runs || elapsed < options.min_seconds)) {
    auto t0 = std::chrono::steady_clock::now();
    session.run(inputs, outputs, options.per_step ? &spans : nullptr);
    totals.push_back(seconds_since(t0));
    elapsed += totals.back();
    for (size_t s = 0; s < per_step.size(); ++s)
      per_step[s].push_back(static_cast<double>(spans[s].end_ns - spans[s].begin_ns) * 1e-9);
  }
  Profile p;
  p.total = timing_stats(totals);
  const Plan& plan = session.model().plan();
  for (size_t s = 0; s < per_step.size(); ++s)
    p.steps.push_back(StepProfile{plan.steps[s].name, plan.steps[s].impl, timing_stats(per_step[s])});
  return p;
}

std::string chrome_trace_json(const Plan& plan, const std::vector<StepSpan>& spans) {
  ORCHID_CHECK(spans.size() == plan.steps.size()) << spans.size() << " spans for "
                                                  << plan.steps.size() << " steps";
  using ojson = nlohmann::ordered_json;
  ojson events = ojson::array();
  int64_t origin = spans.empty() ? 0 : spans.front().begin_ns;
  for (size_t s = 0; s < spans.size(); ++s) {
    const PlanStep& step = plan.steps[s];
    ojson args{{"impl", std::string(step_impl_name(step.impl))},
               {"source_ops", step.source_ops},
               {"flops", step.flops},
               {"bytes", step.bytes}};
    events.push_back(ojson{{"name", step.name},
                           {"cat", std::string(step_impl_name(step.impl))},
                           {"ph", "X"},
                           {"ts", static_cast<double>(spans[s].begin_ns - origin) / 1e3},
                           {"dur", static_cast<double>(spans[s].end_ns - spans[s].begin_ns) / 1e3},
                           {"pid", 0},
                           {"tid", 0},
                           {"args", std::move(args)}});
  }
  ojson trace{{"traceEvents", std::move(events)},
              {"displayTimeUnit", "ms"},
              {"otherData", ojson{{"graph", plan.graph_name}, {"target", plan.target}}}};
  return trace.dump(1) + "\n";
}

void write_chrome_trace(const std::string& path, const Plan& plan,
                        const std::vector<StepSpan>& spans) {
  std::ofstream out(path, std::ios::binary);
  ORCHID_USER_CHECK(out) << path << ": cannot write (" << std::strerror(errno) << ")";
  out << chrome_trace_json(plan, spans);
  out.close();
  ORCHID_USER_CHECK(out) << path << ": write failed";
}

}  // namespace orchid::runtime
