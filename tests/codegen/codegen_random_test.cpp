// Differential test of code generation: generated kernels for seeded random convex subgraphs of
// random primitive graphs (every primitive kind but opaque, odd shapes, every dtype), each with
// a random valid schedule (every vector width and unroll factor, tiles that divide nothing),
// match the reference interpreter run on the kernel's own subgraph.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "codegen/kernel_harness.h"
#include "interp/compare.h"
#include "interp/random_inputs.h"
#include "testlib/random_graph.h"

namespace orchid::codegen::cpu {
namespace {

using ir::NodeId;
using ir::ValueId;

struct Case {
  uint64_t seed;
  ir::Graph graph;
  tile::Kernel kernel;
  Schedule schedule;
  GeneratedKernel generated;
};

// A random run of consecutive non-opaque nodes (consecutive in topological order, hence convex)
// and its outputs: what later nodes or the graph read, plus random extra intermediates.
tile::Kernel random_kernel(const ir::Graph& g, Rng& rng) {
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

Schedule random_schedule(const ir::Graph& g, const tile::Kernel& k, Rng& rng) {
  Schedule s;
  const ir::Dims* anchor = &g.type(k.outputs[0]).shape;
  for (ValueId v : k.outputs)
    if (g.type(v).numel() > ir::numel(*anchor)) anchor = &g.type(v).shape;
  for (int64_t d : *anchor) s.tile.push_back(static_cast<int64_t>(rng.next() % (d + 2)));
  const int widths[] = {1, 4, 8, 16}, unrolls[] = {1, 2, 4, 8};
  s.vector_width = widths[rng.next() % 4];
  s.unroll = unrolls[rng.next() % 4];
  s.inline_single_use = rng.next() % 4 != 0;
  return s;
}

void tolerance(ir::DType t, double* rtol, double* atol) {
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
ir::DType least_precise(const ir::Graph& sub, ir::DType out) {
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

void check_batch(uint64_t first_seed, int count) {
  std::vector<Case> cases;
  for (uint64_t seed = first_seed; cases.size() < static_cast<size_t>(count); ++seed) {
    testlib::RandomGraphOptions opts;
    opts.max_nodes = 4 + static_cast<int>(seed % 9);
    ir::Graph g = testlib::random_graph(seed, opts);
    Rng rng(seed * 7919 + 1);
    tile::Kernel k = random_kernel(g, rng);
    if (k.nodes.empty()) continue;
    Schedule s = random_schedule(g, k, rng);
    std::string sym = "orc_k" + std::to_string(cases.size());
    SCOPED_TRACE("seed " + std::to_string(seed));
    GeneratedKernel gk = generate_kernel(g, k, s, sym);
    cases.push_back(Case{seed, std::move(g), std::move(k), s, std::move(gk)});
  }
  std::vector<GeneratedKernel> kernels;
  for (const Case& c : cases) kernels.push_back(c.generated);
  CompilerOptions copts;
  copts.cache_dir = std::filesystem::temp_directory_path() / "orchid-test-objects";
  copts.extra_flags = codegen_flags();
  auto lib = testlib::load_kernel_library(compile_shared(library_source(kernels), copts));
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

class RandomKernels : public ::testing::TestWithParam<int> {};

// 8 batches of 30 kernels: 240 kernels, one shared object per batch.
TEST_P(RandomKernels, MatchInterpreter) { check_batch(1000 + 1000 * GetParam(), 30); }

INSTANTIATE_TEST_SUITE_P(Batches, RandomKernels, ::testing::Range(0, 8));

}  // namespace
}  // namespace orchid::codegen::cpu
