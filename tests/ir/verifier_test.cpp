// One test per verifier rule (docs/ir.md, "Rules the verifier checks"): a graph broken in
// exactly one way gives a message that names the node and the rule.
#include "ir/verifier.h"

#include <gtest/gtest.h>

#include <memory>
#include <random>

#include "ir/dot.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "support/error.h"

namespace orchid::ir {
namespace {

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += s + "\n";
  return out;
}

// Some violation starts with `prefix` and contains `rule`.
void expect_violation(const Graph& g, const std::string& prefix, const std::string& rule) {
  std::vector<std::string> errors = verify(g);
  bool found = false;
  for (const std::string& e : errors)
    found |= e.rfind(prefix, 0) == 0 && e.find(rule) != std::string::npos;
  EXPECT_TRUE(found) << "expected '" << prefix << "..." << rule << "' among:\n" << joined(errors);
}

NodeId add(Graph& g, PrimOp op, std::vector<ValueId> inputs, std::vector<Expr> bodies,
           std::vector<TensorType> outs, std::vector<std::string> names,
           ReduceOp reduce = ReduceOp::None, Dims reduce_domain = {}, PrimAttrs attrs = NoAttrs{}) {
  Primitive p;
  p.op = op;
  p.inputs = std::move(inputs);
  p.bodies = std::move(bodies);
  p.domain = outs.empty() ? Dims{} : outs[0].shape;
  p.reduce = reduce;
  p.reduce_domain = std::move(reduce_domain);
  p.attrs = std::move(attrs);
  return g.add_node(std::move(p), outs, names);
}

TensorType f32(Dims d) { return {DType::F32, std::move(d)}; }
Expr ld(int32_t slot, std::vector<Expr> idx, DType t = DType::F32) {
  return load(slot, t, std::move(idx));
}

// A graph whose only node is an elementwise `%y = exp(%x[i0])` over x : f32[3].
Graph one_node() {
  Graph g;
  ValueId x = g.add_input("x", f32({3}));
  add(g, PrimOp::Elementwise, {x}, {unary(ExprOp::Exp, ld(0, {dvar(0)}))}, {f32({3})}, {"y"});
  g.set_outputs({ValueId(1)});
  return g;
}

constexpr const char* kY = "node 0 (%y = elementwise): ";

TEST(Verifier, WellFormedGraphsHaveNoViolations) {
  EXPECT_EQ(verify(one_node()), std::vector<std::string>{});
  EXPECT_EQ(verify(parse_graph_file("examples/attention.oir")), std::vector<std::string>{});
}

TEST(Verifier, MessagesNameNodeOutputOpAndProvenance) {
  Graph g = parse_graph(R"(graph @g {
  input %x : f32[4,5]
  %s : f32[4,1] = reduce max(%x) over [5] { %x[i0, r0] } from "Softmax_1"
  output %s
})");
  g.mutable_node(NodeId(0)).reduce_domain = {};
  expect_violation(
      g, "node 0 (%s = reduce, from \"Softmax_1\"): ", "combiner max without a reduction domain");
}

// ---- Rule 1: topological order, distinct inputs, defined outputs ----

TEST(Verifier, Rule1InputDefinedByLaterNode) {
  Graph g = one_node();
  ValueId y = g.nodes()[0].outputs[0];
  add(g, PrimOp::Elementwise, {y}, {ld(0, {dvar(0)})}, {f32({3})}, {"z"});
  g.mutable_node(NodeId(0)).inputs = {ValueId(2)};
  expect_violation(g, kY, "input %z is defined by node 1, not by an earlier node");
  g.mutable_node(NodeId(0)).inputs = {y};
  expect_violation(g, kY, "input %y is defined by node 0, not by an earlier node");
}

TEST(Verifier, Rule1InputUndefined) {
  Graph g = one_node();
  g.mutable_node(NodeId(0)).inputs = {ValueId(99)};
  expect_violation(g, kY, "input %?99 is not a defined value");
}

TEST(Verifier, Rule1InputsDistinct) {
  Graph g = one_node();
  g.mutable_node(NodeId(0)).inputs = {ValueId(0), ValueId(0)};
  expect_violation(g, kY, "input %x is listed twice");
}

TEST(Verifier, Rule1GraphOutputsDefined) {
  Graph g = one_node();
  g.set_outputs({ValueId(1), ValueId(42)});
  expect_violation(g, "graph output 1 (%?42)", "is not a defined value");
}

TEST(Verifier, Rule1NodeOutputsDefinedByTheNode) {
  Graph g = one_node();
  g.mutable_node(NodeId(0)).outputs = {ValueId(0)};
  expect_violation(
      g, "node 0 (%x = elementwise): ", "output 0 (%x) is not a value defined by this node");
  g.mutable_node(NodeId(0)).outputs = {};
  expect_violation(g, "node 0 (elementwise): ", "a primitive has at least one output");
}

// ---- Rule 2: bodies, outputs, shapes and dtypes per combiner ----

TEST(Verifier, Rule2BodyCountPerCombiner) {
  Graph g;
  ValueId x = g.add_input("x", f32({2, 5}));
  add(g, PrimOp::Reduce, {x}, {ld(0, {dvar(0), rvar(0)}), rvar(0)}, {f32({2}), {DType::I64, {2}}},
      {"v", "i"}, ReduceOp::ArgMax, {5});
  EXPECT_EQ(verify(g), std::vector<std::string>{});
  g.mutable_node(NodeId(0)).bodies.pop_back();
  expect_violation(g, "node 0 (%v = reduce): ", "combiner argmax takes 2 bodies, found 1");
  g.mutable_node(NodeId(0)).bodies.clear();
  g.mutable_node(NodeId(0)).reduce = ReduceOp::Sum;
  expect_violation(g, "node 0 (%v = reduce): ", "combiner sum takes at least 1 body, found 0");
}

TEST(Verifier, Rule2OutputCountPerCombiner) {
  Graph g;
  ValueId x = g.add_input("x", f32({2, 5}));
  add(g, PrimOp::Reduce, {x}, {ld(0, {dvar(0), rvar(0)})}, {f32({2})}, {"m"}, ReduceOp::Welford,
      {5});
  expect_violation(
      g, "node 0 (%m = reduce): ", "combiner welford with 1 bodies has 2 outputs, found 1");
}

TEST(Verifier, Rule2OutputShapeIsTheDomain) {
  Graph g = one_node();
  g.mutable_node(NodeId(0)).domain = {4};
  expect_violation(g, kY, "output %y is f32[3] but the domain is [4]");
}

TEST(Verifier, Rule2OutputDtypeMatchesBody) {
  Graph g;
  ValueId x = g.add_input("x", f32({3}));
  add(g, PrimOp::Elementwise, {x}, {ld(0, {dvar(0)})}, {{DType::I32, {3}}}, {"y"});
  expect_violation(g, kY, "output %y is i32 but body 0 is f32");
}

TEST(Verifier, Rule2ArgMaxIndexIsI64) {
  Graph g;
  ValueId x = g.add_input("x", f32({2, 5}));
  add(g, PrimOp::Reduce, {x}, {ld(0, {dvar(0), rvar(0)}), cast(DType::I32, rvar(0))},
      {f32({2}), {DType::I32, {2}}}, {"v", "i"}, ReduceOp::ArgMax, {5});
  expect_violation(g, "node 0 (%v = reduce): ", "the index body of argmax is i32, not i64");
  expect_violation(g, "node 0 (%v = reduce): ", "output %i is i32 but an index is i64");
}

TEST(Verifier, Rule2WelfordAndMaxSumNeedFloat) {
  Graph g;
  ValueId x = g.add_input("x", {DType::I32, {2, 5}});
  add(g, PrimOp::Reduce, {x}, {ld(0, {dvar(0), rvar(0)}, DType::I32)},
      {{DType::I32, {2}}, {DType::I32, {2}}}, {"m", "s"}, ReduceOp::MaxSum, {5});
  expect_violation(g, "node 0 (%m = reduce): ", "combiner maxsum needs a float body, found i32");
}

// ---- Rule 3: a reduction domain exactly when reducing ----

TEST(Verifier, Rule3CombinerNeedsReductionDomain) {
  Graph g;
  ValueId x = g.add_input("x", f32({2, 5}));
  add(g, PrimOp::Reduce, {x}, {ld(0, {dvar(0), const_i64(0)})}, {f32({2})}, {"s"}, ReduceOp::Sum,
      {});
  expect_violation(g, "node 0 (%s = reduce): ", "combiner sum without a reduction domain");
}

TEST(Verifier, Rule3ReductionDomainNeedsCombiner) {
  Graph g = one_node();
  g.mutable_node(NodeId(0)).reduce_domain = {3};
  expect_violation(g, kY, "a reduction domain [3] without a combiner");
}

// ---- Rule 4: variables in range ----

TEST(Verifier, Rule4DomainVariableInRange) {
  Graph g = one_node();
  g.mutable_node(NodeId(0)).bodies = {ld(0, {dvar(1)})};
  expect_violation(g, kY, "body 0: variable i1 out of range (the domain has rank 1)");
}

TEST(Verifier, Rule4ReductionVariableInRange) {
  Graph g;
  ValueId x = g.add_input("x", f32({2, 5}));
  add(g, PrimOp::Reduce, {x}, {ld(0, {dvar(0), rvar(1)})}, {f32({2})}, {"s"}, ReduceOp::Sum, {5});
  expect_violation(
      g, "node 0 (%s = reduce): ", "variable r1 out of range (the reduction domain has rank 1)");
}

// ---- Rule 5: loads and index expressions ----

TEST(Verifier, Rule5LoadSlotExists) {
  Graph g = one_node();
  g.mutable_node(NodeId(0)).bodies = {ld(3, {dvar(0)})};
  expect_violation(g, kY, "load '$3[i0]' reads slot 3 but the node has 1 inputs");
}

TEST(Verifier, Rule5LoadHasTheInputDtype) {
  Graph g = one_node();
  g.mutable_node(NodeId(0)).bodies = {ld(0, {dvar(0)}, DType::F16)};
  expect_violation(g, kY, "load '$0[i0]' of %x is typed f16 but the input is f32[3]");
}

TEST(Verifier, Rule5OneIndexPerDimension) {
  Graph g = one_node();
  g.mutable_node(NodeId(0)).bodies = {ld(0, {dvar(0), const_i64(0)})};
  expect_violation(g, kY, "load '$0[i0, 0]' of %x has 2 indices for f32[3]");
}

// A layout node `%y : f32[3] = layout(%x, %n, %f) { %x[<index>] }` for index tests.
Graph layout_with_index(Expr index) {
  Graph g;
  ValueId x = g.add_input("x", f32({3}));
  ValueId n = g.add_input("n", {DType::I32, {3}});
  ValueId f = g.add_input("f", f32({3}));
  add(g, PrimOp::Layout, {x, n, f}, {ld(0, {std::move(index)})}, {f32({3})}, {"y"});
  return g;
}
constexpr const char* kLayoutY = "node 0 (%y = layout): ";

TEST(Verifier, Rule5ValidIndexExpressions) {
  Expr gather = cast(DType::I64, ld(1, {dvar(0)}, DType::I32));
  Expr idx = select(binary(ExprOp::Lt, dvar(0), const_i64(2)),
                    binary(ExprOp::Min, mod(dvar(0) * 3 + 1, 3), floordiv(gather, 2)),
                    binary(ExprOp::Max, const_i64(2) * dvar(0) - dvar(0), const_i64(0)));
  EXPECT_EQ(verify(layout_with_index(idx)), std::vector<std::string>{});
}

TEST(Verifier, Rule5MulInIndexNeedsConstantOperand) {
  expect_violation(
      layout_with_index(dvar(0) * dvar(0)), kLayoutY,
      "index 0 'mul(i0, i0)' is not an index expression: mul without a constant operand");
}

TEST(Verifier, Rule5FloorDivAndModByPositiveConstant) {
  expect_violation(layout_with_index(floordiv(dvar(0), 0)), kLayoutY,
                   "floordiv whose right operand is not a positive constant");
  expect_violation(layout_with_index(mod(dvar(0), -2)), kLayoutY,
                   "mod whose right operand is not a positive constant");
  expect_violation(layout_with_index(binary(ExprOp::Mod, const_i64(5), dvar(0))), kLayoutY,
                   "mod whose right operand is not a positive constant");
}

TEST(Verifier, Rule5IndirectLoadsReadIntegerTensors) {
  expect_violation(layout_with_index(cast(DType::I64, ld(2, {dvar(0)}))), kLayoutY,
                   "is not an index expression: a load of a f32 tensor");
}

TEST(Verifier, Rule5OperatorsOutsideIndexExpressions) {
  expect_violation(
      layout_with_index(unary(ExprOp::Neg, dvar(0))), kLayoutY,
      "'neg(i0)' is not an index expression: neg (not allowed in an index expression)");
  expect_violation(layout_with_index(binary(ExprOp::Div, dvar(0), const_i64(2))), kLayoutY,
                   "div (not allowed in an index expression)");
  expect_violation(layout_with_index(binary(ExprOp::Rem, dvar(0), const_i64(2))), kLayoutY,
                   "'rem(i0, 2)' is not an index expression: rem (not allowed in an index expression)");
  expect_violation(layout_with_index(cast(DType::I64, cast(DType::F32, dvar(0)))), kLayoutY,
                   "a cast to f32");
}

TEST(Verifier, Rule5ConstantIndicesInBounds) {
  expect_violation(layout_with_index(const_i64(3)), kLayoutY,
                   "constant index 3 out of bounds of dim 0 (size 3)");
  expect_violation(layout_with_index(const_i64(-1)), kLayoutY,
                   "constant index -1 out of bounds of dim 0 (size 3)");
}

TEST(Verifier, Rule5PredicatesAreIndexExpressions) {
  Graph g = layout_with_index(dvar(0));
  Expr pred = unary(ExprOp::IsNan, ld(2, {dvar(0)}));
  g.mutable_node(NodeId(0)).bodies = {
      load_pred(0, DType::F32, {dvar(0)}, pred, Scalar::of(DType::F32, 0))};
  expect_violation(g, kLayoutY,
                   "predicate 'isnan($2[i0])' is not an index expression: isnan (not allowed");
}

// ---- Typing of the expression table ----

TEST(Verifier, ExpressionsAreWellTyped) {
  Graph g = one_node();
  auto bad = std::make_shared<ExprNode>();
  bad->op = ExprOp::Add;
  bad->dtype = DType::F32;
  bad->args = {ld(0, {dvar(0)}), const_i64(1)};
  g.mutable_node(NodeId(0)).bodies = {Expr(bad)};
  expect_violation(g, kY, "body 0: add of f32 and i64 in 'add($0[i0], 1)'");
  g.mutable_node(NodeId(0)).bodies = {Expr()};
  expect_violation(g, kY, "body 0 is missing");
}

// ---- Rule 6: the operator's rule ----

TEST(Verifier, Rule6ElementwiseIndicesBroadcastNumpyStyle) {
  Graph g;
  ValueId x = g.add_input("x", f32({2, 3}));
  ValueId b = g.add_input("b", f32({3}));
  add(g, PrimOp::Elementwise, {x, b}, {ld(0, {dvar(0), dvar(1)}) + ld(1, {dvar(1)})}, {f32({2, 3})},
      {"y"});
  EXPECT_EQ(verify(g), std::vector<std::string>{});
  g.mutable_node(NodeId(0)).bodies = {ld(0, {dvar(1), dvar(0)})};
  expect_violation(g, kY, "elementwise load '$0[i1, i0]': index 0 must be i0");
  g.mutable_node(NodeId(0)).bodies = {ld(0, {dvar(0), const_i64(0)})};
  expect_violation(g, kY,
                   "elementwise load '$0[i0, 0]': index 1 must be i1 of the same extent, or 0 on a "
                   "dim of size 1");
  g.mutable_node(NodeId(0)).bodies = {ld(1, {dvar(0)})};
  expect_violation(g, kY, "index 0 must be i1");
}

TEST(Verifier, Rule6ElementwiseDoesNotReduce) {
  Graph g = one_node();
  g.mutable_node(NodeId(0)).reduce = ReduceOp::Sum;
  g.mutable_node(NodeId(0)).reduce_domain = {1};
  expect_violation(g, kY, "elementwise cannot reduce (combiner sum)");
}

TEST(Verifier, Rule6ReduceHasACombiner) {
  Graph g = one_node();
  g.mutable_node(NodeId(0)).op = PrimOp::Reduce;
  expect_violation(g, "node 0 (%y = reduce): ", "reduce needs a combiner other than none");
}

TEST(Verifier, Rule6BroadcastIsOneUnpredicatedLoad) {
  Graph g;
  ValueId x = g.add_input("x", f32({3}));
  add(g, PrimOp::Broadcast, {x}, {ld(0, {dvar(1)})}, {f32({2, 3})}, {"y"});
  EXPECT_EQ(verify(g), std::vector<std::string>{});
  const char* prefix = "node 0 (%y = broadcast): ";
  g.mutable_node(NodeId(0)).bodies = {unary(ExprOp::Exp, ld(0, {dvar(1)}))};
  expect_violation(g, prefix,
                   "broadcast body must be a single unpredicated load, found 'exp($0[i1])'");
  g.mutable_node(NodeId(0)).bodies = {ld(0, {dvar(0)})};
  expect_violation(g, prefix,
                   "broadcast index 0 'i0' must be a domain variable of the same extent");
}

TEST(Verifier, Rule6LayoutIsLoadsConstantsAndSelects) {
  Graph g = layout_with_index(dvar(0));
  g.mutable_node(NodeId(0)).bodies = {select(binary(ExprOp::Lt, dvar(0), const_i64(1)),
                                             ld(0, {dvar(0)}),
                                             unary(ExprOp::Exp, ld(2, {dvar(0)})))};
  expect_violation(
      g, kLayoutY,
      "layout bodies are made only of loads, constants and selects, found 'exp($2[i0])'");
}

Graph matmul_graph() {
  return parse_graph(R"(graph @mm {
  input %a : f32[2,4]
  input %b : f32[4,3]
  input %c : f32[4,5]
  %m : f32[2,3] = matmul(%a, %b) {trans_a=false, trans_b=false}
  %v : f32[6] = view(%m)
  output %v
})");
}

TEST(Verifier, Rule6DerivedExpressionEqualsFreshDerivation) {
  Graph g = matmul_graph();
  Primitive& p = g.mutable_node(NodeId(0));
  p.bodies = {ld(1, {rvar(0), dvar(1)}) * ld(0, {dvar(0), rvar(0)})};
  expect_violation(g, "node 0 (%m = matmul): ",
                   "the stored expression differs from a fresh derivation: body 0 "
                   "'mul($1[r0, i1], $0[i0, r0])', derived 'mul($0[i0, r0], $1[r0, i1])'");
  Graph h = matmul_graph();
  h.mutable_node(NodeId(1)).bodies = {ld(0, {floordiv(dvar(0), 3), mod(dvar(0), 2)})};
  expect_violation(h, "node 1 (%v = view): ", "differs from a fresh derivation");
}

TEST(Verifier, Rule6DerivedTypesFit) {
  Graph g = matmul_graph();
  g.mutable_node(NodeId(0)).inputs = {ValueId(0), ValueId(2)};
  expect_violation(g, "node 0 (%m = matmul): ", "matmul gives f32[2,5], declared f32[2,3]");
  Graph h = matmul_graph();
  h.mutable_node(NodeId(1)).inputs = {ValueId(1)};
  expect_violation(h, "node 1 (%v = view): ",
                   "view of f32[4,3] as f32[6] changes the dtype or the element count");
}

TEST(Verifier, Rule6AttributesBelongToTheOperator) {
  Graph g = matmul_graph();
  g.mutable_node(NodeId(0)).attrs = NoAttrs{};
  expect_violation(g, "node 0 (%m = matmul): ", "attributes of another operator than matmul");
}

Graph opaque_graph() {
  return parse_graph(R"(graph @op {
  input %x : f32[2,3]
  %c : f32[2,3] = opaque cumsum(%x) {axis=1, exclusive=0, reverse=0}
  %t, %ti : f32[2,2], i64[2,2] = opaque topk(%x) {axis=1, k=2, largest=1, sorted=1}
  output %c, %t, %ti
})");
}

TEST(Verifier, Rule6OpaqueParameters) {
  Graph g = opaque_graph();
  auto& a = std::get<OpaqueAttrs>(g.mutable_node(NodeId(1)).attrs);
  a.params.erase("k");
  a.params["depth"] = 1;
  expect_violation(g, "node 1 (%t = opaque): ", "topk needs the parameter k");
  expect_violation(g, "node 1 (%t = opaque): ", "topk has no parameter depth");
}

TEST(Verifier, Rule6OpaqueParameterValues) {
  Graph g = opaque_graph();
  std::get<OpaqueAttrs>(g.mutable_node(NodeId(0)).attrs).params["axis"] = 2;
  expect_violation(g, "node 0 (%c = opaque): ", "cumsum axis=2 out of range for f32[2,3]");
  Graph h = opaque_graph();
  std::get<OpaqueAttrs>(h.mutable_node(NodeId(0)).attrs).params["reverse"] = 2;
  auto& topk = std::get<OpaqueAttrs>(h.mutable_node(NodeId(1)).attrs).params;
  topk["k"] = 4;
  topk["sorted"] = -1;
  expect_violation(h, "node 0 (%c = opaque): ", "reverse=2 must be 0 or 1");
  expect_violation(h, "node 1 (%t = opaque): ", "topk k=4 out of range for dim 1 of f32[2,3]");
  expect_violation(h, "node 1 (%t = opaque): ", "sorted=-1 must be 0 or 1");
}

TEST(Verifier, Rule6OpaqueInputsAndOutputs) {
  Graph g = opaque_graph();
  g.mutable_node(NodeId(0)).inputs = {ValueId(0), ValueId(2)};
  expect_violation(g,
                   "node 0 (%c = opaque): ", "cumsum takes 1 input and 1 outputs, found 2 and 1");
  Graph h;
  ValueId x = h.add_input("x", f32({2, 3}));
  OpaqueAttrs topk{OpaqueRoutine::TopK, {{"axis", 1}, {"k", 2}, {"largest", 0}, {"sorted", 1}}};
  add(h, PrimOp::Opaque, {x}, {}, {f32({2, 2}), f32({2, 2})}, {"t", "ti"}, ReduceOp::None, {},
      topk);
  expect_violation(h, "node 0 (%t = opaque): ", "topk output %ti is f32[2,2], should be i64[2,2]");
  OpaqueAttrs cumsum{OpaqueRoutine::CumSum, {{"axis", 0}, {"exclusive", 1}, {"reverse", 0}}};
  add(h, PrimOp::Opaque, {x}, {}, {{DType::F64, {2, 3}}}, {"c"}, ReduceOp::None, {}, cumsum);
  expect_violation(h, "node 1 (%c = opaque): ", "cumsum output %c is f64[2,3], should be f32[2,3]");
}

TEST(Verifier, Rule6OpaqueHasNoBody) {
  Graph g = opaque_graph();
  g.mutable_node(NodeId(0)).bodies = {ld(0, {dvar(0), dvar(1)})};
  expect_violation(g, "node 0 (%c = opaque): ", "an opaque primitive has no body and no reduction");
}

// ---- Rule 7: constants' data ----

TEST(Verifier, Rule7BoolConstantsHoldZeroOrOne) {
  Graph g;
  g.add_constant("c",
                 Tensor(TensorType{DType::Bool, {3}}, {std::byte{1}, std::byte{2}, std::byte{0}}));
  expect_violation(g, "value %c: ", "bool element 1 holds 2, not 0 or 1");
}

// ---- Reporting ----

TEST(Verifier, ReportsEveryViolationAtOnce) {
  Graph g = one_node();
  ValueId y = g.nodes()[0].outputs[0];
  add(g, PrimOp::Elementwise, {y}, {ld(0, {dvar(0)})}, {f32({3})}, {"z"});
  g.mutable_node(NodeId(0)).reduce_domain = {2};
  g.mutable_node(NodeId(1)).inputs = {y, y};
  std::vector<std::string> errors = verify(g);
  ASSERT_EQ(errors.size(), 2u) << joined(errors);
  EXPECT_EQ(errors[0].rfind(kY, 0), 0u);
  EXPECT_EQ(errors[1].rfind("node 1 (%z = elementwise): ", 0), 0u);
}

TEST(Verifier, VerifyOrThrowListsViolationsOnePerLine) {
  Graph g = one_node();
  g.name = "broken";
  g.mutable_node(NodeId(0)).bodies = {ld(0, {dvar(2)})};
  g.mutable_node(NodeId(0)).reduce_domain = {2};
  try {
    verify_or_throw(g, "model.onnx");
    FAIL() << "no error";
  } catch (const UserError& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.rfind("model.onnx: malformed graph @broken:\nnode 0 (%y = elementwise): ", 0), 0u)
        << msg;
    EXPECT_NE(msg.find("\nnode 0 (%y = elementwise): a reduction domain [2] without a combiner"),
              std::string::npos)
        << msg;
  }
  EXPECT_NO_THROW(verify_or_throw(one_node(), "ok"));
}

// ---- Robustness: any corruption is reported, never an exception or a crash ----

// A random expression node, built directly (bypassing the constructors' checks), with
// operands that may be missing.
Expr random_expr(std::mt19937_64& rng, int depth) {
  auto n = std::make_shared<ExprNode>();
  int num_ops = static_cast<int>(ExprOp::Cast) + 1;
  n->op = depth <= 0 ? static_cast<ExprOp>(rng() % 3) : static_cast<ExprOp>(rng() % num_ops);
  n->dtype = static_cast<DType>(rng() % kNumDTypes);
  n->index = static_cast<int32_t>(rng() % 5) - 1;
  n->var_kind = rng() % 2 ? VarKind::Domain : VarKind::Reduce;
  n->predicated = rng() % 4 == 0;
  n->value =
      Scalar::of_int(static_cast<DType>(rng() % kNumDTypes), static_cast<int64_t>(rng() % 7) - 3);
  size_t num_args = depth <= 0 ? 0 : rng() % 4;
  for (size_t i = 0; i < num_args; ++i)
    n->args.push_back(rng() % 10 == 0 ? Expr() : random_expr(rng, depth - 1));
  return Expr(std::move(n));
}

ValueId random_value(std::mt19937_64& rng, const Graph& g) {
  return ValueId(static_cast<int32_t>(rng() % static_cast<uint64_t>(g.num_values() + 2)) - 1);
}

Dims random_dims(std::mt19937_64& rng) {
  Dims d(rng() % 4);
  for (int64_t& x : d) x = static_cast<int64_t>(rng() % 8) - 1;
  return d;
}

void corrupt(std::mt19937_64& rng, Graph& g) {
  Primitive& p =
      g.mutable_node(NodeId(static_cast<int32_t>(rng() % static_cast<uint64_t>(g.num_nodes()))));
  switch (rng() % 9) {
    case 0: p.op = static_cast<PrimOp>(rng() % (static_cast<int>(PrimOp::Opaque) + 1)); break;
    case 1:
      p.reduce = static_cast<ReduceOp>(rng() % (static_cast<int>(ReduceOp::MaxSum) + 1));
      break;
    case 2: p.domain = random_dims(rng); break;
    case 3: p.reduce_domain = random_dims(rng); break;
    case 4: p.inputs[rng() % p.inputs.size()] = random_value(rng, g); break;
    case 5: p.outputs.push_back(random_value(rng, g)); break;
    case 6:
      if (!p.bodies.empty()) p.bodies[rng() % p.bodies.size()] = random_expr(rng, 3);
      break;
    case 7: p.bodies.push_back(random_expr(rng, 2)); break;
    default: {
      PrimAttrs choices[] = {NoAttrs{}, MatMulAttrs{true, false},
                             ConvAttrs{{1}, {2}, {0, 0}, {0}, static_cast<int64_t>(rng() % 3)},
                             OpaqueAttrs{OpaqueRoutine::TopK, {{"axis", 5}, {"k", -1}}}};
      p.attrs = choices[rng() % 4];
      break;
    }
  }
}

TEST(Verifier, CorruptedGraphsAreReportedNeverThrown) {
  Graph base = parse_graph_file("examples/attention.oir");
  Graph extra = opaque_graph();
  std::mt19937_64 rng(7);
  int reported = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    Graph g = iter % 2 ? base : extra;
    for (int k = 0, n = 1 + static_cast<int>(rng() % 3); k < n; ++k) corrupt(rng, g);
    std::vector<std::string> errors;
    EXPECT_NO_THROW(errors = verify(g)) << print_graph(g);
    reported += !errors.empty();
    for (const std::string& e : errors)
      EXPECT_TRUE(e.rfind("node ", 0) == 0 || e.rfind("value ", 0) == 0 ||
                  e.rfind("graph ", 0) == 0)
          << e;
    EXPECT_NO_THROW(print_graph(g));
    EXPECT_NO_THROW(to_dot(g));
  }
  EXPECT_GT(reported, 2500);
}

}  // namespace
}  // namespace orchid::ir
