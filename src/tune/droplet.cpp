#include "tune/droplet.h"

#include <cmath>
#include <map>
#include <numeric>

#include "support/error.h"
#include "tune/stats.h"

namespace orchid::tune {

double mean_of(const std::vector<double>& samples) {
  if (samples.empty()) return INFINITY;
  return std::accumulate(samples.begin(), samples.end(), 0.0) / double(samples.size());
}

namespace {

class Search {
 public:
  Search(const MeasureFn& measure, int budget) : measure_(measure), budget_(budget) {}

  // The points' samples, measuring those not yet measured while the budget lasts; points
  // past the budget are left out of the result.
  std::vector<std::pair<Point, const std::vector<double>*>> samples(const std::vector<Point>& points) {
    std::vector<Point> fresh;
    for (const Point& p : points)
      if (!seen_.count(p) && static_cast<int>(fresh.size()) < budget_ - measured_) fresh.push_back(p);
    if (!fresh.empty()) {
      std::vector<std::vector<double>> got = measure_(fresh);
      ORCHID_CHECK(got.size() == fresh.size()) << got.size() << " measurements of " << fresh.size() << " points";
      for (size_t i = 0; i < fresh.size(); ++i) seen_[fresh[i]] = std::move(got[i]);
      measured_ += static_cast<int>(fresh.size());
    }
    std::vector<std::pair<Point, const std::vector<double>*>> out;
    for (const Point& p : points)
      if (auto it = seen_.find(p); it != seen_.end()) out.emplace_back(p, &it->second);
    return out;
  }
  int measured() const { return measured_; }

 private:
  const MeasureFn& measure_;
  int budget_;
  int measured_ = 0;
  std::map<Point, std::vector<double>> seen_;
};

}  // namespace

DropletResult droplet_search(const Space& space, const Point& start, const MeasureFn& measure,
                             const DropletOptions& o) {
  ORCHID_CHECK(space.contains(start)) << "the start " << space.str(start) << " is not a point of the space";
  Search search(measure, std::max(1, o.budget));
  DropletResult r;
  r.best = start;
  r.path.push_back(start);
  auto first = search.samples({start});
  r.samples = first.empty() ? std::vector<double>{} : *first[0].second;
  int step = 1;
  // Means fall strictly along the path (a move needs t < 0), so no point is visited twice.
  while (true) {
    std::vector<Point> around = space.neighbours(r.best, step);
    auto tested = search.samples(around);
    ++r.steps;
    std::vector<double> p;
    for (const auto& [pt, s] : tested) p.push_back(r.samples.empty() ? (s->empty() ? 1.0 : 0.0) : welch_less(*s, r.samples).p);
    std::vector<bool> faster = holm_reject(p, o.alpha);
    int pick = -1;
    for (size_t i = 0; i < tested.size(); ++i)
      if (faster[i] && !tested[i].second->empty() &&
          (pick < 0 || mean_of(*tested[i].second) < mean_of(*tested[static_cast<size_t>(pick)].second)))
        pick = static_cast<int>(i);
    bool complete = tested.size() == around.size();
    if (pick >= 0) {
      r.best = tested[static_cast<size_t>(pick)].first;
      r.samples = *tested[static_cast<size_t>(pick)].second;
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
  r.measured = search.measured();
  return r;
}

}  // namespace orchid::tune
