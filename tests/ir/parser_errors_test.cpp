// Every user-facing error of the parser: a UserError "FILE:LINE:COL: error: ..." that points
// at the offending token and says what was expected (or what is wrong there).
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

#include "ir/parser.h"
#include "ir/printer.h"
#include "support/error.h"

namespace orchid::ir {
namespace {

// The "LINE:COL" of the first occurrence of `marker` in `text` (after `after`, if given).
std::string location_of(const std::string& text, const std::string& marker,
                        const std::string& after = "") {
  size_t from = after.empty() ? 0 : text.find(after);
  EXPECT_NE(from, std::string::npos) << "no '" << after << "' in the text";
  size_t pos = marker.empty() ? text.size() : text.find(marker, from);
  EXPECT_NE(pos, std::string::npos) << "no '" << marker << "' in the text";
  if (pos == std::string::npos) return "?";
  int line = 1, col = 1;
  for (size_t i = 0; i < pos; ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return std::to_string(line) + ":" + std::to_string(col);
}

std::string parse_error(const std::string& text) {
  try {
    parse_graph(text, "t.oir");
  } catch (const UserError& e) {
    return e.what();
  }
  ADD_FAILURE() << "parsed without error:\n" << text;
  return "";
}

// Parsing fails with "t.oir:L:C: error: <message...>" where L:C is the marker's place.
void expect_error(const std::string& text, const std::string& marker, const std::string& message,
                  const std::string& after = "") {
  std::string want = "t.oir:" + location_of(text, marker, after) + ": error: " + message;
  std::string got = parse_error(text);
  EXPECT_NE(got.find(want), std::string::npos) << "want: " << want << "\ngot:  " << got;
}

// A graph around `items` (one input %x : f32[2,3] before them).
std::string graph_with(const std::string& items) {
  return "graph @g {\n  input %x : f32[2,3]\n" + items + "\n  output %x\n}\n";
}

// ---- Tokens ----

TEST(ParserErrors, UnexpectedCharacter) {
  expect_error(graph_with("  input %y : f32[2] & "), "&", "unexpected character '&'");
  expect_error(graph_with("  input %y : f32[2] \x01"), "\x01", "unexpected byte 0x01");
}

TEST(ParserErrors, NameAfterPercentOrAt) {
  expect_error(graph_with("  input % : f32[2]"), "% :", "expected a name after '%'");
  expect_error("graph @ {", "@", "expected a name after '@'");
}

TEST(ParserErrors, Strings) {
  expect_error(graph_with("  input %\"abc : f32[2]"), "\"abc", "unterminated string");
  expect_error(graph_with("  input %\"a\\qb\" : f32[2]"), "\\q", "unknown escape in a string");
}

TEST(ParserErrors, SlotAndNegativeNumberTokens) {
  expect_error(graph_with("  %y : f32[2,3] = layout(%x) { $[i0, i1] }"), "$",
               "expected a load slot number after '$'");
  expect_error(graph_with("  const %c : f32[1] = [-foo]"), "-foo", "expected a number after '-'");
}

// ---- Graph structure ----

TEST(ParserErrors, GraphHeader) {
  expect_error("grph @g {}", "grph", "expected 'graph', found 'grph'");
  expect_error("graph g {}", "g {", "expected a graph name '@name', found 'g'");
  expect_error("graph @g (", "(", "expected '{', found '('");
  expect_error("", "", "expected 'graph', found end of input");
}

TEST(ParserErrors, Items) {
  expect_error(graph_with("  inputs %y : f32[2]"), "inputs",
               "expected 'input', 'const', a node or 'output', found 'inputs'");
  expect_error("graph @g {\n  input %x : f32[2]\n", "",
               "expected 'input', 'const', a node or 'output', found end of input");
  expect_error(graph_with("  input y : f32[2]"), "y :", "expected a value '%name', found 'y'");
  expect_error(graph_with("  input %y f32[2]"), "f32[2]", "expected ':', found 'f32'", "%y");
}

TEST(ParserErrors, Outputs) {
  expect_error("graph @g {\n  input %x : f32[2]\n  output %x %x\n}", "%x\n}",
               "expected ',' or '}', found value %x");
  expect_error("graph @g {\n  input %x : f32[2]\n  output %x, 3\n}", "3",
               "expected a value '%name', found number 3", "output");
  expect_error("graph @g {\n  input %x : f32[2]\n  output %nope\n}", "%nope",
               "unknown value %nope");
  expect_error("graph @g {\n  output\n} extra", "extra", "expected end of input, found 'extra'");
}

TEST(ParserErrors, Types) {
  expect_error(graph_with("  input %y : f33[2]"), "f33",
               "expected a dtype (f32, f16, bf16, f64, i8..i64, u8..u64, bool), found 'f33'");
  expect_error(graph_with("  input %y : f32"), "output",
               "expected '[' and the dimensions of the type, found 'output'", "%y");
  expect_error(graph_with("  input %y : f32[2,-1]"), "-1", "expected a dimension (>= 0), found -1");
  expect_error(graph_with("  input %y : f32[2 3]"), "3]", "expected ',' or ']', found number 3",
               "%y");
  expect_error(graph_with("  input %y : f32[2,x]"), "x]", "expected a dimension, found 'x'");
  expect_error(graph_with("  input %y : f32[2.5]"), "2.5", "expected an integer, found number 2.5");
  expect_error(graph_with("  input %y : f32[99999999999999999999]"), "999",
               "99999999999999999999 is out of the range of i64");
}

TEST(ParserErrors, Names) {
  expect_error(graph_with("  input %x : f32[2]"), "%x",
               "duplicate value name %x (first defined at 2:9)", "f32[2,3]\n");
  expect_error(
      graph_with("  %y, %y : f32[2,3], f32[2,3] = elementwise(%x) { %x[i0, i1]; %x[i0, i1] }"),
      "%y :", "duplicate value name %y (first defined at 3:3)");
  expect_error(graph_with("  input %\"\" : f32[2]"), "%\"\"", "empty value name");
}

TEST(ParserErrors, TypesTooLarge) {
  expect_error(graph_with("  input %y : f32[4611686018427387904,4]"), "f32[46",
               "f32[4611686018427387904,4] is too large (more than 9223372036854775807 bytes)");
  expect_error(graph_with("  const %c : f32[1024,1024,1024] = splat(0)"), "f32[1024",
               "f32[1024,1024,1024] is too large (more than 1073741824 bytes)");
  // Empty, but its other dims still give strides that must fit (a fuzzing finding).
  expect_error(graph_with("  input %e : f32[0,4611686018427387904,4]"), "f32[0",
               "f32[0,4611686018427387904,4] is too large (more than 9223372036854775807 bytes)");
}

// ---- Constants ----

TEST(ParserErrors, ConstantData) {
  // A short text naming a large constant fails before the constant is allocated.
  expect_error(graph_with("  const %c : f32[3,200004,16,16] = [1]"), "[1]",
               "f32[3,200004,16,16] needs 153603072 elements; the text is too short to hold them");
  expect_error(graph_with("  const %c : f32[3,200004,16,16] = splat(x)"), "x)", "expected a number");
  expect_error(graph_with("  const %c : f32[2] = {1, 2}"), "{",
               "expected 'splat(' or '[' and the elements, found '{'", "%c");
  expect_error(graph_with("  const %c : f32[2] = [1, 2, 3]"), "3]",
               "too many elements for f32[2] (2)", "%c");
  expect_error(graph_with("  const %c : f32[3] = [1, 2]"), "]", "f32[3] needs 3 elements, found 2",
               "[1");
  expect_error(graph_with("  const %c : f32[2] = [1, %x]"), "%x]",
               "expected a number, found value %x");
  expect_error(graph_with("  const %c : f32[2] = splat(true)"), "true",
               "expected a number, found 'true'");
  expect_error(graph_with("  const %c : u8[2] = [1, 256]"), "256", "256 is out of the range of u8");
  expect_error(graph_with("  const %c : u32[1] = [-1]"), "-1", "-1 is out of the range of u32");
  expect_error(graph_with("  const %c : i32[2] = [1, 2.5]"), "2.5",
               "expected an integer for i32, found number 2.5");
  expect_error(graph_with("  const %c : bool[1] = [2]"), "2]",
               "expected 0 or 1 for bool, found number 2");
  expect_error(graph_with("  const %c : f32[1] = [1e39]"), "1e39",
               "1e39 is out of the range of f32");
  expect_error(graph_with("  const %c : f32[1] = [1 2]"), "2]",
               "expected ',' or ']', found number 2");
}

// ---- Nodes ----

TEST(ParserErrors, NodeHeader) {
  expect_error(graph_with("  %y, %z : f32[2,3] = elementwise(%x) { %x[i0, i1] }"), "=",
               "2 values but 1 types");
  expect_error(graph_with("  %y : f32[2,3] elementwise(%x) { %x[i0, i1] }"), "elementwise",
               "expected ',' or '=', found 'elementwise'");
  expect_error(graph_with("  %y : f32[2,3] = relu(%x)"), "relu",
               "expected an operator (elementwise, reduce, broadcast, layout, view, matmul, conv, "
               "opaque), found 'relu'");
  expect_error(
      graph_with("  %y : f32[2,1] = reduce mean(%x) over [3] { %x[i0, r0] }"), "mean",
      "expected a combiner (sum, prod, max, min, argmax, argmin, welford, maxsum), found 'mean'");
  expect_error(graph_with("  %y : f32[2,3] = opaque sort(%x) {axis=1}"), "sort",
               "expected an opaque routine (cumsum, topk, scatter_elements, scatter_nd, det), found "
               "'sort'");
}

TEST(ParserErrors, NodeInputs) {
  expect_error(graph_with("  %y : f32[2,3] = elementwise(%w) { %w[i0, i1] }"), "%w)",
               "unknown value %w");
  expect_error(graph_with("  %y : f32[2,3] = elementwise(%y) { %y[i0, i1] }"), "%y)",
               "unknown value %y");
  expect_error(graph_with("  %y : f32[2,3] = elementwise(%x, %x) { %x[i0, i1] }"), "%x)",
               "input %x is listed twice");
  expect_error(graph_with("  %y : f32[2,3] = elementwise(%x %x) { %x[i0, i1] }"), "%x)",
               "expected ',' or ')', found value %x");
}

TEST(ParserErrors, Attributes) {
  std::string mm = "  input %w : f32[3,4]\n  %y : f32[2,4] = matmul(%x, %w) ";
  expect_error(graph_with(mm), "output",
               "expected '{' and the attributes of matmul, found 'output'", "matmul");
  expect_error(graph_with(mm + "{trans_a=false, trans_c=false}"), "trans_c",
               "matmul has no attribute 'trans_c'");
  expect_error(graph_with(mm + "{trans_a=false, trans_a=false}"), "trans_a=false}",
               "attribute 'trans_a' given twice");
  expect_error(graph_with(mm + "{trans_a=false}"), "}", "matmul needs the attribute 'trans_b'",
               "trans_a");
  expect_error(graph_with(mm + "{trans_a=0, trans_b=false}"), "0,",
               "expected true or false for trans_a, found number 0");
  expect_error(graph_with(mm + "{trans_a=%x, trans_b=false}"), "%x,",
               "expected an integer, true, false or a list of integers, found value %x",
               "trans_a=");
  expect_error(graph_with(mm + "{trans_a false}"), "false}", "expected '=', found 'false'");
  expect_error(graph_with(mm + "{1=false}"), "1=", "expected an attribute name, found number 1");
  expect_error(graph_with("  %y : f32[2,3] = opaque cumsum(%x) {axis=1, exclusive=[0], reverse=0}"),
               "[0]", "expected an integer for exclusive, found '['");
  expect_error(graph_with("  input %w : f32[1,3,1]\n  %y : f32[2,1,1] = conv(%x, %w) {strides=[1], "
                          "dilations=[1], pads_begin=[0], pads_end=[0], groups=true}"),
               "true}", "expected an integer for groups, found 'true'");
}

TEST(ParserErrors, Bodies) {
  expect_error(graph_with("  %y : f32[6] = view(%x) { %x[0, 0] }"), "{ %x",
               "view has no written body (its expression is derived)");
  expect_error(
      graph_with("  %y : f32[2,3] = opaque cumsum(%x) {axis=1, exclusive=0, reverse=0} over [2]"),
      "over", "cumsum has no written body (it is a library routine)");
  expect_error(graph_with("  %y : f32[2,3] = elementwise(%x)"), "output",
               "expected '{' and the body, found 'output'", "elementwise");
  expect_error(graph_with("  %y : f32[2,3] = elementwise(%x) { %x[i0, i1] %x[i0, i1] }"),
               "%x[i0, i1] }", "expected ';' or '}', found value %x", "%x[i0, i1] ");
  expect_error(graph_with("  %y : f32[2,1] = reduce sum(%x) over 3 { %x[i0, r0] }"), "3 {",
               "expected '[', found number 3");
  expect_error(graph_with("  %y : f32[2,3] = elementwise(%x) { %x[i0, i1] } from p"), "p\n",
               "expected a string after 'from', found 'p'");
}

TEST(ParserErrors, DerivedShapes) {
  expect_error(
      graph_with(
          "  input %w : f32[4,4]\n  %y : f32[2,4] = matmul(%x, %w) {trans_a=false, trans_b=false}"),
      "matmul", "matmul inner dimensions differ (3 vs 4): f32[2,3] and f32[4,4]", "%y");
  expect_error(
      graph_with(
          "  input %w : f32[3,4]\n  %y : f32[2,5] = matmul(%x, %w) {trans_a=false, trans_b=false}"),
      "matmul", "matmul of f32[2,3] and f32[3,4] gives f32[2,4], declared f32[2,5]", "%y");
  expect_error(graph_with("  %y : f32[2,3] = matmul(%x) {trans_a=false, trans_b=false}"), "matmul",
               "matmul takes 2 inputs and 1 output, found 1 and 1");
  expect_error(graph_with("  %y : f32[5] = view(%x)"), "view",
               "view of f32[2,3] as f32[5] changes the dtype or the element count");
  expect_error(graph_with("  input %w : f32[1,3,5]\n  %y : f32[2,1,1] = conv(%x, %w) {strides=[1], "
                          "dilations=[1], pads_begin=[0], pads_end=[0], groups=1}"),
               "conv", "conv needs input and weight of one rank >= 3", "%y");
}

// ---- Expressions ----

std::string ew(const std::string& body) {
  return graph_with("  input %n : i32[2,3]\n  %y : f32[2,3] = elementwise(%x, %n) { " + body +
                    " }");
}

TEST(ParserErrors, ExpressionTokens) {
  expect_error(ew("{"), "{ }", "expected an expression, found '{'", "%n) ");
  expect_error(ew("foo(%x[i0, i1])"), "foo",
               "expected an expression, found 'foo' (not an operator)");
  expect_error(ew("exp %x[i0, i1]"), "%x[i0, i1] }",
               "expected '(' and the operands of exp, found value %x", "exp");
  expect_error(ew("add(%x[i0, i1]; %x[i0, i1])"), ";", "expected ',' or ')', found ';'");
  expect_error(ew("i99999999999"), "i999", "variable number out of range: i99999999999");
}

TEST(ParserErrors, Literals) {
  expect_error(ew("add(%x[i0, i1], 0.5)"), "0.5",
               "a non-integer literal needs a dtype, as in 0.5:f32");
  expect_error(ew("add(%x[i0, i1], 1:f31)"), "f31", "expected a dtype after ':', found 'f31'");
  expect_error(ew("add(%x[i0, i1], inf)"), "inf",
               "a non-integer literal needs a dtype, as in inf:f32");
  expect_error(ew("cast<f32>(300:i8)"), "300", "300 is out of the range of i8");
  expect_error(ew("cast<f32>(1.5:i64)"), "1.5", "expected an integer for i64, found number 1.5");
  expect_error(ew("cast<f32>(2:bool)"), "2:bool", "expected 0 or 1 for bool, found number 2");
  expect_error(ew("cast<f32>(99999999999999999999)"), "999",
               "99999999999999999999 is out of the range of i64");
}

TEST(ParserErrors, Loads) {
  expect_error(ew("%z[i0, i1]"), "%z", "%z is not an input of this node");
  expect_error(ew("$2[i0, i1]"), "$2", "load slot $2 does not exist (the node has 2 inputs)");
  expect_error(ew("%x(i0, i1)"), "(i0", "expected '[' and the indices of %x, found '('");
  expect_error(ew("%x[i0]"), "[i0]", "%x is f32[2,3] and takes 2 indices, found 1");
  expect_error(ew("%x[i0, 0.5:f32]"), "0.5", "a load index must be i64, found a f32 expression");
  expect_error(ew("%x[i0, cast<i64>(%n[i0, i1])] if i0 else 0:f32"), "i0 else",
               "a load predicate must be bool, found a i64 expression");
  expect_error(ew("%x[i0, i1] if true 0:f32"), "0:f32", "expected 'else', found number 0");
  expect_error(ew("%x[i0, i1] if true else 0"), "0 }",
               "the fill value of a load of %x must be a f32 literal, found a i64 one");
  expect_error(ew("%x[i0, i1] if true else i0"), "i0 }", "expected a literal, found 'i0'");
}

TEST(ParserErrors, OperatorsAndDtypes) {
  expect_error(ew("add(%x[i0, i1], %x[i0, i1], %x[i0, i1])"), "add",
               "add takes 2 operands, found 3");
  expect_error(ew("exp(%x[i0, i1], %x[i0, i1])"), "exp", "exp takes 1 operand, found 2");
  expect_error(ew("add(%x[i0, i1], %n[i0, i1])"), "add", "add of f32 and i32");
  expect_error(ew("cast<f32>(exp(%n[i0, i1]))"), "exp", "exp is not defined on i32");
  expect_error(ew("cast<f32>(not(%x[i0, i1]))"), "not", "not is not defined on f32");
  expect_error(ew("select(i0, %x[i0, i1], %x[i0, i1])"), "select",
               "select condition is i64, not bool");
  expect_error(ew("select(true, %x[i0, i1], 1)"), "select", "select of f32 and i64");
  expect_error(ew("cast(%x[i0, i1])"), "(%x[i0, i1])",
               "expected '<' and the dtype of the cast, found '('", "cast");
  expect_error(ew("cast<float>(%x[i0, i1])"), "float", "expected a dtype, found 'float'");
  expect_error(ew("cast<f32(%x[i0, i1])"), "(%x[i0, i1])", "expected '>', found '('", "cast");
}

// ---- Verifier violations are reported at their node ----

TEST(ParserErrors, VerifierViolationsPointAtTheNode) {
  std::string text =
      graph_with("  %y : f32[3,2] = elementwise(%x) { %x[i1, i0] } from \"Transpose_3\"");
  expect_error(text, "%y",
               "node 0 (%y = elementwise, from \"Transpose_3\"): body 0: elementwise load "
               "'$0[i1, i0]': index 0 must be i0");
  expect_error(graph_with("  %y : f32[2,1] = reduce sum(%x) { %x[i0, 0] }"), "%y",
               "node 0 (%y = reduce): combiner sum without a reduction domain");
  expect_error(graph_with("  %y : f32[2,3] = opaque cumsum(%x) {axis=2, exclusive=0, reverse=0}"),
               "%y", "node 0 (%y = opaque): cumsum axis=2 out of range for f32[2,3]");
}

// Seeded random edits of valid texts: the parser either succeeds (and the result round-trips)
// or throws a UserError; it never fails an internal check or crashes.
TEST(ParserErrors, MutatedTextsGiveUserErrorsOnly) {
  std::ifstream in("examples/attention.oir");
  std::stringstream buf;
  buf << in.rdbuf();
  std::vector<std::string> seeds = {
      buf.str(),
      graph_with(
          "  input %w : f32[1,3,1]\n  const %c : i8[3] = [1, -2, 3]\n"
          "  %y : f32[2,1,1] = conv(%x, %w) {strides=[1], dilations=[1], pads_begin=[0], "
          "pads_end=[0], groups=1}\n"
          "  %t, %ti : f32[2,1], i64[2,1] = opaque topk(%x) {axis=1, k=1, largest=1, sorted=1}\n"
          "  %g : f32[2,3] = layout(%x, %c) { %x[i0, cast<i64>(%c[i1])] if lt(i1, 2) else nan:f32 "
          "}\n"
          "  %am, %ai : f32[2], i64[2] = reduce argmax(%x) over [3] { %x[i0, r0]; r0 }")};
  const std::string alphabet = "%@$\"{}()[],:=;<>#-.0123456789aefinrx_ \n\\";
  std::mt19937_64 rng(20240611);
  int parsed = 0, rejected = 0;
  for (int iter = 0; iter < 4000; ++iter) {
    std::string text = seeds[static_cast<size_t>(iter) % seeds.size()];
    int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      size_t pos = rng() % (text.size() + 1);
      char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0: text.insert(pos, 1, c); break;
        case 1:
          if (pos < text.size()) text.erase(pos, 1);
          break;
        default:
          if (pos < text.size()) text[pos] = c;
          break;
      }
    }
    try {
      Graph g = parse_graph(text, "fuzz.oir");
      std::string printed = print_graph(g);
      EXPECT_EQ(print_graph(parse_graph(printed)), printed) << "seed text:\n" << text;
      ++parsed;
    } catch (const UserError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("fuzz.oir:", 0), 0u) << e.what();
      ++rejected;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "non-user error " << e.what() << " on:\n" << text;
    }
  }
  EXPECT_GT(parsed, 50);
  EXPECT_GT(rejected, 1000);
}

}  // namespace
TEST(ParserErrors, ExpressionsNestAtMost500Deep) {
  std::string body = "%x[i0]";
  for (int k = 0; k < 600; ++k) body = "neg(" + body + ")";
  std::string text = "graph @g {\n  input %x : f32[2]\n  %y : f32[2] = elementwise(%x) { " + body + " }\n  output %y\n}\n";
  std::string msg = parse_error(text);
  EXPECT_NE(msg.find("expression nested deeper than 500"), std::string::npos) << msg;
}

}  // namespace orchid::ir
