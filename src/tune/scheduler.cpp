#include "tune/scheduler.h"

#include <algorithm>
#include <cmath>

#include "support/error.h"

namespace orchid::tune {

TaskScheduler::TaskScheduler(std::vector<Task> tasks, const SchedulerOptions& o, uint64_t seed)
    : tasks_(std::move(tasks)), o_(o), rng_(seed) {}

double TaskScheduler::gradient(size_t i) const {
  const Task& t = tasks_.at(i);
  if (t.finished || t.trials <= 0 || t.best <= 0) return 0;
  // The recent rate: the change of the best over the last `window` units, per trial.
  double recent = 0;
  if (t.history.size() >= 2) {
    size_t back = std::min(t.history.size() - 1, static_cast<size_t>(std::max(1, o_.window)));
    const Task::After& then = t.history[t.history.size() - 1 - back];
    int dt = t.trials - then.trials;
    if (dt > 0) recent = (t.best - then.best) / dt;
  }
  double optimistic = -t.best / t.trials;
  if (t.bound > 0) optimistic = std::min(optimistic, o_.beta * t.bound - t.best);
  return t.weight * (o_.alpha * recent + (1 - o_.alpha) * optimistic);
}

std::optional<size_t> TaskScheduler::next() {
  std::optional<size_t> pick;
  // The warm-up: a task without a unit yet, the largest wᵢ × estimate first.
  for (size_t i = 0; i < tasks_.size(); ++i) {
    const Task& t = tasks_[i];
    if (t.finished || t.units > 0) continue;
    if (!pick || t.weight * t.estimate > tasks_[*pick].weight * tasks_[*pick].estimate) pick = i;
  }
  if (pick) return pick;
  std::vector<size_t> open;
  for (size_t i = 0; i < tasks_.size(); ++i)
    if (!tasks_[i].finished) open.push_back(i);
  if (open.empty()) return std::nullopt;
  if (rng_.coin(o_.epsilon)) return open[static_cast<size_t>(rng_.range(0, static_cast<int64_t>(open.size())))];
  for (size_t i : open)
    if (!pick || gradient(i) < gradient(*pick)) pick = i;
  return pick;
}

void TaskScheduler::record(size_t i, int trials, double best, bool finished) {
  Task& t = tasks_.at(i);
  ORCHID_CHECK(trials >= 0) << "a unit of " << trials << " trials";
  t.trials += trials;
  ++t.units;
  if (best > 0 && (t.best <= 0 || best < t.best)) t.best = best;
  t.finished = t.finished || finished;
  t.history.push_back({t.trials, t.best});
}

double TaskScheduler::total() const {
  double f = 0;
  for (const Task& t : tasks_) f += t.weight * t.best;
  return f;
}

}  // namespace orchid::tune
