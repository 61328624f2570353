// Probabilistic equivalence of two primitive graphs over finite fields (Mirage §5).
//
// Both graphs are evaluated on the same random inputs drawn from Z_p × Z_q (evaluate.h)
// t times; they are equivalent when every output agrees in every test. Equivalent graphs
// always pass. For graphs in the LAX fragment (terms.h), a non-equivalent pair passes all
// t = ⌈k · ln(1/δ)⌉ tests with probability at most δ (Theorem 4), where k bounds the
// exponential terms of the difference of two outputs (cross-multiplied: k = nA·dB + nB·dA)
// and the primes satisfy Theorem 3's d · k⁴ < q; exp-free pairs need t = ⌈ln δ / ln(d/p)⌉
// (Schwartz–Zippel, d the degree of the difference). Where more tests are needed than
// max_tests or the work budget allow, as many as fit still run: a difference is still found,
// and passing them all leaves the pair undecided. With a narrow uninterpreted function
// (terms.h) t is at least ⌈log2(1/δ)⌉. A draw in which a division meets zero is drawn again.
//
// Dims along which both graphs compute every position alike (uniform.h) are first cut to one
// position, which decides the same question with less work.
//
// Uninterpreted functions make the answer one about the graphs with those functions left
// abstract: equal arguments give equal results, so graphs that use them alike compare, and a
// difference is definitive only where it does not go through one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "verify/terms.h"

namespace orchid::verify {

struct CheckOptions {
  double delta = 1e-9;          // accepted probability of passing a non-equivalent pair
  uint64_t seed = 1;
  int64_t max_tests = 4096;     // more needed: undecided
  int64_t max_work = 50000000;  // expression evaluations over all tests, both graphs
  int max_redraws = 32;         // consecutive draws with a zero divisor
};

enum class Outcome { Equivalent, Different, Undecided };

struct Verdict {
  Outcome outcome = Outcome::Undecided;
  int64_t tests_needed = 0;
  int64_t tests_run = 0;
  int64_t redraws = 0;
  uint64_t k = 0;       // exponential-term bound of the difference (1: none)
  uint64_t degree = 0;  // degree bound of the difference
  bool exp_free = true;
  // Different: whether the differing output goes through no uninterpreted function, so the
  // graphs really differ (equivalent graphs always pass).
  bool definitive = false;
  int32_t uniform_dims_cut = 0;     // classes of axes compared at one position (uniform.h)
  std::vector<Site> uninterpreted;  // of both graphs, the first graph's first
  std::string detail;               // Different: where; Undecided: why
};

Verdict check_equivalence(const ir::Graph& a, const ir::Graph& b, const CheckOptions& o = {});

// One paragraph for reports and the CLI.
std::string describe(const Verdict& v);

}  // namespace orchid::verify
