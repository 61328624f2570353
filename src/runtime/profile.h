// Timing a session (DESIGN.md, "runtime": warm-up, repeats, median) and a timeline of one
// run for Chrome's trace viewer / Perfetto.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "runtime/plan.h"
#include "runtime/session.h"

namespace orchid::runtime {

struct ProfileOptions {
  int warmup_runs = 2;
  int min_runs = 10;         // at least this many timed runs ...
  double min_seconds = 0.5;  // ... and at least this much time in them
  int max_runs = 100000;     // whatever the time
  bool per_step = false;     // also time each step of every run
};

// Statistics of a list of durations, in seconds.
struct TimingStats {
  int runs = 0;
  double median = 0;
  double min = 0;
  double p10 = 0;
  double p90 = 0;
  double spread = 0;  // (p90 - p10) / median: 0 for perfectly steady timings
};

// Nearest-rank percentiles of `seconds` (must not be empty).
TimingStats timing_stats(std::vector<double> seconds);

struct StepProfile {
  std::string name;
  StepImpl impl = StepImpl::Generated;
  TimingStats stats;
};

struct Profile {
  TimingStats total;              // whole runs, outputs copied included
  std::vector<StepProfile> steps; // per_step only: one per plan step, in plan order
};

// Runs `session` with warm-up, then until both minimums are met (or max_runs).
Profile profile_session(Session& session, std::span<const void* const> inputs,
                        std::span<void* const> outputs, const ProfileOptions& options = {});

// What one fork and join of `threads` OpenMP threads costs (an empty parallel region, as a
// generated step opens one per run): statistics over regions timed back to back for at
// least `min_seconds`, after warm-up.
TimingStats parallel_region_stats(int threads, double min_seconds);

// Chrome trace-event JSON ("traceEvents", "ph":"X" events with microsecond ts and dur,
// relative to the first step) of one run: each step with its name, impl, source_ops, flops
// and bytes as args.
std::string chrome_trace_json(const Plan& plan, const std::vector<StepSpan>& spans);
void write_chrome_trace(const std::string& path, const Plan& plan,
                        const std::vector<StepSpan>& spans);

}  // namespace orchid::runtime
