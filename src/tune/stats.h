// The statistics of the tuner's decisions (Droplet Search's moves): a move to a neighbour is
// taken only when its repeated measurements are faster than the current point's with
// significance — Welch's t-test (unequal variances), one-sided, with a Holm correction over the
// neighbours tested in one step.
#pragma once

#include <vector>

namespace orchid::tune {

// The CDF of Student's t distribution with `df` (> 0, not necessarily whole) degrees of freedom.
double student_t_cdf(double t, double df);

// The regularized incomplete beta function I_x(a, b), for a, b > 0 and x in [0, 1].
double incomplete_beta(double a, double b, double x);

struct WelchTest {
  double t = 0;   // (mean(a) - mean(b)) / standard error
  double df = 0;  // Welch–Satterthwaite degrees of freedom
  double p = 1;   // one-sided: the probability of a t this low were the means equal
};

// Whether a's mean is below b's: Welch's t-test, one-sided. Fewer than two samples on either
// side give p = 1; samples without spread on both sides give p = 0 where a's mean is lower
// and 1 otherwise.
WelchTest welch_less(const std::vector<double>& a, const std::vector<double>& b);

// The p-value of "a is faster than b" for the tuner's decisions, where a point that failed to
// build or run (no samples) is slower than any: welch_less(a, b).p where b has samples; else 0
// where a has some, 1 where neither has.
double p_faster(const std::vector<double>& a, const std::vector<double>& b);

// Whether samples `a` are faster than `b` at level `alpha` (welch_less), and where not, whether
// they lean that way (a's mean below b's): more samples may then tell them apart.
enum class Verdict { Faster, Leaning, NotFaster };
Verdict faster_verdict(const std::vector<double>& a, const std::vector<double>& b, double alpha);

// `samples` without the slowest `fraction` of them (the count rounded down, at most all but
// two), in increasing order. Load from other processes only ever slows a run: a round it hit
// says nothing of the code timed, and left in, it moves the mean and widens the spread.
std::vector<double> without_slowest(std::vector<double> samples, double fraction);

// Holm's step-down procedure: which of the hypotheses with p-values `p` are rejected with a
// family-wise error rate of at most `alpha`.
std::vector<bool> holm_reject(const std::vector<double>& p, double alpha);

}  // namespace orchid::tune
