#include "tune/droplet.h"

#include <cmath>
#include <numeric>

#include "support/error.h"
#include "tune/stats.h"

namespace orchid::tune {

double mean_of(const std::vector<double>& samples) {
  if (samples.empty()) return INFINITY;
  return std::accumulate(samples.begin(), samples.end(), 0.0) / double(samples.size());
}

DropletResult droplet_search(const Space& space, const Point& start, const MeasureFn& measure,
                             const DropletOptions& o) {
  ORCHID_CHECK(space.contains(start)) << "the start " << space.str(start) << " is not a point of the space";
  const int budget = std::max(2, o.budget);
  DropletResult r;
  r.best = start;
  r.path.push_back(start);
  int step = 1;
  // Means fall strictly along the path (a move needs t < 0 against the point it leaves), so
  // the descent ends.
  while (true) {
    std::vector<Point> around = space.neighbours(r.best, step);
    const int room = budget - r.measured - 1;  // the current point is measured again
    if (around.empty() && step < o.max_step) {
      step *= 2;
      continue;
    }
    if (room <= 0 || around.empty()) {
      r.converged = around.empty();
      break;
    }
    const bool complete = static_cast<int>(around.size()) <= room;
    if (!complete) around.resize(static_cast<size_t>(room));
    std::vector<Point> batch{r.best};
    batch.insert(batch.end(), around.begin(), around.end());
    std::vector<std::vector<double>> got = measure(batch);
    ORCHID_CHECK(got.size() == batch.size()) << got.size() << " measurements of " << batch.size() << " points";
    r.measured += static_cast<int>(batch.size());
    ++r.steps;
    r.samples = got[0];
    std::vector<double> p;
    for (size_t i = 1; i < got.size(); ++i)
      p.push_back(r.samples.empty() ? (got[i].empty() ? 1.0 : 0.0) : welch_less(got[i], r.samples).p);
    std::vector<bool> faster = holm_reject(p, o.alpha);
    size_t pick = 0;
    for (size_t i = 1; i < got.size(); ++i)
      if (faster[i - 1] && !got[i].empty() && (pick == 0 || mean_of(got[i]) < mean_of(got[pick]))) pick = i;
    if (pick > 0) {
      r.best = batch[pick];
      r.samples = got[pick];
      r.path.push_back(r.best);
      step = 1;
    } else if (!complete) {
      break;  // the budget ran out inside the neighbourhood
    } else if (step < o.max_step) {
      step *= 2;
    } else {
      r.converged = true;
      break;
    }
  }
  return r;
}

}  // namespace orchid::tune
