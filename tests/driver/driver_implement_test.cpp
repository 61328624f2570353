// Implementation choice (driver/implement.h): views a generated kernel would compute as outputs
// become alias steps after it; views read inside a kernel, or of its inputs, stay; a product
// with its post-ops goes to oneDNN, a kernel of two products is generated whole.
#include <gtest/gtest.h>

#include "driver/implement.h"
#include "ir/parser.h"

namespace orchid::driver {
namespace {

using ir::NodeId;

const char* kGraph = R"(graph @g {
  input %x : f32[4,6]
  %e : f32[4,6] = elementwise(%x) { exp(%x[i0, i1]) }
  %v : f32[24] = view(%e)
  %w : f32[6,4] = view(%e)
  %y : f32[6,4] = elementwise(%w) { neg(%w[i0, i1]) }
  %xv : f32[24] = view(%x)
  output %v, %y, %xv
})";

ir::ValueId value(const ir::Graph& g, const char* name) { return *g.find_value(name); }

TEST(Implement, TrailingViewsOfGeneratedKernelsBecomeAliases) {
  ir::Graph g = ir::parse_graph(kGraph);
  // exp, the view %v (an output), the view %w (read by neg inside) and neg.
  tile::Kernel k{{NodeId(0), NodeId(1), NodeId(2), NodeId(3)}, {value(g, "v"), value(g, "y")}};
  std::vector<StepChoice> steps = implement(g, {k});
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].kind, StepKind::Generated);
  EXPECT_EQ(steps[0].kernel.nodes, (std::vector<NodeId>{NodeId(0), NodeId(2), NodeId(3)}));
  EXPECT_EQ(steps[0].kernel.outputs, (std::vector<ir::ValueId>{value(g, "y"), value(g, "e")}));
  EXPECT_EQ(steps[1].kind, StepKind::Alias);
  EXPECT_EQ(steps[1].kernel.nodes, std::vector<NodeId>{NodeId(1)});
  EXPECT_EQ(steps[1].kernel.outputs, std::vector<ir::ValueId>{value(g, "v")});
}

TEST(Implement, ViewsOfKernelInputsStayInTheKernel) {
  ir::Graph g = ir::parse_graph(kGraph);
  tile::Kernel k{{NodeId(0), NodeId(4)}, {value(g, "e"), value(g, "xv")}};
  std::vector<StepChoice> steps = implement(g, {k});
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].kernel.nodes, (std::vector<NodeId>{NodeId(0), NodeId(4)}));
}

// Scores, their row maxima and the product with V: one product and its post-op is a oneDNN step
// (the rest generated); with the second product the kernel is one generated step.
TEST(Implement, AKernelOfTwoProductsIsGeneratedWhole) {
  ir::Graph g = ir::parse_graph(R"(graph @g {
  input %q : f32[64,16]
  input %k : f32[32,16]
  input %v : f32[32,16]
  %y : f32[64,32] = matmul(%q, %k) {trans_a=false, trans_b=true}
  %ys : f32[64,32] = elementwise(%y) { mul(%y[i0, i1], 0.25:f32) }
  %mx : f32[64,1] = reduce max(%ys) over [32] { %ys[i0, r0] }
  %e : f32[64,32] = elementwise(%ys, %mx) { exp(sub(%ys[i0, i1], %mx[i0, 0])) }
  %o : f32[64,16] = matmul(%e, %v) {trans_a=false, trans_b=false}
  output %o
})");
  tile::Kernel one{{NodeId(0), NodeId(1), NodeId(2), NodeId(3)}, {value(g, "e")}};
  std::vector<StepChoice> split = implement(g, {one});
  ASSERT_EQ(split.size(), 2u);
  EXPECT_EQ(split[0].kind, StepKind::OneDnn);
  EXPECT_EQ(split[1].kind, StepKind::Generated);
  tile::Kernel two{{NodeId(0), NodeId(1), NodeId(2), NodeId(3), NodeId(4)}, {value(g, "o")}};
  std::vector<StepChoice> whole = implement(g, {two});
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(whole[0].kind, StepKind::Generated);
  EXPECT_EQ(whole[0].kernel.nodes.size(), 5u);
}

}  // namespace
}  // namespace orchid::driver
