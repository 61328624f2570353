// Transposes into matmuls: a matmul operand that is a transpose of the last two dims, or a
// reshape of its batch dims, is read from its source (so reshaped) with the trans flag
// flipped; the graph computes what it did; other layouts stay.
#include <gtest/gtest.h>

#include "interp/compare.h"
#include "interp/interp.h"
#include "interp/random_inputs.h"
#include "verify/check.h"
#include "ir/dce.h"
#include "ir/parser.h"
#include "rewrite/fold_transposes.h"

namespace orchid::rewrite {
namespace {

const ir::Primitive& producer(const ir::Graph& g, const char* value) {
  return g.node(g.value(*g.find_value(value)).node);
}

void expect_same_results(const ir::Graph& before, const ir::Graph& after) {
  for (uint64_t seed : {1, 2}) {
    auto in = interp::random_inputs(before, seed);
    auto want = interp::run(before, in), got = interp::run(after, in);
    ASSERT_EQ(want.size(), got.size());
    for (size_t k = 0; k < want.size(); ++k) EXPECT_EQ(interp::compare_tensors(got[k], want[k], 1e-12, 1e-12), "");
  }
  // The rewrite is exact, so the finite-field check must find it equivalent too.
  verify::Verdict v = verify::check_equivalence(before, after);
  EXPECT_EQ(v.outcome, verify::Outcome::Equivalent) << verify::describe(v);
}

TEST(FoldTransposes, AttentionScoresReadKeysTransposed) {
  ir::Graph g = ir::parse_graph(R"(graph @g {
  input %q : f32[1,4,8,16]
  input %k : f32[1,4,32,16]
  %kt : f32[1,4,16,32] = layout(%k) { %k[i0, i1, i3, i2] }
  %s : f32[1,4,8,32] = matmul(%q, %kt) {trans_a=false, trans_b=false}
  output %s
})");
  ir::Graph out = g;
  ASSERT_TRUE(fold_transposes_into_matmuls(out));
  const ir::Primitive& mm = producer(out, "s");
  EXPECT_EQ(out.value(mm.inputs[1]).name, "k");
  EXPECT_TRUE(std::get<ir::MatMulAttrs>(mm.attrs).trans_b);
  expect_same_results(g, out);
  EXPECT_EQ(ir::eliminate_dead(out).num_nodes(), 1);  // the transpose is dead
  ir::Graph again = out;
  EXPECT_FALSE(fold_transposes_into_matmuls(again));
}

// A transposed A, and a B already read transposed (the flag flips back); a transpose also read
// by an elementwise primitive stays for it.
TEST(FoldTransposes, FlipsEitherFlagAndKeepsOtherReaders) {
  ir::Graph g = ir::parse_graph(R"(graph @g {
  input %a : f32[5,3]
  input %b : f32[5,4]
  %at : f32[3,5] = layout(%a) { %a[i1, i0] }
  %bt : f32[4,5] = layout(%b) { %b[i1, i0] }
  %y : f32[3,4] = matmul(%at, %bt) {trans_a=false, trans_b=true}
  %z : f32[4,5] = elementwise(%bt) { exp(%bt[i0, i1]) }
  output %y, %z
})");
  ir::Graph out = g;
  ASSERT_TRUE(fold_transposes_into_matmuls(out));
  const ir::Primitive& mm = producer(out, "y");
  EXPECT_EQ(out.value(mm.inputs[0]).name, "a");
  EXPECT_EQ(out.value(mm.inputs[1]).name, "b");
  EXPECT_TRUE(std::get<ir::MatMulAttrs>(mm.attrs).trans_a);
  EXPECT_FALSE(std::get<ir::MatMulAttrs>(mm.attrs).trans_b);
  expect_same_results(g, out);
  EXPECT_EQ(ir::eliminate_dead(out).num_nodes(), 3);  // %bt stays for %z
}

// PyTorch's matmul decomposition reshapes the batch dims of a transposed K ([1, 4, 16, 32] as
// [4, 16, 32]); the product reads the same reshape of K itself, transposed by its flag. A view
// that changes the last two dims (here [1, 4, 16, 32] as [4, 32, 16]) does not commute with
// the transpose and is left alone.
TEST(FoldTransposes, BatchReshapesOfATransposeFoldToo) {
  ir::Graph g = ir::parse_graph(R"(graph @g {
  input %q : f32[4,8,16]
  input %k : f32[1,4,32,16]
  %kt : f32[1,4,16,32] = layout(%k) { %k[i0, i1, i3, i2] }
  %kv : f32[4,16,32] = view(%kt)
  %s : f32[4,8,32] = matmul(%q, %kv) {trans_a=false, trans_b=false}
  %kw : f32[4,32,16] = view(%kt)
  %r : f32[4,32,32] = matmul(%kw, %kv) {trans_a=false, trans_b=false}
  output %s, %r
})");
  ir::Graph out = g;
  ASSERT_TRUE(fold_transposes_into_matmuls(out));
  const ir::Primitive& s = producer(out, "s");
  EXPECT_TRUE(std::get<ir::MatMulAttrs>(s.attrs).trans_b);
  const ir::Primitive& kv = producer(out, out.value(s.inputs[1]).name.c_str());
  EXPECT_EQ(kv.op, ir::PrimOp::View);
  EXPECT_EQ(out.value(kv.inputs[0]).name, "k");
  EXPECT_EQ(out.type(s.inputs[1]).shape, (ir::Dims{4, 32, 16}));
  const ir::Primitive& r = producer(out, "r");
  EXPECT_EQ(out.value(r.inputs[0]).name, "kw");  // its A stays a view of the transpose
  EXPECT_TRUE(std::get<ir::MatMulAttrs>(r.attrs).trans_b);
  expect_same_results(g, out);
  ir::Graph again = out;
  EXPECT_FALSE(fold_transposes_into_matmuls(again));
}

// Other permutations and padded (predicated) layouts are not transposes of the last two dims.
TEST(FoldTransposes, LeavesOtherLayoutsAlone) {
  ir::Graph g = ir::parse_graph(R"(graph @g {
  input %x : f32[2,6,3,6]
  input %u : f32[2,3,6,6]
  input %w : f32[4,4]
  %p : f32[2,3,6,6] = layout(%x) { %x[i0, i2, i1, i3] }
  %y : f32[2,3,6,6] = matmul(%p, %u) {trans_a=false, trans_b=false}
  %wp : f32[4,5] = layout(%w) { %w[i1, i0] if lt(i1, 4) else 0:f32 }
  %v : f32[4,5] = matmul(%w, %wp) {trans_a=false, trans_b=false}
  output %y, %v
})");
  ir::Graph out = g;
  EXPECT_FALSE(fold_transposes_into_matmuls(out));
}

}  // namespace
}  // namespace orchid::rewrite
