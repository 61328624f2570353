// Small copies of LAX programs (superopt/shrink.h): each dim class divided by one power of two,
// ratios within a class and index expressions kept.
#include "superopt/shrink.h"

#include <gtest/gtest.h>

#include "ir/parser.h"
#include "ir/printer.h"

namespace orchid::superopt {
namespace {

const std::string kDir = "tests/data/superopt/";

ir::Dims shape_of(const ir::Graph& g, const char* name) { return g.type(*g.find_value(name)).shape; }

TEST(Shrink, GqaKeepsItsHeadRatioAndDividesTheRest) {
  std::string why;
  std::optional<ir::Graph> s = shrink(ir::parse_graph_file(kDir + "gqa8.oir"), &why);
  ASSERT_TRUE(s) << why;
  // 8 query heads over 2 kv heads stay (the class's smallest is 2); head dim 64 and 128 tokens
  // become 8.
  EXPECT_EQ(shape_of(*s, "Q"), (ir::Dims{8, 1, 8}));
  EXPECT_EQ(shape_of(*s, "K"), (ir::Dims{2, 8, 8}));
  EXPECT_EQ(shape_of(*s, "V"), (ir::Dims{2, 8, 8}));
  EXPECT_EQ(shape_of(*s, "D"), (ir::Dims{8, 1, 1}));
  std::string text = ir::print_graph(*s);
  EXPECT_NE(text.find("%K[floordiv(i0, 4), r0, i2]"), std::string::npos) << text;
  EXPECT_NE(text.find("over [8]"), std::string::npos) << text;
}

TEST(Shrink, LoraAndSmallProgramsAlike) {
  std::string why;
  std::optional<ir::Graph> s = shrink(ir::parse_graph_file(kDir + "lora64.oir"), &why);
  ASSERT_TRUE(s) << why;
  for (const char* v : {"W", "X", "A", "B", "O"}) EXPECT_EQ(shape_of(*s, v), (ir::Dims{8, 8})) << v;
  // Shrinking again changes nothing.
  std::optional<ir::Graph> again = shrink(*s, &why);
  ASSERT_TRUE(again) << why;
  EXPECT_EQ(ir::print_graph(*again), ir::print_graph(*s));
}

// Query heads viewed as kv heads times group (as attention's ONNX form writes them): the dims
// the view splits stay whole, the others shrink.
TEST(Shrink, DimsAViewSplitsStayWhole) {
  ir::Graph g = ir::parse_graph(R"(graph @v {
  input %q : f32[32,128]
  input %k : f32[4,128,64]
  %r : f32[4,8,128] = view(%q)
  %s : f32[4,8,64] = matmul(%r, %k) {trans_a=false, trans_b=false}
  output %s
})");
  std::string why;
  std::optional<ir::Graph> s = shrink(g, &why);
  ASSERT_TRUE(s) << why;
  EXPECT_EQ(shape_of(*s, "q"), (ir::Dims{32, 8}));
  EXPECT_EQ(shape_of(*s, "r"), (ir::Dims{4, 8, 8}));
  EXPECT_EQ(shape_of(*s, "k"), (ir::Dims{4, 8, 8}));
  EXPECT_EQ(shape_of(*s, "s"), (ir::Dims{4, 8, 8}));
}

TEST(Shrink, ProgramsWithConstantsAreNotShrunk) {
  ir::Graph g = ir::parse_graph(R"(graph @c {
  input %x : f32[64,64]
  const %w : f32[64] = splat(0.5)
  %y : f32[64,64] = elementwise(%x, %w) { mul(%x[i0, i1], %w[i1]) }
  output %y
})");
  std::string why;
  EXPECT_FALSE(shrink(g, &why));
  EXPECT_EQ(why, "the program has constants");
}

}  // namespace
}  // namespace orchid::superopt
