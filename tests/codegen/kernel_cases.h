// Cases for differential tests of generated kernels: a kernel of a graph under a schedule,
// compiled with others into one shared object and checked against the reference interpreter
// run on the kernel's own subgraph.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "codegen/cpu/codegen.h"
#include "codegen/cpu/compiler.h"
#include "codegen/cpu/schedule.h"
#include "codegen/kernel_harness.h"
#include "interp/compare.h"
#include "interp/random_inputs.h"
#include "ir/parser.h"
#include "ir/subgraph.h"
#include "support/random.h"

namespace orchid::codegen::cpu {

using ir::NodeId;
using ir::ValueId;

// Every node of g as one kernel writing g's outputs.
inline tile::Kernel whole_kernel(const ir::Graph& g) {
  tile::Kernel k;
  for (int32_t n = 0; n < g.num_nodes(); ++n) k.nodes.push_back(NodeId(n));
  k.outputs = g.outputs();
  return k;
}

struct Case {
  uint64_t seed;
  ir::Graph graph;
  tile::Kernel kernel;
  Schedule schedule;
  GeneratedKernel generated;
};

inline Schedule random_schedule(const ir::Graph& g, const tile::Kernel& k, Rng& rng) {
  Schedule s;
  const ir::Dims* anchor = &g.type(k.outputs[0]).shape;
  for (ValueId v : k.outputs)
    if (g.type(v).numel() > ir::numel(*anchor)) anchor = &g.type(v).shape;
  for (int64_t d : *anchor) s.tile.push_back(static_cast<int64_t>(rng.next() % (d + 2)));
  const int widths[] = {1, 4, 8, 16}, unrolls[] = {1, 2, 4, 8};
  s.vector_width = widths[rng.next() % 4];
  s.unroll = unrolls[rng.next() % 4];
  s.inline_single_use = rng.next() % 4 != 0;
  s.stream = rng.next() % 3 == 0;
  const int prefetches[] = {0, 64, 1024, 16384};
  s.prefetch = prefetches[rng.next() % 4];
  s.gemm = rng.next() % 4 != 0;
  return s;
}

inline void tolerance(ir::DType t, double* rtol, double* atol) {
  switch (t) {
    case ir::DType::F16: *rtol = 1e-2; *atol = 1e-2; return;
    case ir::DType::BF16: *rtol = 3e-2; *atol = 3e-2; return;
    case ir::DType::F32: *rtol = 1e-4; *atol = 1e-4; return;
    case ir::DType::F64: *rtol = 1e-9; *atol = 1e-9; return;
    default: *rtol = 0; *atol = 0; return;
  }
}

// The least precise float dtype the kernel's graph computes with (values and casts): F64
// references do not round casts, so an f64 output fed by an f16 cast is only that precise.
inline ir::DType least_precise(const ir::Graph& sub, ir::DType out) {
  auto rank = [](ir::DType t) {
    return t == ir::DType::BF16 ? 0 : t == ir::DType::F16 ? 1 : t == ir::DType::F32 ? 2 : 3;
  };
  ir::DType worst = out;
  auto consider = [&](ir::DType t) {
    if (ir::is_float(t) && (!ir::is_float(worst) || rank(t) < rank(worst))) worst = t;
  };
  for (const ir::Value& v : sub.values()) consider(v.type.dtype);
  for (const ir::Primitive& p : sub.nodes())
    for (const ir::Expr& b : p.bodies) ir::visit_post(b, [&](const ir::Expr& e) { consider(e.dtype()); });
  return ir::is_float(out) ? worst : out;
}

// The kernels compiled into one shared object (cached by content), loaded.
inline testlib::KernelLibraryHandle compile_kernels(const std::vector<GeneratedKernel>& kernels) {
  CompilerOptions copts;
  copts.cache_dir = std::filesystem::temp_directory_path() / "orchid-test-objects";
  copts.extra_flags = codegen_flags();
  return testlib::load_kernel_library(compile_shared(library_source(kernels), copts));
}

// Every node of `text`'s graph as one kernel, under the schedule `pick` chooses (from a
// generator seeded with `seed`), generated as `symbol`.
inline Case make_case(uint64_t seed, const std::string& text,
               const std::function<Schedule(const ir::Graph&, const tile::Kernel&, Rng&)>& pick,
               const std::string& symbol) {
  ir::Graph g = ir::parse_graph(text);
  tile::Kernel k = whole_kernel(g);
  Rng rng(seed);
  Schedule s = pick(g, k, rng);
  GeneratedKernel gk = generate_kernel(g, k, s, symbol);
  return Case{seed, std::move(g), std::move(k), s, std::move(gk)};
}

// Compiles the cases' kernels into one shared object and checks each against the interpreter.
inline void check_cases(std::vector<Case>& cases) {
  std::vector<GeneratedKernel> kernels;
  for (const Case& c : cases) kernels.push_back(c.generated);
  auto lib = compile_kernels(kernels);
  ASSERT_EQ(lib.count, static_cast<int64_t>(cases.size()));
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    SCOPED_TRACE("seed " + std::to_string(c.seed) + ", schedule " + schedule_str(c.schedule) +
                 ", kernel:\n" + c.generated.source);
    auto all = interp::run_all(c.graph, interp::random_inputs(c.graph, c.seed), {interp::Precision::Own});
    std::vector<const ir::Tensor*> ins;
    for (ValueId v : c.generated.inputs) ins.push_back(&all[v.v]);
    std::vector<ir::Tensor> in_copies;
    for (const ir::Tensor* t : ins) in_copies.push_back(*t);
    ir::Graph sub = ir::extract_subgraph(c.graph, c.kernel.nodes, c.generated.inputs, c.generated.outputs);
    std::vector<ir::Tensor> want = interp::run(sub, in_copies, {interp::Precision::F64});
    std::vector<ir::TensorType> types;
    for (ValueId v : c.generated.outputs) types.push_back(c.graph.type(v));
    int64_t err = 0;
    std::vector<ir::Tensor> got = testlib::run_generated(lib.table[i], ins, types, c.seed, &err);
    EXPECT_EQ(err, 0);
    for (size_t o = 0; o < got.size(); ++o) {
      double rtol, atol;
      tolerance(least_precise(sub, types[o].dtype), &rtol, &atol);
      std::string diff = interp::compare_tensors(got[o], want[o], rtol, atol);
      EXPECT_EQ(diff, "") << "output " << o << " (" << c.graph.value(c.generated.outputs[o]).name << ")";
      if (!diff.empty()) return;
    }
  }
}

}  // namespace orchid::codegen::cpu
