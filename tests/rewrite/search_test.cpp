// The rewrite search: Korch Figure 2 rebuilt (attention reaches the merged E·[V | 1] form in
// three rewrites, proven equal, and the optimal orchestrator covers it), and whole graphs
// rewritten where the orchestrated roofline cost falls (Q/K/V projections with constant
// weights), checked against the interpreter.
#include <gtest/gtest.h>

#include "interp/compare.h"
#include "interp/interp.h"
#include "interp/random_inputs.h"
#include "ir/canonical.h"
#include "ir/dce.h"
#include "rewrite/fold_constants.h"
#include "ir/parser.h"
#include "orchestrate/optimal.h"
#include "rewrite/check_rewrite.h"
#include "rewrite/search.h"
#include "target/presets.h"
#include "testlib/random_graph.h"

namespace orchid::rewrite {
namespace {

const char* kAttention = R"(graph @attention {
  input %q : f32[64,32]
  input %k : f32[64,32]
  input %v : f32[64,32]
  %s : f32[64,64] = matmul(%q, %k) {trans_a=false, trans_b=true}
  %e : f32[64,64] = elementwise(%s) { exp(div(%s[i0, i1], 5.65625:f32)) }
  %r : f32[64,1] = reduce sum(%e) over [64] { %e[i0, r0] }
  %p : f32[64,64] = elementwise(%e, %r) { div(%e[i0, i1], %r[i0, 0]) }
  %o : f32[64,32] = matmul(%p, %v) {trans_a=false, trans_b=false}
  output %o
})";

// A constant of seeded values in [-1, 1) in the text form.
std::string weights(const char* name, int rows, int cols, uint64_t seed) {
  std::string s = std::string("  const %") + name + " : f32[" + std::to_string(rows) + "," + std::to_string(cols) + "] = [";
  uint64_t x = seed * 0x9E3779B97F4A7C15ull;
  for (int k = 0; k < rows * cols; ++k) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    s += (k ? ", " : "") + std::to_string(static_cast<double>(x >> 40) / static_cast<double>(1ull << 23) - 1.0);
  }
  return s + "]\n";
}

GraphCost h100() { return orchestrated_cost(target::cuda_preset("h100")); }

void expect_same_function(const ir::Graph& a, const ir::Graph& b) {
  auto in = interp::random_inputs(a, 3);
  auto want = interp::run(a, in), got = interp::run(b, in);
  ASSERT_EQ(want.size(), got.size());
  for (size_t k = 0; k < want.size(); ++k) EXPECT_LE(interp::relative_l2(got[k], want[k], nullptr), 1e-12);
}

TEST(RewriteSearch, AttentionReachesKorchsMergedMatmul) {
  ir::Graph g = ir::parse_graph(kAttention);
  SearchOptions o;
  o.slack = 100;  // keep every variant: this test looks for one, not for the cheapest
  o.beam = 64;
  std::vector<Variant> variants = search_window(g, h100(), o);
  const std::vector<std::string> korch = {"sum-to-matmul", "scale-after-matmul", "merge-shared-operand"};
  const Variant* merged = nullptr;
  for (const Variant& v : variants)
    if (v.rules == korch) merged = &v;
  ASSERT_NE(merged, nullptr);
  // One matmul of E with [V | 1], split into numerator and denominator, then divided.
  int matmuls = 0, reduces = 0;
  for (const ir::Primitive& p : merged->graph.nodes()) {
    matmuls += p.op == ir::PrimOp::MatMul;
    reduces += p.op == ir::PrimOp::Reduce;
  }
  EXPECT_EQ(matmuls, 2);
  EXPECT_EQ(reduces, 0);
  RewriteCheck c = check_rewrite(g, merged->graph);
  EXPECT_TRUE(c.accepted && c.proven) << c.verdict;
  expect_same_function(g, merged->graph);
  // The orchestrator covers the merged form: every primitive in a kernel, the E·[V | 1]
  // product in one of its own with at most its operand's concatenation.
  orchestrate::OptimalResult plan = orchestrate::orchestrate_optimal(
      merged->graph, orchestrate::roofline_cost(merged->graph, target::cuda_preset("h100")));
  EXPECT_TRUE(orchestrate::plan_problems(merged->graph, plan.kernels).empty());
  EXPECT_GT(plan.cost, 0);
}

// Two narrow projections of one long input, gated (SiLU(x·W1) ⊙ x·W3): reading x once for a
// product with [W1 | W3] (the weights joined at compile time) saves more bytes than writing
// the joined product costs, so the search merges them.
TEST(RewriteSearch, ProjectionsSharingTheirInputMerge) {
  std::string text = "graph @gated {\n  input %x : f32[4096,64]\n" + weights("w1", 64, 8, 1) + weights("w3", 64, 8, 2) + R"(
  %g : f32[4096,8] = matmul(%x, %w1) {trans_a=false, trans_b=false}
  %u : f32[4096,8] = matmul(%x, %w3) {trans_a=false, trans_b=false}
  %y : f32[4096,8] = elementwise(%g, %u) { mul(div(%g[i0, i1], add(1:f32, exp(neg(%g[i0, i1])))), %u[i0, i1]) }
  output %y
})";
  ir::Graph g = ir::parse_graph(text);
  RewriteResult r = rewrite_graph(g, h100());
  for (const std::string& line : r.summary()) std::printf("%s\n", line.c_str());
  ASSERT_EQ(r.applied.size(), 1u);
  EXPECT_EQ(r.applied[0].rules, std::vector<std::string>{"merge-shared-operand"});
  EXPECT_TRUE(r.applied[0].proven) << r.applied[0].verdict;
  int matmuls = 0;
  for (const ir::Primitive& p : r.graph.nodes()) matmuls += p.op == ir::PrimOp::MatMul;
  EXPECT_EQ(matmuls, 1);
  EXPECT_EQ(r.graph.constants().size(), 1u);  // W1 | W3, folded
  expect_same_function(g, r.graph);
  // Nothing to gain: the search leaves a graph without sites alone.
  ir::Graph plain = ir::parse_graph(R"(graph @g {
  input %x : f32[8]
  %y : f32[8] = elementwise(%x) { exp(%x[i0]) }
  output %y
})");
  RewriteResult none = rewrite_graph(plain, h100());
  EXPECT_EQ(none.sites, 0);
  EXPECT_EQ(none.graph.num_nodes(), 1);
}

}  // namespace
}  // namespace orchid::rewrite

namespace orchid::rewrite {
namespace {

// The whole search on random graphs, priced at random (a hash of each variant) so that many
// rewrites are taken: every rewrite passes its checks, and the graph computes what it did
// (interpreter, f64) under the same input and output names.
TEST(RewriteSearch, RandomGraphsKeepTheirFunction) {
  GraphCost random_cost = [](const ir::Graph& g) { return static_cast<double>(ir::canonical_signature(g).hash % 1000); };
  int rewritten = 0, with_sites = 0;
  for (uint64_t seed = 1; seed <= 2000; ++seed) {
    testlib::RandomGraphOptions opts;
    opts.max_nodes = seed % 3 == 0 ? 40 : seed % 2 ? 10 : 24;
    ir::Graph g = testlib::random_graph(seed, opts);
    if (fold_constants(g)) g = ir::eliminate_dead(g);  // the clean-up before the search
    RewriteResult r = rewrite_graph(g, random_cost);
    with_sites += r.sites > 0;
    rewritten += !r.applied.empty();
    for (const AppliedRewrite& a : r.rejected) ADD_FAILURE() << "seed " << seed << ": " << a.verdict;
    ASSERT_EQ(r.graph.inputs().size(), g.inputs().size());
    ASSERT_EQ(r.graph.outputs().size(), g.outputs().size());
    for (size_t k = 0; k < g.outputs().size(); ++k)
      EXPECT_EQ(r.graph.value(r.graph.outputs()[k]).name, g.value(g.outputs()[k]).name) << "seed " << seed;
    auto in = interp::random_inputs(g, seed);
    auto want = interp::run(g, in), got = interp::run(r.graph, in);
    for (size_t k = 0; k < want.size(); ++k)
      EXPECT_LE(interp::relative_l2(got[k], want[k], nullptr), 1e-9) << "seed " << seed;
  }
  std::printf("%d of 2000 random graphs had rewrite sites, %d were rewritten\n", with_sites, rewritten);
  EXPECT_GT(with_sites, 200);
  EXPECT_GT(rewritten, 100);
}

}  // namespace
}  // namespace orchid::rewrite

namespace orchid::rewrite {
namespace {

// Two disjoint windows whose merges would each read what the other computes (found by the
// reviewer of the search): the second is rejected instead of making a cycle.
TEST(RewriteSearch, WindowsThatWouldDependOnEachOtherAreNotBothRewritten) {
  ir::Graph g = ir::parse_graph(R"(graph @g {
  input %x : f32[4,4]
  input %y : f32[4,4]
  input %z : f32[4,4]
  input %w : f32[4,4]
  %o1 : f32[4,4] = matmul(%x, %w) {trans_a=false, trans_b=false}
  %t1 : f32[4,4] = elementwise(%o1) { neg(%o1[i0, i1]) }
  %t2 : f32[4,4] = elementwise(%t1) { neg(%t1[i0, i1]) }
  %p1 : f32[4,4] = matmul(%t2, %z) {trans_a=false, trans_b=false}
  %v : f32[4,4] = matmul(%y, %z) {trans_a=false, trans_b=false}
  %u1 : f32[4,4] = elementwise(%v) { neg(%v[i0, i1]) }
  %u2 : f32[4,4] = elementwise(%u1) { neg(%u1[i0, i1]) }
  %o2 : f32[4,4] = matmul(%x, %u2) {trans_a=false, trans_b=false}
  output %p1, %o2
})");
  GraphCost fewer_matmuls = [](const ir::Graph& h) {
    double c = 0;
    for (const ir::Primitive& p : h.nodes()) c += p.op == ir::PrimOp::MatMul ? 1 : 0.001;
    return c;
  };
  RewriteResult r = rewrite_graph(g, fewer_matmuls);
  EXPECT_EQ(r.windows, 2);
  ASSERT_EQ(r.applied.size(), 1u);
  ASSERT_EQ(r.rejected.size(), 1u);
  EXPECT_NE(r.rejected[0].verdict.find("cycle"), std::string::npos) << r.rejected[0].verdict;
  expect_same_function(g, r.graph);
}

}  // namespace
}  // namespace orchid::rewrite
