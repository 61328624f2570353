// Folding per-channel affine maps into convolutions (rewrite/fold_conv_affine.h): ONNX
// Conv + BatchNormalization (+ Relu) models through the frontend and fission, folded, must
// lose nodes and compute what the unfolded graph computes (interpreter, seeded random inputs,
// rtol 1e-5); graphs that do not qualify are left alone; text-IR cases pin the rules.
#include <gtest/gtest.h>

#include <sstream>

#include "interp/interp.h"
#include "interp/random_inputs.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "rewrite/fold_conv_affine.h"
#include "support/random.h"
#include "testlib/onnx_builder.h"
#include "testlib/tensors.h"

namespace orchid::rewrite {
namespace {

using ir::DType;
using ir::Dims;
using ir::Tensor;
using A = frontend::Attribute;

Tensor uniform(DType t, Dims shape, Rng& rng, double lo, double hi) {
  return testlib::random_tensor({t, std::move(shape)}, rng, lo, hi);
}

struct ConvBnCase {
  DType t = DType::F32;
  int64_t opset = 17;
  int64_t n = 1, c = 2, k = 3, group = 1;
  Dims spatial, kernel;
  bool bias = false, relu = false;
};

ConvBnCase random_case(Rng& rng) {
  ConvBnCase cs;
  cs.t = rng.coin(0.25) ? DType::F64 : DType::F32;
  cs.opset = rng.coin() ? 17 : 9;
  cs.n = rng.range(1, 3);
  cs.group = rng.range(1, 3);
  cs.c = cs.group * rng.range(1, 3);
  cs.k = cs.group * rng.range(1, 4);
  for (int64_t d = 0, s = rng.range(1, 3); d < s; ++d) {
    cs.spatial.push_back(rng.range(3, 7));
    cs.kernel.push_back(rng.range(1, 4));
  }
  cs.bias = rng.coin();
  cs.relu = rng.coin();
  return cs;
}

// Conv(x, w[, b]) -> BatchNormalization -> [Relu], weights and statistics as initializers.
testlib::OnnxModel conv_bn_model(const ConvBnCase& cs, Rng& rng) {
  testlib::OnnxModel m;
  m.opset = cs.opset;
  Dims xs = {cs.n, cs.c};
  xs.insert(xs.end(), cs.spatial.begin(), cs.spatial.end());
  Dims ws = {cs.k, cs.c / cs.group};
  ws.insert(ws.end(), cs.kernel.begin(), cs.kernel.end());
  m.inputs = {{"x", {cs.t, xs}}};
  m.initializers = {{"w", uniform(cs.t, ws, rng, -1, 1)},     {"scale", uniform(cs.t, {cs.k}, rng, -2, 2)},
                    {"beta", uniform(cs.t, {cs.k}, rng, -1, 1)}, {"mean", uniform(cs.t, {cs.k}, rng, -1, 1)},
                    {"var", uniform(cs.t, {cs.k}, rng, 0.1, 2)}};
  std::vector<std::string> conv_in = {"x", "w"};
  if (cs.bias) {
    m.initializers.push_back({"b", uniform(cs.t, {cs.k}, rng, -1, 1)});
    conv_in.push_back("b");
  }
  m.nodes.push_back({"Conv", conv_in, {"c"}, {{"group", A(cs.group)}}, "", "conv"});
  m.nodes.push_back({"BatchNormalization", {"c", "scale", "beta", "mean", "var"}, {"bn"}, {{"epsilon", A(1e-3)}}, "", "bn"});
  if (cs.relu) m.nodes.push_back({"Relu", {"bn"}, {"y"}, {}, "", "relu"});
  m.outputs = {cs.relu ? "y" : "bn"};
  return m;
}

// g folded must verify, keep its output names and compute what g computes.
void expect_same_function(const ir::Graph& g, const ir::Graph& folded, uint64_t seed) {
  EXPECT_EQ(ir::verify(folded), std::vector<std::string>{});
  ASSERT_EQ(g.outputs().size(), folded.outputs().size());
  for (size_t k = 0; k < g.outputs().size(); ++k)
    EXPECT_EQ(g.value(g.outputs()[k]).name, folded.value(folded.outputs()[k]).name);
  std::vector<Tensor> ins = interp::random_inputs(g, seed);
  std::vector<Tensor> want = interp::run(g, ins), got = interp::run(folded, ins);
  for (size_t k = 0; k < want.size(); ++k) EXPECT_EQ(testlib::compare_tensors(got[k], want[k], 1e-5, 1e-5), "");
}

TEST(FoldConvAffine, ConvBatchNormMatchesUnfolded) {
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    Rng rng(seed * 7919);
    ConvBnCase cs = random_case(rng);
    std::ostringstream os;
    os << "seed " << seed << " " << ir::dtype_name(cs.t) << " opset " << cs.opset << " N " << cs.n << " C " << cs.c
       << " K " << cs.k << " group " << cs.group << " spatial " << ir::dims_str(cs.spatial) << " kernel "
       << ir::dims_str(cs.kernel) << " bias " << cs.bias << " relu " << cs.relu;
    SCOPED_TRACE(os.str());
    ir::Graph g = testlib::import_model(conv_bn_model(cs, rng));
    ir::Graph folded = g;
    ASSERT_TRUE(fold_conv_affine(folded)) << ir::print_graph(g);
    // conv, [view of B, bias add], 4 views of the statistics, gain, BN, [relu] -> conv, add,
    // [relu]: the views and the gain only fed the folded nodes.
    EXPECT_EQ(g.num_nodes(), 7 + (cs.bias ? 2 : 0) + (cs.relu ? 1 : 0));
    EXPECT_EQ(folded.num_nodes(), 2 + (cs.relu ? 1 : 0));
    expect_same_function(g, folded, seed);
    ir::Graph again = folded;
    EXPECT_FALSE(fold_conv_affine(again)) << ir::print_graph(folded);
  }
}

TEST(FoldConvAffine, FoldedGraphInText) {
  ir::Graph g = ir::parse_graph(R"(graph @g {
    input %x : f32[1,1,3]
    const %w : f32[2,1,1] = [1, 2]
    const %b : f32[2,1] = [0.5, -1]
    const %s : f32[2,1] = [3, 0.25]
    %c : f32[1,2,3] = conv(%x, %w) {strides=[1], dilations=[1], pads_begin=[0], pads_end=[0], groups=1} from "conv"
    %cb : f32[1,2,3] = elementwise(%c, %b) { add(%c[i0, i1, i2], %b[i1, 0]) } from "conv"
    %y : f32[1,2,3] = elementwise(%cb, %s) { mul(%cb[i0, i1, i2], %s[i1, 0]) } from "scale"
    output %y
  })");
  ASSERT_TRUE(fold_conv_affine(g));
  EXPECT_EQ(ir::print_graph(g), R"(graph @g {
  input %x : f32[1,1,3]
  const %"w/folded" : f32[2,1,1] = [3, 0.5]
  %c : f32[1,2,3] = conv(%x, %"w/folded") {strides=[1], dilations=[1], pads_begin=[0], pads_end=[0], groups=1} from "conv"
  const %"c/bias" : f32[2,1] = [1.5, -0.25]
  %y : f32[1,2,3] = elementwise(%c, %"c/bias") { add(%c[i0, i1, i2], %"c/bias"[i1, 0]) } from "conv"
  output %y
}
)");
}

// A pure per-channel scale folds into the weights and leaves no add.
TEST(FoldConvAffine, ScaleAloneLeavesNoAdd) {
  ir::Graph g = ir::parse_graph(R"(graph @g {
    input %x : f64[2,3,5,5]
    const %w : f64[4,3,3,3] = splat(0.25)
    const %s : f64[4,1,1] = [1, -2, 0.5, 3]
    %c : f64[2,4,3,3] = conv(%x, %w) {strides=[1,1], dilations=[1,1], pads_begin=[0,0], pads_end=[0,0], groups=1}
    %y : f64[2,4,3,3] = elementwise(%c, %s) { mul(%s[i1, 0, 0], %c[i0, i1, i2, i3]) }
    output %y
  })");
  ir::Graph folded = g;
  ASSERT_TRUE(fold_conv_affine(folded));
  ASSERT_EQ(folded.num_nodes(), 1);
  EXPECT_EQ(folded.value(folded.node(ir::NodeId(0)).outputs[0]).name, "y");
  expect_same_function(g, folded, 3);
}

// The last link's output may have several readers; casts between float types and arithmetic
// on constants alone are allowed in a link.
TEST(FoldConvAffine, LastLinkMayBeSharedAndBodiesMayCast) {
  ir::Graph g = ir::parse_graph(R"(graph @g {
    input %x : f32[1,2,4]
    const %w : f32[3,2,2] = splat(0.5)
    const %v : f32[3,1] = [1, 4, 9]
    const %m : f32[1,3,1] = [0.5, 1, -1]
    %c : f32[1,3,3] = conv(%x, %w) {strides=[1], dilations=[1], pads_begin=[0], pads_end=[0], groups=1}
    %n : f32[1,3,3] = elementwise(%c, %v, %m) { cast<f32>(div(sub(cast<f64>(%c[i0, i1, i2]), cast<f64>(%m[0, i1, 0])), sqrt(cast<f64>(add(%v[i1, 0], 0.001:f32))))) }
    %a : f32[1,3,3] = elementwise(%n) { exp(%n[i0, i1, i2]) }
    %b : f32[1,3,3] = elementwise(%n) { neg(%n[i0, i1, i2]) }
    output %a, %b
  })");
  ir::Graph folded = g;
  ASSERT_TRUE(fold_conv_affine(folded));
  EXPECT_EQ(folded.num_nodes(), 4);
  EXPECT_TRUE(folded.find_value("n"));
  expect_same_function(g, folded, 5);
}

// Each case is left exactly as it was.
void expect_untouched(const ir::Graph& g) {
  ir::Graph copy = g;
  EXPECT_FALSE(fold_conv_affine(copy));
  EXPECT_EQ(ir::print_graph(copy), ir::print_graph(g));
}

std::string conv_then(const std::string& consts, const std::string& rest, const std::string& outputs = "%y") {
  return R"(graph @g {
    input %x : f32[1,2,4]
    input %p : f32[3,1]
    const %w : f32[3,2,2] = splat(0.5)
    const %s : f32[3,1] = [1, 2, 3]
    const %e : f32[3,3] = splat(2)
)" + consts + R"(
    %c : f32[1,3,3] = conv(%x, %w) {strides=[1], dilations=[1], pads_begin=[0], pads_end=[0], groups=1}
)" + rest + "\n    output " + outputs + "\n  }";
}

TEST(FoldConvAffine, LeavesNonAffineAndNonPerChannelAlone) {
  const char* cases[] = {
      // not affine: relu, a square, a clamp (piecewise), a select on y
      "%y : f32[1,3,3] = elementwise(%c) { max(%c[i0, i1, i2], 0:f32) }",
      "%y : f32[1,3,3] = elementwise(%c) { mul(%c[i0, i1, i2], %c[i0, i1, i2]) }",
      "%y : f32[1,3,3] = elementwise(%c) { max(%c[i0, i1, i2], -1000:f32) }",
      "%y : f32[1,3,3] = elementwise(%c, %s) { select(gt(%s[i1, 0], 2:f32), %c[i0, i1, i2], %s[i1, 0]) }",
      // division by y; a scale per element, not per channel; a scale that is not a constant
      "%y : f32[1,3,3] = elementwise(%c, %s) { div(%s[i1, 0], %c[i0, i1, i2]) }",
      "%y : f32[1,3,3] = elementwise(%c, %e) { mul(%c[i0, i1, i2], %e[i1, i2]) }",
      "%y : f32[1,3,3] = elementwise(%c, %p) { mul(%c[i0, i1, i2], %p[i1, 0]) }",
      "%y : f32[1,3,3] = elementwise(%c, %s) { mul(%c[i0, i1, i2], cast<f32>(i2)) }",
      // already a bias add (the result of a fold)
      "%y : f32[1,3,3] = elementwise(%c, %s) { add(%c[i0, i1, i2], %s[i1, 0]) }",
  };
  for (const char* c : cases) {
    SCOPED_TRACE(c);
    expect_untouched(ir::parse_graph(conv_then("", c)));
  }
  // The conv output read twice, or listed as a graph output.
  expect_untouched(ir::parse_graph(conv_then("", R"(%y : f32[1,3,3] = elementwise(%c, %s) { mul(%c[i0, i1, i2], %s[i1, 0]) }
    %z : f32[1,3,3] = elementwise(%c, %y) { add(%c[i0, i1, i2], %y[i0, i1, i2]) })", "%z")));
  expect_untouched(ir::parse_graph(conv_then("", "%y : f32[1,3,3] = elementwise(%c, %s) { mul(%c[i0, i1, i2], %s[i1, 0]) }",
                                             "%y, %c")));
  // Weights that are not a constant.
  expect_untouched(ir::parse_graph(R"(graph @g {
    input %x : f32[1,2,4]
    input %w : f32[3,2,2]
    const %s : f32[3,1] = [1, 2, 3]
    %c : f32[1,3,3] = conv(%x, %w) {strides=[1], dilations=[1], pads_begin=[0], pads_end=[0], groups=1}
    %y : f32[1,3,3] = elementwise(%c, %s) { mul(%c[i0, i1, i2], %s[i1, 0]) }
    output %y
  })"));
}

// ONNX models that do not qualify: the BN input read twice; a per-element scale; a scale
// that is a graph input.
TEST(FoldConvAffine, LeavesNonFoldableModelsAlone) {
  Rng rng(11);
  ConvBnCase cs;
  cs.spatial = {4, 4};
  cs.kernel = {3, 3};
  testlib::OnnxModel shared = conv_bn_model(cs, rng);
  shared.nodes.push_back({"Add", {"bn", "c"}, {"z"}, {}, "", "add"});
  shared.outputs = {"z"};
  expect_untouched(testlib::import_model(shared));

  testlib::OnnxModel per_element = conv_bn_model(cs, rng);
  per_element.nodes.pop_back();
  per_element.initializers.push_back({"e", uniform(DType::F32, {3, 2, 2}, rng, -1, 1)});
  per_element.nodes.push_back({"Mul", {"c", "e"}, {"bn"}, {}, "", "mul"});
  expect_untouched(testlib::import_model(per_element));

  testlib::OnnxModel runtime_scale = conv_bn_model(cs, rng);
  runtime_scale.initializers.erase(runtime_scale.initializers.begin() + 1);  // "scale"
  runtime_scale.inputs.push_back({"scale", {DType::F32, {3}}});
  expect_untouched(testlib::import_model(runtime_scale));
}

// Two convs sharing one weight tensor each get their own folded copy; the original is dropped
// once nothing reads it.
TEST(FoldConvAffine, SharedWeightsFoldPerConv) {
  ir::Graph g = ir::parse_graph(R"(graph @g {
    input %x : f32[1,2,4]
    const %w : f32[3,2,2] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
    const %s : f32[3,1] = [1, 2, 3]
    const %t : f32[3,1] = [-1, 0.5, 4]
    %c : f32[1,3,3] = conv(%x, %w) {strides=[1], dilations=[1], pads_begin=[0], pads_end=[0], groups=1}
    %y : f32[1,3,3] = elementwise(%c, %s) { mul(%c[i0, i1, i2], %s[i1, 0]) }
    %c2 : f32[1,3,3] = conv(%x, %w) {strides=[1], dilations=[1], pads_begin=[0], pads_end=[0], groups=1}
    %y2 : f32[1,3,3] = elementwise(%c2, %t) { sub(mul(%c2[i0, i1, i2], %t[i1, 0]), %t[i1, 0]) }
    output %y, %y2
  })");
  ir::Graph folded = g;
  ASSERT_TRUE(fold_conv_affine(folded));
  EXPECT_EQ(folded.num_nodes(), 3);
  EXPECT_FALSE(folded.find_value("w"));
  EXPECT_TRUE(folded.find_value("w/folded.1"));
  expect_same_function(g, folded, 9);
}

}  // namespace
}  // namespace orchid::rewrite
