// Runs generated CUDA kernels on the GPU (runtime/cuda/device.h) and checks them against the
// reference interpreter, as kernel_cases.h does for CPU kernels.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "codegen/cuda/nvrtc.h"
#include "codegen/cuda_cases.h"
#include "runtime/cuda/device.h"

namespace orchid::codegen::cuda {

// The cases' module, compiled for the device and loaded.
inline runtime::cuda::Module load_module(const runtime::cuda::Device& dev, const std::vector<CudaCase>& cases) {
  std::vector<CudaKernel> kernels;
  for (const CudaCase& c : cases) kernels.push_back(c.generated);
  return dev.load(Nvrtc::get().compile(module_source(kernels), dev.arch()));
}

struct GpuResult {
  std::vector<ir::Tensor> outputs;
  int64_t error = 0;
};

// Kernel k of a loaded module on `inputs`; outputs of the given types.
inline GpuResult run_on_gpu(const runtime::cuda::Device& dev, const runtime::cuda::Module& m, const CudaKernel& k,
                            const std::vector<ir::Tensor>& inputs, const std::vector<ir::TensorType>& out_types) {
  std::vector<runtime::cuda::DeviceBuffer> bufs;
  std::vector<uint64_t> ptrs;
  for (const ir::Tensor& t : inputs) {
    bufs.push_back(dev.alloc(t.bytes().size()));
    dev.upload(bufs.back(), t.data(), t.bytes().size());
  }
  GpuResult r;
  for (const ir::TensorType& t : out_types) {
    r.outputs.emplace_back(t);
    bufs.push_back(dev.alloc(r.outputs.back().bytes().size()));
  }
  runtime::cuda::DeviceBuffer err = dev.alloc(sizeof(int64_t));
  runtime::cuda::DeviceBuffer scratch = dev.alloc(static_cast<size_t>(k.global_scratch_bytes * k.blocks));
  for (const runtime::cuda::DeviceBuffer& b : bufs) ptrs.push_back(b.ptr());
  ptrs.push_back(err.ptr());
  ptrs.push_back(k.global_scratch_bytes > 0 ? scratch.ptr() : 0);
  std::vector<void*> params;
  for (uint64_t& p : ptrs) params.push_back(&p);
  dev.launch(m.function(k.symbol), k.blocks, k.threads, k.shared_bytes, params.data());
  dev.synchronize();
  for (size_t o = 0; o < r.outputs.size(); ++o)
    dev.download(r.outputs[o].data(), bufs[inputs.size() + o], r.outputs[o].bytes().size());
  dev.download(&r.error, err, sizeof r.error);
  return r;
}

// Compiles the cases into one module for the device and checks each against the interpreter.
inline void check_on_gpu(const std::vector<CudaCase>& cases) {
  const runtime::cuda::Device& dev = runtime::cuda::Device::get();
  runtime::cuda::Module m = load_module(dev, cases);
  for (const CudaCase& c : cases) {
    SCOPED_TRACE("seed " + std::to_string(c.seed) + ", schedule " + schedule_str(c.schedule) + ", kernel:\n" +
                 c.generated.source);
    cpu::Reference ref = cpu::reference_of(c.graph, c.kernel, c.generated.inputs, c.generated.outputs, c.seed);
    std::vector<ir::TensorType> types;
    for (ir::ValueId v : c.generated.outputs) types.push_back(c.graph.type(v));
    GpuResult got = run_on_gpu(dev, m, c.generated, ref.inputs, types);
    EXPECT_EQ(got.error, 0);
    std::string diff = cpu::reference_diff(ref, got.outputs);
    EXPECT_EQ(diff, "");
    if (!diff.empty()) return;
  }
}

}  // namespace orchid::codegen::cuda
