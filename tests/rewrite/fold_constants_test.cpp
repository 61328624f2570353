// Constant folding: primitives of weights become constants (views, transposes, casts), never
// a broadcast; the folded graph computes what the original does.
#include <gtest/gtest.h>

#include "interp/compare.h"
#include "interp/interp.h"
#include "interp/random_inputs.h"
#include "ir/parser.h"
#include "rewrite/fold_constants.h"

namespace orchid::rewrite {
namespace {

constexpr const char* kGraph = R"(
graph @g {
  input %x : f32[4,6]
  const %w : f32[6,4] = splat(0.5)
  const %b : f32[4] = [1, 2, 3, 4]
  %wt : f32[4,6] = layout(%w) { %w[i1, i0] }
  %bv : f32[1,4] = view(%b)
  %bb : f32[8,4] = broadcast(%bv) { %bv[0, i1] }
  %h : f32[4,4] = matmul(%x, %wt) {trans_a=false, trans_b=true}
  %y : f32[4,4] = elementwise(%h, %bv) { add(%h[i0, i1], %bv[0, i1]) }
  %z : f32[8,4] = elementwise(%bb) { mul(%bb[i0, i1], 2:f32) }
  output %y, %z
}
)";

TEST(FoldConstants, FoldsViewsAndLayoutsOfWeightsButNotBroadcasts) {
  ir::Graph g = ir::parse_graph(kGraph);
  ir::Graph folded = g;
  EXPECT_TRUE(fold_constants(folded));
  // %wt and %bv are constants now; the broadcast (and what reads only it) stays.
  EXPECT_EQ(folded.value(*folded.find_value("wt")).origin, ir::ValueOrigin::Constant);
  EXPECT_EQ(folded.value(*folded.find_value("bv")).origin, ir::ValueOrigin::Constant);
  EXPECT_EQ(folded.value(*folded.find_value("bb")).origin, ir::ValueOrigin::Node);
  EXPECT_EQ(folded.value(*folded.find_value("z")).origin, ir::ValueOrigin::Node);
  EXPECT_EQ(folded.num_nodes(), g.num_nodes() - 2);
  auto in = interp::random_inputs(g, 3);
  auto want = interp::run(g, in), got = interp::run(folded, in);
  for (size_t k = 0; k < want.size(); ++k) EXPECT_EQ(interp::compare_tensors(got[k], want[k], 1e-6, 1e-6), "");
  ir::Graph again = folded;
  EXPECT_FALSE(fold_constants(again));  // a fixed point
}

TEST(FoldConstants, LeavesGraphsWithoutConstantPrimitivesAlone) {
  ir::Graph g = ir::parse_graph(R"(
graph @g {
  input %x : f32[3]
  %y : f32[3] = elementwise(%x) { exp(%x[i0]) }
  output %y
}
)");
  EXPECT_FALSE(fold_constants(g));
}

}  // namespace
}  // namespace orchid::rewrite
