#include "tune/droplet.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "support/error.h"
#include "tune/stats.h"

namespace orchid::tune {

double mean_of(const std::vector<double>& samples) {
  if (samples.empty()) return INFINITY;
  return std::accumulate(samples.begin(), samples.end(), 0.0) / double(samples.size());
}

Descent::Descent(const Space& space, const Point& start, const DropletOptions& o) : space_(space), o_(o) {
  ORCHID_CHECK(space.contains(start)) << "the start " << space.str(start) << " is not a point of the space";
  o_.budget = std::max(2, o.budget);
  r_.best = start;
  r_.path.push_back(start);
}

// Means fall strictly along the path (a move needs t < 0 against the point it leaves), so the
// descent ends.
bool Descent::step(const MeasureFn& measure) {
  if (ended_) return false;
  std::vector<Point> around = space_.neighbours(r_.best, width_);
  while (around.empty() && width_ < o_.max_step) {
    width_ *= 2;
    around = space_.neighbours(r_.best, width_);
  }
  const int room = o_.budget - r_.measured - 1;  // the current point is measured again
  if (room <= 0 || around.empty()) {
    r_.converged = around.empty();
    ended_ = true;
    return false;
  }
  const bool complete = static_cast<int>(around.size()) <= room;
  if (!complete) around.resize(static_cast<size_t>(room));
  std::vector<Point> batch{r_.best};
  batch.insert(batch.end(), around.begin(), around.end());
  std::vector<std::vector<double>> got = measure(batch);
  ORCHID_CHECK(got.size() == batch.size()) << got.size() << " measurements of " << batch.size() << " points";
  r_.measured += static_cast<int>(batch.size());
  ++r_.steps;
  r_.samples = got[0];
  std::vector<double> p;
  for (size_t i = 1; i < got.size(); ++i)
    p.push_back(p_faster(got[i], r_.samples));
  std::vector<bool> faster = holm_reject(p, o_.alpha);
  size_t pick = 0;
  for (size_t i = 1; i < got.size(); ++i)
    if (faster[i - 1] && !got[i].empty() && (pick == 0 || mean_of(got[i]) < mean_of(got[pick]))) pick = i;
  if (pick > 0) {
    r_.best = batch[pick];
    r_.samples = got[pick];
    r_.path.push_back(r_.best);
    width_ = 1;
  } else if (!complete) {
    ended_ = true;  // the budget ran out inside the neighbourhood
  } else if (width_ < o_.max_step) {
    width_ *= 2;
  } else {
    r_.converged = true;
    ended_ = true;
  }
  return true;
}

DropletResult droplet_search(const Space& space, const Point& start, const MeasureFn& measure,
                             const DropletOptions& o) {
  Descent d(space, start, o);
  while (d.step(measure)) {
  }
  return d.result();
}

}  // namespace orchid::tune
