// Cutting uniform dims before the finite-field check: which axes are cut, that differences
// that depend on the position are never hidden, and that model-sized attention is decided.
#include <gtest/gtest.h>

#include "ir/parser.h"
#include "verify/check.h"
#include "verify/uniform.h"

namespace orchid::verify {
namespace {

ir::Graph g(const std::string& body) { return ir::parse_graph("graph @g {\n" + body + "\n}"); }

const char* kDivideThenMultiply = R"(
  input %e : f32[8,256,512]
  input %r : f32[8,256,1]
  input %v : f32[8,512,64]
  %p : f32[8,256,512] = elementwise(%e, %r) { div(%e[i0, i1, i2], %r[i0, i1, 0]) }
  %o : f32[8,256,64] = matmul(%p, %v) {trans_a=false, trans_b=false}
  output %o)";

const char* kMultiplyThenDivide = R"(
  input %e : f32[8,256,512]
  input %r : f32[8,256,1]
  input %v : f32[8,512,64]
  %n : f32[8,256,64] = matmul(%e, %v) {trans_a=false, trans_b=false}
  %o : f32[8,256,64] = elementwise(%n, %r) { div(%n[i0, i1, i2], %r[i0, i1, 0]) }
  output %o)";

TEST(UniformDims, BatchRowsAndColumnsOfAProductAreCutNotItsContractedDim) {
  Reduced r = reduce_uniform_dims(g(kDivideThenMultiply), g(kMultiplyThenDivide));
  EXPECT_EQ(r.classes, 3);  // batch, rows, columns
  EXPECT_EQ(r.a.type(r.a.inputs()[0]).shape, (ir::Dims{1, 1, 512}));
  EXPECT_EQ(r.a.type(r.a.inputs()[2]).shape, (ir::Dims{1, 512, 1}));
  EXPECT_EQ(r.b.type(r.b.outputs()[0]).shape, (ir::Dims{1, 1, 1}));
  // Without the cut, a product of 8·256·512·64 multiply-adds per side would exceed the budget.
  Verdict v = check_equivalence(g(kDivideThenMultiply), g(kMultiplyThenDivide));
  EXPECT_EQ(v.outcome, Outcome::Equivalent) << describe(v);
  EXPECT_EQ(v.uniform_dims_cut, 3);
}

// Each pair differs at one position only; the axis that tells where is never cut.
TEST(UniformDims, DifferencesAtOnePositionAreNotHidden) {
  const char* plain = R"(
  input %x : f32[6,5]
  %y : f32[6,5] = elementwise(%x) { mul(%x[i0, i1], 2:f32) }
  output %y)";
  // The position in a value.
  Verdict v = check_equivalence(g(plain), g(R"(
  input %x : f32[6,5]
  %y : f32[6,5] = elementwise(%x) { select(eq(i0, 3), %x[i0, i1], mul(%x[i0, i1], 2:f32)) }
  output %y)"));
  EXPECT_EQ(v.outcome, Outcome::Different) << describe(v);
  EXPECT_TRUE(v.definitive);
  // A constant that varies along the axis.
  v = check_equivalence(g(R"(
  input %x : f32[2,4]
  const %c : f32[4] = [1, 2, 3, 4]
  %y : f32[2,4] = elementwise(%x, %c) { mul(%x[i0, i1], %c[i1]) }
  output %y)"), g(R"(
  input %x : f32[2,4]
  const %c : f32[4] = [1, 2, 5, 4]
  %y : f32[2,4] = elementwise(%x, %c) { mul(%x[i0, i1], %c[i1]) }
  output %y)"));
  EXPECT_EQ(v.outcome, Outcome::Different) << describe(v);
  // A fixed position read (the first token), and a shifted one.
  v = check_equivalence(g(R"(
  input %x : f32[4,3]
  %y : f32[4,3] = layout(%x) { %x[0, i1] }
  output %y)"), g(R"(
  input %x : f32[4,3]
  %y : f32[4,3] = layout(%x) { %x[i0, i1] }
  output %y)"));
  EXPECT_EQ(v.outcome, Outcome::Different) << describe(v);
  v = check_equivalence(g(R"(
  input %x : f32[4,3]
  %y : f32[3,3] = layout(%x) { %x[add(i0, 1), i1] }
  output %y)"), g(R"(
  input %x : f32[4,3]
  %y : f32[3,3] = layout(%x) { %x[i0, i1] }
  output %y)"));
  EXPECT_EQ(v.outcome, Outcome::Different) << describe(v);
  EXPECT_EQ(v.uniform_dims_cut, 1);  // the columns only
}

// Two axes of one value in one class (found by the reviewer of this reduction): a transpose
// against the identity, x·xᵀ against a sum of squares broadcast, a row read twice.
TEST(UniformDims, ClassesHoldingTwoAxesOfOneValueStay) {
  Verdict v = check_equivalence(g(R"(
  input %x : f32[4,4]
  %y : f32[4,4] = layout(%x) { %x[i0, i1] }
  output %y)"), g(R"(
  input %x : f32[4,4]
  %y : f32[4,4] = layout(%x) { %x[i1, i0] }
  output %y)"));
  EXPECT_EQ(v.outcome, Outcome::Different) << describe(v);
  v = check_equivalence(g(R"(
  input %x : f32[8,16]
  %y : f32[8,8] = matmul(%x, %x) {trans_a=false, trans_b=true}
  output %y)"), g(R"(
  input %x : f32[8,16]
  %y : f32[8,8] = reduce sum(%x) over [16] { mul(%x[i0, r0], %x[i0, r0]) }
  output %y)"));
  EXPECT_EQ(v.outcome, Outcome::Different) << describe(v);
  v = check_equivalence(g(R"(
  input %x : f32[5]
  %y : f32[5,5] = layout(%x) { %x[i0] }
  output %y)"), g(R"(
  input %x : f32[5]
  %y : f32[5,5] = layout(%x) { %x[i1] }
  output %y)"));
  EXPECT_EQ(v.outcome, Outcome::Different) << describe(v);
}

TEST(UniformDims, ReducedAndReshapedAxesStay) {
  Reduced r = reduce_uniform_dims(g(R"(
  input %x : f32[6,5]
  %s : f32[6,1] = reduce sum(%x) over [5] { %x[i0, r0] }
  %v : f32[2,3] = view(%s)
  output %v)"), g(R"(
  input %x : f32[6,5]
  %s : f32[6,1] = reduce sum(%x) over [5] { %x[i0, r0] }
  %v : f32[2,3] = view(%s)
  output %v)"));
  EXPECT_EQ(r.classes, 0);
  // Transposes join the axes they swap: both cut.
  r = reduce_uniform_dims(g(R"(
  input %x : f32[6,5]
  %t : f32[5,6] = layout(%x) { %x[i1, i0] }
  output %t)"), g(R"(
  input %x : f32[6,5]
  %t : f32[5,6] = layout(%x) { %x[i1, i0] }
  %u : f32[5,6] = elementwise(%t) { add(%t[i0, i1], 0:f32) }
  output %u)"));
  EXPECT_EQ(r.classes, 2);
}

}  // namespace
}  // namespace orchid::verify
