// The verifier's rule 6 for the scatter routines (scatter_elements, scatter_nd): arity,
// operand dtypes, shapes and parameters, each broken in one way; and their text form.
#include <gtest/gtest.h>

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"

namespace orchid::ir {
namespace {

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += s + "\n";
  return out;
}

// A graph of one opaque scatter over inputs of the given types, with an output of `out`.
Graph scatter_graph(OpaqueRoutine r, std::map<std::string, int64_t> params,
                    const std::vector<TensorType>& ins, const TensorType& out) {
  Graph g;
  Primitive p;
  p.op = PrimOp::Opaque;
  for (size_t k = 0; k < ins.size(); ++k)
    p.inputs.push_back(g.add_input("x" + std::to_string(k), ins[k]));
  p.domain = out.shape;
  p.attrs = OpaqueAttrs{r, std::move(params)};
  NodeId n = g.add_node(std::move(p), {out}, {"y"});
  g.set_outputs(g.node(n).outputs);
  return g;
}

const TensorType kData{DType::F32, {3, 4}};

Graph elements(const TensorType& ind, const TensorType& upd, int64_t axis = 1, int64_t red = 0,
               const TensorType& out = kData) {
  return scatter_graph(OpaqueRoutine::ScatterElements, {{"axis", axis}, {"reduction", red}},
                       {kData, ind, upd}, out);
}

Graph nd(const TensorType& ind, const TensorType& upd) {
  return scatter_graph(OpaqueRoutine::ScatterND, {{"reduction", 1}}, {kData, ind, upd}, kData);
}

void expect_only(const Graph& g, const std::string& rule) {
  std::vector<std::string> errors = verify(g);
  ASSERT_EQ(errors.size(), 1u) << joined(errors);
  EXPECT_EQ(errors[0], "node 0 (%y = opaque): " + rule);
}

TEST(VerifierScatter, WellFormedScattersPassAndRoundTrip) {
  const char* text = R"(graph @s {
  input %x : f32[3,4]
  input %i : i32[2,4]
  input %u : f32[2,4]
  input %j : i64[2,1]
  %y : f32[3,4] = opaque scatter_elements(%x, %i, %u) {axis=0, reduction=1}
  %z : f32[3,4] = opaque scatter_nd(%y, %j, %u) {reduction=2}
  output %z
}
)";
  Graph g = parse_graph(text);
  EXPECT_EQ(joined(verify(g)), "");
  EXPECT_EQ(print_graph(g), text);
  EXPECT_EQ(joined(verify(elements({DType::U8, {3, 2}}, {DType::F32, {3, 2}}))), "");
  EXPECT_EQ(joined(verify(nd({DType::I64, {5, 2}}, {DType::F32, {5}}))), "");
}

TEST(VerifierScatter, ArityIsThreeInputsOneOutput) {
  Graph g = scatter_graph(OpaqueRoutine::ScatterND, {{"reduction", 0}}, {kData}, kData);
  expect_only(g, "scatter_nd takes 3 inputs and 1 outputs, found 1 and 1");
}

TEST(VerifierScatter, OperandDtypes) {
  expect_only(elements({DType::F32, {3, 2}}, {DType::F32, {3, 2}}),
              "scatter_elements indices f32[3,2] are not of an integer dtype");
  expect_only(elements({DType::I64, {3, 2}}, {DType::F16, {3, 2}}),
              "scatter_elements updates f16[3,2] differ in dtype from data f32[3,4]");
  expect_only(elements({DType::I64, {3, 2}}, {DType::F32, {3, 2}}, 1, 3),
              "scatter_elements reduction=3 is not 0 (none), 1 (add) or 2 (mul)");
}

TEST(VerifierScatter, ScatterElementsShapesAndAxis) {
  expect_only(elements({DType::I64, {3, 2}}, {DType::F32, {3, 2}}, 2),
              "scatter_elements axis=2 out of range for f32[3,4]");
  expect_only(elements({DType::I64, {4, 2}}, {DType::F32, {4, 2}}),
              "scatter_elements indices i64[4,2] and updates f32[4,2] do not fit data f32[3,4]");
  expect_only(elements({DType::I64, {3, 2}}, {DType::F32, {3, 3}}),
              "scatter_elements indices i64[3,2] and updates f32[3,3] do not fit data f32[3,4]");
  expect_only(elements({DType::I64, {3, 9}}, {DType::F32, {3, 9}}, 1, 0, {DType::F32, {3, 5}}),
              "scatter_elements output %y is f32[3,5], should be f32[3,4]");
}

TEST(VerifierScatter, ScatterNdShapes) {
  expect_only(nd({DType::I64, {5, 3}}, {DType::F32, {5}}),
              "scatter_nd indices i64[5,3] and updates f32[5] do not fit data f32[3,4]");
  expect_only(nd({DType::I64, {5, 1}}, {DType::F32, {5}}),
              "scatter_nd indices i64[5,1] and updates f32[5] do not fit data f32[3,4]");
  expect_only(nd({DType::I64, {}}, {DType::F32, {}}),
              "scatter_nd indices i64[] and updates f32[] do not fit data f32[3,4]");
}

}  // namespace
}  // namespace orchid::ir
