#include "runtime/kernel_timing.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <optional>

#include "runtime/aligned_buffer.h"
#include "runtime/denormals.h"

namespace orchid::runtime {

namespace {

constexpr int64_t kChunksPerThread = 4;

}  // namespace

void run_kernel_tasks(const orchid_kernel_desc& k, const orchid_args& args, int threads,
                      const std::function<void*(int)>& scratch) {
  const int64_t tasks = k.task_count;
  if (tasks == 0) return;
  const int want = static_cast<int>(std::min<int64_t>(std::max(1, threads), tasks));
  if (want == 1) {
    k.fn(&args, 0, tasks, scratch(0));
    return;
  }
  std::atomic<int64_t> next{0};
  const int64_t chunk = std::max<int64_t>(1, tasks / (int64_t{want} * kChunksPerThread));
#pragma omp parallel num_threads(want)
  {
    void* s = scratch(omp_get_thread_num());
    for (int64_t begin = next.fetch_add(chunk); begin < tasks; begin = next.fetch_add(chunk))
      k.fn(&args, begin, std::min(tasks, begin + chunk), s);
  }
}

namespace {

// Floats in [0.5, 1): finite, normal, of every sign bit pattern of the low mantissa bits.
void fill(AlignedBuffer& b) {
  const int64_t words = b.size() / 4;
  for (int64_t i = 0; i < words; ++i) {
    float f = 0.5f + static_cast<float>((i * 2654435761u) % 1021) / 2048.0f;
    std::memcpy(b.data() + 4 * i, &f, 4);
  }
}

}  // namespace

std::vector<KernelTiming> time_kernels(const KernelLibrary& lib, const KernelTimingOptions& o) {
  std::vector<int64_t> arg_bytes;
  int64_t scratch_bytes = 64;
  for (int64_t i = 0; i < lib.size(); ++i) {
    const orchid_kernel_desc& k = lib.kernel(i);
    if (static_cast<size_t>(k.num_args) > arg_bytes.size()) arg_bytes.resize(static_cast<size_t>(k.num_args), 0);
    for (int32_t a = 0; a < k.num_args; ++a) arg_bytes[a] = std::max(arg_bytes[a], k.arg_bytes[a]);
    scratch_bytes = std::max(scratch_bytes, k.scratch_bytes);
  }
  std::vector<AlignedBuffer> buffers;
  std::vector<void*> ptrs;
  for (int64_t bytes : arg_bytes) {
    buffers.emplace_back(std::max<int64_t>(bytes, 64));
    fill(buffers.back());
    ptrs.push_back(buffers.back().data());
  }
  const int threads = std::max(1, o.threads);
  const int64_t stride = round_up(scratch_bytes, ORCHID_ALIGN);
  AlignedBuffer scratch(stride * threads);
  auto scratch_of = [&](int t) -> void* { return scratch.data() + stride * t; };
  std::vector<KernelTiming> out(static_cast<size_t>(lib.size()));
  auto run = [&](int64_t i) {
    const orchid_kernel_desc& k = lib.kernel(i);
    int64_t error[2] = {0, 0};
    orchid_args args{ptrs.data(), k.num_args, error};
    run_kernel_tasks(k, args, threads, scratch_of);
    if (error[0] != 0) out[static_cast<size_t>(i)].index_error = true;
  };
  std::optional<FlushDenormals> flush;
  if (o.flush_denormals) flush.emplace(threads);
  for (int64_t i = 0; i < lib.size(); ++i)
    for (int w = 0; w < o.warmup_runs; ++w) run(i);
  for (int round = 0; round < o.rounds; ++round)
    for (int64_t i = 0; i < lib.size(); ++i)
      for (int r = 0; r < o.runs_per_round; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        run(i);
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        out[static_cast<size_t>(i)].ms.push_back(ms);
      }
  return out;
}

}  // namespace orchid::runtime
