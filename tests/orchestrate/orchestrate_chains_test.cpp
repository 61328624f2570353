// Candidates across linear primitives (chains.h): attention's two products with the softmax
// between are one candidate (a mask made from a graph input read, not taken in), with the
// division after P V where a rewrite put it there; values
// read outside are written; primitives on paths between its own join it; products joined
// without a reduce, or through a second product, are not; the partition keeps a chain in one subgraph where it can; the BLP
// chooses a chain where it is cheapest and never without the option.
#include <gtest/gtest.h>

#include <string>

#include "ir/parser.h"
#include "orchestrate/chains.h"
#include "orchestrate/optimal.h"

namespace orchid::orchestrate {
namespace {

// The projected query, Q Kᵀ scaled, softmax, P V, then `after` (text of primitives reading %o
// and writing %z), output %z and `outputs`.
std::string attention(const std::string& after = "", const std::string& outputs = "") {
  std::string g = R"(graph @attention {
  input %x : f32[64,16]
  input %w : f32[16,16]
  input %k : f32[1,1,32,16]
  input %v : f32[1,1,32,16]
  %q2 : f32[64,16] = matmul(%x, %w) {trans_a=false, trans_b=false}
  %q : f32[1,1,64,16] = view(%q2)
  %y : f32[1,1,64,32] = matmul(%q, %k) {trans_a=false, trans_b=true}
  %ys : f32[1,1,64,32] = elementwise(%y) { mul(%y[i0, i1, i2, i3], 0.25:f32) }
  %mx : f32[1,1,64,1] = reduce max(%ys) over [32] { %ys[i0, i1, i2, r0] }
  %e : f32[1,1,64,32] = elementwise(%ys, %mx) { exp(sub(%ys[i0, i1, i2, i3], %mx[i0, i1, i2, 0])) }
  %sm : f32[1,1,64,1] = reduce sum(%e) over [32] { %e[i0, i1, i2, r0] }
  %p : f32[1,1,64,32] = elementwise(%e, %sm) { div(%e[i0, i1, i2, i3], %sm[i0, i1, i2, 0]) }
  %o : f32[1,1,64,16] = matmul(%p, %v) {trans_a=false, trans_b=false}
)";
  return g + (after.empty() ? "  %z : f32[1,1,64,16] = elementwise(%o) { neg(%o[i0, i1, i2, i3]) }\n" : after) +
         "  output %z" + outputs + "\n}\n";
}

// `text` with its first `from` replaced by `to` (`from` must occur).
std::string substituted(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

bool same(const tile::Kernel& a, const tile::Kernel& b) {
  tile::Kernel x = tile::sorted(a), y = tile::sorted(b);
  return x.nodes == y.nodes && x.outputs == y.outputs;
}

std::vector<std::string> names(const ir::Graph& g, const std::vector<ir::NodeId>& nodes) {
  std::vector<std::string> out;
  for (ir::NodeId n : nodes) out.push_back(g.value(g.node(n).outputs[0]).name);
  return out;
}
std::vector<std::string> names(const ir::Graph& g, const std::vector<ir::ValueId>& values) {
  std::vector<std::string> out;
  for (ir::ValueId v : values) out.push_back(g.value(v).name);
  return out;
}

TEST(Chains, AttentionIsOneCandidateWithItsEpilogue) {
  ir::Graph g = ir::parse_graph(attention());
  std::vector<tile::Kernel> chains = linear_chains(g);
  ASSERT_EQ(chains.size(), 1u);
  // The query's projection is a product of its own: Q Kᵀ starts the chain.
  EXPECT_EQ(names(g, chains[0].nodes), (std::vector<std::string>{"y", "ys", "mx", "e", "sm", "p", "o", "z"}));
  EXPECT_EQ(names(g, chains[0].outputs), (std::vector<std::string>{"z"}));
  // Without the epilogue's room, the chain ends at P V.
  ChainOptions no_epilogue;
  no_epilogue.max_epilogue = 0;
  EXPECT_EQ(names(g, linear_chains(g, no_epilogue)[0].outputs), (std::vector<std::string>{"o"}));
  ChainOptions small;
  small.max_nodes = 7;
  EXPECT_TRUE(linear_chains(g, small).empty());
}

TEST(Chains, AMaskFromAGraphInputStaysOutside) {
  // The scores plus a mask computed from a graph input: the mask does not depend on Q Kᵀ, so it
  // is read by the chain, not computed in it.
  std::string text = substituted(attention(), "  %q2 : ",
                                 "  input %mask : f32[1,1,1,32]\n"
                                 "  %mk : f32[1,1,1,32] = elementwise(%mask) { mul(sub(1:f32, %mask[i0, i1, i2, i3]), "
                                 "-10000:f32) }\n  %q2 : ");
  text = substituted(text, "elementwise(%y) { mul(%y[i0, i1, i2, i3], 0.25:f32) }",
                     "elementwise(%y, %mk) { add(mul(%y[i0, i1, i2, i3], 0.25:f32), %mk[i0, i1, 0, i3]) }");
  ir::Graph g = ir::parse_graph(text);
  std::vector<tile::Kernel> chains = linear_chains(g);
  ASSERT_EQ(chains.size(), 1u);
  EXPECT_EQ(names(g, chains[0].nodes), (std::vector<std::string>{"y", "ys", "mx", "e", "sm", "p", "o", "z"}));
}

TEST(Chains, DivisionAfterTheProductAndValuesReadOutsideAreWritten) {
  // softmax's division moved after P V (rewrite scale-after-matmul): the division reads the
  // product and the sums, and is the chain's epilogue.
  std::string text = attention();
  text.replace(text.find("  %p : "), text.find("  %o : ") - text.find("  %p : "), "");  // the division's line
  text = substituted(text, "matmul(%p, %v)", "matmul(%e, %v)");
  text = substituted(text, "elementwise(%o) { neg(%o[i0, i1, i2, i3]) }",
                     "elementwise(%o, %sm) { div(%o[i0, i1, i2, i3], %sm[i0, i1, i2, 0]) }");
  ir::Graph g = ir::parse_graph(text);
  std::vector<tile::Kernel> chains = linear_chains(g);
  ASSERT_EQ(chains.size(), 1u);
  EXPECT_EQ(names(g, chains[0].nodes), (std::vector<std::string>{"y", "ys", "mx", "e", "sm", "o", "z"}));
  // The row sums an output too, and the scores read by another primitive: both written.
  ir::Graph h = ir::parse_graph(attention(
      "  %z : f32[1,1,64,16] = elementwise(%o) { neg(%o[i0, i1, i2, i3]) }\n"
      "  %t : f32[1,1,64,32] = elementwise(%ys) { abs(%ys[i0, i1, i2, i3]) }\n",
      ", %sm, %t"));
  chains = linear_chains(h);
  ASSERT_EQ(chains.size(), 1u);
  EXPECT_EQ(names(h, chains[0].outputs), (std::vector<std::string>{"ys", "sm", "z"}));
}

TEST(Chains, NoReduceASecondProductOrAPathOutsideIsNoChain) {
  // Products joined by elementwise primitives only: no row reduction to keep in cache.
  ir::Graph mlp = ir::parse_graph(R"(graph @mlp {
  input %x : f32[64,16]
  input %w1 : f32[16,32]
  input %w2 : f32[32,16]
  %h : f32[64,32] = matmul(%x, %w1) {trans_a=false, trans_b=false}
  %r : f32[64,32] = elementwise(%h) { max(%h[i0, i1], 0:f32) }
  %o : f32[64,16] = matmul(%r, %w2) {trans_a=false, trans_b=false}
  output %o
})");
  EXPECT_TRUE(linear_chains(mlp).empty());
  // Two products reached back from one operand (a sum of both, normalized).
  ir::Graph two = ir::parse_graph(R"(graph @two {
  input %x : f32[64,16]
  input %w1 : f32[16,16]
  input %w2 : f32[16,16]
  input %w3 : f32[16,16]
  %a : f32[64,16] = matmul(%x, %w1) {trans_a=false, trans_b=false}
  %b : f32[64,16] = matmul(%x, %w2) {trans_a=false, trans_b=false}
  %s : f32[64,16] = elementwise(%a, %b) { add(%a[i0, i1], %b[i0, i1]) }
  %m : f32[64,1] = reduce max(%s) over [16] { %s[i0, r0] }
  %n : f32[64,16] = elementwise(%s, %m) { sub(%s[i0, i1], %m[i0, 0]) }
  %o : f32[64,16] = matmul(%n, %w3) {trans_a=false, trans_b=false}
  output %o
})");
  EXPECT_TRUE(linear_chains(two).empty());
  // P V where V is computed from the scores: through a transpose, which joins the chain; through
  // a product, which cannot (a path would leave the chain and re-enter it).
  std::string text = substituted(attention(), "  input %v : f32[1,1,32,16]\n", "");
  std::string through_layout =
      substituted(text, "  %o : ", "  %v : f32[1,1,32,16] = layout(%ys) { %ys[i0, i1, i2, i3] }\n  %o : ");
  std::string through_product =
      substituted(text, "  %o : ",
                  "  %yt : f32[1,1,32,64] = layout(%ys) { %ys[i0, i1, i3, i2] }\n"
                  "  %v : f32[1,1,32,16] = matmul(%yt, %q) {trans_a=false, trans_b=false}\n  %o : ");
  ir::Graph closed = ir::parse_graph(through_layout);
  std::vector<tile::Kernel> chains = linear_chains(closed);
  ASSERT_EQ(chains.size(), 1u);
  EXPECT_EQ(names(closed, chains[0].nodes), (std::vector<std::string>{"y", "ys", "mx", "e", "sm", "p", "v", "o", "z"}));
  EXPECT_TRUE(linear_chains(ir::parse_graph(through_product)).empty());
}

TEST(Chains, PartitionKeepsAChainWholeWhereItCan) {
  ir::Graph g = ir::parse_graph(attention());
  // Runs of 4 nodes at most: the chain (nodes 2 to 9) is cut; kept whole, the cuts fall
  // around it where the run length allows, and it lies in one subgraph of the solver.
  PartitionOptions plain{4, 1000};
  EXPECT_GT(partition_graph(g, plain).subgraphs.size(), 2u);
  PartitionOptions kept{9, 1000};
  kept.keep_whole.push_back({2, 9});
  Partition p = partition_graph(g, kept);
  for (const Cut& c : p.cuts) EXPECT_TRUE(c.before.v <= 2 || c.before.v > 9) << "cut before node " << c.before.v;
  OptimalOptions o;
  o.partition.max_nodes = 9;
  OptimalSolver solver(g, o);
  tile::Kernel chain = linear_chains(g)[0];
  int32_t sg = solver.subgraph_of(chain);
  for (ir::NodeId n : chain.nodes) EXPECT_EQ(solver.subgraph_of(tile::Kernel{{n}, {}}), sg);
}

TEST(Chains, TheBlpChoosesAChainWhereItIsCheapest) {
  ir::Graph g = ir::parse_graph(attention());
  const tile::Kernel chain = linear_chains(g)[0];
  // Every kernel costs 1 plus 0.1 per primitive; the chain costs 0.5.
  CostOracle cost = [&](const tile::Kernel& k) {
    return same(k, chain) ? 0.5 : 1.0 + 0.1 * static_cast<double>(k.nodes.size());
  };
  OptimalResult with = orchestrate_optimal(g, cost);
  EXPECT_EQ(with.chains, 1);
  EXPECT_EQ(with.chains_left_out, 0);
  EXPECT_TRUE(plan_problems(g, with.kernels).empty());
  bool chosen = false;
  for (const tile::Kernel& k : with.kernels) chosen |= same(k, chain);
  EXPECT_TRUE(chosen);
  OptimalOptions off;
  off.chains = false;
  OptimalResult without = orchestrate_optimal(g, cost, off);
  EXPECT_EQ(without.chains, 0);
  for (const tile::Kernel& k : without.kernels) EXPECT_FALSE(same(k, chain));
  EXPECT_GT(without.cost, with.cost);
}

}  // namespace
}  // namespace orchid::orchestrate
