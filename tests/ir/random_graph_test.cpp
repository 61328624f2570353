// The random graph generator (tests/testlib/random_graph.h): every graph verifies, the same
// seed gives the same graph, print -> parse -> print is the identity on them, options are
// respected, and 300 seeds cover every primitive operator, combiner, expression operator and
// dtype (plus the features later differential tests rely on).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <iostream>
#include <map>
#include <string>

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "support/error.h"
#include "testlib/random_graph.h"

namespace orchid::testlib {
namespace {

using namespace orchid::ir;  // NOLINT

constexpr uint64_t kSeeds = 300;

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

// Verifies g; on failure the message names the seed and shows the graph.
void expect_valid(const Graph& g, uint64_t seed, const std::string& what) {
  std::vector<std::string> errors = verify(g);
  EXPECT_TRUE(errors.empty()) << what << " seed " << seed << ":\n"
                              << joined(errors) << print_graph(g);
}

TEST(RandomGraph, VerifiesIsDeterministicAndRoundTrips) {
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    Graph g = random_graph(seed);
    expect_valid(g, seed, "random_graph");
    std::string text = print_graph(g);
    EXPECT_EQ(text, print_graph(random_graph(seed))) << "not deterministic, seed " << seed;
    try {
      Graph back = parse_graph(text, "seed" + std::to_string(seed));
      EXPECT_EQ(print_graph(back), text) << "print -> parse -> print differs, seed " << seed;
      EXPECT_EQ(print_graph(back, {.canonical = true}), print_graph(g, {.canonical = true}))
          << "canonical text differs after a round trip, seed " << seed;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "parse failed, seed " << seed << ": " << e.what() << "\n" << text;
    }
  }
}

// No dead code: every input and constant is read, every node output is read or is an output.
TEST(RandomGraph, HasNoUnusedValues) {
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    Graph g = random_graph(seed);
    auto users = g.users();
    std::vector<bool> is_output(static_cast<size_t>(g.num_values()), false);
    for (ValueId v : g.outputs()) is_output[static_cast<size_t>(v.v)] = true;
    for (int32_t v = 0; v < g.num_values(); ++v)
      EXPECT_TRUE(!users[static_cast<size_t>(v)].empty() || is_output[static_cast<size_t>(v)])
          << "seed " << seed << ": %" << g.value(ValueId(v)).name << " is never used";
  }
}

TEST(RandomGraph, FloatOnlyGraphsVerifyAndStayFloat) {
  RandomGraphOptions opts;
  opts.float_only = true;
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    Graph g = random_graph(seed, opts);
    expect_valid(g, seed, "float_only random_graph");
    std::vector<bool> feeds_index(static_cast<size_t>(g.num_values()), false);
    for (const Primitive& p : g.nodes())
      if ((p.op == PrimOp::Reduce &&
           (p.reduce == ReduceOp::ArgMax || p.reduce == ReduceOp::ArgMin)) ||
          (p.op == PrimOp::Opaque && std::get<OpaqueAttrs>(p.attrs).routine == OpaqueRoutine::TopK))
        feeds_index[static_cast<size_t>(p.outputs[1].v)] = true;
    for (int32_t v = 0; v < g.num_values(); ++v) {
      const Value& val = g.value(ValueId(v));
      if (is_float(val.type.dtype) || feeds_index[static_cast<size_t>(v)]) continue;
      // The only other integers: graph inputs of gather indices (i32 / i64).
      EXPECT_TRUE(val.origin == ValueOrigin::Input &&
                  (val.type.dtype == DType::I32 || val.type.dtype == DType::I64))
          << "seed " << seed << ": %" << val.name << " is " << type_str(val.type);
    }
    for (ValueId out : g.outputs())
      EXPECT_TRUE(is_float(g.type(out).dtype)) << "seed " << seed << ": a non-float output";
  }
}

TEST(RandomGraph, RespectsOptions) {
  for (uint64_t seed = 0; seed < 150; ++seed) {
    RandomGraphOptions opts;
    opts.min_nodes = static_cast<int>(seed % 4) + 1;
    opts.max_nodes = opts.min_nodes + static_cast<int>(seed % 3);
    opts.max_rank = 2 + static_cast<int>(seed % 3);
    opts.max_elements = seed % 2 ? 64 : 1000;
    opts.allow_opaque = seed % 3 != 0;
    opts.allow_linear = seed % 5 != 0;
    opts.allow_indirect = seed % 7 != 0;
    opts.float_only = seed % 11 == 0;
    Graph g = random_graph(seed, opts);
    expect_valid(g, seed, "random_graph with options");
    EXPECT_GE(g.num_nodes(), opts.min_nodes) << "seed " << seed;
    EXPECT_LE(g.num_nodes(), opts.max_nodes) << "seed " << seed;
    EXPECT_FALSE(g.outputs().empty()) << "seed " << seed;
    for (const Value& v : g.values()) {
      EXPECT_LE(v.type.numel(), opts.max_elements) << "seed " << seed << ": %" << v.name;
      EXPECT_LE(v.type.rank(), opts.max_rank) << "seed " << seed << ": %" << v.name;
    }
    for (const Primitive& p : g.nodes()) {
      EXPECT_TRUE(opts.allow_opaque || p.op != PrimOp::Opaque) << "seed " << seed;
      EXPECT_TRUE(opts.allow_linear || prim_op_kind(p.op) != PrimKind::Linear) << "seed " << seed;
      if (opts.allow_indirect) continue;
      for (const Expr& b : p.bodies)
        visit_post(b, [&](const Expr& e) {
          if (e.op() != ExprOp::Load) return;
          for (const Expr& i : e->args)
            visit_post(i, [&](const Expr& x) {
              EXPECT_NE(x.op(), ExprOp::Load) << "seed " << seed << ": an indirect load";
            });
        });
    }
  }
}

// ---------------------------------------------------------------- rules, checked here too

// docs/ir.md's rules on index expressions and on the bodies of each kind, checked
// independently of the verifier (both are young; each guards the other).
bool is_const(const Expr& e) { return e.op() == ExprOp::Const; }

std::string bad_index(const Expr& e) {
  ExprOp op = e.op();
  std::string why;
  if (op == ExprOp::Mul && !is_const(e.arg(0)) && !is_const(e.arg(1))) why = "mul of non-constants";
  if ((op == ExprOp::FloorDiv || op == ExprOp::Mod) && !(is_const(e.arg(1)) && e.arg(1)->value.i > 0))
    why = "floordiv/mod by a non-positive or non-constant divisor";
  if ((op == ExprOp::And || op == ExprOp::Or || op == ExprOp::Not) && e.dtype() != DType::Bool)
    why = "bitwise operator";
  if (op == ExprOp::Cast && e.dtype() != DType::I64) why = "cast to " + std::string(dtype_name(e.dtype()));
  if (op == ExprOp::Load && !is_int(e.dtype())) why = "load of a non-integer tensor";
  ExprCategory cat = expr_op_category(op);
  bool allowed = op == ExprOp::Const || op == ExprOp::Var || op == ExprOp::Add || op == ExprOp::Sub ||
                 op == ExprOp::Mul || op == ExprOp::FloorDiv || op == ExprOp::Mod ||
                 op == ExprOp::Min || op == ExprOp::Max || op == ExprOp::And || op == ExprOp::Or ||
                 op == ExprOp::Not || cat == ExprCategory::Compare || cat == ExprCategory::Select ||
                 cat == ExprCategory::Cast || cat == ExprCategory::Load;
  if (!allowed) why = std::string(expr_op_name(op)) + " in an index expression";
  if (!why.empty()) return why;
  for (const Expr& a : e->args)
    if (std::string m = bad_index(a); !m.empty()) return m;
  return "";
}

bool domain_var_or_zero(const Expr& e) {
  return (e.op() == ExprOp::Var && e->var_kind == VarKind::Domain) ||
         (is_const(e) && e->value.i == 0);
}

// Only loads, constants and selects (on index conditions) between them.
std::string bad_layout_value(const Expr& e) {
  if (e.op() == ExprOp::Load || is_const(e)) return "";
  if (e.op() != ExprOp::Select) return std::string(expr_op_name(e.op())) + " in a layout body";
  for (size_t k = 1; k < 3; ++k)
    if (std::string m = bad_layout_value(e.arg(k)); !m.empty()) return m;
  return bad_index(e.arg(0));
}

std::string rule_violation(const Primitive& p) {
  std::string why;
  for (const Expr& b : p.bodies)
    visit_post(b, [&](const Expr& e) {
      if (e.op() != ExprOp::Load) return;
      for (const Expr& i : e->args)
        if (std::string m = bad_index(i); !m.empty()) why = m;
      if (p.op == PrimOp::Elementwise || p.op == PrimOp::Broadcast)
        for (size_t k = 0; k < e->args.size(); ++k)
          if (!domain_var_or_zero(e.arg(k)) && !(e->predicated && k + 1 == e->args.size()))
            why = "an elementwise/broadcast index that is not a domain variable or 0";
    });
  if ((p.reduce == ReduceOp::None) != p.reduce_domain.empty()) why = "reduction domain vs combiner";
  if (p.op == PrimOp::Broadcast &&
      (p.bodies.size() != 1 || p.bodies[0].op() != ExprOp::Load || p.bodies[0]->predicated))
    why = "a broadcast body that is not one plain load";
  if (p.op == PrimOp::Layout)
    for (const Expr& b : p.bodies)
      if (std::string m = bad_layout_value(b); !m.empty()) why = m;
  if (p.op == PrimOp::Reduce && p.reduce == ReduceOp::None) why = "reduce without a combiner";
  return why;
}

TEST(RandomGraph, FollowsTheIndexAndKindRules) {
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    Graph g = random_graph(seed);
    for (int32_t n = 0; n < g.num_nodes(); ++n) {
      std::string why = rule_violation(g.node(NodeId(n)));
      EXPECT_TRUE(why.empty()) << "seed " << seed << " node " << n << ": " << why << "\n"
                               << print_graph(g);
    }
  }
}

// ---------------------------------------------------------------- coverage

struct Coverage {
  std::map<std::string, int> prim, reduce, expr, dtype, feature;

  void graph(const Graph& g) {
    for (const Value& v : g.values()) {
      ++dtype[std::string(dtype_name(v.type.dtype))];
      if (v.type.rank() == 0) ++feature["scalar value"];
      if (v.origin == ValueOrigin::Constant) {
        const Tensor& t = g.constant(g.find_value(v.name).value());
        bool splat = true;
        for (int64_t i = 1; i < t.numel(); ++i) splat = splat && t.get_as_double(i) == t.get_as_double(0);
        ++feature[splat ? "splat constant" : "constant with data"];
      }
    }
    auto users = g.users();
    for (const auto& u : users)
      if (u.size() >= 2) ++feature["value with several users"];
    if (g.outputs().size() >= 2) ++feature["several graph outputs"];
    for (const Primitive& p : g.nodes()) node(p);
  }

  void node(const Primitive& p) {
    ++prim[std::string(prim_op_name(p.op))];
    ++reduce[std::string(reduce_op_name(p.reduce))];
    if (p.inputs.empty()) ++feature["node without inputs"];
    if (p.bodies.size() >= 2 && p.op == PrimOp::Elementwise) ++feature["multi-output elementwise"];
    if (p.bodies.size() >= 2 && p.op == PrimOp::Layout) ++feature["multi-output layout"];
    if (p.bodies.size() >= 2 && p.reduce == ReduceOp::Sum) ++feature["multi-body sum"];
    if (p.op == PrimOp::Reduce && ir::numel(p.domain) == 1) ++feature["full reduction"];
    if (p.op == PrimOp::Reduce && !p.domain.empty() && std::count(p.domain.begin(), p.domain.end(), 1))
      ++feature["reduction with unit (kept) dims"];
    if (p.op == PrimOp::Reduce && p.domain.size() + p.reduce_domain.size() >= 2 &&
        std::count(p.domain.begin(), p.domain.end(), 1) == 0)
      ++feature["reduction with dropped dims"];
    if (p.op == PrimOp::Reduce && p.reduce_domain.size() >= 2) ++feature["multi-axis reduction"];
    if (const auto* c = std::get_if<ConvAttrs>(&p.attrs)) {
      ++feature["conv " + std::to_string(c->strides.size()) + "-d"];
      if (c->groups > 1) ++feature["conv groups"];
      for (size_t d = 0; d < c->strides.size(); ++d) {
        if (c->strides[d] > 1) ++feature["conv stride"];
        if (c->dilations[d] > 1) ++feature["conv dilation"];
        if (c->pads_begin[d] != c->pads_end[d]) ++feature["conv asymmetric pad"];
      }
    }
    if (const auto* m = std::get_if<MatMulAttrs>(&p.attrs)) {
      if (m->trans_a) ++feature["matmul trans_a"];
      if (m->trans_b) ++feature["matmul trans_b"];
      if (p.domain.size() > 2) ++feature["batched matmul"];
      for (const Expr& b : p.bodies)
        visit_post(b, [&](const Expr& e) {
          if (e.op() == ExprOp::Load && !e->args.empty() && is_const(e->args[0]) && p.domain.size() > 2)
            ++feature["matmul batch broadcast"];
        });
    }
    if (const auto* o = std::get_if<OpaqueAttrs>(&p.attrs))
      ++feature["opaque " + std::string(opaque_routine_name(o->routine))];
    if (p.kind() == PrimKind::Linear && !p.outputs.empty() && p.bodies.size() == 1 &&
        !is_float(p.bodies[0].dtype()))
      ++feature["integer " + std::string(prim_op_name(p.op))];
    for (const Expr& b : p.bodies) body(b);
  }

  void body(const Expr& b) {
    visit_post(b, [&](const Expr& e) {
      ++expr[std::string(expr_op_name(e.op()))];
      if (e.op() != ExprOp::Load) return;
      if (e->predicated) ++feature["predicated load"];
      for (const Expr& i : e->args)
        visit_post(i, [&](const Expr& x) {
          if (x.op() == ExprOp::Load) ++feature["indirect load"];
        });
    });
  }
};

TEST(RandomGraph, CoversEveryOperatorCombinerExpressionAndDType) {
  Coverage cov;
  for (uint64_t seed = 0; seed < kSeeds; ++seed) cov.graph(random_graph(seed));
  std::array<std::map<std::string, int>*, 5> tables = {&cov.prim, &cov.reduce, &cov.expr,
                                                       &cov.dtype, &cov.feature};
  std::array<const char*, 5> names = {"prim ops", "combiners", "expr ops", "dtypes", "features"};
  for (size_t t = 0; t < tables.size(); ++t) {
    std::cout << names[t] << ":";
    for (const auto& [k, n] : *tables[t]) std::cout << " " << k << "=" << n;
    std::cout << "\n";
  }
#define ORCHID_PRIM(e, text, kind, attrs, derived) \
  EXPECT_GT(cov.prim[text], 0) << "no " text " primitive in " << kSeeds << " seeds";
#include "ir/prim.def"
#undef ORCHID_PRIM
#define ORCHID_REDUCE(e, text, bodies, outputs) \
  EXPECT_GT(cov.reduce[text], 0) << "no " text " combiner in " << kSeeds << " seeds";
#include "ir/reduce.def"
#undef ORCHID_REDUCE
#define ORCHID_EXPR(e, text, arity, cat, dom) \
  EXPECT_GT(cov.expr[text], 0) << "no " text " expression in " << kSeeds << " seeds";
#include "ir/expr.def"
#undef ORCHID_EXPR
#define ORCHID_DTYPE(e, text, bytes, cls) \
  EXPECT_GT(cov.dtype[text], 0) << "no " text " value in " << kSeeds << " seeds";
#include "ir/dtype.def"
#undef ORCHID_DTYPE
  for (const char* f :
       {"scalar value", "splat constant", "constant with data", "value with several users",
        "several graph outputs", "node without inputs", "multi-output elementwise",
        "multi-output layout", "multi-body sum", "full reduction", "conv 1-d", "conv 2-d",
        "conv groups", "conv stride", "conv dilation", "conv asymmetric pad", "matmul trans_a",
        "matmul trans_b", "batched matmul", "matmul batch broadcast", "integer matmul",
        "integer conv", "opaque cumsum", "opaque topk", "predicated load", "indirect load",
        "reduction with unit (kept) dims", "reduction with dropped dims", "multi-axis reduction"})
    EXPECT_GT(cov.feature[f], 0) << "no " << f << " in " << kSeeds << " seeds";
}

}  // namespace
}  // namespace orchid::testlib
