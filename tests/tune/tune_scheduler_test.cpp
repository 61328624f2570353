// The task scheduler of a model's tuning (tune/scheduler.h): every task gets a unit before any
// gets a second, the heaviest by weight × estimate first; a finished task is never picked
// again; the gradient prefers the task still improving, and the one run by more steps; the
// best time never rises; and on simulated kernels whose time falls with the trials spent on
// them, spending units by the gradient leaves the model faster than round-robin does with
// the same units.
#include <gtest/gtest.h>

#include <cmath>

#include "tune/scheduler.h"

namespace orchid::tune {
namespace {

Task task(double weight, double estimate) {
  Task t;
  t.weight = weight;
  t.estimate = estimate;
  return t;
}

TEST(TuneScheduler, EveryTaskIsBegunFirstTheHeaviestFirst) {
  TaskScheduler s({task(1, 1.0), task(3, 1.0), task(1, 5.0), task(2, 0.5)});
  std::vector<size_t> order;
  for (int i = 0; i < 4; ++i) {
    size_t k = s.next().value();
    order.push_back(k);
    s.record(k, 8, 1.0, false);
  }
  EXPECT_EQ(order, (std::vector<size_t>{2, 1, 0, 3}));  // w × estimate: 5, 3, 1, 1 (ties in order)
  for (const Task& t : s.tasks()) EXPECT_EQ(t.units, 1);
}

TEST(TuneScheduler, AFinishedTaskIsNeverPickedAndNoneIsLeftAtTheEnd) {
  TaskScheduler s({task(1, 2), task(1, 1)});
  s.record(0, 8, 2.0, true);
  EXPECT_EQ(s.next(), std::optional<size_t>(1));
  s.record(1, 8, 1.0, false);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(s.next(), std::optional<size_t>(1));
  SchedulerOptions random;  // every pick by ε: among the unfinished alone
  random.epsilon = 1;
  TaskScheduler r({task(1, 2), task(1, 1), task(1, 3)}, random);
  for (size_t i = 0; i < 3; ++i) r.record(i, 8, 1.0, i != 1);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(r.next(), std::optional<size_t>(1));
  s.record(1, 8, 0.9, true);
  EXPECT_FALSE(s.next().has_value());
  EXPECT_EQ(s.gradient(0), 0);
}

TEST(TuneScheduler, TheBestNeverRisesAndTheTotalIsWeighted) {
  TaskScheduler s({task(2, 1), task(1, 1)});
  s.record(0, 8, 1.0, false);
  s.record(0, 4, 1.5, false);  // a noisier unit
  EXPECT_EQ(s.tasks()[0].best, 1.0);
  EXPECT_EQ(s.tasks()[0].trials, 12);
  s.record(1, 8, 0.5, false);
  EXPECT_DOUBLE_EQ(s.total(), 2 * 1.0 + 0.5);
}

TEST(TuneScheduler, TheGradientPrefersImprovementAndWeight) {
  SchedulerOptions o;
  o.epsilon = 0;
  TaskScheduler s({task(1, 1), task(1, 1), task(3, 1)}, o);
  // Task 0 improved 4 → 2 over its last unit; task 1 stayed at 2; task 2 stayed at 2 but runs
  // three times.
  s.record(0, 10, 4.0, false);
  s.record(0, 10, 2.0, false);
  s.record(1, 10, 2.0, false);
  s.record(1, 10, 2.0, false);
  s.record(2, 10, 2.0, false);
  s.record(2, 10, 2.0, false);
  EXPECT_LT(s.gradient(0), s.gradient(1));
  EXPECT_LT(s.gradient(2), s.gradient(1));
  EXPECT_DOUBLE_EQ(s.gradient(2), 3 * s.gradient(1));
  // Task 1's optimistic guess: all of 2 ms back at 20 trials' rate, or down to β × its bound.
  EXPECT_DOUBLE_EQ(s.gradient(1), 0.8 * (-2.0 / 20));
  s.set_bound(1, 0.25);
  EXPECT_DOUBLE_EQ(s.gradient(1), 0.8 * (2 * 0.25 - 2.0));
}

// A simulated kernel: its best time after t trials falls from `start` toward `floor` with a
// scale of `tau` trials; after `cap` trials it has spent its own budget.
struct Curve {
  double weight, start, floor, tau;
  double at(int t) const { return floor + (start - floor) * std::exp(-t / tau); }
};

double spend(const std::vector<Curve>& curves, int units, bool by_gradient) {
  const int per_unit = 8, cap = 96;
  std::vector<Task> tasks;
  for (const Curve& c : curves) tasks.push_back(task(c.weight, c.start));
  TaskScheduler s(tasks, {}, 7);
  std::vector<int> t(curves.size(), 0);
  size_t turn = 0;
  for (int u = 0; u < units; ++u) {
    std::optional<size_t> k;
    if (by_gradient) {
      k = s.next();
    } else {  // round-robin over the unfinished
      for (size_t n = 0; n < curves.size() && !k; ++n, ++turn)
        if (!s.tasks()[turn % curves.size()].finished) k = turn % curves.size();
    }
    if (!k) break;
    t[*k] += per_unit;
    s.record(*k, per_unit, curves[*k].at(t[*k]), t[*k] >= cap);
  }
  return s.total();
}

TEST(TuneScheduler, GradientAllocationBeatsRoundRobinOnSimulatedKernels) {
  // One heavy kernel with much to gain slowly, one light kernel that gains fast and stops, and
  // six that are nearly as fast as they get.
  std::vector<Curve> curves = {{4, 5.0, 1.0, 60}, {1, 2.0, 1.0, 8}};
  for (int i = 0; i < 6; ++i) curves.push_back({1, 0.5, 0.45, 20});
  double gradient = spend(curves, 30, true), round_robin = spend(curves, 30, false);
  EXPECT_LT(gradient, 0.9 * round_robin) << gradient << " against " << round_robin;
  // With units enough for every kernel's whole budget, both end at the same place.
  EXPECT_NEAR(spend(curves, 200, true), spend(curves, 200, false), 1e-12);
}

}  // namespace
}  // namespace orchid::tune
