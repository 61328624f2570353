#include "tune/space.h"

#include <algorithm>

namespace orchid::tune {

bool Space::contains(const Point& p) const {
  if (p.size() != knobs.size()) return false;
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] < 0 || p[i] >= knobs[i].values) return false;
  return !valid || valid(p);
}

std::vector<Point> Space::neighbours(const Point& p, int step) const {
  std::vector<Point> out;
  const Point self = canon(p);
  auto add = [&](size_t i, int v) {
    Point q = p;
    q[i] = v;
    q = canon(q);
    if (q != self && contains(q) && std::find(out.begin(), out.end(), q) == out.end()) out.push_back(std::move(q));
  };
  for (size_t i = 0; i < knobs.size(); ++i) {
    const Knob& k = knobs[i];
    if (!k.ordered) {
      for (int v = 0; v < k.values; ++v)
        if (v != p[i]) add(i, v);
      continue;
    }
    int down = std::max(0, p[i] - step), up = std::min(k.values - 1, p[i] + step);
    if (down != p[i]) add(i, down);
    if (up != p[i]) add(i, up);
  }
  return out;
}

Point Space::random_point(Rng& rng, int tries) const {
  for (int t = 0; t < tries; ++t) {
    Point p(knobs.size());
    for (size_t i = 0; i < knobs.size(); ++i) p[i] = static_cast<int>(rng.range(0, knobs[i].values));
    p = canon(p);
    if (!valid || valid(p)) return p;
  }
  return {};
}

std::string Space::str(const Point& p) const {
  std::string s;
  for (size_t i = 0; i < p.size() && i < knobs.size(); ++i)
    s += (i ? " " : "") + knobs[i].name + "=" + std::to_string(p[i]);
  return s;
}

}  // namespace orchid::tune
