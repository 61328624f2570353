// The task scheduler of a model's tuning (Ansor §6, "optimizing with gradient descent"; see
// ../shared/papers/droplet-dpansor.txt §2.1): a model's time is f = Σ wᵢ gᵢ, where task i is
// a distinct kernel, wᵢ how many steps of the plan run it and gᵢ its best time so far; tuning
// time goes, one unit of trials at a time, to the task whose next unit is expected to lower f
// most. That expectation is Ansor's gradient
//     ∂f/∂tᵢ ≈ wᵢ · ( α · (gᵢ(tᵢ) − gᵢ(tᵢ − Δt)) / Δt  +  (1 − α) · min(−gᵢ(tᵢ) / tᵢ, β · bᵢ − gᵢ(tᵢ)) )
// over the trials tᵢ spent on it: the recent rate of improvement (over the last `window`
// units), and an optimistic guess — all of gᵢ gained back at the rate spent so far, or down to
// β times a bound bᵢ on the kernel's time. Ansor takes bᵢ from similar tasks' throughput; here it
// is what the analytic model expects tuning can reach (driver::KernelTuner::bound_ms). Every task gets its first unit
// before any its second (Ansor's warm-up round), the largest wᵢ × estimate first, so that a
// short budget still tunes the kernels that matter; after that, with probability ε a random
// unfinished task is picked instead (Ansor's ε-greedy). Deterministic for a seed.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "support/random.h"

namespace orchid::tune {

struct SchedulerOptions {
  double alpha = 0.2, beta = 2, epsilon = 0.05;  // Ansor's
  int window = 3;                                // units over which the recent rate is taken
};

struct Task {
  double weight = 1;    // wᵢ: steps of the plan that run the kernel
  double estimate = 0;  // the model's time of its default schedule: the warm-up's order
  double bound = 0;     // bᵢ, once known (0: none)
  double best = 0;      // gᵢ, once measured (0: not yet)
  int trials = 0;       // tᵢ
  int units = 0;
  bool finished = false;  // converged, or its own budget spent: no more units
  struct After {  // the state after a unit
    int trials = 0;
    double best = 0;
  };
  std::vector<After> history;
};

class TaskScheduler {
 public:
  explicit TaskScheduler(std::vector<Task> tasks, const SchedulerOptions& options = {}, uint64_t seed = 1);
  // The task to give the next unit; none when every task has finished.
  std::optional<size_t> next();
  // After a unit of `trials` trials of task i: its best time now (kept from above: a unit never
  // makes a task slower), and whether it can take no more.
  void record(size_t i, int trials, double best, bool finished);
  void set_bound(size_t i, double bound) { tasks_.at(i).bound = bound; }
  // The expected change of f per trial given to task i (negative: a gain); 0 for a finished task.
  double gradient(size_t i) const;
  double total() const;  // f = Σ wᵢ gᵢ over the measured tasks
  const std::vector<Task>& tasks() const { return tasks_; }

 private:
  std::vector<Task> tasks_;
  SchedulerOptions o_;
  Rng rng_;
};

}  // namespace orchid::tune
