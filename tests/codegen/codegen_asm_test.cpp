// The generated assembly of an elementwise kernel: its inner loop divides nothing and works on
// 256-bit vector registers; and a kernel whose view needs floordiv/mod by constants still
// divides nothing (divisions by constants become multiplications).
#include <gtest/gtest.h>

#include <regex>

#include "codegen/cpu/codegen.h"
#include "codegen/cpu/compiler.h"
#include "ir/parser.h"

namespace orchid::codegen::cpu {
namespace {

std::string kernel_asm(const std::string& oir, const std::string& symbol) {
  ir::Graph g = ir::parse_graph(oir);
  tile::Kernel k;
  for (int32_t n = 0; n < g.num_nodes(); ++n) k.nodes.push_back(ir::NodeId(n));
  k.outputs = g.outputs();
  GeneratedKernel gk = generate_kernel(g, k, Schedule{{4}, 8, 1, true}, symbol);
  CompilerOptions o;
  o.cache_dir = std::filesystem::temp_directory_path() / "orchid-test-objects";
  o.extra_flags = codegen_flags();
  std::string all = assembly(library_source({gk}), o);
  size_t begin = all.find("\n" + symbol + ":");
  EXPECT_NE(begin, std::string::npos) << "no function " << symbol << " in the assembly";
  size_t end = all.find(".cfi_endproc", begin);
  return all.substr(begin, end - begin);
}

bool has_division(const std::string& asm_text) {
  return std::regex_search(asm_text, std::regex("\\b(idiv|div)[bwlq]?\\b"));
}

TEST(GeneratedAssembly, ElementwiseLoopIsVectorizedWithoutDivision) {
  std::string a = kernel_asm(R"(
graph @g {
  input %x : f32[64,1000]
  input %b : f32[1000]
  %y : f32[64,1000] = elementwise(%x, %b) { add(mul(%x[i0, i1], sigmoid(%x[i0, i1])), %b[i1]) }
  output %y
}
)", "orc_k0");
  EXPECT_FALSE(has_division(a)) << a;
  EXPECT_NE(a.find("ymm"), std::string::npos) << a;
}

TEST(GeneratedAssembly, ViewIndexArithmeticHasNoDivision) {
  std::string a = kernel_asm(R"(
graph @g {
  input %x : f32[64,1000]
  %v : f32[64,10,100] = view(%x)
  %y : f32[64,10,100] = elementwise(%v) { mul(%v[i0, i1, i2], 2:f32) }
  output %y
}
)", "orc_k1");
  EXPECT_FALSE(has_division(a)) << a;
}

}  // namespace
}  // namespace orchid::codegen::cpu
