// The search form of a LAX program (superopt/search_form.h): attention as a model exports it
// loses its views, transposed keys and constant scale to the boundary; a μGraph of the form,
// with the boundary attached (transpose, scale, reshape operators), computes the program
// itself — by the interpreter on random inputs — and its text round-trips.
#include "superopt/search_form.h"

#include <gtest/gtest.h>

#include "interp/compare.h"
#include "interp/interp.h"
#include "interp/random_inputs.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "superopt/check_ugraph.h"
#include "superopt/lower.h"
#include "superopt/text.h"
#include "support/error.h"

namespace orchid::superopt {
namespace {

const std::string kDir = "tests/data/superopt/";

ir::Graph attention() { return ir::parse_graph_file(kDir + "attention_model.oir"); }

// The program's outputs and the lowered μGraph's, on seeded random inputs, within f32 rounding.
void expect_computes(const ir::Graph& program, const UGraph& u, uint64_t seed) {
  std::vector<ir::Tensor> in = interp::random_inputs(program, seed);
  std::vector<ir::Tensor> want = interp::run(program, in), got = interp::run(lower(u), in);
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    std::string why;
    EXPECT_LE(interp::relative_l2(got[k], want[k], &why), 1e-6) << "seed " << seed << " " << why;
  }
}

TEST(SearchForm, AttentionLosesItsViewsTransposeAndScale) {
  ir::Graph p = attention();
  SearchForm f = search_form(p);
  ASSERT_TRUE(f.changed);
  EXPECT_EQ(describe(f), "input 1 by reshape scale, input 2 by transpose, output by reshape");
  const ir::Graph& s = f.program;
  ASSERT_EQ(s.inputs().size(), 3u);
  EXPECT_EQ(s.type(s.inputs()[0]).shape, (ir::Dims{1, 2, 4, 8}));
  EXPECT_EQ(s.type(s.inputs()[1]).shape, (ir::Dims{1, 2, 8, 16}));
  EXPECT_EQ(s.type(s.inputs()[2]).shape, (ir::Dims{1, 2, 16, 8}));
  EXPECT_EQ(s.type(s.outputs()[0]).shape, (ir::Dims{1, 2, 4, 8}));
  EXPECT_EQ(f.output_shape, (ir::Dims{1, 8, 1, 8}));
  // What is left: two matmuls reading their operands as they are, exp, sum, division.
  EXPECT_EQ(s.num_nodes(), 5);
  for (const ir::Primitive& n : s.nodes()) {
    EXPECT_NE(n.op, ir::PrimOp::View);
    if (n.op == ir::PrimOp::MatMul) EXPECT_EQ(std::get<ir::MatMulAttrs>(n.attrs), ir::MatMulAttrs{});
  }
  EXPECT_EQ(ir::print_graph(s).find("0.35355338"), std::string::npos) << ir::print_graph(s);
  EXPECT_EQ(f.input_steps[0][1].factor, static_cast<double>(0.35355338f));
}

TEST(SearchForm, AMuGraphOfTheFormComputesTheProgramOnceAttached) {
  ir::Graph p = attention();
  SearchForm f = search_form(p);
  UGraph u = parse_ugraph_file(kDir + "attention_form.ugraph");
  EXPECT_EQ(check_ugraph(f.program, u).outcome, verify::Outcome::Equivalent);
  UGraph whole = attach(f, p, u);
  verify(whole);
  ASSERT_EQ(whole.inputs.size(), 3u);
  EXPECT_EQ(whole.tensor(whole.inputs[0]).name, "q");
  EXPECT_EQ(whole.shape(whole.inputs[1]), (ir::Dims{1, 2, 16, 8}));
  EXPECT_EQ(whole.tensor(whole.outputs[0]).name, "y");
  EXPECT_EQ(whole.shape(whole.outputs[0]), (ir::Dims{1, 8, 1, 8}));
  for (uint64_t seed : {1, 2, 3}) expect_computes(p, whole, seed);
  // The boundary operators print and parse back.
  std::string text = print_ugraph(whole);
  EXPECT_NE(text.find("transpose(%k) perm=[0,1,3,2]"), std::string::npos) << text;
  EXPECT_NE(text.find("by=0.353553385"), std::string::npos) << text;
  EXPECT_EQ(print_ugraph(parse_ugraph(text)), text);
}

TEST(SearchForm, WhatOthersReadStaysInside) {
  // The keys are read twice (by the matmul and by an add): their transpose stays a flag; the
  // scores' scale is read by the sum too, so it stays.
  ir::Graph p = ir::parse_graph(R"(graph @g {
  input %q : f32[2,4]
  input %k : f32[3,4]
  %s : f32[2,3] = matmul(%q, %k) {trans_a=false, trans_b=true}
  %m : f32[2,3] = elementwise(%s) { mul(%s[i0, i1], 0.5:f32) }
  %r : f32[2,1] = reduce sum(%s) over [3] { %s[i0, r0] }
  %kk : f32[3,4] = elementwise(%k) { add(%k[i0, i1], %k[i0, i1]) }
  %t : f32[2,3] = elementwise(%m, %r) { div(%m[i0, i1], %r[i0, 0]) }
  %o : f32[2,4] = matmul(%t, %kk) {trans_a=false, trans_b=false}
  output %o
})");
  SearchForm f = search_form(p);
  EXPECT_FALSE(f.changed) << describe(f);
  EXPECT_EQ(ir::print_graph(f.program), ir::print_graph(p));
}

TEST(SearchForm, ConstantsStayAndProgramsOfTwoOutputsAreTheirOwn) {
  ir::Graph c = ir::parse_graph(R"(graph @c {
  input %x : f32[4,8]
  const %w : f32[8,4] = splat(0.5)
  %t : f32[4,8] = view(%x)
  %y : f32[4,4] = matmul(%t, %w) {trans_a=false, trans_b=false}
  output %y
})");
  SearchForm f = search_form(c);
  EXPECT_TRUE(f.changed);
  EXPECT_EQ(f.program.constants().size(), 1u);
  for (uint64_t seed : {1, 2}) {
    std::vector<ir::Tensor> in = interp::random_inputs(c, seed);
    EXPECT_EQ(interp::compare_tensors(interp::run(f.program, in)[0], interp::run(c, in)[0], 0, 0), "");
  }
  ir::Graph two = ir::parse_graph(R"(graph @two {
  input %x : f32[4,8]
  %t : f32[8,4] = view(%x)
  %y : f32[4,4] = matmul(%x, %t) {trans_a=false, trans_b=false}
  output %y, %t
})");
  SearchForm g = search_form(two);
  EXPECT_FALSE(g.changed);
  EXPECT_EQ(ir::print_graph(g.program), ir::print_graph(two));
}

TEST(SearchForm, BoundaryOperatorsAreCheckedAndNeverInBlocks) {
  UOp t;
  t.type = UOpType::Transpose;
  t.shape = {0, 0};
  EXPECT_NE(infer_shapes(t, {{2, 3}}, nullptr).error, "");
  t.shape = {1, 0};
  EXPECT_EQ(infer_shapes(t, {{2, 3}}, nullptr).out[0], (ir::Dims{3, 2}));
  EXPECT_FALSE(uop_allowed(UOpType::Transpose, Level::Block));
  EXPECT_FALSE(uop_allowed(UOpType::Scale, Level::Block));
  EXPECT_THROW(parse_ugraph("ugraph @g {\n input %x : f32[2]\n %y : f32[2] = scale(%x) by=nan\n output %y\n}\n"),
               UserError);
  // A transpose only blocks read is a strided view; one that is also an output is written.
  std::string text = R"(ugraph @t {
  input %X : f32[4,6]
  %Y : f32[6,4] = transpose(%X) perm=[1,0]
  block(%Y) grid=[2] loop=1 {
    %y : f32[3,4] = in_iter(%Y) imap=[0] fmap=rep
    %e : f32[3,4] = exp(%y)
    %O : f32[6,4] = out_accum(%e) omap=[0] fmap=rep
  }
  output %O
}
)";
  UGraph u = parse_ugraph(text);
  std::map<TensorId, std::vector<int64_t>> views = strided_views(u);
  ASSERT_EQ(views.size(), 1u);
  EXPECT_EQ(views.begin()->second, (std::vector<int64_t>{1, 6}));
  u.outputs.push_back(*u.find("Y"));
  EXPECT_TRUE(strided_views(u).empty());
}

}  // namespace
}  // namespace orchid::superopt
