// Cases for the CUDA differential suite: kernels of seeded random primitive graphs (every
// primitive kind but opaque, odd shapes, every dtype) and of named graphs (rows reduced as in
// softmax and layernorm, a matmul, an out-of-bounds gather), each under a random CUDA schedule
// (tiles that divide nothing, every block size, one or two levels), generated as CUDA C++.
// Compiled with NVRTC for every architecture everywhere (cuda_compile tests); run against the
// reference interpreter where a GPU is present (cuda tests).
#pragma once

#include <string>
#include <vector>

#include "codegen/cuda/codegen.h"
#include "codegen/kernel_cases.h"
#include "codegen/kernel_graphs.h"
#include "testlib/random_graph.h"

namespace orchid::codegen::cuda {

struct CudaCase {
  uint64_t seed;
  ir::Graph graph;
  tile::Kernel kernel;
  Schedule schedule;
  CudaKernel generated;
};

inline Schedule random_cuda_schedule(const ir::Graph& g, const tile::Kernel& k, Rng& rng) {
  Schedule s;
  if (rng.next() % 4 == 0) return default_schedule(g, k);
  for (int64_t d : g.type(k.outputs[cpu::anchor_output(g, k)]).shape) s.tile.push_back(static_cast<int64_t>(rng.next() % (d + 2)));
  const int threads[] = {32, 64, 128, 256, 512, 1024};
  s.threads = threads[rng.next() % 6];
  const int unrolls[] = {1, 2, 4, 8, 16};
  s.unroll = unrolls[rng.next() % 5];
  s.inline_single_use = rng.next() % 4 != 0;
  // Two levels, half the time: sub-tiles of any size, the inner loop from any node on.
  if (rng.next() % 2 == 0) {
    for (int64_t d : g.type(k.outputs[cpu::anchor_output(g, k)]).shape)
      s.inner.push_back(static_cast<int64_t>(rng.next() % (d + 2)));
    s.split = static_cast<int>(rng.next() % (k.nodes.size() + 1));
  }
  return s;
}

// `count` kernels of random graphs from seed `first_seed` on.
inline std::vector<CudaCase> random_cuda_cases(uint64_t first_seed, int count) {
  std::vector<CudaCase> cases;
  for (uint64_t seed = first_seed; cases.size() < static_cast<size_t>(count); ++seed) {
    testlib::RandomGraphOptions opts;
    opts.max_nodes = 4 + static_cast<int>(seed % 9);
    ir::Graph g = testlib::random_graph(seed, opts);
    Rng rng(seed * 7919 + 1);
    tile::Kernel k = cpu::random_kernel(g, rng);
    if (k.nodes.empty()) continue;
    Schedule s = random_cuda_schedule(g, k, rng);
    CudaKernel ck = generate_kernel(g, k, s, "orc_k" + std::to_string(cases.size()));
    cases.push_back(CudaCase{seed, std::move(g), std::move(k), s, std::move(ck)});
  }
  return cases;
}

// Every node of `text`'s graph as one kernel, under a random schedule from `seed` (the
// default schedule for seed 0).
inline CudaCase named_cuda_case(uint64_t seed, const std::string& text, const std::string& symbol) {
  ir::Graph g = ir::parse_graph(text);
  tile::Kernel k = cpu::whole_kernel(g);
  Rng rng(seed);
  Schedule s = seed == 0 ? default_schedule(g, k) : random_cuda_schedule(g, k, rng);
  CudaKernel ck = generate_kernel(g, k, s, symbol);
  return CudaCase{seed, std::move(g), std::move(k), s, std::move(ck)};
}

// The named graphs of the CPU suite (kernel_graphs.h): rows reduced by every combiner in every
// dtype, softmax and layernorm rows, matmuls with prologues and epilogues, transposes.
inline std::vector<std::string> named_graphs() {
  std::vector<std::string> texts = row_kernel_graphs();
  for (const std::string& t : transpose_graphs()) texts.push_back(t);
  texts.push_back(gemm_graph(1, 5, 17, 7, false, false, false));
  texts.push_back(gemm_graph(2, 13, 33, 300, true, false, false));
  texts.push_back(gemm_graph(1, 64, 48, 513, false, true, false));
  texts.push_back(gemm_graph(3, 7, 100, 40, true, true, true));
  return texts;
}

// A gather of a table by indices read from an input: its index check is what a kernel reports
// through `err`.
inline std::string gather_graph() {
  return "graph @gather {\n  input %x : f32[64]\n  input %idx : i64[8]\n"
         "  %g : f32[8] = layout(%x, %idx) { %x[%idx[i0]] }\n  output %g\n}\n";
}

// Each of `texts` under the default schedule and under one random schedule.
inline std::vector<CudaCase> named_cuda_cases(const std::vector<std::string>& texts) {
  std::vector<CudaCase> cases;
  for (size_t i = 0; i < texts.size(); ++i)
    for (uint64_t seed : {uint64_t{0}, 97000 + i})
      cases.push_back(named_cuda_case(seed, texts[i], "orc_n" + std::to_string(cases.size())));
  return cases;
}

// Welder's fused examples (kernel_graphs.h) as one kernel each under the CPU suite's two-level
// tilings (conv_relu_pool_tilings, matmul_softmax_tilings) on 128 and 256 threads, and MatMul +
// Softmax with tasks of 128 rows whose matmul (64 KiB) does not fit shared memory beside the
// sub-tiles of 8 rows computing the softmax (the last case).
inline std::vector<CudaCase> two_level_cuda_cases() {
  std::vector<std::pair<std::string, TwoLevelTiling>> all;
  for (const TwoLevelTiling& t : conv_relu_pool_tilings()) all.emplace_back(conv_relu_pool_graph(), t);
  for (const TwoLevelTiling& t : matmul_softmax_tilings()) all.emplace_back(matmul_softmax_graph(96), t);
  all.emplace_back(matmul_softmax_graph(256), TwoLevelTiling{{128, 128}, {8, 128}, 1});
  std::vector<CudaCase> cases;
  for (size_t i = 0; i < all.size(); ++i) {
    ir::Graph g = ir::parse_graph(all[i].first);
    tile::Kernel k = cpu::whole_kernel(g);
    Schedule s;
    s.tile = all[i].second.tile;
    s.inner = all[i].second.inner;
    s.split = all[i].second.split;
    s.threads = i % 2 == 0 ? 128 : 256;
    CudaKernel ck = generate_kernel(g, k, s, "orc_tl" + std::to_string(i));
    cases.push_back(CudaCase{98000 + i, std::move(g), std::move(k), s, std::move(ck)});
  }
  return cases;
}

}  // namespace orchid::codegen::cuda
