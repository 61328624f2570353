// The equivalence check on hand-written pairs: identities it must accept, variants it must
// reject, and what it must call undecided.
#include "verify/check.h"

#include <gtest/gtest.h>

#include "ir/parser.h"

namespace orchid::verify {
namespace {

ir::Graph g(const std::string& body) { return ir::parse_graph("graph @g {\n" + body + "\n}"); }

Verdict check(const std::string& a, const std::string& b, CheckOptions o = {}) {
  Verdict v = check_equivalence(g(a), g(b), o);
  std::cerr << describe(v) << "\n";
  return v;
}

constexpr const char* kSoftmaxSafe = R"(
  input %x : f32[2,6]
  %m : f32[2,1] = reduce max(%x) over [6] { %x[i0, r0] }
  %e : f32[2,6] = elementwise(%x, %m) { exp(sub(%x[i0, i1], %m[i0, 0])) }
  %s : f32[2,1] = reduce sum(%e) over [6] { %e[i0, r0] }
  %y : f32[2,6] = elementwise(%e, %s) { div(%e[i0, i1], %s[i0, 0]) }
  output %y)";

constexpr const char* kSoftmaxPlain = R"(
  input %x : f32[2,6]
  %e : f32[2,6] = elementwise(%x) { exp(%x[i0, i1]) }
  %s : f32[2,1] = reduce sum(%e) over [6] { %e[i0, r0] }
  %y : f32[2,6] = elementwise(%e, %s) { div(%e[i0, i1], %s[i0, 0]) }
  output %y)";

// Float matmuls are evaluated directly, not through their expression: a batched, broadcast,
// transposed product equals the same sum written as a reduce, and differs from it with the
// contracted dim of one operand reversed.
TEST(Check, DirectMatmulAgreesWithItsExpression) {
  const char* sum = R"(
  input %a : f32[2,1,5,3]
  input %b : f32[3,4,5]
  %y : f32[2,3,3,4] = reduce sum(%a, %b) over [5] { mul(%a[i0, 0, r0, i2], %b[i1, i3, r0]) }
  output %y)";
  Verdict v = check(sum, R"(
  input %a : f32[2,1,5,3]
  input %b : f32[3,4,5]
  %y : f32[2,3,3,4] = matmul(%a, %b) {trans_a=true, trans_b=true}
  output %y)");
  EXPECT_EQ(v.outcome, Outcome::Equivalent) << describe(v);
  v = check(sum, R"(
  input %a : f32[2,1,5,3]
  input %b : f32[3,4,5]
  %bt : f32[3,5,4] = layout(%b) { %b[i0, i2, i1] }
  %y : f32[2,3,3,4] = matmul(%a, %bt) {trans_a=true, trans_b=false}
  %z : f32[2,3,3,4] = elementwise(%y) { add(%y[i0, i1, i2, i3], 0:f32) }
  output %z)");
  EXPECT_EQ(v.outcome, Outcome::Equivalent) << describe(v);
  v = check(sum, R"(
  input %a : f32[2,1,5,3]
  input %b : f32[3,4,5]
  %br : f32[3,4,5] = layout(%b) { %b[i0, i1, sub(4, i2)] }
  %y : f32[2,3,3,4] = matmul(%a, %br) {trans_a=true, trans_b=true}
  output %y)");
  EXPECT_EQ(v.outcome, Outcome::Different) << describe(v);
  EXPECT_TRUE(v.definitive);
}

TEST(Check, SoftmaxWithAndWithoutItsMaxAreEquivalent) {
  Verdict v = check(kSoftmaxSafe, kSoftmaxPlain);
  EXPECT_EQ(v.outcome, Outcome::Equivalent);
  EXPECT_FALSE(v.exp_free);
  // Each output is e^x / Σ6 e^x: the difference has 1·6 + 6·1 exponential terms.
  EXPECT_EQ(v.k, 12u);
  EXPECT_EQ(v.tests_run, v.tests_needed);
  EXPECT_EQ(v.tests_needed, 249);  // ⌈12 · ln 1e9⌉
}

TEST(Check, SoftmaxOverTheWrongAxisDiffers) {
  Verdict v = check(kSoftmaxPlain, R"(
  input %x : f32[2,6]
  %e : f32[2,6] = elementwise(%x) { exp(%x[i0, i1]) }
  %s : f32[1,6] = reduce sum(%e) over [2] { %e[r0, i1] }
  %y : f32[2,6] = elementwise(%e, %s) { div(%e[i0, i1], %s[0, i1]) }
  output %y)");
  EXPECT_EQ(v.outcome, Outcome::Different);
  EXPECT_TRUE(v.definitive);
  EXPECT_NE(v.detail.find("output 0 (%y) differs at ["), std::string::npos) << v.detail;
}

// Korch Figure 2: attention, and the same after its three rewrites — the sum becomes E·1, the
// division moves after the second matmul, and the two matmuls sharing E merge into E·[V | 1].
constexpr const char* kAttention = R"(
  input %q : f32[4,8]
  input %k : f32[6,8]
  input %v : f32[6,5]
  %s : f32[4,6] = matmul(%q, %k) {trans_a=false, trans_b=true}
  %e : f32[4,6] = elementwise(%s) { exp(div(%s[i0, i1], 2.828125:f32)) }
  %r : f32[4,1] = reduce sum(%e) over [6] { %e[i0, r0] }
  %p : f32[4,6] = elementwise(%e, %r) { div(%e[i0, i1], %r[i0, 0]) }
  %o : f32[4,5] = matmul(%p, %v) {trans_a=false, trans_b=false}
  output %o)";

constexpr const char* kAttentionMerged = R"(
  input %q : f32[4,8]
  input %k : f32[6,8]
  input %v : f32[6,5]
  %s : f32[4,6] = matmul(%q, %k) {trans_a=false, trans_b=true}
  %e : f32[4,6] = elementwise(%s) { exp(div(%s[i0, i1], 2.828125:f32)) }
  %v1 : f32[6,6] = layout(%v) { %v[i0, i1] if lt(i1, 5) else 1:f32 }
  %ev : f32[4,6] = matmul(%e, %v1) {trans_a=false, trans_b=false}
  %num : f32[4,5] = layout(%ev) { %ev[i0, i1] }
  %den : f32[4,1] = layout(%ev) { %ev[i0, add(i1, 5)] }
  %o : f32[4,5] = elementwise(%num, %den) { div(%num[i0, i1], %den[i0, 0]) }
  output %o)";

TEST(Check, KorchAttentionRewriteIsEquivalent) {
  Verdict v = check(kAttention, kAttentionMerged);
  EXPECT_EQ(v.outcome, Outcome::Equivalent);
  EXPECT_TRUE(v.uninterpreted.empty());
}

TEST(Check, AttentionWithTheOnesColumnInTheWrongPlaceDiffers) {
  std::string wrong = kAttentionMerged;
  wrong.replace(wrong.find("%ev[i0, add(i1, 5)]"), 19, "%ev[i0, add(i1, 4)]");
  Verdict v = check(kAttention, wrong);
  EXPECT_EQ(v.outcome, Outcome::Different);
  EXPECT_TRUE(v.definitive);
}

TEST(Check, TanhIsTwiceSigmoidOfTwiceMinusOne) {
  const char* tanh = R"(
  input %x : f32[3,4]
  %y : f32[3,4] = elementwise(%x) { tanh(%x[i0, i1]) }
  output %y)";
  Verdict v = check(tanh, R"(
  input %x : f32[3,4]
  %y : f32[3,4] = elementwise(%x) { sub(mul(2:f32, sigmoid(mul(2:f32, %x[i0, i1]))), 1:f32) }
  output %y)");
  EXPECT_EQ(v.outcome, Outcome::Equivalent);
  Verdict w = check(tanh, R"(
  input %x : f32[3,4]
  %y : f32[3,4] = elementwise(%x) { sub(mul(2:f32, sigmoid(%x[i0, i1])), 1:f32) }
  output %y)");
  EXPECT_EQ(w.outcome, Outcome::Different);
  EXPECT_TRUE(w.definitive);
}

TEST(Check, MatmulAssociatesInOneExpFreeTest) {
  const char* in = R"(
  input %a : f32[3,4]
  input %b : f32[4,5]
  input %c : f32[5,2])";
  Verdict v = check(std::string(in) + R"(
  %ab : f32[3,5] = matmul(%a, %b) {trans_a=false, trans_b=false}
  %o : f32[3,2] = matmul(%ab, %c) {trans_a=false, trans_b=false}
  output %o)",
                    std::string(in) + R"(
  %bc : f32[4,2] = matmul(%b, %c) {trans_a=false, trans_b=false}
  %o : f32[3,2] = matmul(%a, %bc) {trans_a=false, trans_b=false}
  output %o)");
  EXPECT_EQ(v.outcome, Outcome::Equivalent);
  EXPECT_TRUE(v.exp_free);
  EXPECT_EQ(v.tests_needed, 1);
}

TEST(Check, UninterpretedFunctionsCompareWhereUsedAlike) {
  const char* gelu = R"(
  input %x : f32[8]
  %y : f32[8] = elementwise(%x) { mul(mul(0.5:f32, %x[i0]), add(1:f32, erf(div(%x[i0], 1.4142135:f32)))) }
  output %y)";
  Verdict same = check(gelu, R"(
  input %x : f32[8]
  %h : f32[8] = elementwise(%x) { add(1:f32, erf(div(%x[i0], 1.4142135:f32))) }
  %y : f32[8] = elementwise(%x, %h) { mul(%x[i0], mul(%h[i0], 0.5:f32)) }
  output %y)");
  EXPECT_EQ(same.outcome, Outcome::Equivalent);
  ASSERT_FALSE(same.uninterpreted.empty());
  EXPECT_EQ(same.uninterpreted[0].what, "erf");
  EXPECT_NE(describe(same).find("erf at %y"), std::string::npos) << describe(same);
  // erf(x · 0.70710677) is not erf(x / 1.4142135) exactly; the verdict says it may not be
  // a real difference.
  Verdict other = check(gelu, R"(
  input %x : f32[8]
  %y : f32[8] = elementwise(%x) { mul(mul(0.5:f32, %x[i0]), add(1:f32, erf(mul(%x[i0], 0.70710677:f32)))) }
  output %y)");
  EXPECT_EQ(other.outcome, Outcome::Different);
  EXPECT_FALSE(other.definitive);
}

TEST(Check, MaxIsBlindToOrderAndArgumentPosition) {
  Verdict v = check(R"(
  input %x : f32[3,5]
  %m : f32[3,1] = reduce max(%x) over [5] { %x[i0, r0] }
  output %m)",
                    R"(
  input %x : f32[3,5]
  %m : f32[3,1] = reduce max(%x) over [5] { %x[i0, sub(4, r0)] }
  output %m)");
  EXPECT_EQ(v.outcome, Outcome::Equivalent);
  Verdict w = check(R"(
  input %x : f32[3,5]
  input %y : f32[3,5]
  %m : f32[3,5] = elementwise(%x, %y) { max(%x[i0, i1], %y[i0, i1]) }
  output %m)",
                    R"(
  input %x : f32[3,5]
  input %y : f32[3,5]
  %m : f32[3,5] = elementwise(%x, %y) { select(gt(%y[i0, i1], %x[i0, i1]), max(%y[i0, i1], %x[i0, i1]), max(%x[i0, i1], %y[i0, i1])) }
  output %m)");
  EXPECT_EQ(w.outcome, Outcome::Equivalent);
}

constexpr const char* kWelford = R"(
  input %x : f32[2,7]
  %m, %v : f32[2,1], f32[2,1] = reduce welford(%x) over [7] { %x[i0, r0] }
  output %m, %v)";

// Mean and variance in two passes, the variance's sum of squares scaled by `scale`.
std::string two_pass_variance(const std::string& scale) {
  return R"(
  input %x : f32[2,7]
  %s : f32[2,1] = reduce sum(%x) over [7] { %x[i0, r0] }
  %m : f32[2,1] = elementwise(%s) { div(%s[i0, i1], 7:f32) }
  %d : f32[2,1] = reduce sum(%x, %m) over [7] { mul(sub(%x[i0, r0], %m[i0, 0]), sub(%x[i0, r0], %m[i0, 0])) }
  %v : f32[2,1] = elementwise(%d) { )" + scale + R"( }
  output %m, %v)";
}

TEST(Check, WelfordIsTheExactMeanAndVariance) {
  // 1/7 is not exact in binary: the variance differs, the mean does not.
  Verdict v = check(kWelford, two_pass_variance("mul(%d[i0, i1], 0.14285715:f32)"));
  EXPECT_EQ(v.outcome, Outcome::Different);
  EXPECT_NE(v.detail.find("output 1"), std::string::npos) << v.detail;
  // Dividing by 7 is exact: the two-pass variance is welford's.
  Verdict w = check(kWelford, two_pass_variance("div(%d[i0, i1], 7:f32)"));
  EXPECT_EQ(w.outcome, Outcome::Equivalent);
}

TEST(Check, MaxSumIsMaxAndSumOfShiftedExp) {
  Verdict v = check(R"(
  input %x : f32[2,5]
  %m, %s : f32[2,1], f32[2,1] = reduce maxsum(%x) over [5] { %x[i0, r0] }
  output %m, %s)",
                    R"(
  input %x : f32[2,5]
  %m : f32[2,1] = reduce max(%x) over [5] { %x[i0, r0] }
  %s : f32[2,1] = reduce sum(%x, %m) over [5] { exp(sub(%x[i0, r0], %m[i0, 0])) }
  output %m, %s)");
  EXPECT_EQ(v.outcome, Outcome::Equivalent);
}

TEST(Check, ExpAfterExpIsUninterpretedButComparable) {
  const char* e2 = R"(
  input %x : f32[4]
  %y : f32[4] = elementwise(%x) { exp(exp(%x[i0])) }
  output %y)";
  Verdict v = check(e2, e2);
  EXPECT_EQ(v.outcome, Outcome::Equivalent);
  ASSERT_EQ(v.uninterpreted.size(), 2u);
  EXPECT_EQ(v.uninterpreted[0].what, "exp after exp");
}

TEST(Check, DivisionByAZeroPolynomialIsUndecided) {
  Verdict v = check(R"(
  input %x : f32[4]
  %y : f32[4] = elementwise(%x) { div(%x[i0], sub(%x[i0], %x[i0])) }
  output %y)",
                    R"(
  input %x : f32[4]
  %y : f32[4] = elementwise(%x) { %x[i0] }
  output %y)");
  EXPECT_EQ(v.outcome, Outcome::Undecided);
  EXPECT_NE(v.detail.find("%y divides by zero in every draw"), std::string::npos) << v.detail;
}

TEST(Check, OpaqueRoutinesAreUndecided) {
  const char* t = R"(
  input %x : f32[2,6]
  %t, %ti : f32[2,2], i64[2,2] = opaque topk(%x) {axis=1, k=2, largest=1, sorted=1}
  output %t)";
  Verdict v = check(t, t);
  EXPECT_EQ(v.outcome, Outcome::Undecided);
  EXPECT_NE(v.detail.find("%t: opaque routine topk"), std::string::npos) << v.detail;
}

TEST(Check, TooManyExponentialTermsAreUndecided) {
  std::string big = kSoftmaxPlain;
  for (const char* from : {"f32[2,6]", "over [6]"}) {
    std::string to = std::string(from).replace(std::string(from).find('6'), 1, "600");
    for (size_t at; (at = big.find(from)) != std::string::npos;) big.replace(at, std::string(from).size(), to);
  }
  CheckOptions o;
  o.max_work = 5000000;  // the tests that fit run and pass; the rest stay undone
  Verdict v = check(big, big, o);
  EXPECT_EQ(v.outcome, Outcome::Undecided);
  EXPECT_GT(v.tests_run, 0);
  EXPECT_EQ(v.k, 1200u);
  EXPECT_NE(v.detail.find("more than the limit of 4096"), std::string::npos) << v.detail;
}

TEST(Check, DifferentSignaturesDiffer) {
  Verdict v = check(R"(
  input %x : f32[2,3]
  %y : f32[2,3] = elementwise(%x) { %x[i0, i1] }
  output %y)",
                    R"(
  input %x : f32[2,3]
  %y : f32[3,2] = layout(%x) { %x[i1, i0] }
  output %y)");
  EXPECT_EQ(v.outcome, Outcome::Different);
  EXPECT_EQ(v.detail, "output 0 is f32[2,3] in the first graph and f32[3,2] in the second");
}

TEST(Check, IndirectLoadsUseValidIntegerInputs) {
  const char* gather = R"(
  input %x : f32[5,3]
  input %i : i64[4]
  %y : f32[4,3] = layout(%x, %i) { %x[%i[i0], i1] }
  output %y)";
  Verdict v = check(gather, gather);
  EXPECT_EQ(v.outcome, Outcome::Equivalent);
}

TEST(Terms, SumsCrossMultiplyOnlyDenominatorsThatVaryWithTheReduction) {
  ir::Graph shared = g(R"(
  input %x : f32[2,3]
  %e : f32[2,3] = elementwise(%x) { exp(%x[i0, i1]) }
  %r : f32[2,1] = reduce sum(%e) over [3] { %e[i0, r0] }
  %s : f32[2,1] = reduce sum(%e, %r) over [3] { div(%e[i0, r0], %r[i0, 0]) }
  output %s)");
  Terms t = analyze(shared).values[static_cast<size_t>(shared.outputs()[0].v)];
  EXPECT_EQ(t.num, 3u);  // Σ_r e^x_r / R: one denominator, three terms over it
  EXPECT_EQ(t.den, 3u);
  ir::Graph varying = g(R"(
  input %x : f32[2,3]
  %s : f32[2,1] = reduce sum(%x) over [3] { sigmoid(%x[i0, r0]) }
  output %s)");
  Terms u = analyze(varying).values[static_cast<size_t>(varying.outputs()[0].v)];
  EXPECT_EQ(u.num, 12u);  // Σ 1 / (1 + e^-x_r) over 3: 3 · 1 · 2² over 2³
  EXPECT_EQ(u.den, 8u);
  EXPECT_FALSE(u.exp_free);
}

}  // namespace
}  // namespace orchid::verify
