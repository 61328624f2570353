// `--target cuda` through the pipeline: the graphs of the pipeline tests compiled for NVIDIA
// GPUs — every step a CUDA kernel of one module compiled for every architecture, views as
// aliases, opaque routines refused by name — verified on the GPU where one is present (else
// written unverified, saying why); and the plan's CUDA invariants enforced when it is read.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "driver/cuda_plan_builder.h"
#include "driver/pipeline.h"
#include "driver/pipeline_graphs.h"
#include "ir/parser.h"
#include "runtime/plan.h"
#include "testlib/errors.h"
#include "testlib/temp_dir.h"

namespace orchid::driver {
namespace {

namespace fs = std::filesystem;

CompileOptions cuda_options(const std::string& out_dir) {
  CompileOptions o;
  o.model_path = "test.oir";
  o.out_dir = out_dir;
  o.device = runtime::PlanDevice::Cuda;
  o.build.compiler.cache_dir = fs::temp_directory_path() / "orchid-driver-test-objects";
  o.build.target = "cuda";
  return o;
}

// Compiles g for CUDA and checks the artifact: device, one CUBIN per architecture, cuda steps;
// verified exactly where a GPU is present.
runtime::Plan compile_for_cuda(const ir::Graph& g, const std::string& out,
                               runtime::PlanPrecision precision = runtime::PlanPrecision::Fp32) {
  CompileOptions o = cuda_options(out);
  o.build.precision = precision;  // verified to its default tolerance
  CompileResult r = compile_graph(g, o);
  std::string no_gpu;
  bool gpu = cuda_device_present(&no_gpu);
  EXPECT_EQ(r.verified, gpu);
  if (gpu) {
    EXPECT_TRUE(r.verify.ok()) << r.verify.summary();
  } else {
    EXPECT_EQ(r.not_verified, "no GPU here: " + no_gpu);
  }
  runtime::Plan plan = runtime::read_plan(out);
  EXPECT_EQ(plan.device, runtime::PlanDevice::Cuda);
  std::vector<std::string> archs;
  for (const runtime::PlanLibrary& l : plan.libraries) {
    archs.push_back(l.arch);
    EXPECT_TRUE(fs::exists(fs::path(out) / l.file)) << l.file;
  }
  if (!plan.steps.empty()) {
    EXPECT_EQ(archs, (std::vector<std::string>{"sm_80", "sm_90a"}));
  }
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    if (plan.steps[i].impl != runtime::StepImpl::Cuda) {
      EXPECT_TRUE(runtime::is_gpu_step(plan.steps[i].impl));
      continue;
    }
    EXPECT_GT(plan.steps[i].threads, 0);
  }
  return plan;
}

std::vector<std::string> step_impls(const runtime::Plan& plan) {
  std::vector<std::string> out;
  for (const runtime::PlanStep& s : plan.steps) out.emplace_back(runtime::step_impl_name(s.impl));
  return out;
}

TEST(CudaPipeline, EveryGraphCompilesForCuda) {
  if (!cuda_codegen_built()) GTEST_SKIP() << "built without the CUDA toolkit";
  testlib::TempDir dir("orchid_driver_cuda");
  compile_for_cuda(onnx_mlp(), dir.file("mlp"));
  for (const char* text : {kViews, kPassThrough, kNoSteps, kIntegers, kHalf}) {
    ir::Graph g = ir::parse_graph(text);
    SCOPED_TRACE(g.name);
    compile_for_cuda(g, dir.file(g.name));
  }
}

// A view a kernel would compute as an output is an alias of its source's bytes, not a copy.
TEST(CudaPipeline, ViewsAreAliases) {
  if (!cuda_codegen_built()) GTEST_SKIP() << "built without the CUDA toolkit";
  testlib::TempDir dir("orchid_driver_cuda_views");
  runtime::Plan plan = compile_for_cuda(ir::parse_graph(kViews), dir.file("views"));
  std::vector<std::string> aliases;
  for (const runtime::PlanBuffer& b : plan.buffers)
    if (b.alias >= 0) aliases.push_back(b.name + " of " + plan.buffers[static_cast<size_t>(b.alias)].name);
  EXPECT_EQ(aliases, std::vector<std::string>{"r of y"});
}

TEST(CudaPipeline, OpaqueRoutinesAreRefusedByName) {
  if (!cuda_codegen_built()) GTEST_SKIP() << "built without the CUDA toolkit";
  testlib::TempDir dir("orchid_driver_cuda_opaque");
  std::string msg = testlib::error_of([&] { compile_graph(ir::parse_graph(kOpaque), cuda_options(dir.file("o"))); });
  EXPECT_NE(msg.find("routine topk has no CUDA implementation yet (it runs on the CPU only)"), std::string::npos) << msg;
  EXPECT_FALSE(fs::exists(dir.file("o")));
}

// A large matmul calls cuBLASLt with its bias as an epilogue, and the tanh after it, which
// cuBLASLt cannot apply, is a generated step of its own; a small one stays generated, fused
// with its bias; without GPU libraries every step is generated.
TEST(CudaPipeline, LargeMatmulsCallCublasLt) {
  if (!cuda_codegen_built()) GTEST_SKIP() << "built without the CUDA toolkit";
  const char* text = R"(graph @dense {
  input %x : f32[128,256]
  input %w : f32[256,512]
  input %b : f32[512]
  input %xs : f32[8,16]
  input %ws : f32[16,8]
  %y : f32[128,512] = matmul(%x, %w) {trans_a=false, trans_b=false}
  %yb : f32[128,512] = elementwise(%y, %b) { add(%y[i0, i1], %b[i1]) }
  %z : f32[128,512] = elementwise(%yb) { tanh(%yb[i0, i1]) }
  %s : f32[8,8] = matmul(%xs, %ws) {trans_a=false, trans_b=false}
  %sb : f32[8,8] = elementwise(%s) { add(%s[i0, i1], 1:f32) }
  output %z, %sb
})";
  testlib::TempDir dir("orchid_driver_cuda_lt");
  runtime::Plan plan = compile_for_cuda(ir::parse_graph(text), dir.file("lt"));
  EXPECT_EQ(step_impls(plan), (std::vector<std::string>{"cublaslt", "cuda", "cuda"}));
  ASSERT_FALSE(plan.steps.empty());
  EXPECT_NE(plan.steps[0].ir.find("add("), std::string::npos) << "the bias is in the cuBLASLt step";
  CompileOptions o = cuda_options(dir.file("gen"));
  o.gpu_libraries = false;
  compile_graph(ir::parse_graph(text), o);
  EXPECT_EQ(step_impls(runtime::read_plan(dir.file("gen"))), (std::vector<std::string>{"cuda", "cuda"}));
  // TF32 allowed: the same steps, the plan saying so, verified (where a GPU is) to its tolerance.
  CompileOptions t = cuda_options(dir.file("tf32"));
  t.build.precision = runtime::PlanPrecision::Tf32;
  CompileResult r = compile_graph(ir::parse_graph(text), t);
  runtime::Plan tf32 = runtime::read_plan(dir.file("tf32"));
  EXPECT_EQ(tf32.precision, runtime::PlanPrecision::Tf32);
  EXPECT_EQ(step_impls(tf32), (std::vector<std::string>{"cublaslt", "cuda", "cuda"}));
  if (r.verified) {
    EXPECT_TRUE(r.verify.ok()) << r.verify.summary();
  }
}

// --precision bf16|fp16: the values between steps stored in 16 bits, the products cuBLASLt
// calls in that dtype, the interface f32; every kernel compiles, verified where a GPU is.
TEST(CudaPipeline, SixteenBitStorageCallsCublasLtInThatDtype) {
  if (!cuda_codegen_built()) GTEST_SKIP() << "built without the CUDA toolkit";
  const char* text = R"(graph @dense {
  input %x : f32[128,256]
  const %w : f32[256,512] = splat(0.0625)
  const %b : f32[512] = splat(0.5)
  %y : f32[128,512] = matmul(%x, %w) {trans_a=false, trans_b=false}
  %yb : f32[128,512] = elementwise(%y, %b) { add(%y[i0, i1], %b[i1]) }
  %z : f32[128,512] = elementwise(%yb) { tanh(%yb[i0, i1]) }
  %m : f32[128,1] = reduce sum(%z) over [512] { %z[i0, r0] }
  %o : f32[128,512] = elementwise(%z, %m) { div(%z[i0, i1], %m[i0, 0]) }
  output %o
})";
  testlib::TempDir dir("orchid_driver_cuda_16");
  for (auto [precision, t] : {std::pair{runtime::PlanPrecision::Bf16, "bf16"}, std::pair{runtime::PlanPrecision::Fp16, "f16"}}) {
    SCOPED_TRACE(t);
    runtime::Plan plan = compile_for_cuda(ir::parse_graph(text), dir.file(t), precision);
    EXPECT_EQ(plan.precision, precision);
    auto lt = std::find_if(plan.steps.begin(), plan.steps.end(),
                           [](const runtime::PlanStep& s) { return s.impl == runtime::StepImpl::CublasLt; });
    ASSERT_NE(lt, plan.steps.end()) << "no cuBLASLt step";
    EXPECT_NE(lt->ir.find(std::string(t) + "[128,512] = matmul"), std::string::npos) << lt->ir;
    EXPECT_NE(lt->ir.find("add("), std::string::npos) << "the bias is in the cuBLASLt step";
    for (int32_t b : plan.inputs) EXPECT_EQ(plan.buffers[static_cast<size_t>(b)].type.dtype, ir::DType::F32);
    for (int32_t b : plan.outputs) EXPECT_EQ(plan.buffers[static_cast<size_t>(b)].type.dtype, ir::DType::F32);
  }
}

// The GPU's multiprocessors size a generated product's tiles: 256 × 256 outputs in 128 tiles
// of 16 × 32 for an A100's 108, in 256 of 16 × 16 for an H100's 132 (codegen/cuda/schedule.h):
// a block per tile.
TEST(CudaPipeline, ProductTilesFollowTheGpusMultiprocessors) {
  if (!cuda_codegen_built()) GTEST_SKIP() << "built without the CUDA toolkit";
  ir::Graph g = ir::parse_graph(R"(graph @mm {
  input %a : f32[256,128]
  input %b : f32[128,256]
  %y : f32[256,256] = matmul(%a, %b) {trans_a=false, trans_b=false}
  output %y
})");
  testlib::TempDir dir("orchid_driver_cuda_sms");
  std::vector<int64_t> blocks;
  for (int sms : {108, 132}) {
    CompileOptions o = cuda_options(dir.file("sms" + std::to_string(sms)));
    o.gpu_libraries = false;
    o.build.gpu_multiprocessors = sms;
    compile_graph(g, o);
    runtime::Plan plan = runtime::read_plan(o.out_dir);
    ASSERT_EQ(plan.steps.size(), 1u);
    blocks.push_back(plan.steps[0].tasks);
  }
  EXPECT_EQ(blocks, (std::vector<int64_t>{128, 256}));
}

// A 3×3 convolution calls cuDNN, its bias and relu a generated step after it; a 1×1 one stays
// generated, fused with its epilogue.
TEST(CudaPipeline, ConvolutionsWithLargerKernelsCallCudnn) {
  if (!cuda_codegen_built()) GTEST_SKIP() << "built without the CUDA toolkit";
  const char* text = R"(graph @convs {
  input %x : f32[1,8,16,16]
  input %w : f32[16,8,3,3]
  input %b : f32[16,1,1]
  input %w1 : f32[4,16,1,1]
  %y : f32[1,16,16,16] = conv(%x, %w) {strides=[1,1], dilations=[1,1], pads_begin=[1,1], pads_end=[1,1], groups=1}
  %yb : f32[1,16,16,16] = elementwise(%y, %b) { max(add(%y[i0, i1, i2, i3], %b[i1, 0, 0]), 0:f32) }
  %z : f32[1,4,16,16] = conv(%yb, %w1) {strides=[1,1], dilations=[1,1], pads_begin=[0,0], pads_end=[0,0], groups=1}
  %zr : f32[1,4,16,16] = elementwise(%z) { max(%z[i0, i1, i2, i3], 0:f32) }
  output %zr
})";
  testlib::TempDir dir("orchid_driver_cuda_dnn");
  runtime::Plan plan = compile_for_cuda(ir::parse_graph(text), dir.file("dnn"));
  std::vector<std::string> impls = step_impls(plan);
  ASSERT_FALSE(impls.empty());
  EXPECT_EQ(impls[0], "cudnn");
  EXPECT_EQ(std::count(impls.begin(), impls.end(), "cudnn"), 1);
  // A convolution of a transposed input: the transpose a generated step, then cuDNN.
  const char* transposed = R"(graph @prologue {
  input %x : f32[1,16,16,8]
  input %w : f32[16,8,3,3]
  %t : f32[1,8,16,16] = layout(%x) { %x[i0, i2, i3, i1] }
  %y : f32[1,16,14,14] = conv(%t, %w) {strides=[1,1], dilations=[1,1], pads_begin=[0,0], pads_end=[0,0], groups=1}
  output %y
})";
  EXPECT_EQ(step_impls(compile_for_cuda(ir::parse_graph(transposed), dir.file("prologue"))),
            (std::vector<std::string>{"cuda", "cudnn"}));
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Reading a CUDA plan holds it to its invariants, naming the field.
TEST(CudaPlan, InvariantsAreCheckedWhenRead) {
  if (!cuda_codegen_built()) GTEST_SKIP() << "built without the CUDA toolkit";
  testlib::TempDir dir("orchid_driver_cuda_plan");
  compile_for_cuda(onnx_mlp(), dir.file("mlp"));
  std::string text = read_text(fs::path(dir.file("mlp")) / runtime::kPlanFileName);
  runtime::Plan plan = runtime::plan_from_json(text);
  EXPECT_EQ(runtime::plan_from_json(runtime::plan_to_json(plan)), plan);
  auto error_with = [&](const std::function<void(runtime::Plan&)>& change) {
    runtime::Plan p = plan;
    change(p);
    return testlib::error_of([&] { runtime::plan_from_json(runtime::plan_to_json(p)); });
  };
  EXPECT_NE(error_with([](runtime::Plan& p) { p.steps[0].threads = 33; }).find("steps[0] ('k0'): threads: 33 is not a multiple of 32"),
            std::string::npos);
  EXPECT_NE(error_with([](runtime::Plan& p) { p.device = runtime::PlanDevice::Cpu; }).find("libraries[0].arch: only cuda plans' libraries have one"),
            std::string::npos);
  EXPECT_NE(error_with([](runtime::Plan& p) { p.libraries[1].arch = "sm_80"; }).find("libraries[1].arch: sm_80 is listed twice"),
            std::string::npos);
  EXPECT_NE(error_with([](runtime::Plan& p) { p.steps[0].impl = runtime::StepImpl::Generated; p.steps[0].library = 0; })
                .find("a generated step in a cuda plan"),
            std::string::npos);
}

}  // namespace
}  // namespace orchid::driver
