// The text form round-trips: print -> parse -> print is the identity, and parsing a printed
// graph gives back the same graph (names, types, constant bytes, expressions, attributes).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "support/error.h"

namespace orchid::ir {
namespace {

void expect_same_graph(const Graph& a, const Graph& b) {
  EXPECT_EQ(a.name, b.name);
  ASSERT_EQ(a.num_values(), b.num_values());
  for (int32_t v = 0; v < a.num_values(); ++v) {
    const Value& x = a.values()[static_cast<size_t>(v)];
    const Value& y = b.values()[static_cast<size_t>(v)];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.type, y.type) << x.name;
    EXPECT_EQ(x.origin, y.origin) << x.name;
    if (x.origin == ValueOrigin::Constant) {
      EXPECT_TRUE(a.constant(ValueId(v)) == b.constant(ValueId(v))) << "constant " << x.name;
    }
  }
  ASSERT_EQ(a.num_nodes(), b.num_nodes());
  for (int32_t n = 0; n < a.num_nodes(); ++n) {
    const Primitive& p = a.node(NodeId(n));
    const Primitive& q = b.node(NodeId(n));
    EXPECT_EQ(p.op, q.op);
    EXPECT_EQ(p.inputs, q.inputs);
    EXPECT_EQ(p.outputs, q.outputs);
    EXPECT_EQ(p.domain, q.domain);
    EXPECT_EQ(p.reduce_domain, q.reduce_domain);
    EXPECT_EQ(p.reduce, q.reduce);
    EXPECT_TRUE(p.attrs == q.attrs) << "node " << n;
    EXPECT_EQ(p.name, q.name);
    ASSERT_EQ(p.bodies.size(), q.bodies.size());
    for (size_t k = 0; k < p.bodies.size(); ++k)
      EXPECT_TRUE(equal(p.bodies[k], q.bodies[k]))
          << print_expr(p.bodies[k]) << " vs " << print_expr(q.bodies[k]);
  }
  EXPECT_EQ(a.inputs(), b.inputs());
  EXPECT_EQ(a.outputs(), b.outputs());
}

// print -> parse -> print is the identity and the parsed graph equals g.
void expect_round_trip(const Graph& g) {
  ASSERT_EQ(verify(g), std::vector<std::string>{});
  std::string text = print_graph(g);
  Graph back = parse_graph(text, "round_trip");
  EXPECT_EQ(print_graph(back), text);
  expect_same_graph(g, back);
}

// Text in printed form parses and prints back unchanged.
void expect_text_identity(const std::string& text) {
  Graph g = parse_graph(text, "fixture");
  EXPECT_EQ(print_graph(g), text);
  expect_round_trip(g);
}

TEST(PrinterParser, AttentionExampleRoundTrips) {
  Graph g = parse_graph_file("examples/attention.oir");
  EXPECT_EQ(g.name, "attention");
  EXPECT_EQ(g.num_nodes(), 18);
  std::string text = print_graph(g);
  EXPECT_NE(text.find("  %q : f32[6,16] = matmul(%x, %wq) {trans_a=false, trans_b=false} from "
                      "\"q_proj\"\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("rsqrt(add(%var[i0, 0], 1e-05:f32))"), std::string::npos) << text;
  expect_round_trip(g);
}

TEST(PrinterParser, EveryPrimitiveOperator) {
  expect_text_identity(R"(graph @ops {
  input %x : f32[2,3]
  input %img : f32[1,4,5,5]
  input %w : f32[6,2,3,3]
  input %a : f16[4,2,3]
  input %b : f16[3,5]
  input %x2 : f32[2,3]
  %e : f32[2,3] = elementwise(%x) { add(%x[i0, i1], cast<f32>(i1)) }
  %s : f32[2,1] = reduce sum(%x) over [3] { %x[i0, r0] }
  %bc : f32[4,2,3] = broadcast(%x) { %x[i1, i2] }
  %t : f32[3,2] = layout(%x) { %x[i1, i0] } from "transpose"
  %v : f32[6] = view(%x)
  %mm : f16[4,2,5] = matmul(%a, %b) {trans_a=false, trans_b=false}
  %mt : f32[3,3] = matmul(%x, %x2) {trans_a=true, trans_b=false}
  %c : f32[1,6,3,2] = conv(%img, %w) {strides=[1,2], dilations=[1,1], pads_begin=[0,1], pads_end=[0,0], groups=2}
  %cs : f32[2,3] = opaque cumsum(%x) {axis=1, exclusive=0, reverse=1}
  %tv, %ti : f32[1,3], i64[1,3] = opaque topk(%x) {axis=0, k=1, largest=1, sorted=1}
  output %e, %s, %bc, %t, %v, %mm, %mt, %c, %cs, %tv, %ti
}
)");
}

TEST(PrinterParser, EveryCombiner) {
  expect_text_identity(R"(graph @combiners {
  input %x : f32[4,5]
  input %n : i32[4,5]
  %s, %s2 : f32[4,1], f32[4,1] = reduce sum(%x) over [5] { %x[i0, r0]; mul(%x[i0, r0], %x[i0, r0]) }
  %p : i32[4] = reduce prod(%n) over [5] { %n[i0, r0] }
  %mx : f32[1] = reduce max(%x) over [4,5] { %x[r0, r1] }
  %mn : i32[4,1] = reduce min(%n) over [5] { %n[i0, r0] }
  %am, %ai : f32[4], i64[4] = reduce argmax(%x) over [5] { %x[i0, r0]; r0 }
  %bm, %bi : i32[5], i64[5] = reduce argmin(%n) over [4] { %n[r0, i0]; r0 }
  %mean, %var : f32[4,1], f32[4,1] = reduce welford(%x) over [5] { %x[i0, r0] }
  %m, %z : f32[4,1], f32[4,1] = reduce maxsum(%x) over [5] { %x[i0, r0] }
  %none : f32[4,5] = elementwise(%x) { neg(%x[i0, i1]) }
  output %s, %s2, %p, %mx, %mn, %am, %ai, %bm, %bi, %mean, %var, %m, %z, %none
}
)");
}

// Operand dtype that an operator of this domain accepts, as expr.def names it.
enum class Dom { Any, Numeric, Float, Integral };
constexpr Dom kDom[] = {
#define ORCHID_EXPR(e, text, arity, cat, dom) Dom::dom,
#include "ir/expr.def"
#undef ORCHID_EXPR
};

TEST(PrinterParser, EveryExpressionOperator) {
  Graph g;
  g.name = "exprs";
  ValueId f = g.add_input("f", {DType::F32, {3}});
  ValueId n = g.add_input("n", {DType::I32, {3}});
  ValueId c = g.add_input("c", {DType::Bool, {3}});
  int covered = 0;
  for (size_t i = 0; i < std::size(kDom); ++i) {
    auto op = static_cast<ExprOp>(i);
    ExprCategory cat = expr_op_category(op);
    if (cat == ExprCategory::Leaf || cat == ExprCategory::Load) continue;
    // Float and Any operators read f, Numeric ones n, Integral ones c.
    int32_t slot = kDom[i] == Dom::Integral ? 2 : kDom[i] == Dom::Numeric ? 1 : 0;
    DType t = slot == 0 ? DType::F32 : slot == 1 ? DType::I32 : DType::Bool;
    Expr x = load(slot, t, {dvar(0)});
    std::vector<Expr> args;
    if (cat == ExprCategory::Select) {
      args = {load(2, DType::Bool, {dvar(0)}), x, constant(Scalar::of(t, 1))};
    } else {
      args.assign(static_cast<size_t>(expr_op_arity(op)), x);
    }
    Expr body = make_op(op, DType::U16, args);
    Primitive p;
    p.op = PrimOp::Elementwise;
    p.inputs = {f, n, c};
    p.domain = {3};
    p.bodies = {body};
    g.add_node(p, {{body.dtype(), {3}}}, {"o_" + std::string(expr_op_name(op))});
    ++covered;
  }
  EXPECT_EQ(covered, static_cast<int>(std::size(kDom)) - 3);
  std::vector<ValueId> outs;
  for (const Primitive& p : g.nodes()) outs.push_back(p.outputs[0]);
  g.set_outputs(outs);
  expect_round_trip(g);
  std::string text = print_graph(g);
  EXPECT_NE(text.find("cast<u16>(%f[i0])"), std::string::npos) << text;
  EXPECT_NE(text.find("select(%c[i0], %f[i0], 1:f32)"), std::string::npos) << text;
}

// One constant per dtype holding that dtype's edge values, and a literal of each dtype.
TEST(PrinterParser, EveryDTypeWithEdgeValues) {
  expect_text_identity(R"(graph @dtypes {
  const %f32 : f32[8] = [0, -0, inf, -inf, nan, 1e-45, 3.4028235e+38, 0.1]
  const %f64 : f64[5] = [0.1, -0, 5e-324, 1.7976931348623157e+308, nan]
  const %f16 : f16[5] = [65504, 5.9604645e-08, 0.099975586, -inf, -0]
  const %bf16 : bf16[4] = [3.3895314e+38, 0.100097656, -2, nan]
  const %i8 : i8[3] = [-128, 127, 0]
  const %i16 : i16[2] = [-32768, 32767]
  const %i32 : i32[2] = [-2147483648, 2147483647]
  const %i64 : i64[2] = [-9223372036854775808, 9223372036854775807]
  const %u8 : u8[2] = [0, 255]
  const %u16 : u16[2] = [0, 65535]
  const %u32 : u32[2] = [0, 4294967295]
  const %u64 : u64[2] = [0, 18446744073709551615]
  const %b : bool[3] = [1, 0, 1]
  %lit : f32[] = elementwise() { select(ne(nan:f16, 6.1035156e-05:f16), cast<f32>(add(0.1:f64, -0:f64)), select(lt(-inf:bf16, 2.5:bf16), add(1e-45:f32, 3.4028235e+38:f32), add(cast<f32>(-128:i8), cast<f32>(mul(3, -3))))) }
  %l2 : bool[] = elementwise() { and(eq(18446744073709551615:u64, 0:u64), and(lt(-32768:i16, 7:i16), and(gt(-2147483648:i32, 0:i32), and(ge(-9223372036854775808, 0), and(le(255:u8, 0:u8), or(eq(65535:u16, 1:u16), eq(4294967295:u32, 0:u32))))))) }
  %l3 : bool[] = elementwise() { xor(true, false) }
  output %lit, %l2, %l3, %f32, %f64, %f16, %bf16, %i8, %i16, %i32, %i64, %u8, %u16, %u32, %u64, %b
}
)");
}

TEST(PrinterParser, FloatValuesReadBackBitExact) {
  Graph g;
  g.name = "floats";
  Tensor t32(TensorType{DType::F32, {4}});
  float vals[] = {std::nextafter(1.0f, 2.0f), 1.0f / 3.0f,
                  -std::numeric_limits<float>::denorm_min(), 16777217.0f};
  for (int i = 0; i < 4; ++i) t32.set_f64(i, vals[i]);
  Tensor t64(TensorType{DType::F64, {2}});
  t64.set_f64(0, 1.0 / 3.0);
  t64.set_f64(1, std::nextafter(1.0, 0.0));
  Tensor t16(TensorType{DType::F16, {256}});
  Tensor tb(TensorType{DType::BF16, {256}});
  for (int i = 0; i < 256; ++i) {  // a spread of f16 / bf16 bit patterns, subnormals included
    uint16_t bits = static_cast<uint16_t>(i * 257 + 3);
    std::memcpy(t16.data() + 2 * i, &bits, 2);
    std::memcpy(tb.data() + 2 * i, &bits, 2);
  }
  // NaN payloads differ between patterns; the text form keeps one quiet NaN, so only
  // compare non-NaN patterns bit for bit.
  for (int i = 0; i < 256; ++i) {
    if (std::isnan(t16.get_f64(i))) t16.set_f64(i, 0.5);
    if (std::isnan(tb.get_f64(i))) tb.set_f64(i, 0.5);
  }
  g.add_constant("a", t32);
  g.add_constant("b", t64);
  g.add_constant("c", t16);
  g.add_constant("d", tb);
  g.set_outputs({ValueId(0), ValueId(1), ValueId(2), ValueId(3)});
  expect_round_trip(g);
}

TEST(PrinterParser, PredicatedLoadsAndSlots) {
  // `$k` is accepted for load slot k and prints as the input's name.
  Graph g = parse_graph(R"(graph @pad {
  input %x : f32[4]
  input %idx : i32[2]
  %p : f32[6] = layout(%x) { $0[sub(i0, 1)] if and(ge(i0, 1), lt(i0, 5)) else -0:f32 }
  %g : f32[2] = layout(%x, %idx) { %x[cast<i64>($1[i0])] }
  input %m : i64[6]
  %q : f32[6] = layout(%p, %m) { %p[i0] if ne(%m[i0] if true else 0, 0) else 1:f32 }
  output %p, %g, %q
})");
  std::string text = print_graph(g);
  EXPECT_NE(text.find("{ %x[sub(i0, 1)] if and(ge(i0, 1), lt(i0, 5)) else -0:f32 }"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("%x[cast<i64>(%idx[i0])]"), std::string::npos) << text;
  const Expr& b = g.node(NodeId(0)).bodies[0];
  EXPECT_TRUE(b->predicated);
  EXPECT_TRUE(std::signbit(b->value.f));
  expect_round_trip(g);
}

TEST(PrinterParser, QuotedNamesWithOddCharacters) {
  Graph g;
  g.name = "my graph {1}";
  std::string odd[] = {"a b",     "quote\"in", "back\\slash", "new\nline", "tab\there",
                       "ctl\x01", "π-ünïcode", "per%cent",    "x[0]",      "9",
                       "-.-",     "#hash",     "@at",         "a,b",       "{}"};
  std::vector<ValueId> outs;
  for (const std::string& name : odd) {
    ValueId in = g.add_input(name, {DType::F32, {2}});
    Primitive p;
    p.op = PrimOp::Elementwise;
    p.inputs = {in};
    p.domain = {2};
    p.bodies = {unary(ExprOp::Exp, load(0, DType::F32, {dvar(0)}))};
    p.name = "src " + name;
    g.add_node(p, {{DType::F32, {2}}}, {name + " out"});
    outs.push_back(g.nodes().back().outputs[0]);
  }
  g.set_outputs(outs);
  expect_round_trip(g);
  std::string text = print_graph(g);
  EXPECT_NE(text.find("graph @\"my graph {1}\" {"), std::string::npos) << text;
  EXPECT_NE(text.find("input %\"quote\\\"in\" : f32[2]"), std::string::npos) << text;
  EXPECT_NE(text.find("%\"new\\nline out\""), std::string::npos) << text;
  EXPECT_NE(text.find("%\"ctl\\x01\""), std::string::npos) << text;
  EXPECT_NE(text.find("input %9 : f32[2]"), std::string::npos) << text;
  EXPECT_NE(text.find("input %-.- : f32[2]"), std::string::npos) << text;
  EXPECT_NE(text.find("from \"src back\\\\slash\""), std::string::npos) << text;
  EXPECT_EQ(print_value_name("plain_Name-1.x"), "%plain_Name-1.x");
  EXPECT_EQ(print_value_name(""), "%\"\"");
}

TEST(PrinterParser, ScalarsAndEmptyTensors) {
  expect_text_identity(R"(graph @empty {
  input %s : f64[]
  input %z : f32[0,3]
  const %e : f32[3,0] = []
  const %c : i64[] = splat(-7)
  %y : f64[] = elementwise(%s) { sqrt(%s[]) }
  %r : f32[3] = reduce sum(%z) over [0] { %z[r0, i0] }
  %w : f32[0,3] = elementwise(%z) { %z[i0, i1] }
  output %y, %r, %w, %e, %c
}
)");
}

TEST(PrinterParser, SplatOnlyWhenAllElementsPrintAlike) {
  Graph g = parse_graph(R"(graph @splat {
  const %a : f32[2,2] = [1.5, 1.5, 1.5, 1.5]
  const %b : f32[3] = [0, -0, 0]
  const %c : f32[2] = [nan, nan]
  const %d : i8[1] = [5]
  const %e : f32[2] = splat(2)
  const %f : bool[3] = splat(1)
  output %a, %b, %c, %d, %e, %f
})");
  std::string text = print_graph(g);
  EXPECT_NE(text.find("%a : f32[2,2] = splat(1.5)"), std::string::npos) << text;
  EXPECT_NE(text.find("%b : f32[3] = [0, -0, 0]"), std::string::npos) << text;
  EXPECT_NE(text.find("%c : f32[2] = splat(nan)"), std::string::npos) << text;
  EXPECT_NE(text.find("%d : i8[1] = splat(5)"), std::string::npos) << text;
  EXPECT_NE(text.find("%e : f32[2] = splat(2)"), std::string::npos) << text;
  EXPECT_NE(text.find("%f : bool[3] = splat(1)"), std::string::npos) << text;
  EXPECT_EQ(g.constant(ValueId(4)).get_f64(1), 2.0);
  EXPECT_TRUE(std::signbit(g.constant(ValueId(1)).get_f64(1)));
  expect_round_trip(g);
}

TEST(PrinterParser, NanInfAndNegativeZeroLiterals) {
  Graph g = parse_graph(R"(graph @special {
  input %x : f32[2]
  %y : f32[2] = elementwise(%x) { select(isnan(%x[i0]), nan:f32, select(isinf(%x[i0]), -inf:f32, add(%x[i0], -0:f32))) }
  %z : f64[2] = elementwise(%x) { max(cast<f64>(%x[i0]), inf:f64) }
  output %y, %z
})");
  const Expr& b = g.node(NodeId(0)).bodies[0];
  EXPECT_TRUE(std::isnan(b.arg(1)->value.f));
  EXPECT_EQ(b.arg(2).arg(1)->value.f, -INFINITY);
  EXPECT_TRUE(std::signbit(b.arg(2).arg(2).arg(1)->value.f));
  expect_round_trip(g);
}

TEST(PrinterParser, CommentsAndWhitespaceAreFree) {
  Graph g = parse_graph(
      "# leading comment\ngraph\t@c{input %x:f32[2]# trailing\n"
      "%y:f32[2]=elementwise(%x){exp(%x[i0])}from\"p\" output %y}");
  EXPECT_EQ(print_graph(g),
            "graph @c {\n  input %x : f32[2]\n"
            "  %y : f32[2] = elementwise(%x) { exp(%x[i0]) } from \"p\"\n"
            "  output %y\n}\n");
}

TEST(PrinterParser, GraphWithoutOutputs) {
  expect_text_identity("graph @none {\n  input %x : f32[1]\n  output\n}\n");
}

TEST(PrinterParser, CanonicalModeRenamesAndDropsProvenance) {
  Graph g = parse_graph(R"(graph @canon {
  input %in : f32[2]
  const %k : f32[2] = [1, 2]
  %out : f32[2] = elementwise(%in, %k) { add(%in[i0], %k[i0]) } from "Add_7"
  output %out
})");
  PrintOptions opts;
  opts.canonical = true;
  std::string text = print_graph(g, opts);
  EXPECT_EQ(text,
            "graph @canon {\n  input %0 : f32[2]\n  const %1 : f32[2] = [1, 2]\n"
            "  %2 : f32[2] = elementwise(%0, %1) { add(%0[i0], %1[i0]) }\n"
            "  output %2\n}\n");
  EXPECT_EQ(print_graph(parse_graph(text), opts), text);
}

TEST(PrinterParser, PrintExprShowsSlots) {
  Expr e = load_pred(1, DType::F32, {dvar(0) * 2, rvar(1)},
                     binary(ExprOp::Lt, dvar(0), const_i64(3)), Scalar::of(DType::F32, 0.25));
  EXPECT_EQ(print_expr(e), "$1[mul(i0, 2), r1] if lt(i0, 3) else 0.25:f32");
  EXPECT_EQ(print_expr(cast(DType::Bool, const_i64(-3))), "cast<bool>(-3)");
}

TEST(PrinterParser, ParseGraphFileNamesMissingFile) {
  try {
    parse_graph_file("/nonexistent/dir/x.oir");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/x.oir"), std::string::npos);
  }
}

TEST(PrinterParser, ParseGraphFileErrorsNameThePath) {
  std::string path = ::testing::TempDir() + "bad_graph.oir";
  std::ofstream(path) << "graph @g {\n  input %x : f33[2]\n  output %x\n}\n";
  try {
    parse_graph_file(path);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":2:14: error: expected a dtype"),
              std::string::npos)
        << e.what();
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace orchid::ir
