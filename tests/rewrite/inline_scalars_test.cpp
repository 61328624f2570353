// Scalar constants into expressions: loads of one-element constants at constant indices
// become literals of the same value and dtype, their slots are dropped, and the graph computes
// bit for bit what it did; every other load stays.
#include <gtest/gtest.h>

#include "interp/interp.h"
#include "interp/random_inputs.h"
#include "verify/check.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "rewrite/inline_scalars.h"

namespace orchid::rewrite {
namespace {

const ir::Primitive& producer(const ir::Graph& g, const char* value) {
  return g.node(g.value(*g.find_value(value)).node);
}

void expect_same_results(const ir::Graph& before, const ir::Graph& after) {
  for (uint64_t seed : {1, 2, 3}) {
    auto in = interp::random_inputs(before, seed);
    auto want = interp::run(before, in, {interp::Precision::Own});
    auto got = interp::run(after, in, {interp::Precision::Own});
    ASSERT_EQ(want.size(), got.size());
    for (size_t k = 0; k < want.size(); ++k) EXPECT_EQ(got[k], want[k]) << "output " << k << ", seed " << seed;
  }
  // The rewrite is exact, so the finite-field check must find it equivalent too.
  verify::Verdict v = verify::check_equivalence(before, after);
  EXPECT_EQ(v.outcome, verify::Outcome::Equivalent) << verify::describe(v);
}

// g with its scalar constants inlined (which must change it), checked to compute what g did.
ir::Graph inlined(const ir::Graph& g) {
  ir::Graph out = g;
  EXPECT_TRUE(inline_scalar_constants(out));
  expect_same_results(g, out);
  return out;
}

TEST(InlineScalarConstants, ClipBoundsBecomeLiterals) {
  ir::Graph g = ir::parse_graph(R"(graph @g {
  input %x : f32[2,8]
  const %lo : f32[] = [0]
  const %hi : f32[] = [6]
  %y : f32[2,8] = elementwise(%x, %lo, %hi) { min(max(%x[i0, i1], %lo[]), %hi[]) }
  output %y
})");
  ir::Graph out = inlined(g);
  const ir::Primitive& p = producer(out, "y");
  ASSERT_EQ(p.inputs.size(), 1u);
  EXPECT_EQ(out.value(p.inputs[0]).name, "x");
  EXPECT_EQ(ir::print_expr(p.bodies[0]), "min(max($0[i0, i1], 0:f32), 6:f32)");
  ir::Graph again = out;
  EXPECT_FALSE(inline_scalar_constants(again));  // a fixed point
}

// Every dtype keeps its value and dtype; a [1,1] constant read at [0, 0] counts; slots after a
// dropped one are renumbered.
TEST(InlineScalarConstants, KeepsDtypesAndRenumbersSlots) {
  ir::Graph g = ir::parse_graph(R"(graph @g {
  input %x : f16[3,4]
  const %h : f16[1,1] = [0.1]
  const %n : i32[1] = [-7]
  input %v : i32[3,4]
  %y : f16[3,4] = elementwise(%h, %x, %n, %v) { add(mul(%x[i0, i1], %h[0, 0]), cast<f16>(add(%v[i0, i1], %n[0]))) }
  output %y
})");
  ir::Graph out = inlined(g);
  const ir::Primitive& p = producer(out, "y");
  ASSERT_EQ(p.inputs.size(), 2u);
  EXPECT_EQ(out.value(p.inputs[0]).name, "x");
  EXPECT_EQ(out.value(p.inputs[1]).name, "v");
  EXPECT_EQ(ir::print_expr(p.bodies[0]), "add(mul($0[i0, i1], 0.099975586:f16), cast<f16>(add($1[i0, i1], -7:i32)))");
}

// Left alone: a constant of several elements, a graph input of one element, and the loads of
// primitives whose bodies have a fixed form (a layout's predicated or variable-index load, a
// broadcast, a view).
TEST(InlineScalarConstants, LeavesOtherLoadsAlone) {
  ir::Graph g = ir::parse_graph(R"(graph @g {
  input %x : f32[1,4]
  input %s : f32[]
  const %w : f32[4] = [1, 2, 3, 4]
  const %c : f32[1] = [2]
  %y : f32[1,4] = elementwise(%x, %w, %s) { add(mul(%x[i0, i1], %w[i1]), %s[]) }
  %p : f32[1,4] = layout(%c) { %c[0] if lt(i1, 2) else 0:f32 }
  %q : f32[1,4] = layout(%c) { %c[i0] }
  %b : f32[3,4] = broadcast(%c) { %c[0] }
  %c2 : f32[1,1] = view(%c)
  output %y, %p, %q, %b, %c2
})");
  ir::Graph out = g;
  EXPECT_FALSE(inline_scalar_constants(out));
  EXPECT_EQ(ir::print_graph(out), ir::print_graph(g));
}

}  // namespace
}  // namespace orchid::rewrite
