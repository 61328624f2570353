// The static half of the equivalence check: which functions the finite-field evaluation can
// interpret exactly (Mirage's LAX fragment) and a bound on the shape of every float value.
//
// Exactly, every float value of a LAX graph is a ratio N / D with
//   N = Σ_{i<num} f_i · e^(h_i/u_i),   D = Σ_{j<den} g_j · e^(...)
// for polynomials f, g, h, u of the graph inputs (Mirage Eq. 2). Terms bounds num, den and
// the degrees, which give the number of random tests Theorems 3 and 4 ask for.
//
// Interpreted: add, sub, mul, neg, div, recip, exp, sigmoid (1 / (1 + e^-x)) and tanh
// ((e^2x − 1) / (e^2x + 1)) where the argument is exp-free, eq/ne, select, sum and prod,
// welford (exact mean and population variance), maxsum's s (given its m), casts between
// floats, and every index computation. Everything else on floats — erf, sqrt, log, max, min,
// lt/le/gt/ge, floor, pow, a second exp on one path, a float → integer cast, … — is an
// *uninterpreted function*: a seeded random function of its arguments' field values,
// consistent within one test, so that graphs that apply it to equal arguments still compare.
// Its result is a fresh value (Terms of an input). An uninterpreted function with few
// possible results (a comparison, an argmax index) is "narrow": a changed argument changes
// its result with probability about 1/2 only, which the number of tests accounts for; so are
// integer and bool graph inputs, which are sampled from their valid range in each test rather
// than symbols. A float → integer cast is refused by the evaluation (evaluate.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "ir/graph.h"

namespace orchid::verify {

struct Terms {
  uint64_t num = 1;    // exponential terms of N (saturating at kMany)
  uint64_t den = 1;    // exponential terms of D
  uint64_t deg_n = 1;  // degree bound of the f_i
  uint64_t deg_d = 0;  // degree bound of the g_j (0: D is a constant)
  uint64_t deg_e = 0;  // degree bound of the exponents' h, u
  bool exp_free = true;        // no interpreted exp on the value's paths
  bool uninterpreted = false;  // computed through an uninterpreted function
  // Where D may vary. For a tensor: a bit per dimension. For a body expression: a bit per
  // loop variable (domain variable k: bit k, reduction variable k: bit 32 + k), so that a
  // sum whose terms share one denominator (Σ_r E[i,r] / R[i]) is not cross-multiplied.
  uint64_t den_vars = 0;
  uint64_t vars = 0;  // body expressions: the loop variables the value depends on
};

constexpr uint64_t kMany = uint64_t{1} << 62;

// One uninterpreted function of a graph, for the report.
struct Site {
  std::string node;  // the primitive's first output
  std::string what;  // e.g. "erf", "max reduction", "exp after exp"
};

struct Analysis {
  std::vector<Terms> values;  // by ValueId
  // Per node: the exp / sigmoid / tanh expression nodes evaluated as uninterpreted functions
  // (their argument already went through an exp).
  std::vector<std::unordered_set<const ir::ExprNode*>> opaque_exps;
  // Per node: whether maxsum's s is uninterpreted (its body went through an exp already).
  std::vector<bool> opaque_maxsum;
  std::vector<Site> sites;
  bool narrow = false;  // some uninterpreted function has few results
};

Analysis analyze(const ir::Graph& g);

// pow(x, n) is interpreted as repeated products where n is a constant integer, |n| <= 16.
std::optional<int64_t> small_power(const ir::Expr& exponent);

// Saturating helpers, exposed for the test-count arithmetic.
uint64_t sat_add(uint64_t a, uint64_t b);
uint64_t sat_mul(uint64_t a, uint64_t b);

}  // namespace orchid::verify
