// The μGraph generator finds the GQA and LoRA μGraphs Mirage reports, verifies what it
// returns, and prunes without losing them.
#include "superopt/generator.h"

#include <gtest/gtest.h>

#include "ir/parser.h"
#include "superopt/check_ugraph.h"
#include "superopt/dim_classes.h"
#include "superopt/result_text.h"
#include "superopt/text.h"

namespace orchid::superopt {
namespace {

const std::string kDir = "tests/data/superopt/";

SearchResult run(const std::string& program, const SearchOptions& o) {
  ir::Graph p = ir::parse_graph_file(kDir + program);
  SearchResult r = search(p, o);
  std::cerr << describe(r.stats) << "\n";
  for (size_t i = 0; i < r.found.size(); ++i) std::cerr << "cost " << r.cost[i] << "\n" << print_ugraph(r.found[i]);
  EXPECT_EQ(r.unsupported, "");
  for (const UGraph& g : r.found)
    EXPECT_EQ(check_ugraph(p, g).outcome, verify::Outcome::Equivalent) << print_ugraph(g);
  return r;
}

// The kernel input an in_iter of block graph b loads into tensor t, or "".
std::string loaded(const UGraph& g, const BlockGraph& b, TensorId t) {
  for (const UOp& op : b.ops)
    if (op.type == UOpType::InIter && op.outputs[0] == t) return g.tensor(op.inputs[0]).name;
  return "";
}

// LoRA's search: one kernel operator of two block operators, a grid of 2, a loop of 2.
SearchOptions lora_options() {
  SearchOptions o;
  o.max_kernel_ops = 1;
  o.max_block_ops = 2;
  o.grids = {{2}};
  o.loops = {2};
  return o;
}

// Mirage's Figure 9b: one graph-defined kernel whose blocks compute their tile of A·X and
// perform one matmul (W ‖ B)·(X over A·X), accumulating over the for-loop.
TEST(Generator, FindsLoraAsOneKernelWithConcatMatmul) {
  SearchResult r = run("lora.oir", lora_options());
  ASSERT_FALSE(r.found.empty());
  std::vector<UGraph> all = r.found;
  all.insert(all.end(), r.unverified.begin(), r.unverified.end());
  const UGraph* figure = nullptr;
  for (const UGraph& g : all) {
    if (g.blocks.size() != 1) continue;
    const BlockGraph& b = g.blocks[0];
    TensorId ax = -1;
    for (const UOp& op : b.ops) {
      if (op.type == UOpType::Matmul && loaded(g, b, op.inputs[0]) == "A" && loaded(g, b, op.inputs[1]) == "X")
        ax = op.outputs[0];
      if (op.type == UOpType::ConcatMatmul && ax >= 0 && loaded(g, b, op.inputs[0]) == "W" &&
          loaded(g, b, op.inputs[1]) == "B" && loaded(g, b, op.inputs[2]) == "X" && op.inputs[3] == ax)
        figure = &g;
    }
  }
  ASSERT_NE(figure, nullptr) << all.size() << " μgraphs generated";
  EXPECT_EQ(check_ugraph(ir::parse_graph_file(kDir + "lora.oir"), *figure).outcome, verify::Outcome::Equivalent);
  // As the tuning database keeps it.
  std::string stats;
  SearchResult back = parse_result_text(result_text(r), &stats);
  EXPECT_EQ(stats, describe(r.stats));
  ASSERT_EQ(back.found.size(), r.found.size());
  EXPECT_EQ(back.cost, r.cost);
  for (size_t i = 0; i < r.found.size(); ++i) EXPECT_EQ(print_ugraph(back.found[i]), print_ugraph(r.found[i]));
  EXPECT_EQ(back.unverified.size(), r.unverified.size());
}

// One thread or two, the same μGraphs in the same order (the workers split the first kernel
// operator's choices; results are merged by cost and text).
TEST(Generator, IsDeterministicWhateverTheThreads) {
  SearchOptions o = lora_options();
  o.max_results = 4;
  ir::Graph p = ir::parse_graph_file(kDir + "lora.oir");
  auto texts = [&](int threads) {
    o.threads = threads;
    SearchResult r = search(p, o);
    std::vector<std::string> out;
    for (const UGraph& g : r.found) out.push_back(print_ugraph(g));
    for (const UGraph& g : r.unverified) out.push_back(print_ugraph(g));
    return out;
  };
  std::vector<std::string> one = texts(1);
  EXPECT_FALSE(one.empty());
  EXPECT_EQ(texts(2), one);
  EXPECT_EQ(texts(2), one);
}

// Mirage's Figure 4c: kernel 1 takes a kv head's query heads as rows of one head (a reshape,
// then small GEMMs), splits the cache among blocks and iterations and accumulates partial
// numerators and sums of exp; kernels 2 to 4 add the splits and divide. K and V are never
// repeated. The search generates it (it passes the screening tests); it is verified here.
TEST(Generator, FindsGqaAsFlashDecodingWithQueryHeadsAsRows) {
  SearchOptions o;
  o.max_kernel_ops = 4;
  o.max_block_ops = 5;
  o.max_block_inputs = 3;
  o.grids = {{2, 2}};
  o.loops = {2};
  o.max_results = 2;
  SearchResult r = run("gqa.oir", o);
  ASSERT_FALSE(r.found.empty());
  EXPECT_FALSE(r.stats.timed_out);
  std::vector<UGraph> all = r.found;
  all.insert(all.end(), r.unverified.begin(), r.unverified.end());
  const UGraph* flash = nullptr;
  for (const UGraph& g : all) {
    std::string text = print_ugraph(g);
    bool rows = text.find("= reshape(%b") != std::string::npos;
    bool split = text.find("in_iter(%K) imap=[0,2] fmap=2") != std::string::npos;
    bool two_sums = text.find("= sum(%t") != text.rfind("= sum(%t");
    bool repeats = text.find("repeat") != std::string::npos;
    size_t kernels = 0;  // the final reshape is a view
    for (const UOp& op : g.ops) kernels += op.type != UOpType::Reshape;
    if (rows && split && two_sums && !repeats && kernels == 4) flash = &g;
  }
  ASSERT_NE(flash, nullptr) << all.size() << " μgraphs generated";
  std::cerr << "generated:\n" << print_ugraph(*flash);
  EXPECT_EQ(check_ugraph(ir::parse_graph_file(kDir + "gqa.oir"), *flash).outcome, verify::Outcome::Equivalent);
}

}  // namespace
}  // namespace orchid::superopt

namespace orchid::superopt {
namespace {

// Attention's dims: heads through Q, K (h / g) and V; the head dim through Q and K; the
// sequence through K and V. The program sums along the head dim and the sequence.
TEST(DimClasses, FollowTheProgramsIndices) {
  DimClasses c = input_dim_classes(ir::parse_graph_file(kDir + "gqa.oir"));
  ASSERT_EQ(c.inputs.size(), 3u);
  const auto &q = c.inputs[0], &k = c.inputs[1], &v = c.inputs[2];
  EXPECT_EQ(q[0], k[0]);
  EXPECT_EQ(k[0], v[0]);
  EXPECT_EQ(q[2], k[1]);
  EXPECT_EQ(k[2], v[1]);
  EXPECT_NE(v[2], q[2]);
  EXPECT_NE(q[0], q[2]);
  EXPECT_TRUE(c.reduced[static_cast<size_t>(q[2])]);
  EXPECT_TRUE(c.reduced[static_cast<size_t>(k[2])]);
  EXPECT_FALSE(c.reduced[static_cast<size_t>(q[0])]);
  EXPECT_FALSE(c.reduced[static_cast<size_t>(v[2])]);
}

}  // namespace
}  // namespace orchid::superopt
