// Differential test of code generation: generated kernels for seeded random convex subgraphs of
// random primitive graphs (every primitive kind but opaque, odd shapes, every dtype), each with
// a random valid schedule (every vector width and unroll factor, tiles that divide nothing),
// match the reference interpreter run on the kernel's own subgraph. Row kernels (reductions
// over rows of hundreds to thousands of terms, as in softmax and layernorm, which the random
// graphs' dims of at most 64 reach only with the narrowest vector lanes) are checked the same
// way under random schedules.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <set>
#include <tuple>

#include "codegen/cpu/lower.h"
#include "codegen/kernel_cases.h"
#include "codegen/kernel_graphs.h"
#include "runtime/layout.h"
#include "testlib/random_graph.h"

namespace orchid::codegen::cpu {
namespace {

void check_batch(uint64_t first_seed, int count) {
  std::vector<Case> cases;
  for (uint64_t seed = first_seed; cases.size() < static_cast<size_t>(count); ++seed) {
    Rng rng(seed * 7919 + 1);
    auto drawn = random_graph_kernel(seed, rng);
    if (!drawn) continue;
    auto& [g, k] = *drawn;
    Schedule s = random_schedule(g, k, rng);
    std::string sym = "orc_k" + std::to_string(cases.size());
    SCOPED_TRACE("seed " + std::to_string(seed));
    GeneratedKernel gk = generate_kernel(g, k, s, sym);
    cases.push_back(Case{seed, std::move(g), std::move(k), s, std::move(gk)});
  }
  check_cases(cases);
}

// ---- Row kernels. ----

TEST(RowKernels, MatchInterpreter) {
  std::vector<std::string> texts = row_kernel_graphs();
  std::vector<Case> cases;
  for (size_t i = 0; i < texts.size(); ++i)
    for (int rep = 0; rep < 3; ++rep) {
      SCOPED_TRACE(texts[i]);
      auto pick = [rep](const ir::Graph& g, const tile::Kernel& k, Rng& rng) {
        Schedule s = random_schedule(g, k, rng);
        if (rep != 2) s.tile.back() = 0;  // whole rows in a task, as in the default schedule
        return s;
      };
      cases.push_back(make_case(90000 + 10 * i + rep, texts[i], pick, "orc_r" + std::to_string(cases.size())));
    }
  check_cases(cases);
}

// Matmuls at the edges of the register blocks (6 x 16; 12 x 32 and 6 x 32 on AVX-512) and of
// the 256-term blocks: 1, 5, 7, 13, 17, 33 (three column blocks), 100, 130, 300, 513; and
// matmuls too thin for them. Each under the default schedule and random ones.
std::vector<Case> gemm_cases() {
  struct Shape {
    int64_t batch, m, n, k;
  };
  const Shape shapes[] = {{1, 1, 1, 1},      {1, 5, 17, 7},      {2, 13, 33, 300}, {1, 64, 48, 513},
                          {3, 7, 100, 40}, {1, 97, 130, 256}, {2, 30, 16, 1},    {1, 200, 300, 40}};
  std::vector<Case> cases;
  for (size_t i = 0; i < std::size(shapes); ++i)
    for (int variant = 0; variant < 4; ++variant) {
      const Shape& sh = shapes[i];
      auto pick = [variant](const ir::Graph& g, const tile::Kernel& k, Rng& rng) {
        Schedule s = variant == 0 ? default_schedule(g, k, 2) : random_schedule(g, k, rng);
        s.gemm = true;
        return s;
      };
      Case c = make_case(95000 + 10 * i + variant,
                         gemm_graph(sh.batch, sh.m, sh.n, sh.k, variant & 1, variant & 2, variant == 3), pick,
                         "orc_g" + std::to_string(cases.size()));
      // Thinner matmuls stream B row by row instead (lower.h, uses_gemm).
      bool gemm = sh.m >= 6 && sh.n >= 8;
      EXPECT_EQ(c.generated.source.find("orc_gemm_panels(") != std::string::npos, gemm) << c.generated.source;
      // Tiles of 200 rows pack B 32 columns at a time (kGemmPackRows), the last part of a tile
      // narrower (the default tiles: 80 columns, and 60 in the last task).
      if (sh.m == 200 && variant == 0) EXPECT_NE(c.generated.source.find("gemm_j += 32LL"), std::string::npos);
      cases.push_back(std::move(c));
    }
  return cases;
}

TEST(GemmKernels, MatchInterpreter) {
  std::vector<Case> cases = gemm_cases();
  check_cases(cases);
}

// The same with the 256-bit kernels, which an AVX-512 host otherwise never runs (on other
// hosts this repeats the test above).
TEST(GemmKernels, MatchInterpreterOn256BitRegisters) {
  std::vector<Case> cases = gemm_cases();
  check_cases(cases, {"-DORC_GEMM_NO_ZMM"});
}

// And compiled for AVX2 alone (the instructions of an AVX2 host, where an AVX-512 host would
// still use 256-bit AVX-512 forms under ORC_GEMM_NO_ZMM): the panels' packing by 8-term
// blocks of two-source shuffles.
TEST(GemmKernels, MatchInterpreterCompiledForAvx2) {
  if (!__builtin_cpu_supports("avx2")) GTEST_SKIP() << "the host has no AVX2";
  std::vector<Case> cases = gemm_cases();
  check_cases(cases, {"-mno-avx512f"});
}

// A matmul that is the kernel's output: its tiles' rows stored with streaming stores (a kernel
// writing a large output: Schedule::stream), or, where a tile's columns are whole blocks of 16,
// the last block of terms' sums stored in the output itself (streamed where it is aligned),
// the rows past the tile's dropped, under default and random tiles (rows and columns of any
// width, starting at aligned addresses or not), on 512-bit and 256-bit registers.
TEST(GemmKernels, OutputTilesMatchInterpreter) {
  const int64_t shapes[][3] = {{37, 70, 19}, {200, 300, 40}, {66, 96, 300}, {384, 96, 20}, {1000, 48, 30}};
  std::vector<Case> cases;
  for (size_t i = 0; i < std::size(shapes); ++i)
    for (int variant = 0; variant < 3; ++variant) {
      auto [m, n, k] = std::tuple(shapes[i][0], shapes[i][1], shapes[i][2]);
      std::string text = "graph @g {\n  input %a : f32[" + std::to_string(m) + "," + std::to_string(k) +
                         "]\n  input %b : f32[" + std::to_string(k) + "," + std::to_string(n) + "]\n  %y : f32[" +
                         std::to_string(m) + "," + std::to_string(n) +
                         "] = matmul(%a, %b) {trans_a=false, trans_b=false}\n  output %y\n}\n";
      auto pick = [variant](const ir::Graph& g, const tile::Kernel& kernel, Rng& rng) {
        Schedule s = variant == 0 ? default_schedule(g, kernel, 2) : random_schedule(g, kernel, rng);
        s.gemm = true;
        s.stream = true;
        return s;
      };
      Case c = make_case(95500 + 10 * i + variant, text, pick, "orc_s" + std::to_string(cases.size()));
      EXPECT_NE(c.generated.source.find("orc_stream(&a2["), std::string::npos) << c.generated.source;
      // Tiles of whole blocks of 16 columns may be stored in the output, whatever their rows
      // (1000 rows make tasks of 168, the last of 160 rows, padded to 162).
      KernelLowering kl = lower_kernel(c.graph, c.kernel, c.schedule);
      bool whole_blocks = kl.nodes[0].gemm && kl.nodes[0].most[1] % 16 == 0;
      EXPECT_EQ(c.generated.source.find("gemm_in_output") != std::string::npos, whole_blocks);
      if (variant == 0) EXPECT_EQ(whole_blocks, n % 16 == 0);
      // Rows of a multiple of 16 floats: the tile streamed where it lies aligned.
      EXPECT_EQ(c.generated.source.find("orc_gemm_stream{") != std::string::npos, whole_blocks && n % 16 == 0);
      cases.push_back(std::move(c));
    }
  check_cases(cases);
  check_cases(cases, {"-DORC_GEMM_NO_ZMM"});  // 256-bit streaming stores
}

TEST(TransposeKernels, MatchInterpreter) {
  std::vector<std::string> texts = transpose_graphs();
  std::vector<Case> cases;
  for (size_t i = 0; i < texts.size(); ++i)
    for (int variant = 0; variant < 3; ++variant) {
      SCOPED_TRACE(texts[i]);
      auto pick = [variant](const ir::Graph& g, const tile::Kernel& k, Rng& rng) {
        return variant == 0 ? default_schedule(g, k, 2) : random_schedule(g, k, rng);
      };
      Case c = make_case(96000 + 10 * i + variant, texts[i], pick, "orc_t" + std::to_string(cases.size()));
      // The blocked loops.
      ASSERT_NE(c.generated.source.find("bk += 16LL"), std::string::npos) << c.generated.source;
      cases.push_back(std::move(c));
    }
  check_cases(cases);
}

// Constant weights stored as B panels (runtime layout.h, panels16, and panels16t for weights
// read transposed): the kernel reads them in place of packing. Shapes with partial register
// blocks and k-blocks (M = 7, K = 300, 513), batched A, and a bias + relu epilogue; the packed
// kernel matches the interpreter, and packable_weights refuses what it cannot read as panels.
std::string weights_graph(int64_t batch, int64_t m, int64_t n, int64_t k, uint64_t seed, bool trans_b = false) {
  Rng rng(seed);
  std::string w;
  for (int64_t i = 0; i < k * n; ++i) w += (i ? ", " : "") + std::to_string(static_cast<double>(rng.next() % 2001) / 1000 - 1);
  std::string b = std::to_string(batch), ms = std::to_string(m), ns = std::to_string(n), ks = std::to_string(k);
  std::string wt = trans_b ? ns + "," + ks : ks + "," + ns;
  return "graph @g {\n  input %a : f32[" + b + "," + ms + "," + ks + "]\n  const %w : f32[" + wt + "] = [" + w +
         "]\n  input %c : f32[" + ns + "]\n  %y : f32[" + b + "," + ms + "," + ns +
         "] = matmul(%a, %w) {trans_a=false, trans_b=" + (trans_b ? "true" : "false") + "}\n  %z : f32[" + b + "," + ms +
         "," + ns + "] = elementwise(%y, %c) { max(add(%y[i0, i1, i2], %c[i2]), 0:f32) }\n  output %z\n}\n";
}

TEST(GemmKernels, WeightsStoredAsPanels) {
  struct Shape {
    int64_t batch, m, n, k;
  };
  const Shape shapes[] = {{1, 7, 32, 300}, {2, 16, 64, 513}, {1, 64, 48, 40}, {1, 30, 512, 17}};
  std::vector<Case> cases;
  for (size_t i = 0; i < std::size(shapes); ++i)
    for (int variant = 0; variant < 4; ++variant) {  // default or thin tiles, B plain or transposed
      const Shape& sh = shapes[i];
      uint64_t seed = 97000 + 10 * i + variant;
      bool trans_b = variant >= 2;
      ir::Graph g = ir::parse_graph(weights_graph(sh.batch, sh.m, sh.n, sh.k, seed, trans_b));
      tile::Kernel k = whole_kernel(g);
      Schedule s = default_schedule(g, k, 2);
      if (variant % 2 == 1) s.tile = {1, 6, 16};
      ValueId w = *g.find_value("w");
      ASSERT_EQ(packable_weights(g, k, s), std::vector<ValueId>{w}) << schedule_str(s);
      ASSERT_EQ(transposed_panels(g, k, w), trans_b);
      GeneratedKernel gk = generate_kernel(g, k, s, "orc_p" + std::to_string(cases.size()), {w});
      ASSERT_EQ(gk.source.find("gemm_pb"), gk.source.find("gemm_pb = "));  // B is never packed
      cases.push_back(Case{seed, std::move(g), std::move(k), s, std::move(gk)});
    }
  std::vector<GeneratedKernel> kernels;
  for (const Case& c : cases) kernels.push_back(c.generated);
  auto lib = compile_kernels(kernels);
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    SCOPED_TRACE("seed " + std::to_string(c.seed) + ", schedule " + schedule_str(c.schedule));
    std::vector<ir::Tensor> in = interp::random_inputs(c.graph, c.seed);
    std::vector<ir::Tensor> want = interp::run(c.graph, in, {interp::Precision::F64});
    bool trans_b = c.seed % 10 >= 2;
    ir::Tensor packed = runtime::to_layout(c.graph.constant(*c.graph.find_value("w")),
                                           trans_b ? runtime::BufferLayout::Panels16T : runtime::BufferLayout::Panels16);
    ASSERT_EQ(c.generated.inputs.size(), 3u);  // a, w, c in id order
    std::vector<const ir::Tensor*> ins = {&in[0], &packed, &in[1]};
    int64_t err = 0;
    std::vector<ir::Tensor> got = testlib::run_generated(lib.table[i], ins, {c.graph.type(c.graph.outputs()[0])}, c.seed, &err);
    EXPECT_EQ(err, 0);
    EXPECT_EQ(interp::compare_tensors(got[0], want[0], 1e-5, 1e-4), "");
  }
}

TEST(GemmKernels, PackableWeightsAreWholeConstantB) {
  auto packable = [](const std::string& text) {
    ir::Graph g = ir::parse_graph(text);
    tile::Kernel k = whole_kernel(g);
    return packable_weights(g, k, default_schedule(g, k, 2)).size();
  };
  auto mm = [](const std::string& w_decl, const std::string& attrs) {
    return "graph @g {\n  input %a : f32[12,32]\n  " + w_decl + "\n  %y : f32[12,32] = matmul(%a, %w) {" + attrs +
           "}\n  output %y\n}\n";
  };
  EXPECT_EQ(packable(mm("const %w : f32[32,32] = splat(0.5)", "trans_a=false, trans_b=false")), 1u);
  EXPECT_EQ(packable(mm("const %w : f32[32,32] = splat(0.5)", "trans_a=false, trans_b=true")), 1u);  // panels16t
  EXPECT_EQ(packable("graph @g {\n  input %a : f32[12,32]\n  const %w : f32[24,32] = splat(0.5)\n  %y : f32[12,24] = "
                     "matmul(%a, %w) {trans_a=false, trans_b=true}\n  output %y\n}\n"),
            0u);  // N (the rows of the transposed weights) not a multiple of 16
  EXPECT_EQ(packable(mm("input %w : f32[32,32]", "trans_a=false, trans_b=false")), 0u);  // not a constant
  EXPECT_EQ(packable("graph @g {\n  input %a : f32[12,32]\n  const %w : f32[32,24] = splat(0.5)\n  %y : f32[12,24] = "
                     "matmul(%a, %w) {trans_a=false, trans_b=false}\n  output %y\n}\n"),
            0u);  // N not a multiple of 16
  // Columns cut into tiles of 24: the second task's columns do not start on a panel.
  ir::Graph g = ir::parse_graph(weights_graph(1, 12, 48, 8, 1));
  tile::Kernel k{{NodeId(0), NodeId(1)}, g.outputs()};
  Schedule s = default_schedule(g, k, 2);
  s.tile = {1, 6, 24};
  EXPECT_TRUE(packable_weights(g, k, s).empty());
  s.tile = {1, 6, 16};
  EXPECT_EQ(packable_weights(g, k, s).size(), 1u);
}

// A matmul too thin for the micro-kernel (1 or 3 rows) by transposed weights [N, K] reduces
// each output over lanes of its terms, reading a row of the weights contiguously, where the
// terms fill the lanes; with few terms (8) it accumulates a row of outputs at a time. Both
// match the interpreter.
TEST(RowKernels, ThinMatmulsByTransposedWeightsReduceOverLanes) {
  struct Shape {
    int64_t m, n, k;
    bool lanes;
  };
  const Shape shapes[] = {{1, 1000, 128, true}, {3, 40, 300, true}, {1, 64, 8, false}};
  std::vector<Case> cases;
  for (size_t i = 0; i < std::size(shapes); ++i) {
    const Shape& sh = shapes[i];
    std::string m = std::to_string(sh.m), n = std::to_string(sh.n), k = std::to_string(sh.k);
    std::string text = "graph @g {\n  input %a : f32[" + m + "," + k + "]\n  input %w : f32[" + n + "," + k +
                       "]\n  %y : f32[" + m + "," + n + "] = matmul(%a, %w) {trans_a=false, trans_b=true}\n  output %y\n}\n";
    auto pick = [](const ir::Graph& g, const tile::Kernel& kernel, Rng&) { return default_schedule(g, kernel, 2); };
    Case c = make_case(95800 + i, text, pick, "orc_l" + std::to_string(i));
    EXPECT_EQ(c.generated.source.find("acc0p[") != std::string::npos, sh.lanes) << c.generated.source;
    cases.push_back(std::move(c));
  }
  check_cases(cases);
}

class RandomKernels : public ::testing::TestWithParam<int> {};

// 8 batches of 30 kernels: 240 kernels, one shared object per batch.
TEST_P(RandomKernels, MatchInterpreter) { check_batch(1000 + 1000 * GetParam(), 30); }

INSTANTIATE_TEST_SUITE_P(Batches, RandomKernels, ::testing::Range(0, 8));

// f32 division by a value of the row (softmax's by its sum) multiplies by the reciprocal in
// f64 instead (emit_expr.cpp); the result must still be IEEE division, bit for bit, for every
// kind of float: random bit patterns (every exponent, subnormals, NaNs) and the special values.
TEST(RowKernels, DivisionByARowValueIsCorrectlyRounded) {
  const int64_t rows = 64, cols = 4096;
  ir::Graph g = ir::parse_graph(R"(
graph @g {
  input %x : f32[64,4096]
  input %s : f32[64,1]
  %y : f32[64,4096] = elementwise(%x, %s) { div(%x[i0, i1], %s[i0, 0]) }
  output %y
}
)");
  tile::Kernel k{{NodeId(0)}, g.outputs()};
  for (bool stream : {false, true}) {
    Schedule s{{1, 0}, 16, 4, true, stream, 0};
    GeneratedKernel gk = generate_kernel(g, k, s, "orc_div");
    ASSERT_NE(gk.source.find("const double"), std::string::npos) << gk.source;
    auto lib = compile_kernels({gk});
    const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1.0f, -3.0f, 0x1p-149f, -0x1p-130f,
                              0x1p-126f, 0x1.fffffep127f, 0x1p127f, 0x1p-100f, 3.0f, 0.1f, 7e-45f};
    Rng rng(stream ? 2 : 1);
    auto bits = [&] {
      uint32_t u = static_cast<uint32_t>(rng.next());
      float f;
      std::memcpy(&f, &u, 4);
      return f;
    };
    ir::Tensor x(g.type(g.inputs()[0])), d(g.type(g.inputs()[1]));
    float* xs = reinterpret_cast<float*>(x.data());
    float* ds = reinterpret_cast<float*>(d.data());
    for (int64_t i = 0; i < rows * cols; ++i) xs[i] = i % 97 < 16 ? specials[i % 97] : bits();
    for (int64_t r = 0; r < rows; ++r) ds[r] = r < 16 ? specials[r] : bits();
    std::vector<ir::Tensor> got = testlib::run_generated(lib.table[0], {&x, &d}, {g.type(g.outputs()[0])}, 3);
    const float* ys = reinterpret_cast<const float*>(got[0].data());
    int64_t wrong = 0;
    for (int64_t i = 0; i < rows * cols; ++i) {
      float want = xs[i] / ds[i / cols];
      bool same = std::memcmp(&want, &ys[i], 4) == 0 || (want != want && ys[i] != ys[i]);
      if (!same && wrong++ < 5)
        ADD_FAILURE() << xs[i] << " / " << ds[i / cols] << ": " << ys[i] << ", not " << want << " (stream " << stream << ")";
    }
    EXPECT_EQ(wrong, 0);
  }
}

// Max and min with a constant (a relu) take one compare (orc_fmaxf_r and the like) but keep
// the general functions' results bit for bit: NaN propagates, and of equal operands (0 and
// -0) the first wins; over random bit patterns and the special values, the constant on
// either side.
TEST(ElementwiseKernels, MaxAndMinWithAConstantKeepNaNAndSignedZeros) {
  ir::Graph g = ir::parse_graph(R"(
graph @g {
  input %x : f32[4096]
  %a : f32[4096] = elementwise(%x) { max(%x[i0], 0:f32) }
  %b : f32[4096] = elementwise(%x) { max(0:f32, %x[i0]) }
  %c : f32[4096] = elementwise(%x) { min(%x[i0], 0.5:f32) }
  %d : f32[4096] = elementwise(%x) { min(-0.5:f32, %x[i0]) }
  output %a, %b, %c, %d
}
)");
  tile::Kernel k = whole_kernel(g);
  GeneratedKernel gk = generate_kernel(g, k, default_schedule(g, k, 2), "orc_mx");
  for (const char* f : {"orc_fmaxf_r(a0[", "orc_fmaxf_l(((float)", "orc_fminf_r(a0[", "orc_fminf_l(((float)"})
    EXPECT_NE(gk.source.find(f), std::string::npos) << f << "\n" << gk.source;
  auto lib = compile_kernels({gk});
  const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 0.5f, -0.5f, 1.0f, -1.0f, 0x1p-149f, -0x1p-149f};
  Rng rng(7);
  ir::Tensor x(g.type(g.inputs()[0]));
  float* xs = reinterpret_cast<float*>(x.data());
  for (int64_t i = 0; i < 4096; ++i) {
    uint32_t u = static_cast<uint32_t>(rng.next());
    std::memcpy(&xs[i], &u, 4);
    if (i % 7 < 3) xs[i] = specials[i % std::size(specials)];
  }
  std::vector<ir::TensorType> types;
  for (ValueId v : g.outputs()) types.push_back(g.type(v));
  std::vector<ir::Tensor> got = testlib::run_generated(lib.table[0], {&x}, types, 3);
  // The general functions (prelude: orc_fmaxf, orc_fminf), first operand a.
  auto fmax = [](float a, float b) { return a != a ? a : b != b ? b : (a < b ? b : a); };
  auto fmin = [](float a, float b) { return a != a ? a : b != b ? b : (b < a ? b : a); };
  int64_t wrong = 0;
  for (int64_t i = 0; i < 4096; ++i) {
    const float want[] = {fmax(xs[i], 0.0f), fmax(0.0f, xs[i]), fmin(xs[i], 0.5f), fmin(-0.5f, xs[i])};
    for (size_t o = 0; o < 4; ++o) {
      float y = reinterpret_cast<const float*>(got[o].data())[i];
      bool same = std::memcmp(&want[o], &y, 4) == 0 || (want[o] != want[o] && y != y);
      if (!same && wrong++ < 5) ADD_FAILURE() << "output " << o << " of " << xs[i] << ": " << y << ", not " << want[o];
    }
  }
  EXPECT_EQ(wrong, 0);
}

}  // namespace
}  // namespace orchid::codegen::cpu
