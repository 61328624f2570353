// A CUDA module's kernel descriptor (include/orchid/cuda_abi.h) as the code generator writes it,
// and the checks of a plan against it (runtime/cuda/descriptor.h), on every machine: a plan
// that launches a kernel otherwise than it was generated for, or on a buffer of another size
// than it reads or writes, is refused before anything runs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/cuda/codegen.h"
#include "codegen/cuda/schedule.h"
#include "ir/parser.h"
#include "orchid/cuda_abi.h"
#include "runtime/cuda/descriptor.h"
#include "testlib/errors.h"

namespace orchid::runtime::cuda {
namespace {

// The integers of the module's descriptor array, read back from its source.
std::vector<int64_t> descriptor_of(const std::string& source) {
  size_t at = source.find(ORCHID_CUDA_MODULE_DESCRIPTOR);
  EXPECT_NE(at, std::string::npos);
  size_t open = source.find('{', at), close = source.find('}', open);
  std::vector<int64_t> out;
  std::string list = source.substr(open + 1, close - open - 1);
  for (size_t i = 0; i < list.size();) {
    size_t end = list.find(',', i);
    out.push_back(std::stoll(list.substr(i, end - i)));
    if (end == std::string::npos) break;
    i = end + 1;
  }
  return out;
}

struct OneKernel {
  Plan plan;
  std::vector<int64_t> descriptor;
};

// y = x + 1 over f32[64] as a one-step CUDA plan, and its module's descriptor.
OneKernel one_kernel() {
  ir::Graph g = ir::parse_graph(R"(graph @g {
  input %x : f32[64]
  %y : f32[64] = elementwise(%x) { add(%x[i0], 1:f32) }
  output %y
})");
  tile::Kernel k{{g.value(g.outputs()[0]).node}, {g.outputs()[0]}};
  codegen::cuda::CudaKernel ck = codegen::cuda::generate_kernel(g, k, codegen::cuda::default_schedule(g, k), "orc_cuda_0");
  OneKernel o;
  o.descriptor = descriptor_of(codegen::cuda::module_source({ck}));
  o.plan.device = PlanDevice::Cuda;
  o.plan.buffers = {{"x", g.type(g.inputs()[0]), BufferKind::Input}, {"y", g.type(g.outputs()[0]), BufferKind::Output}};
  PlanStep s;
  s.name = "add";
  s.impl = StepImpl::Cuda;
  s.args = {0, 1};
  s.num_inputs = 1;
  s.kernel = 0;
  s.tasks = ck.blocks;
  s.threads = ck.threads;
  s.shared_bytes = ck.shared_bytes;
  s.scratch_bytes = ck.global_scratch_bytes;
  o.plan.steps.push_back(s);
  return o;
}

TEST(CudaDescriptor, GivesEveryArgumentsSize) {
  OneKernel o = one_kernel();
  ASSERT_EQ(o.descriptor.size(), 1u + ORCHID_CUDA_DESCRIPTOR_FIELDS + 2u);
  EXPECT_EQ(o.descriptor[0], 1);
  EXPECT_EQ(o.descriptor[1], 2);  // pointer arguments
  EXPECT_EQ(std::vector<int64_t>(o.descriptor.end() - 2, o.descriptor.end()), (std::vector<int64_t>{256, 256}));
  check_cuda_steps(o.descriptor, o.plan, "plan.json");
}

TEST(CudaDescriptor, APlanThatDiffersIsRefused) {
  OneKernel o = one_kernel();
  Plan smaller = o.plan;
  smaller.buffers[1].type.shape = {32};
  EXPECT_EQ(testlib::error_of([&] { check_cuda_steps(o.descriptor, smaller, "plan.json"); }),
            "plan.json: steps[0] ('add'): kernel 0 takes 256 bytes as argument 1, buffer 1 ('y', f32[32]) has 128");
  Plan more_blocks = o.plan;
  more_blocks.steps[0].tasks += 1;
  EXPECT_NE(testlib::error_of([&] { check_cuda_steps(o.descriptor, more_blocks, "plan.json"); })
                .find("args, tasks, threads, shared_bytes, scratch_bytes differ from the kernel's"),
            std::string::npos);
  std::vector<int64_t> cut(o.descriptor.begin(), o.descriptor.end() - 1);
  EXPECT_EQ(testlib::error_of([&] { check_cuda_steps(cut, o.plan, "plan.json"); }),
            "plan.json: the module's kernel descriptor is malformed");
  Plan missing = o.plan;
  missing.steps[0].kernel = 3;
  EXPECT_EQ(testlib::error_of([&] { check_cuda_steps(o.descriptor, missing, "plan.json"); }),
            "plan.json: steps[0] ('add'): kernel 3 is not in the module (it has 1)");
}

}  // namespace
}  // namespace orchid::runtime::cuda
