// Exploration (Ansor's phase in ../shared/papers/droplet-dpansor.txt §2.1, its evolutionary
// search standing in for sketch generation): points of a space ranked by a cheap cost — the
// analytic model (estimate.h) — rather than measured. Seeds and random points form the first
// population; each generation breeds children by uniform crossover of two parents chosen by
// tournament and by mutation (each knob with probability `mutation`: an ordered one a step or
// two along its ladder, a categorical one any value), and the population becomes the best of
// all points priced so far. Deterministic for a seed.
#pragma once

#include <functional>
#include <vector>

#include "support/random.h"
#include "tune/space.h"

namespace orchid::tune {

struct ExploreOptions {
  int trials = 300;      // points priced at most, seeds included
  int population = 32;
  double mutation = 0.25;
  // Of the trials, the share spent on random points before breeding starts (0: seeds only;
  // 1: random sampling alone).
  double random_share = 0.25;
};

struct Ranked {
  Point point;
  double cost = 0;
};

// Up to n of `ranked` (cheapest first) to measure, none equal to `skip`: the cheapest of each
// combination of categorical knob values first, in cost order, then the cheapest of the rest —
// a model blind to what a categorical knob does (streaming stores, say) still has each kind of
// schedule measured.
std::vector<Point> diverse_top(const Space& space, const std::vector<Ranked>& ranked, size_t n, const Point& skip);

// The points priced, cheapest first (ties in the order priced); seeds outside the space are
// skipped.
std::vector<Ranked> explore(const Space& space, const std::function<double(const Point&)>& cost,
                            const std::vector<Point>& seeds, const ExploreOptions& options, Rng& rng);

}  // namespace orchid::tune
