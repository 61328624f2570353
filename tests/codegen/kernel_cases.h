// Cases for differential tests of generated kernels: a kernel of a graph under a schedule,
// compiled with others into one shared object and checked against the reference interpreter
// run on the kernel's own subgraph.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "codegen/cpu/codegen.h"
#include "codegen/cpu/compiler.h"
#include "codegen/cpu/lower.h"
#include "codegen/cpu/schedule.h"
#include "codegen/kernel_harness.h"
#include "interp/compare.h"
#include "interp/random_inputs.h"
#include "ir/parser.h"
#include "ir/subgraph.h"
#include "support/random.h"
#include "testlib/random_graph.h"

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

// A random run of consecutive non-opaque nodes (consecutive in topological order, hence convex)
// and its outputs: what later nodes or the graph read, plus random extra intermediates.
inline tile::Kernel random_kernel(const ir::Graph& g, Rng& rng) {
  tile::Kernel k;
  int n = g.num_nodes();
  if (n == 0) return k;
  int start = static_cast<int>(rng.next() % n);
  int len = 1 + static_cast<int>(rng.next() % 8);
  for (int i = start; i < n && i < start + len; ++i) {
    if (g.node(NodeId(i)).kind() == ir::PrimKind::Opaque) break;
    k.nodes.push_back(NodeId(i));
  }
  if (k.nodes.empty()) return k;
  std::set<NodeId> in(k.nodes.begin(), k.nodes.end());
  auto users = g.users();
  std::set<ValueId> outs(g.outputs().begin(), g.outputs().end());
  for (NodeId id : k.nodes)
    for (ValueId v : g.node(id).outputs) {
      bool needed = outs.count(v) > 0 || rng.next() % 5 == 0;
      for (NodeId u : users[v.v]) needed |= in.count(u) == 0;
      if (needed) k.outputs.push_back(v);
    }
  if (k.outputs.empty()) k.outputs = g.node(k.nodes.back()).outputs;
  return k;
}

// The seeded random graph of 4 to 12 nodes and a random kernel of it drawn with `rng`
// (random_kernel); none where the kernel came out empty.
inline std::optional<std::pair<ir::Graph, tile::Kernel>> random_graph_kernel(uint64_t seed, Rng& rng) {
  testlib::RandomGraphOptions opts;
  opts.max_nodes = 4 + static_cast<int>(seed % 9);
  ir::Graph g = testlib::random_graph(seed, opts);
  tile::Kernel k = random_kernel(g, rng);
  if (k.nodes.empty()) return std::nullopt;
  return std::make_pair(std::move(g), std::move(k));
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
  for (int64_t d : g.type(k.outputs[cpu::anchor_output(g, k)]).shape) s.tile.push_back(static_cast<int64_t>(rng.next() % (d + 2)));
  const int widths[] = {1, 4, 8, 16}, unrolls[] = {1, 2, 4, 8};
  s.vector_width = widths[rng.next() % 4];
  s.unroll = unrolls[rng.next() % 4];
  s.inline_single_use = rng.next() % 4 != 0;
  s.stream = rng.next() % 3 == 0;
  const int prefetches[] = {0, 64, 1024, 16384};
  s.prefetch = prefetches[rng.next() % 4];
  s.gemm = rng.next() % 4 != 0;
  // Two levels, half the time: sub-tiles of any size, the inner loop from any node on.
  if (rng.next() % 2 == 0) {
    for (int64_t d : g.type(k.outputs[cpu::anchor_output(g, k)]).shape)
      s.inner.push_back(static_cast<int64_t>(rng.next() % (d + 2)));
    s.split = static_cast<int>(rng.next() % (k.nodes.size() + 1));
  }
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

// The kernels compiled into one shared object (cached by content), loaded; `defines` are
// added to the flags (e.g. -DORC_GEMM_NO_ZMM, the GEMM kernels on 256-bit registers).
inline testlib::KernelLibraryHandle compile_kernels(const std::vector<GeneratedKernel>& kernels,
                                                    const std::vector<std::string>& defines = {}) {
  CompilerOptions copts;
  copts.cache_dir = std::filesystem::temp_directory_path() / "orchid-test-objects";
  copts.extra_flags = codegen_flags();
  copts.extra_flags.insert(copts.extra_flags.end(), defines.begin(), defines.end());
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

// What a kernel of `graph` (its nodes, inputs and outputs) must compute on the seeded random
// inputs of the graph: its inputs' values (computed by the interpreter at the graph's own
// precision) and its outputs computed from them in f64 by its own subgraph.
struct Reference {
  std::vector<ir::Tensor> inputs;
  std::vector<ir::Tensor> outputs;
  ir::Graph sub;
};

inline Reference reference_of(const ir::Graph& graph, const tile::Kernel& kernel, const std::vector<ValueId>& inputs,
                              const std::vector<ValueId>& outputs, uint64_t seed) {
  Reference r;
  auto all = interp::run_all(graph, interp::random_inputs(graph, seed), {interp::Precision::Own});
  for (ValueId v : inputs) r.inputs.push_back(all[v.v]);
  r.sub = ir::extract_subgraph(graph, kernel.nodes, inputs, outputs);
  r.outputs = interp::run(r.sub, r.inputs, {interp::Precision::F64});
  return r;
}

// Whether `got` matches the reference within the tolerance of the least precise dtype the
// kernel computes with; "" or the first difference.
inline std::string reference_diff(const Reference& r, const std::vector<ir::Tensor>& got) {
  for (size_t o = 0; o < got.size(); ++o) {
    double rtol, atol;
    tolerance(least_precise(r.sub, got[o].type().dtype), &rtol, &atol);
    std::string diff = interp::compare_tensors(got[o], r.outputs[o], rtol, atol);
    if (!diff.empty())
      return "output " + std::to_string(o) + " (" + r.sub.value(r.sub.outputs()[o]).name + "): " + diff;
  }
  return "";
}

// Compiles the cases' kernels into one shared object and checks each against the interpreter.
inline void check_cases(std::vector<Case>& cases, const std::vector<std::string>& defines = {}) {
  std::vector<GeneratedKernel> kernels;
  for (const Case& c : cases) kernels.push_back(c.generated);
  auto lib = compile_kernels(kernels, defines);
  ASSERT_EQ(lib.count, static_cast<int64_t>(cases.size()));
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    SCOPED_TRACE("seed " + std::to_string(c.seed) + ", schedule " + schedule_str(c.schedule) +
                 ", kernel:\n" + c.generated.source);
    Reference ref = reference_of(c.graph, c.kernel, c.generated.inputs, c.generated.outputs, c.seed);
    std::vector<const ir::Tensor*> ins;
    for (const ir::Tensor& t : ref.inputs) ins.push_back(&t);
    std::vector<ir::TensorType> types;
    for (ValueId v : c.generated.outputs) types.push_back(c.graph.type(v));
    int64_t err = 0;
    std::vector<ir::Tensor> got = testlib::run_generated(lib.table[i], ins, types, c.seed, &err);
    EXPECT_EQ(err, 0);
    std::string diff = reference_diff(ref, got);
    EXPECT_EQ(diff, "");
    if (!diff.empty()) return;
  }
}

}  // namespace orchid::codegen::cpu
