// Library steps on a GPU against the reference interpreter, each as a one-step CUDA artifact
// run through CudaModel (so inside its CUDA graph): cuBLASLt (runtime/cuda/lt_step.h) on seeded
// random matmuls (transposes, numpy-broadcast batches) with random epilogues (scale, bias,
// residual, relu) and on products of model size; cuDNN (dnn_step.h) on seeded random
// convolutions (2-D and 3-D, strides, dilations, groups) and on convolutions of model size.
// Skipped where no GPU, or not the library, is.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "interp/compare.h"
#include "interp/interp.h"
#include "interp/random_inputs.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "runtime/cuda/dnn_step.h"
#include "runtime/cuda/lt_step.h"
#include "runtime/cuda/measure.h"
#include "runtime/cuda/model.h"
#include "runtime/weights.h"
#include "testlib/random_linear.h"
#include "testlib/temp_dir.h"
#include "testlib/text.h"

namespace orchid::runtime::cuda {
namespace {

void skip_without(bool (*library_available)(std::string*)) {
  std::string why;
  if (!Device::available(&why)) GTEST_SKIP() << why;
  if (!library_available(&why)) GTEST_SKIP() << why;
}

// g as a CUDA artifact of one library step in `dir`: its inputs and output the plan's.
void write_library_artifact(const ir::Graph& g, StepImpl impl, const std::string& dir,
                            PlanPrecision precision = PlanPrecision::Fp32) {
  Plan p;
  p.device = PlanDevice::Cuda;
  p.precision = precision;
  p.target = "cuda";
  p.graph_name = "lt";
  PlanStep step;
  step.name = "lib";
  step.impl = impl;
  step.ir = ir::print_graph(g);
  for (ir::ValueId v : g.inputs()) {
    auto id = static_cast<int32_t>(p.buffers.size());
    p.buffers.push_back({"in" + std::to_string(id), g.type(v), BufferKind::Input});
    p.inputs.push_back(id);
    step.args.push_back(id);
  }
  step.num_inputs = static_cast<int32_t>(step.args.size());
  auto out = static_cast<int32_t>(p.buffers.size());
  p.buffers.push_back({"out", g.type(g.outputs()[0]), BufferKind::Output});
  p.outputs.push_back(out);
  step.args.push_back(out);
  p.steps.push_back(step);
  WeightsLayout w = write_weights(dir + "/weights.bin", {});
  p.weights = {"weights.bin", w.bytes, w.checksum};
  write_plan(p, dir);
}

// The step's output against the f64 interpreter, with the algorithm timed at load and with
// the library's heuristic choice; f32 accumulation over k terms of O(1) values is allowed an
// error growing with its square root.
void check_on_gpu(const ir::Graph& g, StepImpl impl, uint64_t seed, int64_t k) {
  testlib::TempDir dir("orchid_library");
  write_library_artifact(g, impl, dir.str());
  std::vector<ir::Tensor> inputs = interp::random_inputs(g, seed);
  std::vector<ir::Tensor> want = interp::run(g, inputs);
  for (bool timed : {true, false}) {
    SCOPED_TRACE(timed ? "algorithm timed at load" : "the heuristic's algorithm");
    std::unique_ptr<CudaModel> m = CudaModel::load(dir.str(), {.time_library_algorithms = timed});
    std::vector<ir::Tensor> got = m->run(inputs);
    ASSERT_EQ(got.size(), 1u);
    double atol = 2e-5 * std::sqrt(static_cast<double>(std::max<int64_t>(k, 1)));
    EXPECT_EQ(interp::compare_tensors(got[0], want[0], 1e-4, atol), "");
    EXPECT_EQ(m->run(inputs)[0], got[0]) << "a second run differs";
  }
}

// The relative L2 error of g's one output, run as a one-step artifact of `impl` in a plan of
// `precision` on seeded random inputs, against the f64 interpreter; why in `why` where the
// outputs cannot be compared.
double error_at_precision(const ir::Graph& g, StepImpl impl, PlanPrecision precision, uint64_t seed, std::string* why) {
  testlib::TempDir dir("orchid_library_precision");
  write_library_artifact(g, impl, dir.str(), precision);
  std::unique_ptr<CudaModel> m = CudaModel::load(dir.str());
  std::vector<ir::Tensor> inputs = interp::random_inputs(g, seed);
  return interp::relative_l2(m->run(inputs)[0], interp::run(g, inputs)[0], why);
}

std::string dims_text(const ir::Dims& d) { return ir::type_str({ir::DType::F32, d}); }

// A matmul of the case's operands with, each by a coin, a scale (where there is no bias), a
// bias, a residual and a relu.
std::string random_graph(const testlib::MatMulCase& mc, Rng& rng) {
  ir::TensorType out = ir::matmul_result_type({ir::DType::F32, mc.a}, {ir::DType::F32, mc.b}, {mc.ta, mc.tb});
  std::string idx;
  for (size_t j = 0; j < out.shape.size(); ++j) idx += (j ? ", i" : "i") + std::to_string(j);
  std::string last_i = "i" + std::to_string(out.shape.size() - 1);
  std::string t = dims_text(out.shape);
  std::string s = "graph @g {\n  input %a : " + dims_text(mc.a) + "\n  input %b : " + dims_text(mc.b) + "\n";
  bool bias = rng.coin(), residual = rng.coin(), relu = rng.coin();
  bool scale = !bias && rng.coin();
  if (bias) s += "  input %bias : " + dims_text({out.shape.back()}) + "\n";
  if (residual) s += "  input %r : " + t + "\n";
  s += "  %y : " + t + " = " + testlib::matmul_rhs(mc.ta, mc.tb) + "\n";
  std::string prev = "%y";
  if (scale) {
    s += "  %ys : " + t + " = elementwise(" + prev + ") { mul(" + prev + "[" + idx + "], 0.375:f32) }\n";
    prev = "%ys";
  }
  if (bias) {
    s += "  %yb : " + t + " = elementwise(" + prev + ", %bias) { add(" + prev + "[" + idx + "], %bias[" + last_i + "]) }\n";
    prev = "%yb";
  }
  if (residual) {
    s += "  %yr : " + t + " = elementwise(" + prev + ", %r) { add(" + prev + "[" + idx + "], %r[" + idx + "]) }\n";
    prev = "%yr";
  }
  if (relu) {
    s += "  %z : " + t + " = elementwise(" + prev + ") { max(" + prev + "[" + idx + "], 0:f32) }\n";
    prev = "%z";
  }
  return s + "  output " + prev + "\n}\n";
}

void check_lt(const ir::Graph& g, uint64_t seed, int64_t k) {
  ASSERT_TRUE(match_lt_matmul(g).matmul) << match_lt_matmul(g).reason;
  check_on_gpu(g, StepImpl::CublasLt, seed, k);
}

void check_dnn(const ir::Graph& g, uint64_t seed, int64_t k) {
  ASSERT_TRUE(match_dnn_conv(g).conv) << match_dnn_conv(g).reason;
  check_on_gpu(g, StepImpl::Cudnn, seed, k);
}

TEST(CublasLtOnGpu, RandomMatMulsWithEpiloguesMatchTheInterpreter) {
  skip_without(cublaslt_available);
  if (IsSkipped()) return;
  int ran = 0;
  for (uint64_t seed = 1; seed <= 80; ++seed) {
    Rng rng(seed * 7919);
    testlib::MatMulCase mc = testlib::random_matmul(rng);
    std::string text = random_graph(mc, rng);
    SCOPED_TRACE("seed " + std::to_string(seed) + "\n" + text);
    ir::Graph g = ir::parse_graph(text);
    if (!match_lt_matmul(g).matmul) continue;  // batches that do not collapse
    ++ran;
    check_lt(g, seed, mc.k);
  }
  EXPECT_GE(ran, 50);
}

TEST(CublasLtOnGpu, ModelSizedProductsMatchTheInterpreter) {
  skip_without(cublaslt_available);
  if (IsSkipped()) return;
  // A linear layer with bias and relu; attention's Q·Kᵀ over 8 heads.
  check_lt(ir::parse_graph(R"(graph @linear {
  input %x : f32[256,768]
  input %w : f32[768,512]
  input %bias : f32[512]
  %y : f32[256,512] = matmul(%x, %w) {trans_a=false, trans_b=false}
  %yb : f32[256,512] = elementwise(%y, %bias) { add(%y[i0, i1], %bias[i1]) }
  %z : f32[256,512] = elementwise(%yb) { max(%yb[i0, i1], 0:f32) }
  output %z
})"), 5, 768);
  check_lt(ir::parse_graph(R"(graph @scores {
  input %q : f32[8,128,64]
  input %k : f32[8,128,64]
  %s : f32[8,128,128] = matmul(%q, %k) {trans_a=false, trans_b=true}
  output %s
})"), 6, 64);
}

// With TF32 allowed, a product and a convolution stay within a TF32 plan's tolerance.
TEST(LibrariesOnGpu, Tf32StaysWithinItsTolerance) {
  skip_without(cudnn_available);
  if (IsSkipped()) return;
  skip_without(cublaslt_available);
  if (IsSkipped()) return;
  std::vector<std::pair<StepImpl, std::string>> cases = {{StepImpl::CublasLt, R"(graph @linear {
  input %x : f32[256,768]
  input %w : f32[768,512]
  %y : f32[256,512] = matmul(%x, %w) {trans_a=false, trans_b=false}
  output %y
})"},
                                                         {StepImpl::Cudnn, R"(graph @conv {
  input %x : f32[4,64,56,56]
  input %w : f32[128,64,3,3]
  %y : f32[4,128,56,56] = conv(%x, %w) {strides=[1,1], dilations=[1,1], pads_begin=[1,1], pads_end=[1,1], groups=1}
  output %y
})"}};
  for (const auto& [impl, text] : cases) {
    ir::Graph g = ir::parse_graph(text);
    std::string why;
    double e = error_at_precision(g, impl, PlanPrecision::Tf32, 12, &why);
    EXPECT_LE(e, default_tolerance(PlanPrecision::Tf32)) << g.name << " " << why;
    std::printf("%s with TF32 allowed: relative L2 error %.2e\n", g.name.c_str(), e);
  }
}

// --precision fp16|bf16: 16-bit products (bias and relu computed in f32 between casts, as
// rewrite/store_precision.h writes them) and convolutions on tensor cores, within the plan's
// tolerance of the interpreter on the same 16-bit graph.
TEST(LibrariesOnGpu, SixteenBitStepsMatchTheInterpreter) {
  skip_without(cudnn_available);
  if (IsSkipped()) return;
  skip_without(cublaslt_available);
  if (IsSkipped()) return;
  const std::string linear = R"(graph @linear {
  input %x : T[256,768]
  input %w : T[768,512]
  input %bias : T[512]
  %y : T[256,512] = matmul(%x, %w) {trans_a=false, trans_b=false}
  %yb : T[256,512] = elementwise(%y, %bias) { cast<T>(add(cast<f32>(%y[i0, i1]), cast<f32>(%bias[i1]))) }
  %z : T[256,512] = elementwise(%yb) { cast<T>(max(cast<f32>(%yb[i0, i1]), 0:f32)) }
  output %z
})";
  const std::string scores = R"(graph @scores {
  input %q : T[8,128,64]
  input %k : T[8,128,64]
  %s : T[8,128,128] = matmul(%q, %k) {trans_a=false, trans_b=true}
  %t : T[8,128,128] = elementwise(%s) { cast<T>(mul(cast<f32>(%s[i0, i1, i2]), 0.125:f32)) }
  output %t
})";
  const std::string conv = R"(graph @conv {
  input %x : T[4,64,56,56]
  input %w : T[128,64,3,3]
  %y : T[4,128,56,56] = conv(%x, %w) {strides=[1,1], dilations=[1,1], pads_begin=[1,1], pads_end=[1,1], groups=1}
  output %y
})";
  for (auto [t, precision] : {std::pair{"bf16", PlanPrecision::Bf16}, std::pair{"f16", PlanPrecision::Fp16}}) {
    for (const auto& [impl, generic] : {std::pair{StepImpl::CublasLt, linear}, std::pair{StepImpl::CublasLt, scores},
                                        std::pair{StepImpl::Cudnn, conv}}) {
      std::string dtype(t);
      std::string text = testlib::replaced_all(testlib::replaced_all(generic, " T", " " + dtype), "<T>", "<" + dtype + ">");
      ir::Graph g = ir::parse_graph(text);
      SCOPED_TRACE(text);
      if (impl == StepImpl::CublasLt) {
        ASSERT_TRUE(match_lt_matmul(g).matmul) << match_lt_matmul(g).reason;
      } else {
        ASSERT_TRUE(match_dnn_conv(g).conv) << match_dnn_conv(g).reason;
      }
      std::string why;
      double e = error_at_precision(g, impl, precision, 13, &why);
      EXPECT_EQ(why, "");
      EXPECT_LE(e, default_tolerance(precision)) << g.name << " " << t;
      std::printf("%s in %s: relative L2 error %.2e\n", g.name.c_str(), t, e);
    }
  }
}

TEST(CudnnOnGpu, RandomConvolutionsMatchTheInterpreter) {
  skip_without(cudnn_available);
  if (IsSkipped()) return;
  int ran = 0;
  for (uint64_t seed = 1; seed <= 120; ++seed) {
    Rng rng(seed * 104729);
    testlib::ConvCase cc = testlib::random_conv(rng);
    // cuDNN pads both ends of a dim alike: the end takes the beginning's padding, and the
    // input grows where the window no longer fits.
    for (size_t d = 0; d < cc.attrs.pads_end.size(); ++d) {
      cc.attrs.pads_end[d] = cc.attrs.pads_begin[d];
      int64_t span = (cc.w[2 + d] - 1) * cc.attrs.dilations[d] + 1;
      cc.x[2 + d] = std::max(cc.x[2 + d], span - 2 * cc.attrs.pads_begin[d]);
    }
    ir::TensorType out = ir::conv_result_type({ir::DType::F32, cc.x}, {ir::DType::F32, cc.w}, cc.attrs);
    std::string text = "graph @g {\n  input %a : " + dims_text(cc.x) + "\n  input %b : " + dims_text(cc.w) + "\n  %y : " +
                       dims_text(out.shape) + " = " + testlib::conv_rhs(cc.attrs) + "\n  output %y\n}\n";
    SCOPED_TRACE("seed " + std::to_string(seed) + "\n" + text);
    ir::Graph g = ir::parse_graph(text);
    if (!match_dnn_conv(g).conv) continue;  // 1-D
    ++ran;
    check_dnn(g, seed, cc.reduction);
  }
  EXPECT_GE(ran, 60);
}

TEST(CudnnOnGpu, ModelSizedConvolutionsMatchTheInterpreter) {
  skip_without(cudnn_available);
  if (IsSkipped()) return;
  // A style-transfer network's first layer; a vision transformer's patch embedding; a strided
  // 3×3 convolution with padding.
  check_dnn(ir::parse_graph(R"(graph @first {
  input %x : f32[1,3,232,232]
  input %w : f32[32,3,9,9]
  %y : f32[1,32,224,224] = conv(%x, %w) {strides=[1,1], dilations=[1,1], pads_begin=[0,0], pads_end=[0,0], groups=1}
  output %y
})"), 7, 243);
  check_dnn(ir::parse_graph(R"(graph @patches {
  input %x : f32[2,3,224,224]
  input %w : f32[192,3,16,16]
  %y : f32[2,192,14,14] = conv(%x, %w) {strides=[16,16], dilations=[1,1], pads_begin=[0,0], pads_end=[0,0], groups=1}
  output %y
})"), 8, 768);
  check_dnn(ir::parse_graph(R"(graph @down {
  input %x : f32[4,64,56,56]
  input %w : f32[128,64,3,3]
  %y : f32[4,128,28,28] = conv(%x, %w) {strides=[2,2], dilations=[1,1], pads_begin=[1,1], pads_end=[1,1], groups=1}
  output %y
})"), 9, 576);
}

// The GPU's own figures, which refine a CUDA target preset: both measured, finite and
// positive (printed; how fast is the benchmark's business, not a test's).
TEST(GpuMeasurement, CopyAndProductRatesAreMeasured) {
  skip_without(cublaslt_available);
  if (IsSkipped()) return;
  GpuMeasurement m = measure_gpu();
  std::printf("copy %.0f GB/s, f32 products %.0f GFLOP/s\n", m.copy_gbs, m.sgemm_gflops);
  EXPECT_TRUE(std::isfinite(m.copy_gbs) && m.copy_gbs > 0) << m.copy_gbs;
  EXPECT_TRUE(std::isfinite(m.sgemm_gflops) && m.sgemm_gflops > 0) << m.sgemm_gflops;
}

}  // namespace
}  // namespace orchid::runtime::cuda
