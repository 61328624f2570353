// Implementation choice (driver/implement.h): views a generated kernel would compute as outputs
// become alias steps after it; views read inside a kernel, or of its inputs, stay.
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

}  // namespace
}  // namespace orchid::driver
