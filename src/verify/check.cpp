#include "verify/check.h"
#include "verify/uniform.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>

#include "interp/random_inputs.h"
#include "support/random.h"
#include "verify/evaluate.h"

namespace orchid::verify {

namespace {

std::string type_text(const ir::TensorType& t) {
  std::ostringstream os;
  os << ir::dtype_name(t.dtype) << "[";
  for (size_t k = 0; k < t.shape.size(); ++k) os << (k ? "," : "") << t.shape[k];
  os << "]";
  return os.str();
}

// Why two graphs cannot compute the same function: different inputs or outputs.
std::optional<std::string> signature_mismatch(const ir::Graph& a, const ir::Graph& b) {
  auto side = [](const char* what, const ir::Graph& x, const ir::Graph& y,
                 const std::vector<ir::ValueId>& xs,
                 const std::vector<ir::ValueId>& ys) -> std::optional<std::string> {
    if (xs.size() != ys.size())
      return std::string("the graphs have ") + std::to_string(xs.size()) + " and " +
             std::to_string(ys.size()) + " " + what + "s";
    for (size_t k = 0; k < xs.size(); ++k)
      if (!(x.type(xs[k]) == y.type(ys[k])))
        return std::string(what) + " " + std::to_string(k) + " is " + type_text(x.type(xs[k])) +
               " in the first graph and " + type_text(y.type(ys[k])) + " in the second";
    return std::nullopt;
  };
  if (auto m = side("input", a, b, a.inputs(), b.inputs())) return m;
  return side("output", a, b, a.outputs(), b.outputs());
}

// k and the degree of the difference of two outputs (cross-multiplied: A/B − C/D has the
// terms of A·D − C·B).
void difference_bounds(const Terms& x, const Terms& y, Verdict& v) {
  bool exp_free = x.exp_free && y.exp_free;
  uint64_t k = exp_free ? 1 : sat_add(sat_mul(x.num, y.den), sat_mul(y.num, x.den));
  uint64_t deg = std::max({sat_add(x.deg_n, y.deg_d), sat_add(y.deg_n, x.deg_d), x.deg_e, y.deg_e});
  v.k = std::max(v.k, k);
  v.degree = std::max(v.degree, std::max<uint64_t>(deg, 1));
  v.exp_free = v.exp_free && exp_free;
}

// The number of tests for δ, or nullopt where the theorem's condition fails.
std::optional<int64_t> tests_for(const Verdict& v, bool narrow, double delta) {
  double t = 1;
  if (v.exp_free) {
    double ratio = static_cast<double>(v.degree) / static_cast<double>(kP);
    if (ratio >= 1) return std::nullopt;
    t = std::ceil(std::log(delta) / std::log(ratio));
  } else {
    uint64_t k4 = sat_mul(sat_mul(v.k, v.k), sat_mul(v.k, v.k));
    if (sat_mul(v.degree, k4) >= kQ) return std::nullopt;
    t = std::ceil(static_cast<double>(v.k) * std::log(1 / delta));
  }
  if (narrow) t = std::max(t, std::ceil(std::log2(1 / delta)));
  return static_cast<int64_t>(std::max(1.0, t));
}

FTensor random_field_tensor(const ir::Tensor& like, Rng& rng) {
  FTensor t{like.type(), {}, {}};
  for (int64_t k = 0; k < like.numel(); ++k) {
    if (ir::is_float(like.dtype())) {
      t.f.push_back({rng.next() % kP, rng.next() % kQ});
    } else {
      t.i.push_back(like.get_i64(k));  // integers: the interpreter's valid random inputs
    }
  }
  return t;
}

std::string coords(const ir::Dims& shape, int64_t flat) {
  std::string s = "]";
  for (size_t k = shape.size(); k-- > 0;) {
    s = (k ? ", " : "") + std::to_string(flat % shape[k]) + s;
    flat /= shape[k];
  }
  return "[" + s;
}

// The first output element that differs, as text.
std::optional<std::string> first_difference(const ir::Graph& a, const std::vector<FTensor>& va,
                                            const std::vector<FTensor>& vb, const ir::Graph& b,
                                            size_t* which) {
  for (size_t k = 0; k < a.outputs().size(); ++k) {
    const FTensor& x = va[static_cast<size_t>(a.outputs()[k].v)];
    const FTensor& y = vb[static_cast<size_t>(b.outputs()[k].v)];
    for (int64_t e = 0; e < x.type.numel(); ++e) {
      bool same = true;
      if (ir::is_float(x.type.dtype)) {
        FElem p = x.f[static_cast<size_t>(e)], q = y.f[static_cast<size_t>(e)];
        same = p.p == q.p && (!p.has_q() || !q.has_q() || p.q == q.q);
      } else {
        same = x.i[static_cast<size_t>(e)] == y.i[static_cast<size_t>(e)];
      }
      if (same) continue;
      *which = k;
      return "output " + std::to_string(k) + " (%" + a.value(a.outputs()[k]).name + ") differs at " +
             coords(x.type.shape, e);
    }
  }
  return std::nullopt;
}

Verdict undecided(Verdict v, std::string why) {
  v.outcome = Outcome::Undecided;
  v.detail = std::move(why);
  return v;
}

// Expression evaluations of one test of g, a lower bound of what evaluate() counts: each
// node's body size (one for a float matmul, evaluated directly) times its domain and
// reduction extents.
int64_t work_of_one_test(const ir::Graph& g) {
  int64_t total = 0;
  for (const ir::Primitive& p : g.nodes()) {
    int64_t body = 0;
    for (const ir::Expr& e : p.bodies) ir::visit_post(e, [&](const ir::Expr&) { ++body; });
    if (evaluated_directly(g, p)) body = 1;
    double points = static_cast<double>(ir::numel(p.domain)) * static_cast<double>(std::max<int64_t>(1, ir::numel(p.reduce_domain)));
    total += static_cast<int64_t>(std::min(points * static_cast<double>(body), 9e15));
  }
  return total;
}

}  // namespace

Verdict check_equivalence(const ir::Graph& full_a, const ir::Graph& full_b, const CheckOptions& o) {
  Verdict v;
  if (auto why = signature_mismatch(full_a, full_b)) {
    v.outcome = Outcome::Different;
    v.definitive = true;
    v.detail = *why;
    return v;
  }
  // Uniform dims (batch dims, rows of a product, ...) cut to one position (uniform.h).
  Reduced reduced = reduce_uniform_dims(full_a, full_b);
  v.uniform_dims_cut = reduced.classes;
  const ir::Graph& a = reduced.classes ? reduced.a : full_a;
  const ir::Graph& b = reduced.classes ? reduced.b : full_b;
  Analysis an_a = analyze(a);
  Analysis an_b = analyze(b);
  v.uninterpreted = an_a.sites;
  v.uninterpreted.insert(v.uninterpreted.end(), an_b.sites.begin(), an_b.sites.end());
  for (size_t k = 0; k < a.outputs().size(); ++k)
    difference_bounds(an_a.values[static_cast<size_t>(a.outputs()[k].v)],
                      an_b.values[static_cast<size_t>(b.outputs()[k].v)], v);
  std::optional<int64_t> t = tests_for(v, an_a.narrow || an_b.narrow, o.delta);
  if (!t)
    return undecided(v, "the bounds k = " + std::to_string(v.k) + ", d = " + std::to_string(v.degree) +
                            " break Theorem 3's d·k⁴ < q: too many exponential terms for the field");
  v.tests_needed = *t;
  // Beyond the limits the tests still run, as many as they allow: a difference found is found
  // (equivalent graphs always pass); passing them all leaves the question undecided.
  int64_t limit = std::min(*t, o.max_tests);
  std::string capped;
  if (*t > o.max_tests)
    capped = "k = " + std::to_string(v.k) + " needs " + std::to_string(*t) + " tests, more than the limit of " +
             std::to_string(o.max_tests);
  if (int64_t w = work_of_one_test(a) + work_of_one_test(b); w > o.max_work / limit) {
    capped += (capped.empty() ? "" : "; ") + std::to_string(*t) + " test" + (*t == 1 ? "" : "s") + " of at least " +
              std::to_string(w) + " evaluations exceed the work budget of " + std::to_string(o.max_work);
    limit = std::max<int64_t>(1, o.max_work / std::max<int64_t>(w, 1));
  }
  Rng rng(o.seed);
  int64_t work = o.max_work;
  int consecutive = 0;
  while (v.tests_run < limit) {
    uint64_t g = 2 + rng.next() % (kP - 3);
    Draw d{mul_mod(g, g, kP), rng.next()};
    // Integer inputs are sampled from the interpreter's valid ranges, afresh in every draw.
    std::vector<ir::Tensor> like = interp::random_inputs(a, rng.next());
    std::vector<FTensor> ins;
    for (const ir::Tensor& l : like) ins.push_back(random_field_tensor(l, rng));
    std::vector<FTensor> va, vb;
    try {
      va = evaluate(a, an_a, ins, d, work);
      vb = evaluate(b, an_b, ins, d, work);
    } catch (const ZeroDivisor& z) {
      ++v.redraws;
      if (++consecutive > o.max_redraws)
        return undecided(v, "%" + std::string(z.what()) + " divides by zero in every draw");
      continue;
    } catch (const Undecidable& u) {
      return undecided(v, u.what());
    }
    consecutive = 0;
    size_t which = 0;
    if (auto diff = first_difference(a, va, vb, b, &which)) {
      v.outcome = Outcome::Different;
      v.detail = *diff + " in test " + std::to_string(v.tests_run + 1);
      v.definitive = !an_a.values[static_cast<size_t>(a.outputs()[which].v)].uninterpreted &&
                     !an_b.values[static_cast<size_t>(b.outputs()[which].v)].uninterpreted;
      ++v.tests_run;
      return v;
    }
    ++v.tests_run;
    int64_t per_test = (o.max_work - work) / v.tests_run;
    if (v.tests_run == 1 && per_test > 0 && per_test > o.max_work / limit) {
      capped += (capped.empty() ? "" : "; ") + std::to_string(*t) + " tests of " + std::to_string(per_test) +
                " evaluations each exceed the work budget of " + std::to_string(o.max_work);
      limit = std::max<int64_t>(1, o.max_work / per_test);
    }
  }
  if (!capped.empty()) return undecided(v, capped + " (the " + std::to_string(v.tests_run) + " run all passed)");
  v.outcome = Outcome::Equivalent;
  return v;
}

std::string describe(const Verdict& v) {
  std::ostringstream os;
  switch (v.outcome) {
    case Outcome::Equivalent: os << "equivalent"; break;
    case Outcome::Different: os << (v.definitive ? "different" : "different as uninterpreted terms"); break;
    case Outcome::Undecided: os << "undecided"; break;
  }
  if (!v.detail.empty()) os << ": " << v.detail;
  os << " (" << v.tests_run << " of " << v.tests_needed << " tests";
  if (v.redraws) os << ", " << v.redraws << " redrawn";
  os << "; k = " << v.k << ", degree " << v.degree << (v.exp_free ? ", exp-free" : "");
  if (v.uniform_dims_cut) os << "; " << v.uniform_dims_cut << " uniform dim" << (v.uniform_dims_cut == 1 ? "" : "s") << " cut to 1";
  os << ")";
  if (!v.uninterpreted.empty()) {
    os << "; uninterpreted:";
    for (size_t k = 0; k < v.uninterpreted.size(); ++k)
      os << (k ? "," : "") << " " << v.uninterpreted[k].what << " at %" << v.uninterpreted[k].node;
  }
  return os.str();
}

}  // namespace orchid::verify
