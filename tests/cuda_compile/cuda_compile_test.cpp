// The CUDA differential suite's kernels (codegen/cuda_cases.h) generated and compiled with
// NVRTC to CUBIN for every architecture Orchid builds for: runs on every machine, GPU or not,
// so CUDA code generation is checked everywhere.
#include <gtest/gtest.h>

#include "codegen/cuda/nvrtc.h"
#include "codegen/cuda_cases.h"

namespace orchid::codegen::cuda {
namespace {

void compile_everywhere(const std::vector<CudaCase>& cases) {
  std::string why;
  if (!Nvrtc::available(&why)) GTEST_SKIP() << why;
  std::vector<CudaKernel> kernels;
  for (const CudaCase& c : cases) kernels.push_back(c.generated);
  std::string source = module_source(kernels);
  for (const std::string& arch : cuda_architectures()) {
    std::vector<char> cubin = Nvrtc::get().compile(source, arch);
    EXPECT_GT(cubin.size(), 0u) << arch;
  }
}

class RandomCudaKernels : public ::testing::TestWithParam<int> {};

TEST_P(RandomCudaKernels, CompileForEveryArchitecture) {
  compile_everywhere(random_cuda_cases(1000 + 1000 * GetParam(), 40));
}

INSTANTIATE_TEST_SUITE_P(Batches, RandomCudaKernels, ::testing::Range(0, 3));

TEST(NamedCudaKernels, CompileForEveryArchitecture) {
  std::vector<std::string> texts = named_graphs();
  texts.push_back(gather_graph());
  compile_everywhere(named_cuda_cases(texts));
}

TEST(CudaCodegen, IndirectLoadsAreChecked) {
  CudaCase c = named_cuda_case(0, gather_graph(), "orc_gather");
  EXPECT_NE(c.generated.source.find("orc_chk("), std::string::npos) << c.generated.source;
  EXPECT_EQ(c.generated.checks.size(), 1u);
}

// Scratch that fits a block's shared memory lives there; larger scratch is global memory,
// one area per block.
TEST(CudaCodegen, ScratchInSharedMemoryWhereItFits) {
  std::string text = softmax_rows(4, 3000);
  CudaCase small = named_cuda_case(0, text, "orc_small");
  EXPECT_GT(small.generated.shared_bytes, 0);
  EXPECT_EQ(small.generated.global_scratch_bytes, 0);
  CudaCase big = named_cuda_case(0, softmax_rows(4, 20000), "orc_big");
  EXPECT_EQ(big.generated.shared_bytes, 0);
  EXPECT_GT(big.generated.global_scratch_bytes, kSharedBytes);
  compile_everywhere({small, big});
}

// Two levels (Schedule::inner and split): the block computes the nodes before the split over
// its task, then the rest per sub-tile in a loop; every case lowers to the levels it asks for
// and compiles.
TEST(CudaCodegen, TwoLevelKernelsLoopOverSubTiles) {
  std::vector<CudaCase> cases = two_level_cuda_cases();
  for (const CudaCase& c : cases) {
    SCOPED_TRACE(schedule_str(c.schedule));
    cpu::KernelLowering kl = cpu::lower_kernel(c.graph, c.kernel, lowering_schedule(c.schedule));
    ASSERT_TRUE(kl.inner.has_value());
    for (size_t i = 0; i < kl.nodes.size(); ++i)
      EXPECT_EQ(kl.nodes[i].inner, !kl.nodes[i].inlined && static_cast<int>(i) >= c.schedule.split) << "node " << i;
    EXPECT_NE(c.generated.source.find("const int64_t ti = "), std::string::npos) << c.generated.source;
    EXPECT_EQ(c.generated.shared_bytes + c.generated.global_scratch_bytes, kl.scratch_bytes);
  }
  compile_everywhere(cases);
}

// A task's values that do not fit shared memory beside the sub-tile's go to global memory;
// the sub-tile's stay in shared memory. One level, the same task's scratch is all global.
TEST(CudaCodegen, TwoLevelKernelsKeepTheSubTilesValuesInSharedMemory) {
  CudaCase two = two_level_cuda_cases().back();
  cpu::KernelLowering kl = cpu::lower_kernel(two.graph, two.kernel, lowering_schedule(two.schedule));
  ASSERT_TRUE(kl.inner.has_value());
  EXPECT_GE(kl.inner_scratch, 128 * 128 * 4);  // the matmul's task tile
  EXPECT_EQ(two.generated.global_scratch_bytes, kl.inner_scratch);
  EXPECT_EQ(two.generated.shared_bytes, kl.scratch_bytes - kl.inner_scratch);
  EXPECT_GT(two.generated.shared_bytes, 0);
  EXPECT_LE(two.generated.shared_bytes, 8 * 128 * 4 * 2);
  Schedule s = two.schedule;
  s.inner.clear();
  CudaKernel one = generate_kernel(two.graph, two.kernel, s, "orc_one");
  EXPECT_EQ(one.shared_bytes, 0);
  EXPECT_GT(one.global_scratch_bytes, kSharedBytes);
  EXPECT_EQ(schedule_str(two.schedule), "tile=128x128 threads=256 unroll=8 inline=1 inner=8x128 split=1");
  EXPECT_EQ(schedule_str(s), "tile=128x128 threads=256 unroll=8 inline=1");
}

TEST(CudaSchedule, DefaultTasksHoldAtMostEightElementsPerThread) {
  ir::Graph g = ir::parse_graph(softmax_rows(64, 3000));
  tile::Kernel k = cpu::whole_kernel(g);
  Schedule s = default_schedule(g, k);
  EXPECT_EQ(s.threads, 128);
  EXPECT_LE(ir::numel(s.tile), 8 * 128);
  EXPECT_EQ(s.tile[0], 1);
  EXPECT_EQ(schedule_str(s), "tile=1x750 threads=128 unroll=8 inline=1");
}


// A task of softmax computes one row: its max and sum are each computed by the whole block
// (warp shuffles, then shared memory across the warps), as are layernorm's Welford
// statistics; argmax computes an element per thread.
TEST(CudaCodegen, RowReductionsAreComputedByGroupsOfThreads) {
  CudaCase softmax = named_cuda_case(0, softmax_rows(64, 3000), "orc_softmax");
  const std::string& src = softmax.generated.source;
  EXPECT_NE(src.find("__shfl_xor_sync"), std::string::npos) << src;
  EXPECT_NE(src.find("const int lane = threadIdx.x % 128;"), std::string::npos) << src;
  CudaCase norm = named_cuda_case(0, layernorm_rows(64, 3000), "orc_norm");
  EXPECT_NE(norm.generated.source.find("__shfl_xor_sync"), std::string::npos) << norm.generated.source;
  CudaCase argmax = named_cuda_case(0, arg_rows("argmax", "f32", 4, 3000), "orc_argmax");
  EXPECT_EQ(argmax.generated.source.find("__shfl_xor_sync"), std::string::npos) << argmax.generated.source;
}


// Loops over a block's threads run over a count known when the kernel is generated: a softmax
// row of 1024 terms is 8 per thread, each loop unrolled whole (its loads issued together);
// unroll=1 keeps strided loops. Nothing reads blockDim: the block size is the schedule's.
TEST(CudaCodegen, LoopsOfFewItemsPerThreadAreUnrolledWhole) {
  CudaCase c = named_cuda_case(0, softmax_rows(64, 1024), "orc_softmax");
  const std::string& src = c.generated.source;
  EXPECT_NE(src.find("#pragma unroll\n"), std::string::npos) << src;
  EXPECT_NE(src.find("for (int k = 0; k < 8; ++k) {"), std::string::npos) << src;
  EXPECT_EQ(src.find("blockDim"), std::string::npos) << src;
  ir::Graph g = ir::parse_graph(softmax_rows(64, 1024));
  Schedule s = default_schedule(g, cpu::whole_kernel(g));
  s.unroll = 1;
  CudaKernel rolled = generate_kernel(g, cpu::whole_kernel(g), s, "orc_rolled");
  EXPECT_EQ(rolled.source.find("for (int k = 0;"), std::string::npos) << rolled.source;
  EXPECT_NE(rolled.source.find("#pragma unroll 1\n"), std::string::npos) << rolled.source;
  EXPECT_NE(rolled.source.find("j += 128)"), std::string::npos) << rolled.source;
  compile_everywhere({c, CudaCase{0, g, cpu::whole_kernel(g), s, rolled}});
}

// Layernorm over rows of 1024: each thread's 8 terms are held in registers and their moments
// computed in two passes (a sum, then squared deviations from the mean), without Welford's
// division per term; rows whose terms do not divide among the threads keep Welford's update.
TEST(CudaCodegen, WholeRowsPerThreadTakeMomentsInTwoPasses) {
  CudaCase even = named_cuda_case(0, layernorm_rows(64, 1024), "orc_even");
  EXPECT_NE(even.generated.source.find("xs[8]"), std::string::npos) << even.generated.source;
  EXPECT_EQ(even.generated.source.find("mean += d /"), std::string::npos) << even.generated.source;
  CudaCase odd = named_cuda_case(0, layernorm_rows(64, 1000), "orc_odd");
  EXPECT_EQ(odd.generated.source.find("xs["), std::string::npos) << odd.generated.source;
  EXPECT_NE(odd.generated.source.find("mean += d /"), std::string::npos) << odd.generated.source;
}

// An output that a later node of the kernel reads is not restrict (its loads after a barrier
// must stay after it), nor is scratch; inputs and outputs read by none are.
TEST(CudaCodegen, ValuesSharedAcrossABarrierAreNotRestrict) {
  std::string text = R"(graph @g {
  input %x : f32[4,256]
  %y : f32[4,1] = reduce sum(%x) over [256] { %x[i0, r0] }
  %z : f32[4,256] = elementwise(%x, %y) { sub(%x[i0, i1], %y[i0, 0]) }
  output %y, %z
})";
  CudaCase c = named_cuda_case(0, text, "orc_shared_output");
  const std::string& src = c.generated.source;
  EXPECT_NE(src.find("const float* __restrict__ a0"), std::string::npos) << src;
  EXPECT_NE(src.find("float* a1,"), std::string::npos) << src;
  EXPECT_NE(src.find("float* __restrict__ a2,"), std::string::npos) << src;
  CudaCase softmax = named_cuda_case(0, softmax_rows(4, 1024), "orc_softmax");
  EXPECT_EQ(softmax.generated.source.find("* __restrict__ s"), std::string::npos) << softmax.generated.source;
  compile_everywhere({c, softmax});
}

// A row sum's anchor is the reduction itself: one row per task, its 8192 terms shared by the
// block's threads.
TEST(CudaSchedule, ReductionAnchorsGetFewElementsPerTask) {
  ir::Graph g = ir::parse_graph(row_reduction("sum", "f32", 8192, {8192}));
  tile::Kernel k = cpu::whole_kernel(g);
  EXPECT_EQ(schedule_str(default_schedule(g, k)), "tile=1x1 threads=128 unroll=8 inline=1");
  CudaCase c = named_cuda_case(0, row_reduction("sum", "f32", 8192, {8192}), "orc_rows");
  EXPECT_EQ(c.generated.blocks, 8192);
  EXPECT_NE(c.generated.source.find("const int lane = threadIdx.x % 128;"), std::string::npos) << c.generated.source;
}


// A transpose's tasks are 32 x 32 tiles, computed walking the dim it reads along fastest
// (contiguous loads) into a tile in shared memory (its rows padded by one element), then
// stored walking the output's rows.
TEST(CudaSchedule, TransposesRunInSquareTilesReadAlongTheirInput) {
  std::string text = R"(graph @t {
  input %x : f32[512,256]
  %y : f32[256,512] = layout(%x) { %x[i1, i0] }
  output %y
}
)";
  ir::Graph g = ir::parse_graph(text);
  EXPECT_EQ(schedule_str(default_schedule(g, cpu::whole_kernel(g))), "tile=32x32 threads=128 unroll=8 inline=1");
  CudaCase c = named_cuda_case(0, text, "orc_t");
  const std::string& src = c.generated.source;
  EXPECT_NE(src.find("__shared__ float tile0[1056];"), std::string::npos) << src;
  size_t load = src.find("const int64_t v0 = lo0_0 + rest % 32;\n        rest /= 32;\n        const int64_t v1 = lo0_1 + rest;");
  size_t store = src.find("const int64_t v1 = lo0_1 + rest % 32;\n        rest /= 32;\n        const int64_t v0 = lo0_0 + rest;");
  EXPECT_NE(load, std::string::npos) << src;
  EXPECT_NE(store, std::string::npos) << src;
  EXPECT_LT(load, store);
}


// A matmul with a bias and relu: tiles of the product (64 x 64 halved until there are 132
// blocks) computed from blocks of A and B staged in shared memory, the epilogue from the
// product's tile. A product too small to fill the GPU that way is a reduction.
TEST(CudaCodegen, MatmulsAreTiledThroughSharedMemory) {
  std::string text = gemm_graph(4, 256, 256, 64, true, false, false);
  ir::Graph g = ir::parse_graph(text);
  EXPECT_EQ(schedule_str(default_schedule(g, cpu::whole_kernel(g))), "tile=1x32x32 threads=128 unroll=8 inline=1");
  ir::Graph small = ir::parse_graph(gemm_graph(2, 100, 130, 300, true, false, false));
  EXPECT_EQ(schedule_str(default_schedule(small, cpu::whole_kernel(small))), "tile=1x1x2 threads=128 unroll=8 inline=1");
  CudaCase c = named_cuda_case(0, text, "orc_mm");
  const std::string& src = c.generated.source;
  EXPECT_NE(src.find("__shared__ float gb"), std::string::npos) << src;
  EXPECT_NE(src.find("acc[j] += ga"), std::string::npos) << src;
}

// A product of one row per head (a decode step's q·Kᵀ and P·V) is a reduction: few elements
// per task, each a group of threads over its terms.
TEST(CudaSchedule, ThinProductsAreReductions) {
  ir::Graph pv = ir::parse_graph(R"(graph @pv {
  input %p : f32[4,1,512]
  input %v : f32[4,512,64]
  %y : f32[4,1,64] = matmul(%p, %v) {trans_a=false, trans_b=false}
  output %y
}
)");
  EXPECT_EQ(schedule_str(default_schedule(pv, cpu::whole_kernel(pv))), "tile=1x1x2 threads=128 unroll=8 inline=1");
  ir::Graph qk = ir::parse_graph(R"(graph @qk {
  input %q : f32[4,1,64]
  input %k : f32[4,512,64]
  %y : f32[4,1,512] = matmul(%q, %k) {trans_a=false, trans_b=true}
  output %y
}
)");
  EXPECT_EQ(schedule_str(default_schedule(qk, cpu::whole_kernel(qk))), "tile=1x1x16 threads=128 unroll=8 inline=1");
}


// A product's tiles are halved, one side at a time, until there is a block per multiprocessor:
// 256 x 256 outputs are 16 tiles of 64 x 64, 64 of 32 x 32, 128 of 16 x 32, 256 of 16 x 16; an
// A100 (108) takes 16 x 32, an H100 (132) 16 x 16; with 300 multiprocessors even 16 x 16
// cannot fill the GPU: the product is a reduction.
TEST(CudaSchedule, ProductTilesFillTheTargetsMultiprocessors) {
  ir::Graph g = ir::parse_graph(R"(graph @mm {
  input %a : f32[256,128]
  input %b : f32[128,256]
  %y : f32[256,256] = matmul(%a, %b) {trans_a=false, trans_b=false}
  output %y
}
)");
  tile::Kernel k = cpu::whole_kernel(g);
  EXPECT_EQ(schedule_str(default_schedule(g, k, 16)), "tile=64x64 threads=128 unroll=8 inline=1");
  EXPECT_EQ(schedule_str(default_schedule(g, k, 48)), "tile=32x32 threads=128 unroll=8 inline=1");
  EXPECT_EQ(schedule_str(default_schedule(g, k, 108)), "tile=16x32 threads=128 unroll=8 inline=1");
  EXPECT_EQ(schedule_str(default_schedule(g, k, 132)), "tile=16x16 threads=128 unroll=8 inline=1");
  EXPECT_NE(schedule_str(default_schedule(g, k, 300)).rfind("tile=16x16", 0), 0u);
}

// The module ends with its descriptor (include/orchid/cuda_abi.h): the launch every kernel
// was generated for, which the runtime checks a plan's steps against.
TEST(CudaCodegen, ModulesDescribeTheirKernelsLaunches) {
  CudaCase a = named_cuda_case(0, softmax_rows(64, 3000), "orc_cuda_0");
  CudaCase b = named_cuda_case(0, gather_graph(), "orc_cuda_1");
  std::string src = module_source({a.generated, b.generated});
  auto fields = [](const CudaKernel& k) {
    return std::to_string(k.inputs.size() + k.outputs.size()) + "LL, " + std::to_string(k.blocks) + "LL, " +
           std::to_string(k.threads) + "LL, " + std::to_string(k.shared_bytes) + "LL, " +
           std::to_string(k.global_scratch_bytes) + "LL";
  };
  std::string sizes;
  for (const CudaKernel* k : {&a.generated, &b.generated})
    for (int64_t bytes : k->arg_bytes) sizes += ", " + std::to_string(bytes) + "LL";
  EXPECT_NE(src.find("extern \"C\" __device__ const long long orc_cuda_module[] = {2LL, " + fields(a.generated) + ", " +
                     fields(b.generated) + sizes + "};"),
            std::string::npos)
      << src.substr(src.size() - 300);
}

}  // namespace
}  // namespace orchid::codegen::cuda
