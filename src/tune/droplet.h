// Droplet Search (Canesche et al. 2024; the exploitation phase of ../shared/papers/
// droplet-dpansor.txt §2.2): coordinate descent over a space of schedules from a start point.
// Each step measures the current point again together with its neighbours (space.h: a step
// along each ordered knob, every other value of each categorical one), in one call, and moves
// to the fastest of those faster than the current point with significance: Welch's t-test,
// one-sided, on their repeated measurements, with Holm's correction over the neighbours
// tested in that step (stats.h). Only points measured together are compared: times taken in
// different batches (another process, other compiled code around them) differ by more than
// their spread. Where no neighbour is faster, the step widens (1, 2, 4 .. up to max_step); at
// the widest without a move, the point is a local optimum and the search has converged.
#pragma once

#include <functional>
#include <vector>

#include "tune/space.h"

namespace orchid::tune {

// Measures points together (one batch): per point, the times of repeated runs (any unit,
// lower is better); an empty vector where the point failed to build or run.
using MeasureFn = std::function<std::vector<std::vector<double>>(const std::vector<Point>&)>;

struct DropletOptions {
  int budget = 200;     // point measurements at most (a point measured in two steps counts twice)
  double alpha = 0.05;  // family-wise significance of one step's move
  int max_step = 4;
};

struct DropletResult {
  Point best;
  std::vector<double> samples;  // best's
  std::vector<Point> path;      // the start, then each point moved to
  int measured = 0;             // point measurements
  int steps = 0;                // neighbourhoods tested
  bool converged = false;       // stopped at a local optimum, not by the budget
  int moves() const { return static_cast<int>(path.size()) - 1; }
};

// The descent one neighbourhood at a time, for a caller that shares measurements among several
// kernels (the task scheduler, scheduler.h). `start` must be a point of the space; the space
// must outlive the descent.
class Descent {
 public:
  Descent(const Space& space, const Point& start, const DropletOptions& options);
  // Measures the next neighbourhood (the current point again with it) and moves or widens;
  // false, measuring nothing, once the descent has ended.
  bool step(const MeasureFn& measure);
  bool ended() const { return ended_; }
  const DropletResult& result() const { return r_; }

 private:
  const Space& space_;
  DropletOptions o_;
  DropletResult r_;
  int width_ = 1;
  bool ended_ = false;
};

// The whole descent: steps until it ends.
DropletResult droplet_search(const Space& space, const Point& start, const MeasureFn& measure,
                             const DropletOptions& options = {});

double mean_of(const std::vector<double>& samples);  // +inf for none

}  // namespace orchid::tune
