// Differential test of matmuls on the GEMM micro-kernel with what fuses around them: every
// prologue kind (an elementwise chain on A, a broadcast of B over A's batch, a transpose of A)
// with every epilogue kind (bias + GELU, a residual add, softmax over the rows of the tile,
// layernorm over them, bias + tanh as two primitives, a relu of a matmul that is an output
// too, a bias read through a view), at the sizes M, N, K = 1, 7, 17, 100 and 1000 in turn, under default
// and random schedules, match the reference interpreter; row reductions get tasks of whole
// rows; attention with its projection is one kernel of three products.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/cpu/lower.h"
#include "codegen/kernel_cases.h"

namespace orchid::codegen::cpu {
namespace {

std::string shape(const std::vector<int64_t>& d) {
  std::string s;
  for (int64_t e : d) s += (s.empty() ? "" : ",") + std::to_string(e);
  return "f32[" + s + "]";
}

enum class Prologue { Chain, Broadcast, Transpose };
enum class Epilogue { BiasGelu, Residual, Softmax, LayerNorm, BiasTanh, AlsoOutput, BiasView };

// y = A' x B' over [b, m, n], then the epilogue; A' and B' per prologue.
std::string fused_graph(int64_t m, int64_t n, int64_t k, Prologue pro, Epilogue epi) {
  const int64_t b = 2;
  std::string t = "graph @f {\n";
  std::string a = "%a", bb = "%b";
  switch (pro) {
    case Prologue::Chain:
      t += "  input %a : " + shape({b, m, k}) + "\n  input %b : " + shape({k, n}) + "\n";
      t += "  %ac : " + shape({b, m, k}) + " = elementwise(%a) { tanh(mul(%a[i0, i1, i2], 0.5:f32)) }\n";
      a = "%ac";
      break;
    case Prologue::Broadcast:
      t += "  input %a : " + shape({b, m, k}) + "\n  input %b : " + shape({1, k, n}) + "\n";
      t += "  %bb : " + shape({b, k, n}) + " = broadcast(%b) { %b[0, i1, i2] }\n";
      bb = "%bb";
      break;
    case Prologue::Transpose:
      t += "  input %a : " + shape({b, k, m}) + "\n  input %b : " + shape({k, n}) + "\n";
      t += "  %at : " + shape({b, m, k}) + " = layout(%a) { %a[i0, i2, i1] }\n";
      a = "%at";
      break;
  }
  std::string y = shape({b, m, n}), row = shape({b, m, 1}), ns = std::to_string(n);
  t += "  %y : " + y + " = matmul(" + a + ", " + bb + ") {trans_a=false, trans_b=false}\n";
  switch (epi) {
    case Epilogue::BiasGelu:
      t += "  input %c : " + shape({n}) + "\n";
      t += "  %z : " + y + " = elementwise(%y, %c) { mul(add(%y[i0, i1, i2], %c[i2]), add(erf(mul(add(%y[i0, i1, i2], "
           "%c[i2]), 0.70710677:f32)), 1:f32)) }\n";
      break;
    case Epilogue::Residual:
      t += "  input %r : " + y + "\n";
      t += "  %z : " + y + " = elementwise(%y, %r) { add(%y[i0, i1, i2], %r[i0, i1, i2]) }\n";
      break;
    case Epilogue::BiasTanh:  // two primitives, the first inlined into the second
      t += "  input %c : " + shape({n}) + "\n";
      t += "  %yc : " + y + " = elementwise(%y, %c) { add(%y[i0, i1, i2], %c[i2]) }\n";
      t += "  %z : " + y + " = elementwise(%yc) { tanh(%yc[i0, i1, i2]) }\n";
      break;
    case Epilogue::BiasView:  // a view of the bias, inlined, read broadcast
      t += "  input %c : " + shape({n}) + "\n";
      t += "  %cv : " + shape({1, n}) + " = view(%c)\n";
      t += "  %z : " + y + " = elementwise(%y, %cv) { add(%y[i0, i1, i2], %cv[0, i2]) }\n";
      break;
    case Epilogue::AlsoOutput:  // the matmul's values are an output too
      t += "  %z : " + y + " = elementwise(%y) { max(%y[i0, i1, i2], 0:f32) }\n";
      t += "  output %z, %y\n}\n";
      return t;
    case Epilogue::Softmax:
      t += "  %mx : " + row + " = reduce max(%y) over [" + ns + "] { %y[i0, i1, r0] }\n";
      t += "  %e : " + y + " = elementwise(%y, %mx) { exp(sub(%y[i0, i1, i2], %mx[i0, i1, 0])) }\n";
      t += "  %s : " + row + " = reduce sum(%e) over [" + ns + "] { %e[i0, i1, r0] }\n";
      t += "  %z : " + y + " = elementwise(%e, %s) { div(%e[i0, i1, i2], %s[i0, i1, 0]) }\n";
      t += "  output %z, %s\n}\n";  // %s too: softmax's values are below the absolute tolerance
      return t;
    case Epilogue::LayerNorm:
      t += "  %mu, %var : " + row + ", " + row + " = reduce welford(%y) over [" + ns + "] { %y[i0, i1, r0] }\n";
      t += "  %z : " + y + " = elementwise(%y, %mu, %var) { mul(sub(%y[i0, i1, i2], %mu[i0, i1, 0]), "
           "rsqrt(add(%var[i0, i1, 0], 1e-05:f32))) }\n";
      break;
  }
  return t + "  output %z\n}\n";
}

TEST(GemmFusion, EveryPrologueAndEpilogueMatchInterpreter) {
  struct Size {
    int64_t m, n, k;
  };
  // Each of 1, 7, 17, 100 and 1000 as M, as N and as K.
  const Size sizes[] = {{1, 17, 100}, {7, 1000, 1}, {17, 100, 7}, {100, 7, 1000}, {1000, 1, 17}, {100, 1000, 17}};
  const Prologue pros[] = {Prologue::Chain, Prologue::Broadcast, Prologue::Transpose};
  const Epilogue epis[] = {Epilogue::BiasGelu, Epilogue::Residual,   Epilogue::Softmax,  Epilogue::LayerNorm,
                           Epilogue::BiasTanh, Epilogue::AlsoOutput, Epilogue::BiasView};
  std::vector<Case> cases;
  for (size_t si = 0; si < std::size(sizes); ++si)
    for (size_t pi = 0; pi < std::size(pros); ++pi)
      for (size_t ei = 0; ei < std::size(epis); ++ei) {
        const Size& sz = sizes[si];
        std::string text = fused_graph(sz.m, sz.n, sz.k, pros[pi], epis[ei]);
        SCOPED_TRACE(text);
        uint64_t seed = 99000 + 100 * si + 10 * pi + ei;
        auto pick = [seed](const ir::Graph& g, const tile::Kernel& k, Rng& rng) {
          Schedule s = seed % 2 == 0 ? default_schedule(g, k, 2) : random_schedule(g, k, rng);
          s.gemm = true;
          if (seed % 2 == 0) s.stream = seed % 4 == 0;  // the epilogue's rows streamed or stored
          return s;
        };
        Case c = make_case(seed, text, pick, "orc_f" + std::to_string(cases.size()));
        // Every matmul of at least 6 rows and 8 columns runs on the micro-kernel.
        bool gemm = sz.m >= 6 && sz.n >= 8;
        EXPECT_EQ(c.generated.source.find("orc_gemm_panels(") != std::string::npos, gemm);
        // Under the default tiles (each task one batch index), the micro-kernel computes an
        // elementwise epilogue as it stores the sums, where nothing else reads them.
        bool elementwise = epis[ei] == Epilogue::BiasGelu || epis[ei] == Epilogue::Residual ||
                           epis[ei] == Epilogue::BiasTanh || epis[ei] == Epilogue::BiasView;
        if (seed % 2 == 0) EXPECT_EQ(c.generated.source.find("orc_gemm_epilogue(gemm_epi") != std::string::npos, gemm && elementwise);
        cases.push_back(std::move(c));
      }
  check_cases(cases);
}

// The epilogues computed from the micro-kernel's registers on AVX2 hosts (ORC_GEMM_NO_ZMM:
// 6 x 16 blocks), streamed or stored, at sizes with partial register blocks and several
// blocks of terms.
TEST(GemmFusion, EpiloguesMatchInterpreterOn256BitRegisters) {
  struct Size {
    int64_t m, n, k;
  };
  const Size sizes[] = {{100, 1000, 17}, {17, 100, 300}, {1000, 40, 7}};
  const Epilogue epis[] = {Epilogue::BiasGelu, Epilogue::Residual, Epilogue::BiasTanh};
  std::vector<Case> cases;
  for (size_t si = 0; si < std::size(sizes); ++si)
    for (size_t ei = 0; ei < std::size(epis); ++ei) {
      const Size& sz = sizes[si];
      uint64_t seed = 99700 + 10 * si + ei;
      auto pick = [seed](const ir::Graph& g, const tile::Kernel& k, Rng&) {
        Schedule s = default_schedule(g, k, 2);
        s.stream = seed % 2 == 0;
        return s;
      };
      Case c = make_case(seed, fused_graph(sz.m, sz.n, sz.k, Prologue::Chain, epis[ei]), pick,
                         "orc_e" + std::to_string(cases.size()));
      EXPECT_NE(c.generated.source.find("orc_gemm_epilogue(gemm_epi"), std::string::npos) << c.generated.source;
      cases.push_back(std::move(c));
    }
  check_cases(cases, {"-DORC_GEMM_NO_ZMM"});
}

// A kernel that reduces the rows of its matmul (a softmax after it) is cut into tasks of
// whole rows: cutting them, every task would compute its whole rows of the matmul again. A
// matmul alone keeps column tiles.
TEST(GemmFusion, RowReductionsGetTasksOfWholeRows) {
  ir::Graph soft = ir::parse_graph(fused_graph(128, 3072, 768, Prologue::Chain, Epilogue::Softmax));
  Schedule s = default_schedule(soft, whole_kernel(soft), 2);
  ASSERT_EQ(s.tile.size(), 3u);
  EXPECT_EQ(s.tile[2], 3072);
  EXPECT_GE(s.tile[1], 24);  // enough rows per packing of B
  ir::Graph plain = ir::parse_graph(fused_graph(128, 3072, 768, Prologue::Chain, Epilogue::Residual));
  Schedule p = default_schedule(plain, whole_kernel(plain), 2);
  EXPECT_LE(p.tile[2], 512);
}

// Attention as one kernel, its query projected in it: a 2-D product, then Q Kᵀ over
// [1, heads, s, t] (the kernel's GEMM anchor is the last product, of another rank than the
// first), softmax over its rows, and P V. The default schedule takes tasks of whole rows of
// the scores; it and random schedules match the interpreter.
std::string attention_graph(int64_t s, int64_t t, int64_t d) {
  std::string q2 = shape({s, d}), sc = shape({1, 1, s, t}), row = shape({1, 1, s, 1});
  std::string g = "graph @attention {\n";
  g += "  input %x : " + q2 + "\n  input %w : " + shape({d, d}) + "\n";
  g += "  input %k : " + shape({1, 1, t, d}) + "\n  input %v : " + shape({1, 1, t, d}) + "\n";
  g += "  %q2 : " + q2 + " = matmul(%x, %w) {trans_a=false, trans_b=false}\n";
  g += "  %q : " + shape({1, 1, s, d}) + " = view(%q2)\n";
  g += "  %y : " + sc + " = matmul(%q, %k) {trans_a=false, trans_b=true}\n";
  g += "  %mx : " + row + " = reduce max(%y) over [" + std::to_string(t) + "] { %y[i0, i1, i2, r0] }\n";
  g += "  %e : " + sc + " = elementwise(%y, %mx) { exp(sub(%y[i0, i1, i2, i3], %mx[i0, i1, i2, 0])) }\n";
  g += "  %sm : " + row + " = reduce sum(%e) over [" + std::to_string(t) + "] { %e[i0, i1, i2, r0] }\n";
  g += "  %p : " + sc + " = elementwise(%e, %sm) { div(%e[i0, i1, i2, i3], %sm[i0, i1, i2, 0]) }\n";
  g += "  %o : " + shape({1, 1, s, d}) + " = matmul(%p, %v) {trans_a=false, trans_b=false}\n";
  return g + "  output %o\n}\n";
}

TEST(GemmFusion, AttentionWithItsProjectionIsOneKernel) {
  ir::Graph g = ir::parse_graph(attention_graph(512, 64, 32));
  Schedule d = default_schedule(g, whole_kernel(g), 2);
  ASSERT_EQ(d.tile.size(), 4u);
  EXPECT_EQ(d.tile[3], 32);  // the output's whole rows: the scores' rows are reduced whole
  std::vector<Case> cases;
  for (uint64_t seed = 0; seed < 4; ++seed) {
    auto pick = [seed](const ir::Graph& gr, const tile::Kernel& k, Rng& rng) {
      return seed == 0 ? default_schedule(gr, k, 2) : random_schedule(gr, k, rng);
    };
    cases.push_back(make_case(99900 + seed, attention_graph(seed == 3 ? 37 : 512, seed == 3 ? 23 : 64, 32), pick,
                              "orc_att" + std::to_string(seed)));
  }
  check_cases(cases);
}

}  // namespace
}  // namespace orchid::codegen::cpu
