#include "tune/explore.h"

#include <algorithm>
#include <map>
#include <set>

namespace orchid::tune {

namespace {

class Pricer {
 public:
  Pricer(const std::function<double(const Point&)>& cost, int trials) : cost_(cost), trials_(trials) {}
  // Prices p once (no-op for a point already priced or past the budget).
  void price(const Point& p) {
    if (full() || priced_.count(p)) return;
    priced_[p] = ranked_.size();
    ranked_.push_back({p, cost_(p)});
  }
  bool full() const { return static_cast<int>(ranked_.size()) >= trials_; }
  // The cheapest `n` priced so far.
  std::vector<Ranked> best(size_t n) const {
    std::vector<Ranked> r = ranked_;
    std::stable_sort(r.begin(), r.end(), [](const Ranked& a, const Ranked& b) { return a.cost < b.cost; });
    if (r.size() > n) r.resize(n);
    return r;
  }
  size_t count() const { return ranked_.size(); }

 private:
  const std::function<double(const Point&)>& cost_;
  int trials_;
  std::map<Point, size_t> priced_;
  std::vector<Ranked> ranked_;
};

Point mutate(const Space& s, Point p, double rate, Rng& rng) {
  for (size_t i = 0; i < p.size(); ++i) {
    const Knob& k = s.knobs[i];
    if (k.values <= 1 || !rng.coin(rate)) continue;
    if (!k.ordered) {
      p[i] = static_cast<int>(rng.range(0, k.values));
      continue;
    }
    int by = static_cast<int>(rng.range(1, 3)) * (rng.coin() ? 1 : -1);
    p[i] = std::clamp(p[i] + by, 0, k.values - 1);
  }
  return p;
}

Point crossover(const Point& a, const Point& b, Rng& rng) {
  Point c = a;
  for (size_t i = 0; i < c.size(); ++i)
    if (rng.coin()) c[i] = b[i];
  return c;
}

const Point& tournament(const std::vector<Ranked>& pop, Rng& rng) {
  const Ranked& a = pop[static_cast<size_t>(rng.range(0, static_cast<int64_t>(pop.size())))];
  const Ranked& b = pop[static_cast<size_t>(rng.range(0, static_cast<int64_t>(pop.size())))];
  return a.cost <= b.cost ? a.point : b.point;
}

}  // namespace

std::vector<Point> diverse_top(const Space& space, const std::vector<Ranked>& ranked, size_t n, const Point& skip) {
  std::vector<Point> out;
  std::set<std::vector<int>> kinds;
  std::vector<bool> taken(ranked.size(), false);
  auto kind = [&](const Point& p) {
    std::vector<int> k;
    for (size_t i = 0; i < p.size(); ++i)
      if (!space.knobs[i].ordered) k.push_back(p[i]);
    return k;
  };
  for (size_t i = 0; i < ranked.size() && out.size() < n; ++i)
    if (ranked[i].point != skip && kinds.insert(kind(ranked[i].point)).second) {
      out.push_back(ranked[i].point);
      taken[i] = true;
    }
  for (size_t i = 0; i < ranked.size() && out.size() < n; ++i)
    if (!taken[i] && ranked[i].point != skip) out.push_back(ranked[i].point);
  return out;
}

std::vector<Ranked> explore(const Space& space, const std::function<double(const Point&)>& cost,
                            const std::vector<Point>& seeds, const ExploreOptions& o, Rng& rng) {
  Pricer pricer(cost, std::max(1, o.trials));
  for (const Point& p : seeds)
    if (space.contains(space.canon(p))) pricer.price(space.canon(p));
  const int random = static_cast<int>(o.random_share * o.trials);
  for (int i = 0; i < 4 * random && static_cast<int>(pricer.count()) < std::max(random, 1) && !pricer.full(); ++i) {
    Point p = space.random_point(rng);
    if (!p.empty()) pricer.price(p);
  }
  // Children that are not new or not valid are drawn again, up to a bound on the draws; the
  // population is sorted again only when a point was priced.
  std::vector<Ranked> pop;
  size_t priced = 0;
  for (int draws = 0; !pricer.full() && draws < 20 * o.trials; ++draws) {
    if (pop.empty() || pricer.count() != priced) {
      pop = pricer.best(static_cast<size_t>(std::max(2, o.population)));
      priced = pricer.count();
    }
    if (pop.empty()) break;
    Point child = space.canon(mutate(space, crossover(tournament(pop, rng), tournament(pop, rng), rng), o.mutation, rng));
    if (space.contains(child)) pricer.price(child);
  }
  return pricer.best(pricer.count());
}

}  // namespace orchid::tune
