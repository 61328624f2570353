#include "superopt/subexpr_oracle.h"

#include <z3++.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "support/error.h"

namespace orchid::superopt {

const char* subexpr_answer_name(SubexprAnswer a) {
  switch (a) {
    case SubexprAnswer::Proven:
      return "proven";
    case SubexprAnswer::Refuted:
      return "refuted";
    case SubexprAnswer::Unknown:
      return "unknown";
  }
  return "?";
}

// ---------------------------------------------------------------------------------------
// FeatureModel: the countermodel of the header.

namespace {

constexpr uint64_t kSingle = 0xffffffffULL;  // low half of a feature that is one atom

uint64_t single_feature(int32_t atom) { return (static_cast<uint64_t>(atom) << 32) | kSingle; }
uint64_t pair_feature(int32_t a, int32_t b) {
  if (b < a) std::swap(a, b);
  return (static_cast<uint64_t>(a) << 32) | static_cast<uint64_t>(b);
}

template <class T>
std::vector<T> sorted_union(const std::vector<T>& x, const std::vector<T>& y) {
  std::vector<T> out;
  out.reserve(x.size() + y.size());
  std::set_union(x.begin(), x.end(), y.begin(), y.end(), std::back_inserter(out));
  return out;
}

using PrimePowers = std::vector<std::pair<int64_t, int32_t>>;

PrimePowers factorize(int64_t k) {
  PrimePowers out;
  for (int64_t p = 2; p <= k / p; ++p) {
    int32_t e = 0;
    while (k % p == 0) k /= p, ++e;
    if (e > 0) out.emplace_back(p, e);
  }
  if (k > 1) out.emplace_back(k, 1);
  return out;
}

// Exponent-wise sum (product of the numbers) or maximum (their lcm).
PrimePowers combine_powers(const PrimePowers& x, const PrimePowers& y, bool lcm) {
  std::map<int64_t, int32_t> m(x.begin(), x.end());
  for (const auto& [p, e] : y) m[p] = lcm ? std::max(m[p], e) : m[p] + e;
  return PrimePowers(m.begin(), m.end());
}

bool divides(const PrimePowers& x, const PrimePowers& y) {
  std::map<int64_t, int32_t> m(y.begin(), y.end());
  for (const auto& [p, e] : x)
    if (m[p] < e) return false;
  return true;
}

}  // namespace

int32_t FeatureModel::atom_of_input(int64_t n) {
  for (size_t i = 0; i < atoms_.size(); ++i)
    if (atoms_[i].input == n) return static_cast<int32_t>(i);
  atoms_.push_back(Atom{n, {}, {}});
  return static_cast<int32_t>(atoms_.size() - 1);
}

int32_t FeatureModel::atom_of_exp(const std::vector<int32_t>& top, const PrimePowers& n) {
  for (size_t i = 0; i < atoms_.size(); ++i)
    if (atoms_[i].input < 0 && atoms_[i].top == top && atoms_[i].n == n) return static_cast<int32_t>(i);
  atoms_.push_back(Atom{-1, top, n});
  return static_cast<int32_t>(atoms_.size() - 1);
}

FeatureModel::Value FeatureModel::compute(const AbsNode& node) {
  Value v;
  switch (node.op) {
    case AbsOp::Input: {
      int32_t a = atom_of_input(node.k);
      return Value{{single_feature(a)}, {a}, {}, false, {}};
    }
    case AbsOp::Exp: {
      const Value& x = values_[static_cast<size_t>(node.a)];
      int32_t a = atom_of_exp(x.top, x.n);
      return Value{sorted_union(x.features, {single_feature(a)}), {a}, x.n, x.adds, x.denominators};
    }
    case AbsOp::Sum: {
      const Value& x = values_[static_cast<size_t>(node.a)];
      return Value{x.features, x.top, combine_powers(x.n, factorize(node.k), false), x.adds, x.denominators};
    }
    case AbsOp::Add:
    case AbsOp::Mul:
    case AbsOp::Div: {
      const Value& x = values_[static_cast<size_t>(node.a)];
      const Value& y = values_[static_cast<size_t>(node.b)];
      bool additive = node.op == AbsOp::Add;
      v.features = sorted_union(x.features, y.features);
      if (!additive) {
        std::vector<uint64_t> cross;
        for (int32_t a : x.top)
          for (int32_t b : y.top) cross.push_back(pair_feature(a, b));
        std::sort(cross.begin(), cross.end());
        cross.erase(std::unique(cross.begin(), cross.end()), cross.end());
        v.features = sorted_union(v.features, cross);
      }
      v.top = sorted_union(x.top, y.top);
      v.n = combine_powers(x.n, y.n, additive);
      v.adds = additive || x.adds || y.adds;
      v.denominators = sorted_union(x.denominators, y.denominators);
      if (node.op == AbsOp::Div) v.denominators = sorted_union(v.denominators, y.top);
      return v;
    }
  }
  return v;
}

const FeatureModel::Value& FeatureModel::value(AbsId id) {
  ORCHID_CHECK(id >= 0 && static_cast<size_t>(id) < pool_.size()) << "id " << id << " not in the pool";
  // Operands have smaller ids than their term, so computing in id order finds them ready.
  while (values_.size() <= static_cast<size_t>(id))
    values_.push_back(compute(pool_.node(static_cast<AbsId>(values_.size()))));
  return values_[static_cast<size_t>(id)];
}

bool FeatureModel::subexpr(AbsId x, AbsId y) {
  value(std::max(x, y));  // computes both; later calls of value() do not grow values_
  const Value& vx = value(x);
  const Value& vy = value(y);
  return std::includes(vy.features.begin(), vy.features.end(), vx.features.begin(),
                       vx.features.end()) &&
         divides(vx.n, vy.n) && (!vx.adds || vy.adds) &&
         std::includes(vy.denominators.begin(), vy.denominators.end(), vx.denominators.begin(),
                       vx.denominators.end());
}

bool FeatureModel::same(AbsId x, AbsId y) {
  value(std::max(x, y));
  const Value& vx = values_[static_cast<size_t>(x)];
  const Value& vy = values_[static_cast<size_t>(y)];
  return vx.features == vy.features && vx.top == vy.top && vx.n == vy.n && vx.adds == vy.adds &&
         vx.denominators == vy.denominators;
}

// ---------------------------------------------------------------------------------------
// NormalForm: terms rewritten with axioms only, for the syntactic "proven" pre-check.

// Interns the normal form of each pool term into a private pool: commutative operands
// ordered (AbsPool does it), sum(1, x) dropped, nested sums merged (sum(i, sum(j, x)) →
// sum(i·j, x), Table 2's sum associativity) unless i·j overflows. A normal form equals its
// term under A_eq, so a normal form that is a subterm of a target's normal form is entailed
// to be a subexpression of the target.
class SubexprOracle::NormalForm {
 public:
  explicit NormalForm(const AbsPool& pool) : pool_(pool) {}

  AbsId of(AbsId id) {
    while (norm_.size() <= static_cast<size_t>(id)) norm_.push_back(compute(static_cast<AbsId>(norm_.size())));
    return norm_[static_cast<size_t>(id)];
  }
  // Marks the normal form of t and all its subterms as subterms of a target.
  void add_target(AbsId t) { mark(of(t)); }
  bool in_target(AbsId id) {
    AbsId n = of(id);
    return static_cast<size_t>(n) < marked_.size() && marked_[static_cast<size_t>(n)];
  }

 private:
  AbsId compute(AbsId id) {
    const AbsNode& n = pool_.node(id);
    switch (n.op) {
      case AbsOp::Input:
        return norm_pool_.input(n.k);
      case AbsOp::Add:
        return norm_pool_.add(norm_[static_cast<size_t>(n.a)], norm_[static_cast<size_t>(n.b)]);
      case AbsOp::Mul:
        return norm_pool_.mul(norm_[static_cast<size_t>(n.a)], norm_[static_cast<size_t>(n.b)]);
      case AbsOp::Div:
        return norm_pool_.div(norm_[static_cast<size_t>(n.a)], norm_[static_cast<size_t>(n.b)]);
      case AbsOp::Exp:
        return norm_pool_.exp(norm_[static_cast<size_t>(n.a)]);
      case AbsOp::Sum: {
        AbsId x = norm_[static_cast<size_t>(n.a)];
        const AbsNode& inner = norm_pool_.node(x);
        if (inner.op == AbsOp::Sum && inner.k <= std::numeric_limits<int64_t>::max() / n.k)
          return norm_pool_.sum(n.k * inner.k, inner.a);
        return norm_pool_.sum(n.k, x);
      }
    }
    return -1;
  }
  void mark(AbsId n) {
    if (marked_.size() <= static_cast<size_t>(n)) marked_.resize(static_cast<size_t>(n) + 1, false);
    if (marked_[static_cast<size_t>(n)]) return;
    marked_[static_cast<size_t>(n)] = true;
    const AbsNode& node = norm_pool_.node(n);
    if (node.a >= 0) mark(node.a);
    if (node.b >= 0) mark(node.b);
  }

  const AbsPool& pool_;
  AbsPool norm_pool_;
  std::vector<AbsId> norm_;   // pool id -> id in norm_pool_
  std::vector<bool> marked_;  // norm_pool_ id -> subterm of a target's normal form
};

// ---------------------------------------------------------------------------------------
// Z3 encoding.
//
// Sort T (uninterpreted) for abstract expressions; add, mul, div : T×T→T, exp : T→T,
// sum : Int×T→T, subexpr : T×T→Bool; inputs are constants in<n> : T. The axioms below are
// Table 2, each with the triggers (patterns) that make E-matching instantiate it. Equations
// are triggered on both sides, so rewriting runs both ways; the subterm axioms of A_sub on the
// term they mention, so each ground term yields its subexpr facts; transitivity on pairs of
// subexpr atoms.
//
// Sum associativity, ∀x,i,j. sum(i, sum(j, x)) = sum(i·j, x), multiplies integers. Every Int
// term in the E-graph is a numeral (extents are concrete), so it is encoded as
//  - merging, triggered by sum(i, sum(j, x)): i and j are bound to numerals and Z3 folds the
//    product, so no nonlinear reasoning happens (MBQI, which would reason about the symbolic
//    product, is off);
//  - splitting, ∀x,i,j,k. factor(k,i,j) → sum(k, x) = sum(i, sum(j, x)), triggered by
//    {factor(k,i,j), sum(k, x)}, with ground facts factor(k, i, j) asserted for one query
//    (inside its push/pop). `factor` is a fresh predicate asserted only where i·j = k, so
//    this adds nothing the axiom does not entail; a split is what proves sum(256, x) a
//    subexpression of sum(4096, x) (= sum(16, sum(256, x))). Facts are asserted for the
//    extents k of the query and the targets, and those divisors 1 < i < k where i or k/i is
//    such an extent too: a split into two extents that occur nowhere is not tried. Splitting
//    each extent every possible way made Z3 alone 30-100× slower on queries that are not
//    entailed (GQA: 150-270 ms instead of 4 ms; LoRA: a 1 s timeout instead of 11 ms).
// The identity reduction x = sum(1, x) is triggered by sum(1, x) only (a trigger on every x
// would loop); AbsPool never builds sum(1, x), so it is there for completeness.
//
// auto_config is off: with it Z3 spends the whole timeout on each query that is not entailed;
// without it E-matching runs to its instantiation limits and Z3 answers "unknown" at once.

namespace {

z3::expr forall_with_patterns(const std::vector<z3::expr>& vars,
                              const std::vector<std::vector<z3::expr>>& patterns,
                              const z3::expr& body) {
  z3::context& c = body.ctx();
  std::vector<Z3_app> bound;
  for (const z3::expr& v : vars) bound.push_back(Z3_to_app(c, v));
  std::vector<z3::ast> held;  // keeps the patterns referenced until the quantifier holds them
  std::vector<Z3_pattern> pats;
  for (const std::vector<z3::expr>& p : patterns) {
    std::vector<Z3_ast> terms(p.begin(), p.end());
    Z3_pattern pat = Z3_mk_pattern(c, static_cast<unsigned>(terms.size()), terms.data());
    c.check_error();
    held.emplace_back(c, Z3_pattern_to_ast(c, pat));
    pats.push_back(pat);
  }
  Z3_ast q = Z3_mk_forall_const(c, 0, static_cast<unsigned>(bound.size()), bound.data(),
                                static_cast<unsigned>(pats.size()), pats.data(), body);
  c.check_error();
  return z3::expr(c, q);
}

// The divisors 1 < i < k of k, in increasing order.
std::vector<int64_t> proper_divisors(int64_t k) {
  std::vector<int64_t> low, high;
  for (int64_t i = 2; i <= k / i; ++i) {
    if (k % i != 0) continue;
    low.push_back(i);
    if (i != k / i) high.push_back(k / i);
  }
  low.insert(low.end(), high.rbegin(), high.rend());
  return low;
}

}  // namespace

struct SubexprOracle::Z3State {
  z3::context ctx;
  z3::solver solver;
  z3::sort t;
  z3::func_decl add, mul, div, exp, sum, subexpr, factor;
  z3::expr_vector terms;        // by AbsId, translated in id order

  explicit Z3State(const OracleOptions& o)
      : solver(ctx),
        t(ctx.uninterpreted_sort("T")),
        add(ctx.function("add", t, t, t)),
        mul(ctx.function("mul", t, t, t)),
        div(ctx.function("div", t, t, t)),
        exp(ctx.function("exp", t, t)),
        sum(ctx.function("sum", ctx.int_sort(), t, t)),
        subexpr(ctx.function("subexpr", t, t, ctx.bool_sort())),
        factor(ctx.function("factor", ctx.int_sort(), ctx.int_sort(), ctx.int_sort(), ctx.bool_sort())),
        terms(ctx) {
    z3::params p(ctx);
    p.set("auto_config", false);
    p.set("mbqi", false);
    p.set("timeout", o.timeout_ms);
    p.set("rlimit", o.resource_limit);
    solver.set(p);
    assert_equivalence_axioms();
    assert_subexpression_axioms();
  }

  // Both sides of an equation as triggers.
  void equation(const std::vector<z3::expr>& vars, const z3::expr& lhs, const z3::expr& rhs) {
    solver.add(forall_with_patterns(vars, {{lhs}, {rhs}}, lhs == rhs));
  }

  void assert_equivalence_axioms() {  // A_eq
    z3::expr x = ctx.constant("x", t), y = ctx.constant("y", t), z = ctx.constant("z", t);
    z3::expr i = ctx.int_const("i"), j = ctx.int_const("j"), k = ctx.int_const("k");
    solver.add(forall_with_patterns({x, y}, {{add(x, y)}}, add(x, y) == add(y, x)));
    solver.add(forall_with_patterns({x, y}, {{mul(x, y)}}, mul(x, y) == mul(y, x)));
    equation({x, y, z}, add(x, add(y, z)), add(add(x, y), z));
    equation({x, y, z}, mul(x, mul(y, z)), mul(mul(x, y), z));
    equation({x, y, z}, add(mul(x, z), mul(y, z)), mul(add(x, y), z));
    equation({x, y, z}, add(div(x, z), div(y, z)), div(add(x, y), z));
    equation({x, y, z}, mul(x, div(y, z)), div(mul(x, y), z));
    equation({x, y, z}, div(div(x, y), z), div(x, mul(y, z)));
    solver.add(forall_with_patterns({x}, {{sum(ctx.int_val(1), x)}}, x == sum(ctx.int_val(1), x)));
    solver.add(forall_with_patterns({x, i, j}, {{sum(i, sum(j, x))}}, sum(i, sum(j, x)) == sum(i * j, x)));
    solver.add(forall_with_patterns({x, i, j, k}, {{factor(k, i, j), sum(k, x)}},
                                    z3::implies(factor(k, i, j), sum(k, x) == sum(i, sum(j, x)))));
    equation({x, y, i}, sum(i, add(x, y)), add(sum(i, x), sum(i, y)));
    equation({x, y, i}, sum(i, mul(x, y)), mul(sum(i, x), y));
    equation({x, y, i}, sum(i, div(x, y)), div(sum(i, x), y));
  }

  void assert_subexpression_axioms() {  // A_sub
    z3::expr x = ctx.constant("x", t), y = ctx.constant("y", t), z = ctx.constant("z", t);
    z3::expr i = ctx.int_const("i");
    solver.add(forall_with_patterns({x, y}, {{add(x, y)}}, subexpr(x, add(x, y))));
    solver.add(forall_with_patterns({x, y}, {{mul(x, y)}}, subexpr(x, mul(x, y))));
    solver.add(forall_with_patterns({x, y}, {{div(x, y)}}, subexpr(x, div(x, y))));
    solver.add(forall_with_patterns({x, y}, {{div(x, y)}}, subexpr(y, div(x, y))));
    solver.add(forall_with_patterns({x}, {{exp(x)}}, subexpr(x, exp(x))));
    solver.add(forall_with_patterns({x, i}, {{sum(i, x)}}, subexpr(x, sum(i, x))));
    solver.add(forall_with_patterns({x}, {{subexpr(x, x)}}, subexpr(x, x)));
    solver.add(forall_with_patterns({x, y, z}, {{subexpr(x, y), subexpr(y, z)}},
                                    z3::implies(subexpr(x, y) && subexpr(y, z), subexpr(x, z))));
  }

  z3::expr translate(const AbsPool& pool, AbsId id) {
    while (terms.size() <= static_cast<unsigned>(id)) {
      const AbsNode& n = pool.node(static_cast<AbsId>(terms.size()));
      terms.push_back(make_term(n));
    }
    return terms[static_cast<unsigned>(id)];
  }

  z3::expr make_term(const AbsNode& n) {
    auto operand = [&](AbsId a) { return terms[static_cast<unsigned>(a)]; };
    switch (n.op) {
      case AbsOp::Input:
        return ctx.constant(("in" + std::to_string(n.k)).c_str(), t);
      case AbsOp::Add:
        return add(operand(n.a), operand(n.b));
      case AbsOp::Mul:
        return mul(operand(n.a), operand(n.b));
      case AbsOp::Div:
        return div(operand(n.a), operand(n.b));
      case AbsOp::Exp:
        return exp(operand(n.a));
      case AbsOp::Sum:
        return sum(ctx.int_val(n.k), operand(n.a));
    }
    return ctx.constant("invalid", t);
  }

  // The extents of the sums in term `id`.
  static void collect_extents(const AbsPool& pool, AbsId id, std::set<int64_t>& out) {
    std::vector<AbsId> stack{id};
    while (!stack.empty()) {
      const AbsNode& n = pool.node(stack.back());
      stack.pop_back();
      if (n.a >= 0) stack.push_back(n.a);
      if (n.b >= 0) stack.push_back(n.b);
      if (n.op == AbsOp::Sum) out.insert(n.k);
    }
  }

  // factor(k, i, k/i) for each extent k of the query and the targets and each of its
  // divisors 1 < i < k where i or k/i is one of those extents too (see the note on splitting).
  void add_factor_facts(const std::set<int64_t>& ex) {
    for (int64_t k : ex)
      for (int64_t i : proper_divisors(k))
        if (ex.count(i) || ex.count(k / i))
          solver.add(factor(ctx.int_val(k), ctx.int_val(i), ctx.int_val(k / i)));
  }
};

// ---------------------------------------------------------------------------------------
// SubexprOracle.

SubexprOracle::SubexprOracle(const AbsPool& pool, std::vector<AbsId> targets, OracleOptions o)
    : pool_(pool),
      targets_(std::move(targets)),
      options_(o),
      model_(pool),
      normal_(std::make_unique<NormalForm>(pool)) {
  ORCHID_CHECK(!targets_.empty()) << "the subexpression oracle needs at least one target";
  for (AbsId t : targets_) {
    pool_.node(t);  // checks the id
    normal_->add_target(t);
  }
}

SubexprOracle::~SubexprOracle() = default;

SubexprAnswer SubexprOracle::answer(AbsId e) {
  pool_.node(e);  // checks the id
  ++stats_.queries;
  if (cache_.size() <= static_cast<size_t>(e)) cache_.resize(pool_.size(), -1);
  int8_t& slot = cache_[static_cast<size_t>(e)];
  if (slot >= 0) {
    ++stats_.cache_hits;
    return static_cast<SubexprAnswer>(slot);
  }
  std::optional<SubexprAnswer> pre = options_.prechecks ? precheck(e) : std::nullopt;
  SubexprAnswer a = pre ? *pre : ask_z3(e);
  switch (a) {
    case SubexprAnswer::Proven:
      ++stats_.proven;
      break;
    case SubexprAnswer::Refuted:
      ++stats_.refuted;
      break;
    case SubexprAnswer::Unknown:
      ++stats_.unknown;
      break;
  }
  slot = static_cast<int8_t>(a);
  return a;
}

std::optional<SubexprAnswer> SubexprOracle::precheck(AbsId e) {
  if (normal_->in_target(e)) {
    ++stats_.precheck_proven;
    return SubexprAnswer::Proven;
  }
  bool some_model_subexpr = false;
  for (AbsId t : targets_) some_model_subexpr = some_model_subexpr || model_.subexpr(e, t);
  if (!some_model_subexpr) {
    ++stats_.precheck_refuted;
    return SubexprAnswer::Refuted;
  }
  return std::nullopt;
}

SubexprAnswer SubexprOracle::ask_z3(AbsId e) {
  if (!z3_) z3_ = std::make_unique<Z3State>(options_);
  Z3State& z = *z3_;
  z3::expr goal = z.ctx.bool_val(false);
  std::set<int64_t> extents;
  Z3State::collect_extents(pool_, e, extents);
  for (AbsId t : targets_) {
    Z3State::collect_extents(pool_, t, extents);
    goal = goal || z.subexpr(z.translate(pool_, e), z.translate(pool_, t));
  }
  auto start = std::chrono::steady_clock::now();
  z.solver.push();
  z.add_factor_facts(extents);  // scoped to this query
  z.solver.add(!goal);
  z3::check_result r = z.solver.check();
  z.solver.pop();
  stats_.solver_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ++stats_.solver_calls;
  switch (r) {
    case z3::unsat:
      return SubexprAnswer::Proven;
    case z3::sat:
      return SubexprAnswer::Refuted;
    case z3::unknown:
      return SubexprAnswer::Unknown;
  }
  return SubexprAnswer::Unknown;
}

}  // namespace orchid::superopt
