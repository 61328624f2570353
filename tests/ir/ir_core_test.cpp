// Dtypes, tensors, half conversions, expression construction and derived expressions.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ir/graph.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "support/error.h"
#include "support/half.h"

namespace orchid::ir {
namespace {

TEST(DType, TableRoundTripsNames) {
  for (int d = 0; d < kNumDTypes; ++d) {
    auto t = static_cast<DType>(d);
    EXPECT_EQ(parse_dtype(dtype_name(t)), t);
  }
  EXPECT_FALSE(parse_dtype("f8").has_value());
  EXPECT_EQ(dtype_bytes(DType::BF16), 2);
  EXPECT_TRUE(is_integral(DType::Bool));
  EXPECT_EQ(type_str({DType::I64, {}}), "i64[]");
}

TEST(DType, IntegralLimitsAsInt64) {
  EXPECT_EQ(dtype_lowest(DType::I8), -128);
  EXPECT_EQ(dtype_highest(DType::I8), 127);
  EXPECT_EQ(dtype_lowest(DType::I16), -32768);
  EXPECT_EQ(dtype_highest(DType::I16), 32767);
  EXPECT_EQ(dtype_lowest(DType::I32), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(dtype_highest(DType::I32), std::numeric_limits<int32_t>::max());
  EXPECT_EQ(dtype_lowest(DType::I64), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(dtype_highest(DType::I64), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(dtype_lowest(DType::U8), 0);
  EXPECT_EQ(dtype_highest(DType::U8), 255);
  EXPECT_EQ(dtype_highest(DType::U16), 65535);
  EXPECT_EQ(dtype_highest(DType::U32), std::numeric_limits<uint32_t>::max());
  EXPECT_EQ(dtype_lowest(DType::U64), 0);
  EXPECT_EQ(dtype_highest(DType::U64), -1);  // 2^64 - 1's bit pattern
  EXPECT_EQ(dtype_lowest(DType::Bool), 0);
  EXPECT_EQ(dtype_highest(DType::Bool), 1);
  EXPECT_THROW(dtype_lowest(DType::F32), InternalError);
  EXPECT_THROW(dtype_highest(DType::BF16), InternalError);
}

TEST(Half, F16RoundsToNearestEvenAndKeepsSpecials) {
  EXPECT_EQ(f16_bits_to_f32(f32_to_f16_bits(2049.0f)), 2048.0f);  // tie to even
  EXPECT_EQ(f16_bits_to_f32(f32_to_f16_bits(2051.0f)), 2052.0f);
  EXPECT_EQ(f16_bits_to_f32(f32_to_f16_bits(65520.0f)), std::numeric_limits<float>::infinity());
  EXPECT_EQ(f16_bits_to_f32(f32_to_f16_bits(65519.0f)), 65504.0f);
  EXPECT_TRUE(std::isnan(f16_bits_to_f32(f32_to_f16_bits(std::nanf("")))));
  float tiny = std::ldexp(1.0f, -24);  // smallest subnormal half
  EXPECT_EQ(f16_bits_to_f32(f32_to_f16_bits(tiny)), tiny);
  EXPECT_EQ(f16_bits_to_f32(f32_to_f16_bits(tiny * 0.5f)), 0.0f);   // tie to even (0)
  EXPECT_EQ(f16_bits_to_f32(f32_to_f16_bits(tiny * 1.5f)), 2 * tiny);  // tie to even (2)
  // Every half bit pattern that is not NaN survives the round trip through f32.
  for (uint32_t b = 0; b < 0x10000; ++b) {
    float f = f16_bits_to_f32(static_cast<uint16_t>(b));
    if (!std::isnan(f)) {
      EXPECT_EQ(f32_to_f16_bits(f), b) << b;
    }
  }
}

TEST(Half, BF16RoundsToNearestEven) {
  EXPECT_EQ(bf16_bits_to_f32(f32_to_bf16_bits(1.0f + std::ldexp(1.0f, -8))), 1.0f);
  EXPECT_EQ(bf16_bits_to_f32(f32_to_bf16_bits(1.0f + 3 * std::ldexp(1.0f, -8))),
            1.0f + std::ldexp(1.0f, -6));
}

TEST(Tensor, GetSetWrapsAndRounds) {
  Tensor t(TensorType{DType::I8, {2}});
  t.set_i64(0, 200);
  EXPECT_EQ(t.get_i64(0), -56);
  Tensor u(TensorType{DType::U64, {1}});
  u.set_i64(0, -1);
  EXPECT_EQ(u.get_as_double(0), 18446744073709551615.0);
  Tensor f(TensorType{DType::F32, {1}});
  f.set_f64(0, 0.1);
  EXPECT_EQ(f.get_f64(0), static_cast<double>(0.1f));
  EXPECT_EQ(round_to_dtype(0.1, DType::F64), 0.1);
  EXPECT_EQ(wrap_to_dtype(256 + 7, DType::U8), 7);
  EXPECT_EQ(wrap_to_dtype(-3, DType::Bool), 1);
}

TEST(Expr, ConstructorsCheckDtypes) {
  Expr a = load(0, DType::F32, {dvar(0)});
  Expr b = load(1, DType::F16, {dvar(0)});
  EXPECT_THROW(a + b, InternalError);
  EXPECT_THROW(unary(ExprOp::Exp, const_i64(1)), InternalError);
  EXPECT_THROW(unary(ExprOp::Neg, const_bool(true)), InternalError);
  EXPECT_THROW(binary(ExprOp::And, a, a), InternalError);
  EXPECT_THROW(select(a, a, a), InternalError);
  EXPECT_THROW(load(0, DType::F32, {a}), InternalError);  // float index
  EXPECT_EQ(binary(ExprOp::Lt, a, a).dtype(), DType::Bool);
  EXPECT_EQ(unary(ExprOp::IsNan, a).dtype(), DType::Bool);
  EXPECT_EQ(cast(DType::I32, a).dtype(), DType::I32);
}

TEST(Expr, ComparisonsMapToCmpOpAndBack) {
  for (int i = 0; i <= static_cast<int>(ExprOp::Cast); ++i) {  // Cast is the table's last
    auto op = static_cast<ExprOp>(i);
    std::optional<CmpOp> c = compare_kind(op);
    EXPECT_EQ(c.has_value(), expr_op_category(op) == ExprCategory::Compare) << expr_op_name(op);
    if (c) {
      EXPECT_EQ(compare_expr_op(*c), op);
    }
  }
  EXPECT_EQ(compare_kind(ExprOp::Lt), CmpOp::Lt);
  EXPECT_EQ(compare_kind(ExprOp::Add), std::nullopt);
}

TEST(Expr, UnaryAndBinaryOperatorsMapToTheirOwnEnums) {
  // Each enumerator is the operator of the same name: the X-macro builds both from expr.def.
#define ORCHID_EXPR(e, text, arity, cat, dom)                                                 \
  if (ExprCategory::cat == ExprCategory::Unary) {                                            \
    EXPECT_EQ(static_cast<int>(*unary_kind(ExprOp::e)), unary_place++) << text;              \
  }                                                                                          \
  if (ExprCategory::cat == ExprCategory::Binary) {                                           \
    EXPECT_EQ(static_cast<int>(*binary_kind(ExprOp::e)), binary_place++) << text;            \
  }                                                                                          \
  EXPECT_EQ(unary_kind(ExprOp::e).has_value(), ExprCategory::cat == ExprCategory::Unary) << text; \
  EXPECT_EQ(binary_kind(ExprOp::e).has_value(), ExprCategory::cat == ExprCategory::Binary) << text;
  int unary_place = 0, binary_place = 0;
#include "ir/expr.def"
#undef ORCHID_EXPR
  EXPECT_EQ(unary_kind(ExprOp::Exp), UnaryOp::Exp);
  EXPECT_EQ(unary_kind(ExprOp::Not), UnaryOp::Not);
  EXPECT_EQ(binary_kind(ExprOp::FloorDiv), BinaryOp::FloorDiv);
  EXPECT_EQ(binary_kind(ExprOp::Shr), BinaryOp::Shr);
  EXPECT_EQ(binary_kind(ExprOp::Neg), std::nullopt);
}

TEST(Expr, StructuralEqualityAndHash) {
  Expr x = unary(ExprOp::Exp, load(0, DType::F32, {dvar(0), rvar(1)}));
  Expr y = unary(ExprOp::Exp, load(0, DType::F32, {dvar(0), rvar(1)}));
  Expr z = unary(ExprOp::Exp, load(0, DType::F32, {dvar(0), dvar(1)}));
  EXPECT_TRUE(equal(x, y));
  EXPECT_EQ(structural_hash(x), structural_hash(y));
  EXPECT_FALSE(equal(x, z));
  EXPECT_NE(structural_hash(x), structural_hash(z));
  EXPECT_FALSE(equal(const_f(DType::F32, 0.0), const_f(DType::F32, -0.0)));
}

TEST(Expr, MapPostRewritesBottomUp) {
  Expr e = dvar(0) * 4 + dvar(1);
  Expr swapped = map_post(e, [](const Expr& n) {
    if (n.op() == ExprOp::Var) return dvar(1 - n->index);
    return n;
  });
  EXPECT_TRUE(equal(swapped, dvar(1) * 4 + dvar(0)));
  int vars = 0;
  visit_post(e, [&](const Expr& n) { vars += n.op() == ExprOp::Var; });
  EXPECT_EQ(vars, 2);
}

TEST(Derive, MatMulBroadcastsBatchAndTransposes) {
  Graph g;
  ValueId a = g.add_input("a", {DType::F32, {3, 1, 5, 7}});
  ValueId b = g.add_input("b", {DType::F32, {4, 9, 7}});
  MatMulAttrs attrs{false, true};
  TensorType out = matmul_result_type(g.type(a), g.type(b), attrs);
  EXPECT_EQ(type_str(out), "f32[3,4,5,9]");
  Primitive p;
  p.op = PrimOp::MatMul;
  p.inputs = {a, b};
  p.attrs = attrs;
  NodeId n = g.add_node(p, {out}, {"c"});
  const Primitive& mm = g.node(n);
  EXPECT_EQ(mm.reduce, ReduceOp::Sum);
  EXPECT_EQ(mm.reduce_domain, Dims({7}));
  Expr want = load(0, DType::F32, {dvar(0), const_i64(0), dvar(2), rvar(0)}) *
              load(1, DType::F32, {dvar(1), dvar(3), rvar(0)});
  EXPECT_TRUE(equal(mm.bodies[0], want));
}

TEST(Derive, ConvPredicatesOnlyWherePaddingReads) {
  Graph g;
  ValueId x = g.add_input("x", {DType::F32, {1, 4, 9}});
  ValueId w = g.add_input("w", {DType::F32, {6, 2, 3}});
  ConvAttrs attrs{{2}, {1}, {1}, {0}, 2};
  TensorType out = conv_result_type(g.type(x), g.type(w), attrs);
  EXPECT_EQ(type_str(out), "f32[1,6,4]");  // (9 + 1 - 3) / 2 + 1
  Primitive p;
  p.op = PrimOp::Conv;
  p.inputs = {x, w};
  p.attrs = attrs;
  const Primitive& c = g.node(g.add_node(p, {out}, {"y"}));
  EXPECT_EQ(c.reduce_domain, Dims({2, 3}));
  const Expr& lx = c.bodies[0]->args[0];
  ASSERT_EQ(lx.op(), ExprOp::Load);
  EXPECT_TRUE(lx->predicated);  // pad_begin = 1 reads index -1; the end never overruns
  EXPECT_EQ(lx->args.back().op(), ExprOp::Ge);
}

TEST(Derive, ShapeErrorsAreUserErrors) {
  TensorType a{DType::F32, {2, 3}}, b{DType::F32, {4, 5}};
  try {
    matmul_result_type(a, b, {});
    FAIL();
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "matmul inner dimensions differ (3 vs 4): f32[2,3] and f32[4,5]");
  }
  TensorType x{DType::F32, {1, 3, 5, 5}}, w{DType::F32, {8, 2, 3, 3}};
  EXPECT_THROW(conv_result_type(x, w, {{1, 1}, {1, 1}, {0, 0}, {0, 0}, 1}), UserError);
}

TEST(Derive, ViewReadsRowMajor) {
  Graph g;
  ValueId x = g.add_input("x", {DType::F16, {2, 6}});
  Primitive p;
  p.op = PrimOp::View;
  p.inputs = {x};
  const Primitive& v = g.node(g.add_node(p, {{DType::F16, {3, 4}}}, {"v"}));
  ASSERT_EQ(v.bodies.size(), 1u);
  // flat = i0*4 + i1; x[flat / 6, flat % 6]
  Expr flat = dvar(0) * 4 + dvar(1);
  EXPECT_TRUE(equal(v.bodies[0], load(0, DType::F16, {floordiv(flat, 6), mod(flat, 6)})));
}

Expr view_body(const Dims& in, const Dims& out) {
  Graph g;
  ValueId x = g.add_input("x", {DType::F32, in});
  Primitive p;
  p.op = PrimOp::View;
  p.inputs = {x};
  return g.node(g.add_node(p, {{DType::F32, out}}, {"v"})).bodies.at(0);
}

TEST(Derive, ViewThatOnlyAddsOrDropsDimsOfOneReadsTheDomainVariables) {
  // no division: generated code reads such a view as its input, vectorized
  EXPECT_TRUE(equal(view_body({4, 197, 197}, {1, 4, 197, 197}), load(0, DType::F32, {dvar(1), dvar(2), dvar(3)})));
  EXPECT_TRUE(equal(view_body({1, 8, 1, 3}, {8, 3, 1}), load(0, DType::F32, {const_i64(0), dvar(0), const_i64(0), dvar(1)})));
}

TEST(Derive, ViewOffsetsStayWithinGroupsOfDimsThatHoldTheSameElements) {
  // [2,3,4,5] as [6,20]: dims 0-1 are out dim 0, dims 2-3 are out dim 1
  EXPECT_TRUE(equal(view_body({2, 3, 4, 5}, {6, 20}),
                    load(0, DType::F32, {floordiv(dvar(0), 3), mod(dvar(0), 3), floordiv(dvar(1), 5), mod(dvar(1), 5)})));
  // [6,4] as [2,3,4]: a split, then a dim kept
  EXPECT_TRUE(equal(view_body({6, 4}, {2, 3, 4}), load(0, DType::F32, {dvar(0) * 3 + dvar(1), dvar(2)})));
}

TEST(Derive, MatMulMayReadOneValueTwice) {
  Graph g;
  ValueId x = g.add_input("x", {DType::F32, {3, 3}});
  Primitive p;
  p.op = PrimOp::MatMul;
  p.inputs = {x, x};
  p.attrs = MatMulAttrs{};
  g.set_outputs({g.node(g.add_node(p, {{DType::F32, {3, 3}}}, {"sq"})).outputs[0]});
  EXPECT_TRUE(verify(g).empty());
  std::string text = print_graph(g);
  EXPECT_NE(text.find("matmul(%x, %x)"), std::string::npos) << text;
  EXPECT_EQ(print_graph(parse_graph(text)), text);
}

TEST(Graph, NamesAreMadeUnique) {
  Graph g;
  ValueId a = g.add_input("x", {DType::F32, {1}});
  ValueId b = g.add_input("x", {DType::F32, {1}});
  EXPECT_EQ(g.value(a).name, "x");
  EXPECT_EQ(g.value(b).name, "x.1");
  EXPECT_EQ(g.find_value("x.1"), b);
}

}  // namespace
}  // namespace orchid::ir

namespace orchid::ir {
namespace {

// User shapes: the count, or none when a dim is negative or the dims (those other than 0
// too: an empty tensor's strides come from them) or the bytes overflow.
TEST(CheckedNumel, RefusesOverflowEvenWhenEmpty) {
  EXPECT_EQ(checked_numel({2, 3}, DType::F32), 6);
  EXPECT_EQ(checked_numel({}, DType::F32), 1);
  EXPECT_EQ(checked_numel({4, 0, 5}, DType::F32), 0);
  EXPECT_EQ(checked_numel({-1, 2}), std::nullopt);
  EXPECT_EQ(checked_numel({int64_t{1} << 62, 4}), std::nullopt);
  EXPECT_EQ(checked_numel({0, int64_t{1} << 62, 4}), std::nullopt);
  EXPECT_EQ(checked_numel({int64_t{1} << 62}, DType::F32), std::nullopt);  // bytes
}

}  // namespace
}  // namespace orchid::ir
