// The generated assembly of an elementwise kernel: its inner loop divides nothing and works on
// 256-bit vector registers; and a kernel whose view needs floordiv/mod by constants still
// divides nothing (divisions by constants become multiplications).
#include <gtest/gtest.h>

#include <optional>
#include <regex>

#include "codegen/cpu/codegen.h"
#include "codegen/cpu/compiler.h"
#include "codegen/cpu/schedule.h"
#include "ir/parser.h"

namespace orchid::codegen::cpu {
namespace {

// The assembly of the whole shared object of one kernel of `oir` under `s` (or its default
// schedule), compiled with `defines` added to the flags.
std::string library_asm(const std::string& oir, const std::string& symbol, std::optional<Schedule> s,
                        const std::vector<std::string>& defines = {}) {
  ir::Graph g = ir::parse_graph(oir);
  tile::Kernel k;
  for (int32_t n = 0; n < g.num_nodes(); ++n) k.nodes.push_back(ir::NodeId(n));
  k.outputs = g.outputs();
  GeneratedKernel gk = generate_kernel(g, k, s ? *s : default_schedule(g, k, 2), symbol);
  CompilerOptions o;
  o.cache_dir = std::filesystem::temp_directory_path() / "orchid-test-objects";
  o.extra_flags = codegen_flags();
  o.extra_flags.insert(o.extra_flags.end(), defines.begin(), defines.end());
  return assembly(library_source({gk}), o);
}

std::string kernel_asm(const std::string& oir, const std::string& symbol) {
  std::string all = library_asm(oir, symbol, Schedule{{4}, 8, 1, true});
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

// On an AVX-512 host a matmul's multiply-adds run on 512-bit registers, and on 256-bit ones
// with ORC_GEMM_NO_ZMM (the kernels of AVX2 hosts); elsewhere on 256-bit ones either way.
TEST(GeneratedAssembly, GemmMultiplyAddsUseTheWidestRegisters) {
  const std::string mm = R"(
graph @g {
  input %a : f32[96,256]
  input %b : f32[256,128]
  %y : f32[96,128] = matmul(%a, %b) {trans_a=false, trans_b=false}
  output %y
}
)";
  const std::regex zmm_fma("vfmadd[0-9]+ps[^\n]*zmm"), ymm_fma("vfmadd[0-9]+ps[^\n]*ymm");
  std::string wide = library_asm(mm, "orc_m0", std::nullopt);
  std::string narrow = library_asm(mm, "orc_m1", std::nullopt, {"-DORC_GEMM_NO_ZMM"});
  ASSERT_NE(wide.find("orc_gemm_panels"), std::string::npos);
  EXPECT_EQ(std::regex_search(wide, zmm_fma), __builtin_cpu_supports("avx512f") != 0);
  EXPECT_FALSE(std::regex_search(narrow, zmm_fma));
  EXPECT_TRUE(std::regex_search(narrow, ymm_fma));
}

}  // namespace
}  // namespace orchid::codegen::cpu
