// A search space of schedules as coordinates (Droplet Search §2.2): a point holds one value
// index per knob. Ordered knobs (tile sizes, vector width, unroll factor, prefetch distance)
// have neighbours a step away along their ladder of values; categorical knobs (inlining,
// streaming stores, the GEMM micro-kernel, where a two-level kernel splits) have every other
// value as a neighbour.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "support/random.h"

namespace orchid::tune {

struct Knob {
  std::string name;
  int values = 1;       // value indices 0 .. values - 1
  bool ordered = true;  // false: categorical
};

using Point = std::vector<int>;

struct Space {
  std::vector<Knob> knobs;
  // Whether a point may be built and measured (never called with a point outside the knobs'
  // ranges); an invalid point is never measured. Empty: every point is valid.
  std::function<bool(const Point&)> valid;
  // The one point standing for all those that mean the same schedule (knobs another knob makes
  // irrelevant set to a fixed value). Empty: every point stands for itself.
  std::function<Point(const Point&)> canonical;

  bool contains(const Point& p) const;  // in range and valid
  Point canon(const Point& p) const { return canonical ? canonical(p) : p; }
  // The valid points one move from p: along each ordered knob `step` values up and down
  // (clipped to its ends; nothing where p is already there), each other value of each
  // categorical knob; knob by knob, in knob order, lower values first; each canonical, once,
  // and none standing for p's own schedule.
  std::vector<Point> neighbours(const Point& p, int step) const;
  // A uniformly random point of the ranges, canonical; `tries` draws at most to find a valid
  // one (none: an empty point).
  Point random_point(Rng& rng, int tries = 100) const;
  std::string str(const Point& p) const;  // "tile0=3 vec=2 ..." (value indices)
};

}  // namespace orchid::tune
