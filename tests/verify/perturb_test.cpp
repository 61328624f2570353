// The equivalence check against the f64 interpreter on random graphs (testlib/random_graph.h):
// a copy of each graph with one algebraic identity applied somewhere in a body must be
// accepted, and a copy with one random perturbation must be rejected whenever the interpreter
// shows that it changes an output.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <iostream>
#include <optional>

#include "interp/interp.h"
#include "interp/random_inputs.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "support/random.h"
#include "testlib/random_graph.h"
#include "verify/check.h"

namespace orchid::verify {
namespace {

using ir::Expr;
using ir::ExprOp;

struct BodySpot {
  int32_t node = 0;
  size_t body = 0;
  const ir::ExprNode* at = nullptr;
};

// Float expression nodes in the bodies of elementwise and reduce primitives (the kinds whose
// bodies are free to change).
std::vector<BodySpot> float_sites(const ir::Graph& g) {
  std::vector<BodySpot> out;
  for (int32_t n = 0; n < g.num_nodes(); ++n) {
    const ir::Primitive& p = g.node(ir::NodeId{n});
    if (p.op != ir::PrimOp::Elementwise && p.op != ir::PrimOp::Reduce) continue;
    for (size_t b = 0; b < p.bodies.size(); ++b)
      ir::visit_post(p.bodies[b], [&](const Expr& e) {
        if (ir::is_float(e.dtype())) out.push_back({n, b, e.get()});
      });
  }
  return out;
}

// g with the expression at `s` replaced by fn(it); nullopt where the result breaks a rule of
// the IR.
std::optional<ir::Graph> replaced(const ir::Graph& g, const BodySpot& s,
                                  const std::function<std::optional<Expr>(const Expr&)>& fn) {
  ir::Graph out = g;
  ir::Primitive& p = out.mutable_node(ir::NodeId{s.node});
  bool applied = false;
  p.bodies[s.body] = ir::map_post(p.bodies[s.body], [&](const Expr& e) -> Expr {
    if (e.get() != s.at || applied) return e;
    if (auto r = fn(e)) {
      applied = true;
      return *r;
    }
    return e;
  });
  if (!applied || !ir::verify(out).empty()) return std::nullopt;
  return out;
}

bool is_op(const Expr& e, ExprOp op) { return e.op() == op; }

// One identity at e, chosen by r: x·1, x + 0, commuted + and ·, (x·3)/3, a − b = a + (−b),
// a / b = a · recip(b), −(−x).
std::optional<Expr> identity(const Expr& e, uint64_t r) {
  ir::DType t = e.dtype();
  switch (r % 7) {
    case 0: return e * ir::const_f(t, 1);
    case 1: return ir::const_f(t, 0) + e;
    case 2:
      if (is_op(e, ExprOp::Add) || is_op(e, ExprOp::Mul)) return ir::binary(e.op(), e.arg(1), e.arg(0));
      return std::nullopt;
    case 3: return (e * ir::const_f(t, 3)) / ir::const_f(t, 3);
    case 4:
      if (is_op(e, ExprOp::Sub)) return e.arg(0) + ir::unary(ExprOp::Neg, e.arg(1));
      return std::nullopt;
    case 5:
      if (is_op(e, ExprOp::Div)) return e.arg(0) * ir::unary(ExprOp::Recip, e.arg(1));
      return std::nullopt;
    default: return ir::unary(ExprOp::Neg, ir::unary(ExprOp::Neg, e));
  }
}

// One perturbation at e, chosen by r: a constant moved, operands of − or / swapped, + ↔ −,
// · → +, a factor of 1.5, a load shifted by one along a dimension.
std::optional<Expr> perturbation(const ir::Graph& g, const ir::Primitive& p, const Expr& e, uint64_t r) {
  ir::DType t = e.dtype();
  switch (r % 6) {
    case 0:
      if (is_op(e, ExprOp::Const) && std::isfinite(e->value.f)) return ir::const_f(t, e->value.f + 1);
      return std::nullopt;
    case 1:
      if ((is_op(e, ExprOp::Sub) || is_op(e, ExprOp::Div)) && !ir::equal(e.arg(0), e.arg(1)))
        return ir::binary(e.op(), e.arg(1), e.arg(0));
      return std::nullopt;
    case 2:
      if (is_op(e, ExprOp::Add)) return e.arg(0) - e.arg(1);
      if (is_op(e, ExprOp::Sub)) return e.arg(0) + e.arg(1);
      return std::nullopt;
    case 3:
      if (is_op(e, ExprOp::Mul)) return e.arg(0) + e.arg(1);
      return std::nullopt;
    case 4: return e * ir::const_f(t, 1.5);
    default: {
      if (!is_op(e, ExprOp::Load) || e->predicated) return std::nullopt;
      const ir::Dims& shape = g.type(p.inputs[static_cast<size_t>(e->index)]).shape;
      for (size_t d = 0; d < shape.size(); ++d) {
        size_t k = (d + r / 6) % shape.size();
        if (shape[k] < 2) continue;
        std::vector<Expr> idx = e->args;
        idx[k] = ir::mod(idx[k] + 1, shape[k]);
        return ir::load(e->index, t, idx);
      }
      return std::nullopt;
    }
  }
}

// Whether the f64 interpreter sees different outputs on two sets of random inputs.
bool interpreter_differs(const ir::Graph& a, const ir::Graph& b, uint64_t seed) {
  for (uint64_t s : {seed, seed + 1}) {
    std::vector<ir::Tensor> in = interp::random_inputs(a, s);
    interp::Options o{interp::Precision::F64, true};
    std::vector<ir::Tensor> x = interp::run(a, in, o);
    std::vector<ir::Tensor> y = interp::run(b, in, o);
    for (size_t k = 0; k < x.size(); ++k)
      for (int64_t e = 0; e < x[k].numel(); ++e) {
        double u = x[k].get_as_double(e), v = y[k].get_as_double(e);
        bool nan_u = std::isnan(u), nan_v = std::isnan(v);
        if (nan_u || nan_v) {
          if (nan_u != nan_v) return true;
          continue;
        }
        if (u == v) continue;
        if (!std::isfinite(u) || !std::isfinite(v)) return true;
        if (std::abs(u - v) > 1e-9 * (1 + std::abs(u))) return true;
      }
  }
  return false;
}

struct Tally {
  int graphs = 0;
  int identities = 0, identities_undecided = 0;
  int perturbations = 0, perturbations_changing = 0, detected = 0;
};

std::string text(const ir::Graph& g) { return ir::print_graph(g); }

TEST(Perturb, IdentitiesAcceptedAndVisibleChangesDetected) {
  testlib::RandomGraphOptions go;
  go.max_nodes = 8;
  go.max_elements = 256;
  go.allow_opaque = false;
  CheckOptions co;
  co.max_work = 2000000;
  Tally t;
  // Graphs with float → integer casts are undecided (evaluate.h), so more than 1000 graphs
  // are drawn until 1000 identities were decided and 1000 perturbations were visible.
  for (uint64_t seed = 1; (t.identities - t.identities_undecided < 1000 ||
                           t.perturbations_changing < 1000) && seed < 20000;
       ++seed) {
    ir::Graph g = testlib::random_graph(seed, go);
    std::vector<BodySpot> sites = float_sites(g);
    if (sites.empty()) continue;
    ++t.graphs;
    Rng rng(seed);
    for (int tries = 0; tries < 8; ++tries) {
      uint64_t r = rng.next();
      std::optional<ir::Graph> same = replaced(g, sites[r % sites.size()],
                                               [&](const Expr& e) { return identity(e, r / 7); });
      if (!same) continue;
      Verdict v = check_equivalence(g, *same, co);
      ++t.identities;
      t.identities_undecided += v.outcome == Outcome::Undecided;
      EXPECT_NE(v.outcome, Outcome::Different)
          << "seed " << seed << ": " << describe(v) << "\n" << text(g) << "\n" << text(*same);
      break;
    }
    for (int tries = 0; tries < 8; ++tries) {
      uint64_t r = rng.next();
      const BodySpot& s = sites[r % sites.size()];
      const ir::Primitive& p = g.node(ir::NodeId{s.node});
      std::optional<ir::Graph> other =
          replaced(g, s, [&](const Expr& e) { return perturbation(g, p, e, r / 7); });
      if (!other) continue;
      ++t.perturbations;
      if (!interpreter_differs(g, *other, seed)) break;
      ++t.perturbations_changing;
      Verdict v = check_equivalence(g, *other, co);
      t.detected += v.outcome != Outcome::Equivalent;
      EXPECT_NE(v.outcome, Outcome::Equivalent)
          << "seed " << seed << ": " << describe(v) << "\n" << text(g) << "\n" << text(*other);
      break;
    }
  }
  std::cerr << t.graphs << " graphs; identities: " << t.identities << " ("
            << t.identities_undecided << " undecided); perturbations: " << t.perturbations << ", "
            << t.perturbations_changing << " visible to the interpreter, " << t.detected << " detected\n";
  EXPECT_GE(t.identities - t.identities_undecided, 1000);
  EXPECT_GE(t.perturbations_changing, 1000);
  EXPECT_LE(t.graphs, 4000);  // most graphs are decided
}

}  // namespace
}  // namespace orchid::verify
