// Schedule search (src/tune: space.h, stats.h, droplet.h, explore.h, cpu_space.h): Student's t
// and the incomplete beta against closed forms; Welch's test rejects equal means about as
// often as its level says and finds a real difference, and, with each side's slowest rounds
// left out, finds it through rounds slowed by load; Holm's procedure steps down; Droplet
// Search descends to the optimum of a noisy bowl, stops at a local optimum of a noisy
// two-basin objective, refuses to move on noise alone, measures the current point with its
// neighbours and keeps to its budget; the evolutionary
// search beats random sampling with the same trials; and the CPU schedule space holds the
// default schedule as a point, its neighbours and random points lower, and its split knob turns
// two levels on.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "codegen/cpu/lower.h"
#include "codegen/kernel_graphs.h"
#include "ir/parser.h"
#include "testlib/tile_fixtures.h"
#include "tune/cpu_space.h"
#include "tune/droplet.h"
#include "tune/explore.h"
#include "tune/stats.h"

namespace orchid::tune {
namespace {

double gaussian(Rng& rng) {
  double u = rng.uniform(1e-12, 1), v = rng.uniform();
  return std::sqrt(-2 * std::log(u)) * std::cos(2 * M_PI * v);
}

TEST(TuneStats, StudentTAndIncompleteBetaMatchClosedForms) {
  EXPECT_NEAR(student_t_cdf(1, 1), 0.75, 1e-12);  // Cauchy
  for (double t : {-3.0, -0.5, 0.0, 1.0, 4.0})      // df 2: 1/2 + t / (2 sqrt(t^2 + 2))
    EXPECT_NEAR(student_t_cdf(t, 2), 0.5 + t / (2 * std::sqrt(t * t + 2)), 1e-12) << t;
  EXPECT_NEAR(student_t_cdf(2.228, 10), 0.975, 2e-4);  // the tables' two-sided 5 % point
  EXPECT_NEAR(student_t_cdf(1.96, 1e7), 0.975, 1e-4);  // the normal limit
  EXPECT_NEAR(incomplete_beta(2, 3, 0.4), 0.5248, 1e-12);
  EXPECT_EQ(incomplete_beta(2, 3, 0), 0);
  EXPECT_EQ(incomplete_beta(2, 3, 1), 1);
}

TEST(TuneStats, WelchFindsARealDifferenceAndRejectsEqualMeansAtItsLevel) {
  WelchTest w = welch_less({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10});
  EXPECT_DOUBLE_EQ(w.t, -5);
  EXPECT_DOUBLE_EQ(w.df, 8);
  EXPECT_NEAR(w.p, 5.26e-4, 1e-5);
  EXPECT_NEAR(welch_less({6, 7, 8, 9, 10}, {1, 2, 3, 4, 5}).p, 1 - 5.26e-4, 1e-5);
  EXPECT_EQ(welch_less({1}, {2, 3}).p, 1);
  EXPECT_EQ(welch_less({1, 1}, {2, 2}).p, 0);
  Rng rng(3);
  int rejected = 0;
  const int trials = 4000;
  for (int i = 0; i < trials; ++i) {
    std::vector<double> a, b;
    for (int j = 0; j < 10; ++j) a.push_back(5 + gaussian(rng)), b.push_back(5 + 2 * gaussian(rng));
    rejected += welch_less(a, b).p <= 0.05;
  }
  EXPECT_NEAR(double(rejected) / trials, 0.05, 0.012);
}

// The verdict of compare_timed's looks: faster with significance; leaning (a's mean below
// b's); or not faster. Two looks of 9 rounds each at alpha / 2, the second only where the
// first leans, keep false "faster" verdicts under alpha where the two are equal, and tell a 5 %
// difference (noise of 5 %) apart more often than one look of 9 rounds at alpha.
TEST(TuneStats, VerdictLeansWhereMoreSamplesMayTellApart) {
  EXPECT_EQ(faster_verdict({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}, 0.05), Verdict::Faster);
  EXPECT_EQ(faster_verdict({4, 5, 6, 7, 8}, {4.5, 5.5, 6.5, 7.5, 8.5}, 0.05), Verdict::Leaning);
  EXPECT_EQ(faster_verdict({4.5, 5.5, 6.5, 7.5, 8.5}, {4, 5, 6, 7, 8}, 0.05), Verdict::NotFaster);
  EXPECT_EQ(faster_verdict({}, {1, 2}, 0.05), Verdict::NotFaster);
  Rng rng(11);
  auto sample = [&](double mean, int n) {
    std::vector<double> v;
    for (int i = 0; i < n; ++i) v.push_back(mean * (1 + 0.05 * gaussian(rng)));
    return v;
  };
  auto two_looks = [&](double a_mean) {
    std::vector<double> a = sample(a_mean, 9), b = sample(1, 9);
    Verdict v = faster_verdict(a, b, 0.025);
    if (v != Verdict::Leaning) return v == Verdict::Faster;
    std::vector<double> a2 = sample(a_mean, 9), b2 = sample(1, 9);
    a.insert(a.end(), a2.begin(), a2.end());
    b.insert(b.end(), b2.begin(), b2.end());
    return faster_verdict(a, b, 0.025) == Verdict::Faster;
  };
  const int trials = 4000;
  int false_faster = 0, two = 0, one = 0;
  for (int i = 0; i < trials; ++i) false_faster += two_looks(1);
  for (int i = 0; i < trials; ++i) two += two_looks(0.95);
  for (int i = 0; i < trials; ++i) one += faster_verdict(sample(0.95, 9), sample(1, 9), 0.05) == Verdict::Faster;
  EXPECT_LT(double(false_faster) / trials, 0.05);
  EXPECT_GT(two, one);
}

// Two plans 5 % apart, timed in 18 rounds with noise of 1 %, where load slowed four rounds of
// the faster one by 30 to 60 %: Welch's test on every round misses the difference, and with
// each side's slowest quarter left out finds it. Equal plans under the same load are not told
// apart either way.
TEST(TuneStats, DroppingTheSlowestRoundsFindsADifferenceThroughLoad) {
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(0, 0.01);
  std::vector<double> fast, slow, same;
  for (int r = 0; r < 18; ++r) {
    double load = r % 5 == 2 ? 1.3 + 0.1 * (r % 4) : 1.0;
    fast.push_back(1.00 * (1 + noise(rng)) * load);
    slow.push_back(1.05 * (1 + noise(rng)));
    same.push_back(1.00 * (1 + noise(rng)));
  }
  EXPECT_GT(welch_less(fast, slow).p, 0.05);
  EXPECT_LT(welch_less(without_slowest(fast, 0.25), without_slowest(slow, 0.25)).p, 0.01);
  EXPECT_GT(welch_less(without_slowest(fast, 0.25), without_slowest(same, 0.25)).p, 0.05);
  EXPECT_EQ(without_slowest({3, 1, 2, 9}, 0.25), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(without_slowest({3, 1}, 0.9), (std::vector<double>{1, 3}));  // two kept
  EXPECT_EQ(without_slowest({2, 1, 3}, 0), (std::vector<double>{1, 2, 3}));
}

TEST(TuneStats, HolmStepsDown) {
  EXPECT_EQ(holm_reject({0.01, 0.04, 0.03, 0.005}, 0.05), (std::vector<bool>{true, false, false, true}));
  EXPECT_EQ(holm_reject({0.01, 0.02, 0.03}, 0.05), (std::vector<bool>{true, true, true}));
  EXPECT_EQ(holm_reject({0.06}, 0.05), (std::vector<bool>{false}));
  EXPECT_TRUE(holm_reject({}, 0.05).empty());
}

// Two ordered knobs of 16 values and a categorical one of 3.
Space grid_space() { return Space{{{"x", 16, true}, {"y", 16, true}, {"c", 3, false}}, {}, {}}; }

// Eight noisy samples of f at each point.
MeasureFn noisy(const std::function<double(const Point&)>& f, double noise, Rng& rng, int* calls = nullptr) {
  return [f, noise, &rng, calls](const std::vector<Point>& ps) {
    if (calls) ++*calls;
    std::vector<std::vector<double>> out;
    for (const Point& p : ps) {
      std::vector<double> s;
      for (int i = 0; i < 8; ++i) s.push_back(f(p) + noise * gaussian(rng));
      out.push_back(s);
    }
    return out;
  };
}

TEST(Droplet, DescendsToTheOptimumOfANoisyBowl) {
  auto f = [](const Point& p) {
    return 10 + (p[0] - 11) * (p[0] - 11) + 2 * (p[1] - 4) * (p[1] - 4) + (p[2] == 1 ? 0 : 5);
  };
  Rng rng(11);
  DropletOptions o;
  o.budget = 500;
  DropletResult r = droplet_search(grid_space(), {0, 15, 0}, noisy(f, 0.3, rng), o);
  EXPECT_TRUE(r.converged);
  EXPECT_EQ(r.best, (Point{11, 4, 1}));
  EXPECT_LE(r.measured, o.budget);
  EXPECT_GT(r.moves(), 5);
  EXPECT_EQ(r.path.front(), (Point{0, 15, 0}));
}

// Two basins: a shallow one at x = 3 and the deep one at x = 12, a ridge between them wider
// than the widest step. Started in the shallow basin, the descent stops at its bottom, a point
// no neighbour (step 1) of which is better.
TEST(Droplet, StopsAtALocalOptimum) {
  auto f = [](const Point& p) {
    double x = p[0];
    double shallow = 5 + (x - 3) * (x - 3), deep = (x - 12) * (x - 12);
    return std::min(shallow, deep + (x < 8 ? 100 : 0)) + (p[1] - 7) * (p[1] - 7) + (p[2] == 2 ? 0 : 1);
  };
  Rng rng(5);
  Space s = grid_space();
  DropletResult r = droplet_search(s, {0, 0, 0}, noisy(f, 0.2, rng));
  ASSERT_TRUE(r.converged);
  EXPECT_EQ(r.best, (Point{3, 7, 2}));
  for (const Point& q : s.neighbours(r.best, 1)) EXPECT_GE(f(q), f(r.best)) << s.str(q);
}

// On a flat objective every difference is noise: the t-test with Holm's correction keeps the
// search still (each step's chance of a false move is at most 5 %), where taking the lowest
// mean would move almost every step.
TEST(Droplet, RefusesMovesOnNoiseAlone) {
  auto flat = [](const Point&) { return 10.0; };
  int moves = 0, still = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Rng rng(seed);
    DropletResult r = droplet_search(grid_space(), {8, 8, 1}, noisy(flat, 1.0, rng));
    EXPECT_TRUE(r.converged);
    moves += r.moves();
    still += r.moves() == 0;
  }
  EXPECT_LE(moves, 6);
  EXPECT_GE(still, 15);
}

TEST(Droplet, MeasuresTheCurrentPointWithItsNeighboursAndKeepsToItsBudget) {
  auto f = [](const Point& p) { return double(p[0] + p[1]); };
  Rng rng(2);
  MeasureFn inner = noisy(f, 0.01, rng);
  std::vector<std::vector<Point>> batches;
  MeasureFn recording = [&](const std::vector<Point>& ps) {
    batches.push_back(ps);
    return inner(ps);
  };
  DropletOptions o;
  o.budget = 20;
  DropletResult r = droplet_search(grid_space(), {15, 15, 0}, recording, o);
  EXPECT_FALSE(r.converged);
  EXPECT_LE(r.measured, 20);
  int total = 0;
  size_t at = 0;  // the current point of each batch comes first, along the path
  for (size_t i = 0; i < batches.size(); ++i) {
    while (at < r.path.size() && r.path[at] != batches[i][0]) ++at;
    EXPECT_LT(at, r.path.size()) << "batch " << i;
    total += static_cast<int>(batches[i].size());
  }
  EXPECT_GE(r.moves(), 3);
  EXPECT_EQ(total, r.measured);
  EXPECT_LT(f(r.best), 30);
}

// A rugged cost over six knobs of 16 values (16^6 points): with the same 300 trials the
// evolutionary search finds cheaper points than random sampling, seed after seed.
TEST(Explore, EvolutionBeatsRandomSamplingWithTheSameTrials) {
  Space s;
  for (int i = 0; i < 6; ++i) s.knobs.push_back({"k" + std::to_string(i), 16, true});
  auto cost = [](const Point& p) {
    double c = 0;
    for (size_t i = 0; i < p.size(); ++i) c += std::abs(p[i] - int(3 + 2 * i)) + (p[i] % 3 == 0 ? 1.5 : 0);
    return c;
  };
  int better = 0;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    ExploreOptions evo, random;
    random.random_share = 1;
    Rng r1(seed), r2(seed);
    std::vector<Ranked> a = explore(s, cost, {}, evo, r1), b = explore(s, cost, {}, random, r2);
    ASSERT_EQ(a.size(), 300u);
    ASSERT_EQ(b.size(), 300u);
    EXPECT_LE(a[0].cost, a[1].cost);
    better += a[0].cost < b[0].cost;
  }
  EXPECT_GE(better, 4);
}

TEST(Explore, SeedsComeFirstAndInvalidPointsAreNeverPriced) {
  Space s{{{"a", 8, true}, {"b", 8, true}}, [](const Point& p) { return p[0] != p[1]; }, {}};
  std::vector<Point> priced;
  auto cost = [&](const Point& p) {
    priced.push_back(p);
    return double(p[0] * 8 + p[1]);
  };
  ExploreOptions o;
  o.trials = 40;
  Rng rng(9);
  std::vector<Ranked> r = explore(s, cost, {{0, 1}, {3, 3}}, o, rng);
  ASSERT_FALSE(priced.empty());
  EXPECT_EQ(priced[0], (Point{0, 1}));
  for (const Point& p : priced) EXPECT_NE(p[0], p[1]);
  EXPECT_EQ(r[0].point, (Point{0, 1}));
}

// The cheapest point of each combination of categorical values comes first, then the rest by
// cost; the skipped point never.
TEST(Explore, DiverseTopTakesEachKindOfPointFirst) {
  Space s{{{"size", 8, true}, {"kind", 3, false}}, {}, {}};
  std::vector<Ranked> ranked = {{{1, 0}, 1}, {{2, 0}, 2}, {{3, 0}, 3}, {{4, 1}, 4}, {{5, 0}, 5}, {{6, 2}, 6}};
  EXPECT_EQ(diverse_top(s, ranked, 4, {1, 0}), (std::vector<Point>{{2, 0}, {4, 1}, {6, 2}, {3, 0}}));
  EXPECT_EQ(diverse_top(s, ranked, 2, {9, 9}), (std::vector<Point>{{1, 0}, {4, 1}}));
  EXPECT_EQ(diverse_top(s, ranked, 10, {9, 9}).size(), 6u);
}

constexpr auto whole = testlib::whole_graph_kernel;

TEST(CpuSpace, HoldsTheDefaultScheduleAndLowersItsNeighboursAndRandomPoints) {
  for (const std::string& text : {codegen::softmax_rows(1182, 197), codegen::gemm_graph(1, 197, 384, 96, false, false, false),
                                  testlib::matmul_softmax(512)}) {
    ir::Graph g = ir::parse_graph(text);
    tile::Kernel k = whole(g);
    CpuSpace c = cpu_space(g, k, 2);
    Point d = c.point_of(c.base);
    ASSERT_TRUE(c.space.contains(d)) << c.space.str(d);
    EXPECT_EQ(codegen::cpu::schedule_str(c.schedule(d)), codegen::cpu::schedule_str(c.base));
    std::vector<Point> around = c.space.neighbours(d, 1);
    EXPECT_GE(around.size(), 8u);
    std::set<std::string> distinct;
    for (const Point& p : around) {
      codegen::cpu::Schedule s = c.schedule(p);
      distinct.insert(codegen::cpu::schedule_str(s));
      EXPECT_EQ(c.point_of(s), p) << codegen::cpu::schedule_str(s);
      EXPECT_LE(codegen::cpu::lower_kernel(g, k, s).tasks, 1 << 16);
    }
    EXPECT_EQ(distinct.size(), around.size());
    Rng rng(4);
    for (int i = 0; i < 20; ++i) {
      Point p = c.space.random_point(rng);
      ASSERT_FALSE(p.empty());
      codegen::cpu::KernelLowering kl = codegen::cpu::lower_kernel(g, k, c.schedule(p));
      EXPECT_LE(kl.tasks, 1 << 16);
    }
  }
}

TEST(CpuSpace, TheSplitKnobTurnsTwoLevelsOn) {
  ir::Graph g = ir::parse_graph(testlib::matmul_softmax(512));
  tile::Kernel k = whole(g);
  CpuSpace c = cpu_space(g, k, 2);
  Point d = c.point_of(c.base);
  ASSERT_EQ(d[c.split], c.nodes);  // one level
  int two = 0;
  for (const Point& p : c.space.neighbours(d, 1)) {
    if (p[c.split] == c.nodes) continue;
    codegen::cpu::Schedule s = c.schedule(p);
    EXPECT_FALSE(s.inner.empty());
    EXPECT_EQ(s.split, p[c.split]);
    two += codegen::cpu::lower_kernel(g, k, s).inner.has_value();
  }
  EXPECT_GE(two, 3);
}

}  // namespace
}  // namespace orchid::tune
