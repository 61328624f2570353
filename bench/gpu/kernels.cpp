// Generated CUDA kernels on the GPU against the GPU's own memory bandwidth: each memory-bound
// kernel (an elementwise chain, a bias + residual epilogue, softmax and layernorm rows, a
// transpose, a row sum) generated under its default schedule, compiled with NVRTC for the
// device, and timed with events (3 warm-ups, median of 20); its bandwidth counts the bytes it
// must read and write once. The reference bandwidth is a device-to-device copy measured the
// same way. Prints a markdown table; exits 77 where there is no GPU.
#include <algorithm>
#include <functional>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "codegen/cuda/codegen.h"
#include "codegen/cuda/nvrtc.h"
#include "ir/parser.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/measure.h"

namespace {

using namespace orchid;

struct Bench {
  std::string name;
  std::string text;
};

std::vector<Bench> benches() {
  return {
      {"gelu 2^26", R"(graph @g {
  input %x : f32[67108864]
  %y : f32[67108864] = elementwise(%x) { mul(mul(%x[i0], 0.5:f32), add(erf(mul(%x[i0], 0.70710677:f32)), 1:f32)) }
  output %y
})"},
      {"bias+residual+relu 8192x4096", R"(graph @g {
  input %x : f32[8192,4096]
  input %b : f32[4096]
  input %r : f32[8192,4096]
  %y : f32[8192,4096] = elementwise(%x, %b, %r) { max(add(add(%x[i0, i1], %b[i1]), %r[i0, i1]), 0:f32) }
  output %y
})"},
      {"softmax 16384x1024", R"(graph @g {
  input %x : f32[16384,1024]
  %m : f32[16384,1] = reduce max(%x) over [1024] { %x[i0, r0] }
  %e : f32[16384,1024] = elementwise(%x, %m) { exp(sub(%x[i0, i1], %m[i0, 0])) }
  %s : f32[16384,1] = reduce sum(%e) over [1024] { %e[i0, r0] }
  %y : f32[16384,1024] = elementwise(%e, %s) { div(%e[i0, i1], %s[i0, 0]) }
  output %y
})"},
      {"layernorm 16384x1024", R"(graph @g {
  input %x : f32[16384,1024]
  input %w : f32[1024]
  %m, %v : f32[16384,1], f32[16384,1] = reduce welford(%x) over [1024] { %x[i0, r0] }
  %i : f32[16384,1] = elementwise(%v) { rsqrt(add(%v[i0, i1], 1e-05:f32)) }
  %y : f32[16384,1024] = elementwise(%x, %m, %i, %w) { mul(mul(sub(%x[i0, i1], %m[i0, 0]), %i[i0, 0]), %w[i1]) }
  output %y
})"},
      {"transpose 8192x8192", R"(graph @g {
  input %x : f32[8192,8192]
  %y : f32[8192,8192] = layout(%x) { %x[i1, i0] }
  output %y
})"},
      {"row sum 8192x8192", R"(graph @g {
  input %x : f32[8192,8192]
  %y : f32[8192,1] = reduce sum(%x) over [8192] { %x[i0, r0] }
  output %y
})"},
  };
}

double median_ms(const runtime::cuda::Device& dev, const std::function<void()>& work) {
  for (int i = 0; i < 3; ++i) work();
  dev.synchronize();
  std::vector<double> t;
  for (int i = 0; i < 20; ++i) t.push_back(dev.time_ms(work));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// The graph's buffers on the device (inputs random in [-2, 2)), and the bytes it must move.
struct Buffers {
  std::vector<runtime::cuda::DeviceBuffer> args;
  double bytes = 0;
};

Buffers buffers_for(const runtime::cuda::Device& dev, const ir::Graph& g, const codegen::cuda::CudaKernel& ck,
                    std::mt19937& rng) {
  std::uniform_real_distribution<float> uni(-2.f, 2.f);
  Buffers b;
  for (ir::ValueId v : ck.inputs) {
    size_t n = static_cast<size_t>(g.type(v).numel());
    std::vector<float> host(n);
    for (float& x : host) x = uni(rng);
    b.args.push_back(dev.alloc(n * 4));
    dev.upload(b.args.back(), host.data(), n * 4);
    b.bytes += n * 4.0;
  }
  for (ir::ValueId v : ck.outputs) {
    b.args.push_back(dev.alloc(static_cast<size_t>(g.type(v).numel()) * 4));
    b.bytes += g.type(v).numel() * 4.0;
  }
  return b;
}

double time_kernel(const runtime::cuda::Device& dev, const runtime::cuda::Module& m,
                   const codegen::cuda::CudaKernel& ck, const Buffers& b) {
  runtime::cuda::DeviceBuffer scratch = dev.alloc(static_cast<size_t>(ck.global_scratch_bytes * ck.blocks));
  std::vector<uint64_t> ptrs;
  for (const auto& buf : b.args) ptrs.push_back(buf.ptr());
  ptrs.push_back(0);
  ptrs.push_back(ck.global_scratch_bytes > 0 ? scratch.ptr() : 0);
  std::vector<void*> params;
  for (uint64_t& p : ptrs) params.push_back(&p);
  void* fn = m.function(ck.symbol);
  return median_ms(dev, [&] { dev.launch(fn, ck.blocks, ck.threads, ck.shared_bytes, params.data()); });
}

}  // namespace

// Usage: cuda_kernel_bench [--sweep]: each kernel runs under its default schedule and the same
// without unrolling (unroll=1); with --sweep, also under every default schedule of 128 to
// 1024 threads, 1 to 16 elements per thread and unroll 1, 4 or 8, and the fastest is shown.
int main(int argc, char** argv) {
  bool sweep = argc > 1 && std::string(argv[1]) == "--sweep";
  std::string why;
  if (!runtime::cuda::Device::available(&why) || !codegen::cuda::Nvrtc::available(&why)) {
    std::fprintf(stderr, "no GPU: %s\n", why.c_str());
    return 77;
  }
  const runtime::cuda::Device& dev = runtime::cuda::Device::get();
  std::printf("GPU: %s (%d SMs, sm_%d%d), NVRTC %s, generated as %s\n\n", dev.name().c_str(), dev.multiprocessors(),
              dev.major(), dev.minor(), codegen::cuda::Nvrtc::get().version().c_str(), dev.arch().c_str());
  runtime::cuda::GpuMeasurement target = runtime::cuda::measure_gpu();
  std::printf("The target as `orchid compile --target cuda` measures it here: copy bandwidth %.0f GB/s, f32 "
              "products %.0f GFLOP/s (cuBLASLt, %d^3, no TF32)\n\n",
              target.copy_gbs, target.sgemm_gflops, runtime::cuda::kProductSize);
  const size_t copy_bytes = size_t{1} << 30;
  runtime::cuda::DeviceBuffer a = dev.alloc(copy_bytes), b = dev.alloc(copy_bytes);
  double copy_ms = median_ms(dev, [&] { dev.copy(b, a, copy_bytes); });
  double peak = 2.0 * copy_bytes / (copy_ms * 1e-3) / 1e9;
  std::printf("| kernel | schedule | ms | GB/s | of copy bandwidth | unroll=1 ms | of copy bandwidth |%s\n"
              "|---|---|---:|---:|---:|---:|---:|%s\n",
              sweep ? " fastest schedule | ms | of copy bandwidth |" : "", sweep ? "---|---:|---:|" : "");
  std::printf("| device-to-device copy 1 GiB | - | %.3f | %.0f | 1.00 | | |%s\n", copy_ms, peak, sweep ? " | | |" : "");
  std::mt19937 rng(7);
  for (const Bench& bench : benches()) {
    ir::Graph g = ir::parse_graph(bench.text);
    tile::Kernel k;
    for (int32_t n = 0; n < g.num_nodes(); ++n) k.nodes.push_back(ir::NodeId(n));
    k.outputs = g.outputs();
    codegen::cuda::Schedule rolled = codegen::cuda::default_schedule(g, k, dev.multiprocessors());
    rolled.unroll = 1;
    std::vector<codegen::cuda::CudaKernel> kernels = {
        codegen::cuda::generate_kernel(g, k, codegen::cuda::default_schedule(g, k, dev.multiprocessors()), "orc_default"),
        codegen::cuda::generate_kernel(g, k, rolled, "orc_rolled")};
    if (sweep)
      for (int threads : {128, 256, 512, 1024})
        for (int per_thread : {1, 2, 4, 8, 16})
          for (int unroll : {1, 4, 8}) {
            codegen::cuda::Schedule s = codegen::cuda::default_schedule(g, k, dev.multiprocessors(), threads, per_thread);
            s.unroll = unroll;
            kernels.push_back(codegen::cuda::generate_kernel(g, k, s, "orc_s" + std::to_string(kernels.size())));
          }
    runtime::cuda::Module m = dev.load(codegen::cuda::Nvrtc::get().compile(codegen::cuda::module_source(kernels), dev.arch()));
    Buffers bufs = buffers_for(dev, g, kernels[0], rng);
    double ms = time_kernel(dev, m, kernels[0], bufs), gbs = bufs.bytes / (ms * 1e-3) / 1e9;
    double rolled_ms = time_kernel(dev, m, kernels[1], bufs);
    std::printf("| %s | %s | %.3f | %.0f | %.2f | %.3f | %.2f |", bench.name.c_str(),
                codegen::cuda::schedule_str(kernels[0].schedule).c_str(), ms, gbs, gbs / peak, rolled_ms,
                bufs.bytes / (rolled_ms * 1e-3) / 1e9 / peak);
    if (sweep) {
      size_t best = 0;
      double best_ms = ms;
      for (size_t i = 1; i < kernels.size(); ++i) {
        double t = time_kernel(dev, m, kernels[i], bufs);
        if (t < best_ms) best = i, best_ms = t;
      }
      std::printf(" %s | %.3f | %.2f |", codegen::cuda::schedule_str(kernels[best].schedule).c_str(), best_ms,
                  bufs.bytes / (best_ms * 1e-3) / 1e9 / peak);
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  return 0;
}
