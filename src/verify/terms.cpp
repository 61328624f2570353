#include "verify/terms.h"

#include <algorithm>
#include <cmath>

#include "support/error.h"

namespace orchid::verify {

using ir::Expr;
using ir::ExprOp;

uint64_t sat_add(uint64_t a, uint64_t b) { return std::min(kMany, a + b); }  // a, b <= kMany

uint64_t sat_mul(uint64_t a, uint64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kMany / b ? kMany : std::min(kMany, a * b);
}

namespace {

uint64_t sat_pow(uint64_t a, uint64_t n) {
  uint64_t r = 1;
  for (uint64_t k = 0; k < n && r < kMany; ++k) r = sat_mul(r, a);
  return a <= 1 ? a : r;
}

Terms constant_terms() { return Terms{1, 1, 0, 0, 0, true, false, 0, 0}; }
Terms fresh_terms() { return Terms{1, 1, 1, 0, 0, true, true, 0, 0}; }

constexpr uint64_t kReduceBits = 0xffffffff00000000ull;

// A variable beyond the 32 of its kind stands for all of them (a bound, never too small).
uint64_t var_bit(const ir::ExprNode& v) {
  if (v.index >= 32) return ~uint64_t{0};
  return uint64_t{1} << (v.index + (v.var_kind == ir::VarKind::Reduce ? 32 : 0));
}

// The loop variables an index expression reads (through nested loads too).
uint64_t vars_of(const Expr& e) {
  uint64_t m = 0;
  ir::visit_post(e, [&](const Expr& x) {
    if (x.op() == ExprOp::Var) m |= var_bit(*x);
  });
  return m;
}

// What every combination of two values shares: exp-free where both are, uninterpreted where
// either is, the union of their variables.
Terms combined(const Terms& a, const Terms& b) {
  Terms r;
  r.exp_free = a.exp_free && b.exp_free;
  r.uninterpreted = a.uninterpreted || b.uninterpreted;
  r.den_vars = a.den_vars | b.den_vars;
  r.vars = a.vars | b.vars;
  return r;
}

Terms add_terms(const Terms& a, const Terms& b) {
  Terms r = combined(a, b);
  r.num = r.exp_free ? 1 : sat_add(sat_mul(a.num, b.den), sat_mul(b.num, a.den));
  r.den = r.exp_free ? 1 : sat_mul(a.den, b.den);
  r.deg_n = std::max(sat_add(a.deg_n, b.deg_d), sat_add(b.deg_n, a.deg_d));
  r.deg_d = sat_add(a.deg_d, b.deg_d);
  r.deg_e = std::max(a.deg_e, b.deg_e);
  return r;
}

Terms mul_terms(const Terms& a, const Terms& b) {
  Terms r = combined(a, b);
  r.num = sat_mul(a.num, b.num);
  r.den = sat_mul(a.den, b.den);
  r.deg_n = sat_add(a.deg_n, b.deg_n);
  r.deg_d = sat_add(a.deg_d, b.deg_d);
  r.deg_e = sat_add(a.deg_e, b.deg_e);  // e^(h1/u1) e^(h2/u2) = e^((h1 u2 + h2 u1) / (u1 u2))
  return r;
}

Terms div_terms(const Terms& a, const Terms& b) {
  Terms inv = b;
  std::swap(inv.num, inv.den);
  std::swap(inv.deg_n, inv.deg_d);
  inv.den_vars = b.vars;
  return mul_terms(a, inv);
}

// e^x, 1 / (1 + e^-x) or (e^2x − 1) / (e^2x + 1) of an exp-free x: `num` and `den` terms.
Terms exp_terms(const Terms& x, uint64_t num, uint64_t den) {
  return Terms{num,           den,    0, 0, std::max(x.deg_n, x.deg_d), false, x.uninterpreted,
               den > 1 ? x.vars : 0, x.vars};
}

Terms join(const Terms& a, const Terms& b) {
  Terms r = combined(a, b);
  r.num = std::max(a.num, b.num);
  r.den = std::max(a.den, b.den);
  r.deg_n = std::max(a.deg_n, b.deg_n);
  r.deg_d = std::max(a.deg_d, b.deg_d);
  r.deg_e = std::max(a.deg_e, b.deg_e);
  return r;
}

// Σ of n values of the shape t over the reduction variables: N1/D1 + ... =
// (Σ Nk Π_{j≠k} Dj) / Π Dj, or (Σ Nk) / D where D does not vary with them.
Terms sum_terms(const Terms& t, uint64_t n) {
  if (n == 0) return constant_terms();
  Terms r = t;
  r.vars &= ~kReduceBits;
  r.den_vars &= ~kReduceBits;
  if ((t.den_vars & kReduceBits) == 0) {
    r.num = t.exp_free ? 1 : sat_mul(n, t.num);
    return r;
  }
  r.deg_n = sat_add(t.deg_n, sat_mul(n - 1, t.deg_d));
  r.deg_d = sat_mul(n, t.deg_d);
  if (!t.exp_free) {
    r.num = sat_mul(sat_mul(n, t.num), sat_pow(t.den, n - 1));
    r.den = sat_pow(t.den, n);
  }
  return r;
}

Terms prod_terms(const Terms& t, uint64_t n) {
  if (n == 0) return constant_terms();
  Terms r = t;
  r.vars &= ~kReduceBits;
  r.den_vars &= ~kReduceBits;
  r.num = sat_pow(t.num, n);
  r.den = sat_pow(t.den, n);
  r.deg_n = sat_mul(n, t.deg_n);
  r.deg_d = sat_mul(n, t.deg_d);
  r.deg_e = sat_mul(n, t.deg_e);
  return r;
}

// The Terms of one body's expressions, in the context of one primitive.
class BodyAnalyzer {
 public:
  BodyAnalyzer(const ir::Graph& g, int32_t node, Analysis& an) : node_(node), an_(an) {
    const ir::Primitive& p = g.node(ir::NodeId{node});
    for (ir::ValueId v : p.inputs) inputs_.push_back(an.values[static_cast<size_t>(v.v)]);
    name_ = g.value(p.outputs.front()).name;
  }

  Terms expr(const Expr& e) {
    if (!ir::is_float(e.dtype())) return integral(e);
    switch (ir::expr_op_category(e.op())) {
      case ir::ExprCategory::Leaf: return constant_terms();
      case ir::ExprCategory::Load: return load(e);
      case ir::ExprCategory::Unary: return unary(e);
      case ir::ExprCategory::Binary: return binary(e);
      case ir::ExprCategory::Compare: return integral(e);  // float compares give bool
      case ir::ExprCategory::Select:
        return with_cond(join(expr(e.arg(1)), expr(e.arg(2))), expr(e.arg(0)));
      case ir::ExprCategory::Cast:
        if (ir::is_float(e.arg(0).dtype())) return expr(e.arg(0));
        return with_cond(constant_terms(), expr(e.arg(0)));
    }
    return fresh_terms();
  }

  Terms fresh(const std::string& what, bool narrow) {
    note(what, narrow);
    return fresh_terms();
  }

  void note(const std::string& what, bool narrow) {
    an_.narrow = an_.narrow || narrow;
    for (const Site& s : an_.sites)
      if (s.node == name_ && s.what == what) return;
    an_.sites.push_back({name_, what});
  }

 private:
  static Terms with_cond(Terms t, const Terms& cond) {
    t.uninterpreted = t.uninterpreted || cond.uninterpreted;
    t.vars |= cond.vars;
    return t;
  }

  // Integer and bool expressions are computed exactly; they are uninterpreted only through
  // what they are computed from.
  Terms integral(const Expr& e) {
    Terms r = constant_terms();
    if (e.op() == ExprOp::Load) r = load_input(e);
    if (e.op() == ExprOp::Cast && ir::is_float(e.arg(0).dtype()) && !ir::is_bool(e.dtype()))
      r = fresh("cast to an integer", true);  // refused by the evaluation
    if (auto c = ir::compare_kind(e.op()); c && ir::is_float(e.arg(0).dtype()) &&
                                           *c != ir::CmpOp::Eq && *c != ir::CmpOp::Ne)
      r = fresh(std::string(ir::expr_op_name(e.op())), true);
    if (e.op() == ExprOp::IsNan || e.op() == ExprOp::IsInf) r = fresh(std::string(ir::expr_op_name(e.op())), true);
    for (const Expr& a : e->args) r = with_cond(r, expr(a));
    r.num = r.den = 1;
    r.deg_n = r.deg_d = r.deg_e = 0;
    r.exp_free = true;
    r.den_vars = 0;
    if (e.op() == ExprOp::Var) r.vars |= var_bit(*e);
    return r;
  }

  // A load of a tensor whose denominator varies along den_vars' dims: the expression's
  // denominator varies with the variables of those dims' indices.
  Terms load_input(const Expr& e) {
    Terms t = inputs_.at(static_cast<size_t>(e->index));
    uint64_t dims = t.den_vars;
    t.den_vars = 0;
    t.vars = 0;
    for (size_t k = 0; k < e->args.size(); ++k) {
      uint64_t v = vars_of(e.arg(k));
      t.vars |= v;
      if (k < 32 ? (dims >> k & 1) != 0 : dims != 0) t.den_vars |= v;
      t = with_cond(t, expr(e.arg(k)));
    }
    return t;
  }

  Terms load(const Expr& e) {
    Terms t = load_input(e);
    return e->predicated ? join(t, constant_terms()) : t;
  }

  Terms unary(const Expr& e) {
    Terms a = expr(e.arg(0));
    switch (e.op()) {
      case ExprOp::Neg: return a;
      case ExprOp::Recip: return div_terms(constant_terms(), a);
      case ExprOp::Exp:
      case ExprOp::Sigmoid:
      case ExprOp::Tanh: return exp_like(e, a);
      default: break;
    }
    return with_cond(fresh(std::string(ir::expr_op_name(e.op())), false), a);
  }

  Terms exp_like(const Expr& e, const Terms& a) {
    if (!a.exp_free) {
      an_.opaque_exps[static_cast<size_t>(node_)].insert(e.get());
      return with_cond(fresh(std::string(ir::expr_op_name(e.op())) + " after exp", false), a);
    }
    if (e.op() == ExprOp::Exp) return exp_terms(a, 1, 1);
    return e.op() == ExprOp::Sigmoid ? exp_terms(a, 1, 2) : exp_terms(a, 2, 2);
  }

  Terms binary(const Expr& e) {
    Terms a = expr(e.arg(0));
    Terms b = expr(e.arg(1));
    switch (e.op()) {
      case ExprOp::Add:
      case ExprOp::Sub: return add_terms(a, b);
      case ExprOp::Mul: return mul_terms(a, b);
      case ExprOp::Div: return div_terms(a, b);
      case ExprOp::Pow:
        if (auto n = verify::small_power(e.arg(1))) {
          Terms r = prod_terms(a, static_cast<uint64_t>(std::abs(*n)));
          return *n < 0 ? div_terms(constant_terms(), r) : r;
        }
        break;
      default: break;
    }
    Terms r = with_cond(with_cond(fresh(std::string(ir::expr_op_name(e.op())), false), a), b);
    if (e.op() == ExprOp::Max || e.op() == ExprOp::Min) return selecting(r, join(a, b));
    return r;
  }

 public:
  // max and min of a set with one element return it (evaluate.h): their result is exp-free
  // only where their arguments are.
  static Terms selecting(Terms fresh, const Terms& args) {
    fresh.exp_free = args.exp_free;
    return fresh;
  }

 private:
  int32_t node_;
  Analysis& an_;
  std::vector<Terms> inputs_;
  std::string name_;
};

uint64_t count(const ir::Dims& dims) {
  uint64_t n = 1;
  for (int64_t d : dims) n = sat_mul(n, static_cast<uint64_t>(d));
  return n;
}

// The outputs' Terms from the bodies' Terms, by combiner.
std::vector<Terms> reduce_terms(const ir::Primitive& p, const std::vector<Terms>& bodies,
                                BodyAnalyzer& body, std::vector<bool>::reference opaque_maxsum) {
  uint64_t n = count(p.reduce_domain);
  std::vector<Terms> out;
  switch (p.reduce) {
    case ir::ReduceOp::None: return bodies;
    case ir::ReduceOp::Sum:
      for (const Terms& t : bodies) out.push_back(sum_terms(t, n));
      return out;
    case ir::ReduceOp::Prod:
      for (const Terms& t : bodies) out.push_back(prod_terms(t, n));
      return out;
    case ir::ReduceOp::Max:
    case ir::ReduceOp::Min:
      for (size_t k = 0; k < bodies.size(); ++k) {
        bool f = ir::is_float(p.bodies[k].dtype());
        out.push_back(f ? BodyAnalyzer::selecting(
                              body.fresh(std::string(ir::reduce_op_name(p.reduce)) + " reduction", false),
                              bodies[k])
                        : bodies[k]);
      }
      return out;
    case ir::ReduceOp::ArgMax:
    case ir::ReduceOp::ArgMin: {
      Terms v = BodyAnalyzer::selecting(body.fresh(std::string(ir::reduce_op_name(p.reduce)), true),
                                        bodies[0]);
      return {v, v};
    }
    case ir::ReduceOp::Welford: {  // mean = Σx / n, variance = Σx² / n − mean²
      Terms mean = sum_terms(bodies[0], n);
      Terms sq = sum_terms(mul_terms(bodies[0], bodies[0]), n);
      return {mean, add_terms(sq, mul_terms(mean, mean))};
    }
    case ir::ReduceOp::MaxSum: {
      Terms m = BodyAnalyzer::selecting(body.fresh("max reduction", false), bodies[0]);
      opaque_maxsum = !bodies[0].exp_free;
      if (!bodies[0].exp_free) return {m, body.fresh("maxsum of exp terms", false)};
      Terms s = sum_terms(exp_terms(add_terms(bodies[0], m), 1, 1), n);
      return {m, s};
    }
  }
  return out;
}

}  // namespace

std::optional<int64_t> small_power(const Expr& exponent) {
  if (exponent.op() != ExprOp::Const) return std::nullopt;
  double v = exponent->value.f;
  if (!(std::abs(v) <= 16) || v != std::trunc(v)) return std::nullopt;
  return static_cast<int64_t>(v);
}

Analysis analyze(const ir::Graph& g) {
  Analysis an;
  an.values.assign(static_cast<size_t>(g.num_values()), Terms{});
  an.opaque_exps.resize(static_cast<size_t>(g.num_nodes()));
  an.opaque_maxsum.assign(static_cast<size_t>(g.num_nodes()), false);
  for (int32_t v = 0; v < g.num_values(); ++v) {
    const ir::Value& val = g.values()[static_cast<size_t>(v)];
    if (val.origin == ir::ValueOrigin::Constant) an.values[static_cast<size_t>(v)] = constant_terms();
    if (!ir::is_float(val.type.dtype)) an.values[static_cast<size_t>(v)] = constant_terms();
  }
  // Integer and bool inputs are not symbols but samples of their valid range: what they
  // decide is seen in a test only when the sample shows it, as for a narrow function.
  for (ir::ValueId v : g.inputs()) {
    if (ir::is_float(g.type(v).dtype)) continue;
    an.values[static_cast<size_t>(v.v)].uninterpreted = true;
    an.narrow = true;
    an.sites.push_back({g.value(v).name, "sampled integer input"});
  }
  for (int32_t n = 0; n < g.num_nodes(); ++n) {
    const ir::Primitive& p = g.node(ir::NodeId{n});
    BodyAnalyzer body(g, n, an);
    std::vector<Terms> out;
    if (p.kind() == ir::PrimKind::Opaque) {
      out.assign(p.outputs.size(), body.fresh("opaque routine", false));
    } else {
      std::vector<Terms> bodies;
      for (const Expr& b : p.bodies) bodies.push_back(body.expr(b));
      out = reduce_terms(p, bodies, body, an.opaque_maxsum[static_cast<size_t>(n)]);
    }
    ORCHID_CHECK(out.size() == p.outputs.size()) << "terms of " << p.name;
    for (size_t k = 0; k < out.size(); ++k) {
      Terms t = out[k];
      t.den_vars &= ~kReduceBits;  // domain variable k is output dim k
      t.vars = 0;
      if (!ir::is_float(g.type(p.outputs[k]).dtype)) {
        bool u = t.uninterpreted;
        t = constant_terms();
        t.uninterpreted = u;
      }
      an.values[static_cast<size_t>(p.outputs[k].v)] = t;
    }
  }
  return an;
}

}  // namespace orchid::verify
