// Every rule of the rewrite table: applied where its pattern and guards hold, the result is
// proven equal by the finite-field verifier and passes the f32 differential test
// (check_rewrite); a deliberately wrong variant of the same rewrite is rejected; where a guard
// fails the rule does not match.
#include <gtest/gtest.h>

#include "ir/parser.h"
#include "rewrite/check_rewrite.h"
#include "rewrite/rules.h"

namespace orchid::rewrite {
namespace {

// The graph after applying rule `name` at its first site (there must be one).
ir::Graph apply_first(const ir::Graph& g, const char* name) {
  std::vector<Site> sites = find_sites(g, rule_index(name));
  EXPECT_FALSE(sites.empty()) << name << " does not match";
  if (sites.empty()) return g;
  return apply_site(g, sites[0]);
}

void expect_proven(const ir::Graph& before, const ir::Graph& after) {
  RewriteCheck c = check_rewrite(before, after);
  EXPECT_TRUE(c.accepted && c.proven) << c.verdict;
}

void expect_rejected(const ir::Graph& before, const char* wrong) {
  RewriteCheck c = check_rewrite(before, ir::parse_graph(wrong));
  EXPECT_FALSE(c.accepted) << c.verdict;
}

size_t count_op(const ir::Graph& g, ir::PrimOp op) {
  size_t n = 0;
  for (const ir::Primitive& p : g.nodes()) n += p.op == op;
  return n;
}

const char* kRowSum = R"(graph @g {
  input %x : f32[2,3,5]
  %e : f32[2,3,5] = elementwise(%x) { exp(%x[i0, i1, i2]) }
  %r : f32[2,3,1] = reduce sum(%e) over [5] { %e[i0, i1, r0] }
  output %r
})";

TEST(RewriteRules, SumToMatmul) {
  ir::Graph g = ir::parse_graph(kRowSum);
  ir::Graph out = apply_first(g, "sum-to-matmul");
  EXPECT_EQ(count_op(out, ir::PrimOp::Reduce), 0u);
  EXPECT_EQ(count_op(out, ir::PrimOp::MatMul), 1u);
  EXPECT_EQ(out.value(out.outputs()[0]).name, "r");
  expect_proven(g, out);
  expect_rejected(g, R"(graph @g {
  input %x : f32[2,3,5]
  const %ones : f32[5,1] = [1, 1, 1, 1, 2]
  %e : f32[2,3,5] = elementwise(%x) { exp(%x[i0, i1, i2]) }
  %r : f32[2,3,1] = matmul(%e, %ones) {trans_a=false, trans_b=false}
  output %r
})");
}

TEST(RewriteRules, SumToMatmulWithoutKeptDimAndItsGuards) {
  ir::Graph g = ir::parse_graph(R"(graph @g {
  input %x : f32[3,5]
  %r : f32[3] = reduce sum(%x) over [5] { %x[i0, r0] }
  output %r
})");
  ir::Graph out = apply_first(g, "sum-to-matmul");
  EXPECT_EQ(count_op(out, ir::PrimOp::View), 1u);
  expect_proven(g, out);
  // A sum over a leading axis, a sum of a squared element, a max: no sites.
  EXPECT_TRUE(find_sites(ir::parse_graph(R"(graph @g {
  input %x : f32[3,5]
  %a : f32[1,5] = reduce sum(%x) over [3] { %x[r0, i1] }
  %b : f32[3,1] = reduce sum(%x) over [5] { mul(%x[i0, r0], %x[i0, r0]) }
  %c : f32[3,1] = reduce max(%x) over [5] { %x[i0, r0] }
  output %a, %b, %c
})"), rule_index("sum-to-matmul")).empty());
}

const char* kScaled = R"(graph @g {
  input %e : f32[2,4,6]
  input %r : f32[2,4,1]
  input %v : f32[2,6,3]
  %p : f32[2,4,6] = elementwise(%e, %r) { div(%e[i0, i1, i2], %r[i0, i1, 0]) }
  %o : f32[2,4,3] = matmul(%p, %v) {trans_a=false, trans_b=false}
  output %o
})";

TEST(RewriteRules, ScaleAfterMatmul) {
  ir::Graph g = ir::parse_graph(kScaled);
  ir::Graph out = apply_first(g, "scale-after-matmul");
  const ir::Primitive& last = out.node(out.value(out.outputs()[0]).node);
  EXPECT_EQ(last.op, ir::PrimOp::Elementwise);
  expect_proven(g, out);
  // Multiplied where it should divide.
  expect_rejected(g, R"(graph @g {
  input %e : f32[2,4,6]
  input %r : f32[2,4,1]
  input %v : f32[2,6,3]
  %n : f32[2,4,3] = matmul(%e, %v) {trans_a=false, trans_b=false}
  %o : f32[2,4,3] = elementwise(%n, %r) { mul(%n[i0, i1, i2], %r[i0, i1, 0]) }
  output %o
})");
}

TEST(RewriteRules, ScaleOfTheRightOperandAndTheGuards) {
  ir::Graph g = ir::parse_graph(R"(graph @g {
  input %a : f32[4,6]
  input %w : f32[6,3]
  input %c : f32[3]
  %s : f32[6,3] = elementwise(%w, %c) { mul(%c[i1], %w[i0, i1]) }
  %o : f32[4,3] = matmul(%a, %s) {trans_a=false, trans_b=false}
  output %o
})");
  ir::Graph out = apply_first(g, "scale-after-matmul");
  expect_proven(g, out);
  // A divisor that varies along the contracted dim, and a scaled operand read elsewhere too.
  EXPECT_TRUE(find_sites(ir::parse_graph(R"(graph @g {
  input %e : f32[4,6]
  input %r : f32[6]
  input %v : f32[6,3]
  %p : f32[4,6] = elementwise(%e, %r) { div(%e[i0, i1], %r[i1]) }
  %q : f32[4,6] = elementwise(%e) { div(%e[i0, i1], 3:f32) }
  %o : f32[4,3] = matmul(%p, %v) {trans_a=false, trans_b=false}
  %o2 : f32[4,3] = matmul(%q, %v) {trans_a=false, trans_b=false}
  output %o, %o2, %q
})"), rule_index("scale-after-matmul")).empty());
}

const char* kShared = R"(graph @g {
  input %x : f32[5,8]
  input %wq : f32[8,4]
  input %wk : f32[8,4]
  input %wv : f32[8,2]
  %q : f32[5,4] = matmul(%x, %wq) {trans_a=false, trans_b=false}
  %k : f32[5,4] = matmul(%x, %wk) {trans_a=false, trans_b=false}
  %v : f32[5,2] = matmul(%x, %wv) {trans_a=false, trans_b=false}
  %y : f32[5,4] = elementwise(%q, %k) { sub(%q[i0, i1], %k[i0, i1]) }
  output %y, %v
})";

TEST(RewriteRules, MergeSharedOperand) {
  ir::Graph g = ir::parse_graph(kShared);
  ir::Graph out = apply_first(g, "merge-shared-operand");
  EXPECT_EQ(count_op(out, ir::PrimOp::MatMul), 1u);
  expect_proven(g, out);
  // The slices taken in the wrong order.
  expect_rejected(g, R"(graph @g {
  input %x : f32[5,8]
  input %wq : f32[8,4]
  input %wk : f32[8,4]
  input %wv : f32[8,2]
  %w : f32[8,10] = layout(%wq, %wk, %wv) { select(lt(i1, 4), %wq[i0, i1], select(lt(i1, 8), %wk[i0, sub(i1, 4)], %wv[i0, sub(i1, 8)])) }
  %m : f32[5,10] = matmul(%x, %w) {trans_a=false, trans_b=false}
  %q : f32[5,4] = layout(%m) { %m[i0, add(i1, 4)] }
  %k : f32[5,4] = layout(%m) { %m[i0, i1] }
  %v : f32[5,2] = layout(%m) { %m[i0, add(i1, 8)] }
  %y : f32[5,4] = elementwise(%q, %k) { sub(%q[i0, i1], %k[i0, i1]) }
  output %y, %v
})");
}

TEST(RewriteRules, MergeSharedRightOperandAndTheGuards) {
  ir::Graph g = ir::parse_graph(R"(graph @g {
  input %a : f32[2,3,8]
  input %b : f32[2,5,8]
  input %w : f32[2,8,4]
  %p : f32[2,3,4] = matmul(%a, %w) {trans_a=false, trans_b=false}
  %q : f32[2,5,4] = matmul(%b, %w) {trans_a=false, trans_b=false}
  output %p, %q
})");
  ir::Graph out = apply_first(g, "merge-shared-operand");
  EXPECT_EQ(count_op(out, ir::PrimOp::MatMul), 1u);
  expect_proven(g, out);
  // Different contracted sizes cannot share; a product feeding the other cannot merge with it.
  EXPECT_TRUE(find_sites(ir::parse_graph(R"(graph @g {
  input %x : f32[4,4]
  input %w : f32[4,4]
  %p : f32[4,4] = matmul(%x, %w) {trans_a=false, trans_b=false}
  %q : f32[4,4] = matmul(%x, %p) {trans_a=false, trans_b=false}
  output %q
})"), rule_index("merge-shared-operand")).empty());
}

const char* kLora = R"(graph @g {
  input %x : f32[3,8]
  input %w : f32[8,6]
  input %a : f32[8,2]
  input %b : f32[2,6]
  %wx : f32[3,6] = matmul(%x, %w) {trans_a=false, trans_b=false}
  %ax : f32[3,2] = matmul(%x, %a) {trans_a=false, trans_b=false}
  %bax : f32[3,6] = matmul(%ax, %b) {trans_a=false, trans_b=false}
  %y : f32[3,6] = elementwise(%wx, %bax) { add(%wx[i0, i1], %bax[i0, i1]) }
  output %y
})";

TEST(RewriteRules, SumOfMatmulsIsLora) {
  ir::Graph g = ir::parse_graph(kLora);
  ir::Graph out = apply_first(g, "sum-of-matmuls");
  EXPECT_EQ(count_op(out, ir::PrimOp::MatMul), 2u);
  EXPECT_EQ(count_op(out, ir::PrimOp::Elementwise), 0u);
  expect_proven(g, out);
  // The right operands stacked in the wrong order.
  expect_rejected(g, R"(graph @g {
  input %x : f32[3,8]
  input %w : f32[8,6]
  input %a : f32[8,2]
  input %b : f32[2,6]
  %ax : f32[3,2] = matmul(%x, %a) {trans_a=false, trans_b=false}
  %l : f32[3,10] = layout(%x, %ax) { select(lt(i1, 8), %x[i0, i1], %ax[i0, sub(i1, 8)]) }
  %r : f32[10,6] = layout(%b, %w) { select(lt(i0, 2), %b[i0, i1], %w[sub(i0, 2), i1]) }
  %y : f32[3,6] = matmul(%l, %r) {trans_a=false, trans_b=false}
  output %y
})");
}

TEST(RewriteRules, TransposeIntoMatmul) {
  ir::Graph g = ir::parse_graph(R"(graph @g {
  input %q : f32[4,4]
  input %k : f32[4,4]
  %kt : f32[4,4] = layout(%k) { %k[i1, i0] }
  %s : f32[4,4] = matmul(%q, %kt) {trans_a=false, trans_b=false}
  output %s
})");
  ir::Graph out = apply_first(g, "transpose-into-matmul");
  EXPECT_EQ(count_op(out, ir::PrimOp::Layout), 0u);
  expect_proven(g, out);
  expect_rejected(g, R"(graph @g {
  input %q : f32[4,4]
  input %k : f32[4,4]
  %s : f32[4,4] = matmul(%q, %k) {trans_a=false, trans_b=false}
  output %s
})");
}

TEST(RewriteRules, PermutationPairs) {
  ir::Graph g = ir::parse_graph(R"(graph @g {
  input %x : f32[3,3,3]
  %t : f32[3,3,3] = layout(%x) { %x[i1, i2, i0] }
  %u : f32[3,3,3] = layout(%t) { %t[i0, i2, i1] }
  %back : f32[3,3,3] = layout(%t) { %t[i2, i0, i1] }
  %y : f32[3,3,3] = elementwise(%u, %back) { add(%u[i0, i1, i2], %back[i0, i1, i2]) }
  output %y
})");
  std::vector<Site> sites = find_sites(g, rule_index("permutation-pair"));
  ASSERT_EQ(sites.size(), 2u);
  for (const Site& s : sites) expect_proven(g, apply_site(g, s));
  EXPECT_EQ(count_op(apply_site(g, sites[1]), ir::PrimOp::Layout), 2u);  // %back is %x
  // The two permutations composed in the wrong order.
  expect_rejected(g, R"(graph @g {
  input %x : f32[3,3,3]
  %t : f32[3,3,3] = layout(%x) { %x[i1, i2, i0] }
  %u : f32[3,3,3] = layout(%x) { %x[i1, i0, i2] }
  %back : f32[3,3,3] = layout(%t) { %t[i2, i0, i1] }
  %y : f32[3,3,3] = elementwise(%u, %back) { add(%u[i0, i1, i2], %back[i0, i1, i2]) }
  output %y
})");
}

TEST(RewriteRules, ViewChains) {
  ir::Graph g = ir::parse_graph(R"(graph @g {
  input %x : f32[2,3,4]
  %a : f32[6,4] = view(%x)
  %b : f32[24] = view(%a)
  %c : f32[2,12] = view(%b)
  output %c
})");
  ir::Graph out = apply_first(g, "view-chain");
  expect_proven(g, out);
  EXPECT_LT(out.num_nodes(), g.num_nodes());
  ir::Graph wrong = ir::parse_graph(R"(graph @g {
  input %x : f32[2,3,4]
  %c : f32[2,12] = layout(%x) { %x[i0, mod(i1, 3), floordiv(i1, 3)] }
  output %c
})");
  EXPECT_FALSE(check_rewrite(g, wrong).accepted);
}

// A rewrite that replaces a graph output by a value with a name of its own (an identity
// permutation of an input) keeps the output's name, through a view.
TEST(RewriteRules, OutputsKeepTheirNames) {
  ir::Graph g = ir::parse_graph(R"(graph @g {
  input %x : f32[3,4]
  %t : f32[3,4] = layout(%x) { %x[i0, i1] }
  %u : f32[3,4] = elementwise(%t) { neg(%t[i0, i1]) }
  output %t, %u
})");
  ir::Graph out = apply_first(g, "permutation-pair");
  ASSERT_EQ(out.outputs().size(), 2u);
  EXPECT_EQ(out.value(out.outputs()[0]).name, "t");
  EXPECT_EQ(out.value(out.outputs()[1]).name, "u");
  EXPECT_EQ(out.node(out.value(out.outputs()[0]).node).op, ir::PrimOp::View);
  EXPECT_EQ(out.inputs().size(), 1u);
  EXPECT_EQ(out.value(out.inputs()[0]).name, "x");
  expect_proven(g, out);
}

// Every rule has a positive test above; this keeps the table and the tests together.
TEST(RewriteRules, TableNamesEveryRuleOnce) {
  std::vector<std::string> names;
  for (const Rule& r : rule_table()) names.emplace_back(r.name);
  EXPECT_EQ(names, (std::vector<std::string>{"sum-to-matmul", "scale-after-matmul", "merge-shared-operand",
                                             "sum-of-matmuls", "transpose-into-matmul", "permutation-pair",
                                             "view-chain"}));
}

}  // namespace
}  // namespace orchid::rewrite
