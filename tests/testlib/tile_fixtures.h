// Fixtures of the tile-model tests and benchmarks: a kernel of a whole graph, Welder §2's
// matmul + softmax, and a small CPU target with every level measured.
#pragma once

#include <cstdint>
#include <string>

#include "ir/graph.h"
#include "target/target.h"
#include "tile/kernel.h"

namespace orchid::testlib {

// Every node of g, writing g's outputs.
inline tile::Kernel whole_graph_kernel(const ir::Graph& g) {
  tile::Kernel k;
  for (int32_t n = 0; n < g.num_nodes(); ++n) k.nodes.push_back(ir::NodeId(n));
  k.outputs = g.outputs();
  return k;
}

// Welder §2: C = A·B with A [rows×64], B [64×128], then D = softmax(C) over rows, the softmax
// fissioned into max, exp(x - max), sum and div.
inline std::string matmul_softmax(int64_t rows) {
  std::string r = std::to_string(rows);
  return "graph @welder {\n  input %a : f32[" + r + ",64]\n  input %b : f32[64,128]\n"
         "  %c : f32[" + r + ",128] = matmul(%a, %b) {trans_a=false, trans_b=false}\n"
         "  %m : f32[" + r + ",1] = reduce max(%c) over [128] { %c[i0, r0] }\n"
         "  %e : f32[" + r + ",128] = elementwise(%c, %m) { exp(sub(%c[i0, i1], %m[i0, 0])) }\n"
         "  %s : f32[" + r + ",1] = reduce sum(%e) over [128] { %e[i0, r0] }\n"
         "  %d : f32[" + r + ",128] = elementwise(%e, %s) { div(%e[i0, i1], %s[i0, 0]) }\n"
         "  output %d\n}\n";
}

// Two cores; 1 TFLOP/s; L1d 48 KiB and L2 1 MiB per core at 400 and 200 GB/s; L3 16 MiB
// shared at 100 GB/s; DRAM at 20 GB/s in transactions of `dram_transaction` bytes; 64-byte
// lines; 512-bit vectors.
inline target::Target toy_cpu_target(int64_t dram_transaction = 64) {
  target::Target t;
  t.name = "toy";
  t.cores = 2;
  t.simd_bits = 512;
  t.peak_gflops_f32 = 1000;
  t.levels = {{"registers", 2048, 64, 8000, false},
              {"L1d", 48 << 10, 64, 400, false},
              {"L2", 1 << 20, 64, 200, false},
              {"L3", 16 << 20, 64, 100, true},
              {"DRAM", int64_t{1} << 34, dram_transaction, 20, true}};
  return t;
}

}  // namespace orchid::testlib
