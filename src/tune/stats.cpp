#include "tune/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace orchid::tune {

namespace {

// The continued fraction of I_x(a, b) (modified Lentz), converging for x < (a + 1) / (a + b + 2).
double beta_fraction(double a, double b, double x) {
  const double tiny = 1e-300, eps = 1e-15;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  d = 1 / (std::fabs(d) < tiny ? tiny : d);
  double h = d;
  for (int m = 1; m <= 500; ++m) {
    for (int half = 0; half < 2; ++half) {
      double num = half == 0 ? m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
                             : -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
      d = 1 + num * d;
      d = 1 / (std::fabs(d) < tiny ? tiny : d);
      c = 1 + num / c;
      if (std::fabs(c) < tiny) c = tiny;
      h *= d * c;
      if (half == 1 && std::fabs(d * c - 1) < eps) return h;
    }
  }
  return h;
}

struct Moments {
  double mean = 0, var = 0;
  size_t n = 0;
};

Moments moments(const std::vector<double>& v) {
  Moments m;
  m.n = v.size();
  if (m.n == 0) return m;
  m.mean = std::accumulate(v.begin(), v.end(), 0.0) / double(m.n);
  for (double x : v) m.var += (x - m.mean) * (x - m.mean);
  m.var = m.n > 1 ? m.var / double(m.n - 1) : 0;
  return m;
}

}  // namespace

double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_fraction(a, b, x) / a;
  return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

double student_t_cdf(double t, double df) {
  double tail = 0.5 * incomplete_beta(df / 2, 0.5, df / (df + t * t));  // P(T > |t|)
  return t < 0 ? tail : 1 - tail;
}

WelchTest welch_less(const std::vector<double>& a, const std::vector<double>& b) {
  WelchTest w;
  Moments x = moments(a), y = moments(b);
  if (x.n < 2 || y.n < 2) return w;
  double va = x.var / double(x.n), vb = y.var / double(y.n), se2 = va + vb;
  if (se2 <= 0) {
    w.p = x.mean < y.mean ? 0 : 1;
    w.t = x.mean < y.mean ? -INFINITY : x.mean > y.mean ? INFINITY : 0;
    return w;
  }
  w.t = (x.mean - y.mean) / std::sqrt(se2);
  w.df = se2 * se2 / (va * va / double(x.n - 1) + vb * vb / double(y.n - 1));
  w.p = student_t_cdf(w.t, w.df);
  return w;
}

double p_faster(const std::vector<double>& a, const std::vector<double>& b) {
  if (b.empty()) return a.empty() ? 1 : 0;
  return welch_less(a, b).p;
}

Verdict faster_verdict(const std::vector<double>& a, const std::vector<double>& b, double alpha) {
  WelchTest w = welch_less(a, b);
  if (w.p <= alpha) return Verdict::Faster;
  return w.t < 0 ? Verdict::Leaning : Verdict::NotFaster;
}

std::vector<double> without_slowest(std::vector<double> samples, double fraction) {
  std::sort(samples.begin(), samples.end());
  size_t drop = static_cast<size_t>(std::max(0.0, fraction) * static_cast<double>(samples.size()));
  drop = std::min(drop, samples.size() > 2 ? samples.size() - 2 : size_t{0});
  samples.resize(samples.size() - drop);
  return samples;
}

std::vector<bool> holm_reject(const std::vector<double>& p, double alpha) {
  std::vector<size_t> order(p.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t i, size_t j) { return p[i] < p[j]; });
  std::vector<bool> reject(p.size(), false);
  for (size_t k = 0; k < order.size(); ++k) {
    if (p[order[k]] > alpha / double(order.size() - k)) break;
    reject[order[k]] = true;
  }
  return reject;
}

}  // namespace orchid::tune
