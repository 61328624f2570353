// The abstract-subexpression oracle of Mirage's pruning (§4.3): is an abstract expression e
// a subexpression of the reference program's abstract expression E_O, that is, does
//
//     A_eq ∪ A_sub ⊨ subexpr(e, E_O)
//
// hold for the axioms of Table 2 (restated in subexpr_oracle.cpp next to their Z3 encoding)?
// A μGraph prefix whose expression is not entailed to be a subexpression is pruned; one that
// is entailed is kept. Only "proven" keeps a prefix: a refutation and an undecided query
// (solver timeout) both answer false.
//
// Z3 decides the query from the quantified axioms. Two sound pre-checks answer most queries
// without it:
//  - proven: e is a syntactic subterm of a target once both are put in a normal form that
//    only applies axioms (commutative operand order, sum(1, x) = x,
//    sum(i, sum(j, x)) = sum(i·j, x)); A_sub's subterm axioms then entail the query.
//  - refuted: FeatureModel below is a model of A_eq ∪ A_sub; where it falsifies
//    subexpr(e, t) for every target t, no proof can exist.
// So the pre-checks answer exactly as Z3 with the axioms would where Z3 finds an answer, and
// "refuted" where Z3 could only give up.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "superopt/abstract_expr.h"

namespace orchid::superopt {

struct OracleOptions {
  unsigned timeout_ms = 1000;  // per Z3 query; a timeout counts as not proven
  // Z3's deterministic resource limit per query ("rlimit"; 0: none). It binds before the
  // timeout on an unloaded machine (~2-3k units per ms on the development machine; every
  // query of the tests needs under 100k), so that which prefixes survive does not depend on
  // the machine's load; the timeout is the backstop.
  unsigned resource_limit = 1'000'000;
  // Answer from the sound pre-checks before asking Z3. Off: every uncached query goes to Z3
  // (to test and measure the encoding on its own).
  bool prechecks = true;
};

struct OracleStats {
  int64_t queries = 0;     // calls of is_subexpr / answer, cache hits included
  int64_t cache_hits = 0;
  int64_t proven = 0;      // entailed (by a pre-check or by Z3: unsat of the negation)
  int64_t refuted = 0;     // not entailed (a countermodel, or Z3 found a model)
  int64_t unknown = 0;     // Z3 gave up (timeout or incomplete quantifier instantiation)
  double solver_seconds = 0;    // wall time inside Z3's check
  int64_t solver_calls = 0;     // queries sent to Z3
  int64_t precheck_proven = 0;  // of `proven`, answered by the normal-form subterm check
  int64_t precheck_refuted = 0; // of `refuted`, answered by FeatureModel
};

enum class SubexprAnswer : uint8_t { Proven, Refuted, Unknown };
const char* subexpr_answer_name(SubexprAnswer a);

// A finite model of A_eq ∪ A_sub used to refute queries. Atoms are the inputs and the
// exponentials: the atom of exp(x) is "an exponential of the atoms at the top of x, summed
// Nx times" (E(Tx, Nx)). A term denotes a tuple (F, T, N, A, D):
//   T  its top atoms: those it combines with + · / without an exp in between;
//   F  its features: each atom it contains, and each unordered pair {a, b} of top atoms that
//      one of its mul or div nodes combines (a from one operand, b from the other);
//   N  the product of its sum extents, where add takes the lcm (kept as prime exponents);
//   A  whether it contains an add;
//   D  its denominators: the top atoms of the right operand of each of its divs.
//   input(n) = ({n}, {n}, 1, no, ∅)     exp(x) = (Fx ∪ {E(Tx, Nx)}, {E(Tx, Nx)}, Nx, Ax, Dx)
//   add(x,y) = (Fx ∪ Fy, Tx ∪ Ty, lcm(Nx, Ny), yes, Dx ∪ Dy)   sum(k, x) = (Fx, Tx, k·Nx, Ax, Dx)
//   mul(x,y) = (Fx ∪ Fy ∪ {{a,b} : a ∈ Tx, b ∈ Ty}, Tx ∪ Ty, Nx·Ny, Ax ∨ Ay, Dx ∪ Dy)
//   div(x,y) = mul(x,y) but D = Dx ∪ Dy ∪ Ty
//   subexpr(x, y)  ⇔  Fx ⊆ Fy  ∧  Nx divides Ny  ∧  (Ax → Ay)  ∧  Dx ⊆ Dy
// Every equation of A_eq holds in it (a sum leaves F, T and A alone and multiplies N; + is
// union and lcm; · and / both union, add the cross pairs and multiply N, so commutativity,
// associativity and the distributive laws hold; every equation has an add on both sides or
// on neither; the right operands of divs keep their top atoms through the div laws, as
// mul(x, div(y, z)) = div(mul(x, y), z) and div(div(x, y), z) = div(x, mul(y, z)) show;
// equal terms have equal T and N, so exp's atom is well defined), and every A_sub clause
// holds (each operand of a term has fewer features and denominators, a divisor of its N, and
// an add only if the term has one; ⊆, | and → are preorders). The tests check the axioms on
// random terms.
class FeatureModel {
 public:
  explicit FeatureModel(const AbsPool& pool) : pool_(pool) {}
  // subexpr(x, y) in the model. Either may be any id of the pool (which may have grown).
  bool subexpr(AbsId x, AbsId y);
  // Whether x and y denote the same element (the model's equality).
  bool same(AbsId x, AbsId y);

 private:
  using PrimePowers = std::vector<std::pair<int64_t, int32_t>>;  // prime -> exponent, sorted
  struct Value {
    std::vector<uint64_t> features;  // sorted
    std::vector<int32_t> top;        // sorted atom ids
    PrimePowers n;
    bool adds = false;               // A: contains an add
    std::vector<int32_t> denominators;  // D, sorted atom ids
  };
  // Input n, or (input −1) the exponential of the atoms `top` summed N = n times.
  struct Atom {
    int64_t input = -1;
    std::vector<int32_t> top;
    PrimePowers n;
  };
  const Value& value(AbsId id);
  Value compute(const AbsNode& node);
  int32_t atom_of_input(int64_t n);
  int32_t atom_of_exp(const std::vector<int32_t>& top, const PrimePowers& n);

  const AbsPool& pool_;
  std::vector<Value> values_;  // by AbsId, computed in id order
  std::vector<Atom> atoms_;
};

class SubexprOracle {
 public:
  // The targets are the abstract expressions of the reference program's outputs. `pool` must
  // outlive the oracle; it may grow while the oracle is used.
  SubexprOracle(const AbsPool& pool, std::vector<AbsId> targets, OracleOptions o = {});
  ~SubexprOracle();
  SubexprOracle(const SubexprOracle&) = delete;
  SubexprOracle& operator=(const SubexprOracle&) = delete;

  // Whether A_eq ∪ A_sub ⊨ subexpr(e, t) for some target t. Unknown counts as not proven.
  // Results are cached by e.
  bool is_subexpr(AbsId e) { return answer(e) == SubexprAnswer::Proven; }
  // The same query with how it was settled (cached alike).
  SubexprAnswer answer(AbsId e);
  const OracleStats& stats() const { return stats_; }

 private:
  struct Z3State;
  class NormalForm;
  std::optional<SubexprAnswer> precheck(AbsId e);
  SubexprAnswer ask_z3(AbsId e);

  const AbsPool& pool_;
  std::vector<AbsId> targets_;
  OracleOptions options_;
  OracleStats stats_;
  std::vector<int8_t> cache_;  // by AbsId: -1 not asked, else a SubexprAnswer
  FeatureModel model_;
  std::unique_ptr<NormalForm> normal_;
  std::unique_ptr<Z3State> z3_;  // created on the first query that needs it
};

}  // namespace orchid::superopt
