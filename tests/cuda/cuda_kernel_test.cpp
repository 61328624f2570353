// The CUDA differential suite run on a GPU: every kernel of codegen/cuda_cases.h computes what
// the reference interpreter computes on the kernel's own subgraph. Skipped where no GPU is.
#include <gtest/gtest.h>

#include "codegen/cuda_harness.h"

namespace orchid::codegen::cuda {
namespace {

void skip_without_gpu() {
  std::string why;
  if (!runtime::cuda::Device::available(&why)) GTEST_SKIP() << why;
  if (!Nvrtc::available(&why)) GTEST_SKIP() << why;
}

class RandomCudaKernelsOnGpu : public ::testing::TestWithParam<int> {};

TEST_P(RandomCudaKernelsOnGpu, MatchInterpreter) {
  skip_without_gpu();
  if (IsSkipped()) return;
  check_on_gpu(random_cuda_cases(1000 + 1000 * GetParam(), 40));
}

INSTANTIATE_TEST_SUITE_P(Batches, RandomCudaKernelsOnGpu, ::testing::Range(0, 3));

TEST(NamedCudaKernelsOnGpu, MatchInterpreter) {
  skip_without_gpu();
  if (IsSkipped()) return;
  check_on_gpu(named_cuda_cases(named_graphs()));
}

// Welder's fused examples under two-level schedules (cuda_cases.h, two_level_cuda_cases).
TEST(TwoLevelCudaKernelsOnGpu, MatchInterpreter) {
  skip_without_gpu();
  if (IsSkipped()) return;
  check_on_gpu(two_level_cuda_cases());
}

// An index out of bounds is reported through the error word, and reads index 0.
TEST(CudaKernelsOnGpu, IndexChecksReportThroughTheErrorWord) {
  skip_without_gpu();
  if (IsSkipped()) return;
  const runtime::cuda::Device& dev = runtime::cuda::Device::get();
  std::vector<CudaCase> cases;
  cases.push_back(named_cuda_case(0, gather_graph(), "orc_gather"));
  runtime::cuda::Module m = load_module(dev, cases);
  ir::Tensor x(ir::TensorType{ir::DType::F32, {64}}), idx(ir::TensorType{ir::DType::I64, {8}});
  for (int i = 0; i < 64; ++i) x.set_f64(i, 100 + i);
  for (int i = 0; i < 8; ++i) idx.set_i64(i, 7 * i + 3);
  const CudaKernel& k = cases[0].generated;
  std::vector<ir::Tensor> ins = {x, idx};
  if (k.inputs[0] != cases[0].graph.inputs()[0]) std::swap(ins[0], ins[1]);
  GpuResult ok = run_on_gpu(dev, m, k, ins, {cases[0].graph.type(k.outputs[0])});
  EXPECT_EQ(ok.error, 0);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(ok.outputs[0].get_f64(i), 100 + 7 * i + 3);
  (k.inputs[0] == cases[0].graph.inputs()[0] ? ins[1] : ins[0]).set_i64(5, 64);
  GpuResult bad = run_on_gpu(dev, m, k, ins, {cases[0].graph.type(k.outputs[0])});
  EXPECT_EQ(bad.error, 1);
  EXPECT_EQ(bad.outputs[0].get_f64(5), 100);
}

}  // namespace
}  // namespace orchid::codegen::cuda
