// The canonical signature identifies graphs up to naming (values, graph, provenance) and
// nothing else; the dot output is well-formed whatever the names hold.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "ir/canonical.h"
#include "ir/dot.h"
#include "ir/parser.h"
#include "support/hash.h"

namespace orchid::ir {
namespace {

constexpr const char* kBase = R"(graph @base {
  input %x : f32[2,3]
  const %k : f32[3] = [1, 2, 3]
  %y : f32[2,3] = elementwise(%x, %k) { mul(%x[i0, i1], %k[i1]) } from "Mul_1"
  %y2 : f32[2,3] = elementwise(%y) { neg(%y[i0, i1]) }
  %s : f32[2] = layout(%y) { %y[i0, 2] } from "Slice_2"
  %m : f32[2,2] = matmul(%y, %y2) {trans_a=false, trans_b=true}
  output %s, %m
})";

std::string base_with(const std::string& from, const std::string& to) {
  std::string text = kBase;
  size_t pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  return text.replace(pos, from.size(), to);
}

std::string base() { return kBase; }

Signature sig(const std::string& text) { return canonical_signature(parse_graph(text)); }

TEST(Canonical, TextRenamesValuesDropsNamesAndHashesConstants) {
  Signature s = sig(base());
  std::string bytes(12, '\0');
  float k[] = {1, 2, 3};
  std::memcpy(bytes.data(), k, 12);
  char hash[32];
  std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(fnv1a64(bytes)));
  EXPECT_EQ(s.text, std::string("graph {\n"
                                "  input %0 : f32[2,3]\n"
                                "  const %1 : f32[3] = hash(") +
                        hash +
                        ")\n"
                        "  %2 : f32[2,3] = elementwise(%0, %1) { mul(%0[i0, i1], %1[i1]) }\n"
                        "  %3 : f32[2,3] = elementwise(%2) { neg(%2[i0, i1]) }\n"
                        "  %4 : f32[2] = layout(%2) { %2[i0, 2] }\n"
                        "  %5 : f32[2,2] = matmul(%2, %3) {trans_a=false, trans_b=true}\n"
                        "  output %4, %5\n"
                        "}\n");
  EXPECT_EQ(s.hash, fnv1a64(s.text));
}

TEST(Canonical, RenamingValuesKeepsTheSignature) {
  std::string renamed = base();
  for (auto [from, to] : {std::pair{"%x", "%\"input 0\""},
                          {"%k", "%weights.k"},
                          {"%y2", "%n"},
                          {"%y", "%Y_1"},
                          {"%s", "%out"},
                          {"@base", "@other"},
                          {"\"Mul_1\"", "\"renamed\""}}) {
    for (size_t pos = renamed.find(from); pos != std::string::npos;
         pos = renamed.find(from, pos + 1)) {
      bool whole = !std::isalnum(static_cast<unsigned char>(renamed[pos + std::strlen(from)]));
      if (whole) renamed.replace(pos, std::strlen(from), to);
    }
  }
  ASSERT_NE(renamed, base());
  ASSERT_NE(renamed.find("%Y_1"), std::string::npos) << renamed;
  EXPECT_EQ(sig(renamed), sig(base()));
  // Provenance can also be dropped altogether.
  EXPECT_EQ(sig(base_with(" from \"Slice_2\"", "")), sig(base()));
}

TEST(Canonical, ChangingAConstantByteChangesTheSignature) {
  Graph a = parse_graph(base());
  Graph b = parse_graph(base());
  Tensor k = b.constant(ValueId(1));
  k.data()[0] = static_cast<std::byte>(std::to_integer<int>(k.data()[0]) ^ 1);
  Graph c;  // the same graph with the changed constant, built by hand
  c.add_input("x", a.type(ValueId(0)));
  c.add_constant("k", k);
  for (const Primitive& p : a.nodes()) {
    std::vector<TensorType> types;
    std::vector<std::string> names;
    for (ValueId v : p.outputs) {
      types.push_back(a.type(v));
      names.push_back(a.value(v).name);
    }
    c.add_node(p, types, names);
  }
  c.set_outputs(a.outputs());
  EXPECT_NE(canonical_signature(c).text, canonical_signature(a).text);
  EXPECT_NE(canonical_signature(c).hash, canonical_signature(a).hash);
  // Same check through the text form: a different element.
  EXPECT_NE(sig(base_with("[1, 2, 3]", "[1, 2, 3.0000002]")).hash, sig(base()).hash);
}

TEST(Canonical, ChangingAnIndexChangesTheSignature) {
  Signature s = sig(base());
  EXPECT_NE(sig(base_with("%y[i0, 2]", "%y[i0, 1]")).hash, s.hash);
  EXPECT_NE(sig(base_with("%y[i0, 2]", "%y[i0, 2] if lt(i0, 1) else 0:f32")).hash, s.hash);
}

TEST(Canonical, ChangingStructureChangesTheSignature) {
  Signature s = sig(base());
  EXPECT_NE(sig(base_with("neg(", "abs(")).hash, s.hash);
  EXPECT_NE(sig(base_with("output %s, %m", "output %m, %s")).hash, s.hash);
  EXPECT_NE(sig(base_with("[1, 2, 3]", "splat(1)")).hash, s.hash);
}

// ---- dot ----

// Each line is a statement of the shapes to_dot writes, with balanced, terminated strings.
void expect_well_formed_dot(const std::string& dot) {
  ASSERT_EQ(dot.rfind("digraph \"", 0), 0u) << dot;
  ASSERT_EQ(dot.substr(dot.size() - 2), "}\n") << dot;
  size_t line_start = dot.find('\n') + 1;
  while (line_start < dot.size() - 2) {
    size_t end = dot.find('\n', line_start);
    std::string line = dot.substr(line_start, end - line_start);
    bool in_string = false;
    for (size_t i = 0; i < line.size(); ++i) {
      if (in_string && line[i] == '\\') {
        ++i;
      } else if (line[i] == '"') {
        in_string = !in_string;
      }
    }
    EXPECT_FALSE(in_string) << "unterminated string in: " << line;
    EXPECT_EQ(line.rfind("  ", 0), 0u) << line;
    EXPECT_EQ(line.back(), ';') << line;
    line_start = end + 1;
  }
}

Graph odd_names() {
  return parse_graph(R"(graph @"g \"1\"" {
  input %"x\"}]; -> evil" : f32[2]
  const %"back\\slash\nnew line" : f32[2] = [1, 2]
  %"y<&>" : f32[2] = elementwise(%"x\"}]; -> evil", %"back\\slash\nnew line") { add(%"x\"}]; -> evil"[i0], %"back\\slash\nnew line"[i0]) } from "Add \"q\" \\"
  %s, %i : f32[1], i64[1] = reduce argmax(%"y<&>") over [2] { %"y<&>"[r0]; r0 }
  output %s, %i
})");
}

TEST(Dot, BoxesEllipsesAndTypedEdges) {
  std::string dot = to_dot(parse_graph(base()));
  expect_well_formed_dot(dot);
  EXPECT_NE(dot.find("v0 [shape=ellipse, label=\"input %x\\nf32[2,3]\"];"), std::string::npos)
      << dot;
  EXPECT_NE(dot.find("v1 [shape=ellipse, label=\"const %k\\nf32[3]\"];"), std::string::npos) << dot;
  EXPECT_NE(dot.find("n0 [shape=box, style=filled"), std::string::npos) << dot;
  EXPECT_NE(dot.find("label=\"%m = matmul\\n[linear]\\nf32[2,2]\"];"), std::string::npos) << dot;
  EXPECT_NE(dot.find("label=\"%s = layout\\n[layout]\\nf32[2]\\nfrom Slice_2\"];"),
            std::string::npos)
      << dot;
  EXPECT_NE(dot.find("v0 -> n0 [label=\"f32[2,3]\"];"), std::string::npos) << dot;
  EXPECT_NE(dot.find("n0 -> n3 [label=\"f32[2,3]\"];"), std::string::npos) << dot;
  EXPECT_NE(dot.find("n2 -> out0"), std::string::npos) << dot;
  size_t boxes = 0;
  for (size_t p = dot.find("shape=box"); p != std::string::npos; p = dot.find("shape=box", p + 1))
    ++boxes;
  EXPECT_EQ(boxes, 4u);
}

TEST(Dot, NamesAreEscaped) {
  std::string dot = to_dot(odd_names());
  expect_well_formed_dot(dot);
  EXPECT_EQ(dot.rfind("digraph \"g \\\"1\\\"\" {\n", 0), 0u) << dot;
  EXPECT_NE(dot.find("input %\\\"x\\\\\\\"}]; -> evil\\\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("back\\\\\\\\slash\\\\nnew line"), std::string::npos) << dot;
  EXPECT_NE(dot.find("&amp;"), std::string::npos) << dot;
  EXPECT_NE(dot.find("from Add \\\"q\\\" \\\\"), std::string::npos) << dot;
  EXPECT_NE(dot.find("[reduce]"), std::string::npos) << dot;
}

TEST(Dot, GraphvizAcceptsTheOutput) {
  if (std::system("command -v dot > /dev/null 2>&1") != 0) GTEST_SKIP() << "graphviz not installed";
  std::string path = ::testing::TempDir() + "orchid_dot_test.dot";
  std::ofstream(path) << to_dot(odd_names());
  std::string cmd = "dot -Tplain " + path + " > /dev/null 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::remove(path.c_str());
}

}  // namespace
}  // namespace orchid::ir
