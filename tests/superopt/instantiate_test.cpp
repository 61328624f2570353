// μGraphs found for small programs rebuilt at other sizes (superopt/instantiate.h): shapes
// inferred again, whole sums and unit-dim reshapes carried over, the final view to the new
// output; tilings that do not split the new shapes refused by name; the tilings worth timing.
#include "superopt/instantiate.h"

#include <gtest/gtest.h>

#include "ir/parser.h"
#include "superopt/check_ugraph.h"
#include "superopt/text.h"

namespace orchid::superopt {
namespace {

const std::string kDir = "tests/data/superopt/";

// GQA at decoding sizes: 32 query heads over 8 kv heads, 4096 cached tokens, head dim 128.
const std::vector<ir::Dims> kDecodeInputs = {{32, 1, 128}, {8, 128, 4096}, {8, 4096, 128}};
const ir::Dims kDecodeOutput = {32, 1, 128};

TEST(Instantiate, GqaAsFoundKeepsItsStructureAtDecodingSizes) {
  UGraph small = parse_ugraph_file(kDir + "gqa_found.ugraph");
  EXPECT_EQ(check_ugraph(ir::parse_graph_file(kDir + "gqa.oir"), small).outcome, verify::Outcome::Equivalent);
  Instance in = instantiate(small, kDecodeInputs, kDecodeOutput, {{{8, 4}, 8}});
  ASSERT_TRUE(in.ugraph) << in.error;
  const UGraph& g = *in.ugraph;
  EXPECT_EQ(g.shape(*g.find("b3")), (ir::Dims{4, 1, 128}));   // the kv head's 4 query heads
  EXPECT_EQ(g.shape(*g.find("b4")), (ir::Dims{1, 128, 128}));  // a chunk of 128 cached tokens
  EXPECT_EQ(g.shape(*g.find("b6")), (ir::Dims{1, 4, 128}));   // as 4 rows
  EXPECT_EQ(g.shape(*g.find("b9")), (ir::Dims{1, 4, 1}));     // the whole chunk summed
  EXPECT_EQ(g.blocks[0].ops[6].k, 128);
  EXPECT_EQ(g.shape(*g.find("t11")), (ir::Dims{1, 32, 4}));
  EXPECT_EQ(g.shape(*g.find("t13")), (ir::Dims{1, 32, 1}));   // the 4 splits added
  EXPECT_EQ(g.shape(*g.find("t16")), (ir::Dims{32, 1, 128}));
  // Unchanged sizes give the μGraph back.
  Instance same = instantiate(small, {{4, 1, 8}, {2, 8, 16}, {2, 16, 8}}, {4, 1, 8});
  ASSERT_TRUE(same.ugraph) << same.error;
  EXPECT_EQ(print_ugraph(*same.ugraph), print_ugraph(small));
}

TEST(Instantiate, TilingsThatDoNotSplitTheShapesAreRefusedByOperator) {
  UGraph small = parse_ugraph_file(kDir + "gqa_found.ugraph");
  Instance in = instantiate(small, kDecodeInputs, kDecodeOutput, {{{3, 4}, 8}});
  ASSERT_FALSE(in.ugraph);
  EXPECT_NE(in.error.find("in_iter b3: dim 0 of [32,1,128] does not split into 3 blocks"), std::string::npos) << in.error;
  // A query of 2 tokens: the query part's dim of one element would be 2.
  Instance two = instantiate(small, {{32, 2, 128}, {8, 128, 4096}, {8, 4096, 128}}, {32, 2, 128}, {{{8, 4}, 8}});
  ASSERT_FALSE(two.ugraph);
  EXPECT_NE(two.error.find("block tensor b3: dim 1 of one element would be 2"), std::string::npos) << two.error;
  // Blocks of 2 kv heads would pair every query head with both.
  Instance pairs = instantiate(small, kDecodeInputs, kDecodeOutput, {{{4, 4}, 8}});
  ASSERT_FALSE(pairs.ugraph);
  EXPECT_NE(pairs.error.find("block tensor b4: dim 0 of one element would be 2"), std::string::npos) << pairs.error;
}

// Partial sums of the splits placed in one dim with the kv heads: the kernel's sum adds the
// splits of each head at the new grid's count.
TEST(Instantiate, SumsOfSplitsFollowTheGrid) {
  UGraph small = parse_ugraph_file(kDir + "gqa_split.ugraph");
  EXPECT_EQ(check_ugraph(ir::parse_graph_file(kDir + "gqa.oir"), small).outcome, verify::Outcome::Equivalent);
  Instance in = instantiate(small, kDecodeInputs, kDecodeOutput, {{{8, 4}, 8}});
  ASSERT_TRUE(in.ugraph) << in.error;
  const UGraph& g = *in.ugraph;
  EXPECT_EQ(g.shape(*g.find("t12")), (ir::Dims{32, 4, 128}));
  EXPECT_EQ(g.ops[1].k, 4);  // t13: the whole dim of 4 splits
  EXPECT_EQ(g.ops[2].k, 4);  // t14: groups of 4 splits
  EXPECT_EQ(g.shape(*g.find("t14")), (ir::Dims{8, 4, 128}));
}

TEST(Instantiate, TilingChoicesFitTheCoresAndTheBlockMemory) {
  UGraph small = parse_ugraph_file(kDir + "gqa_found.ugraph");
  std::vector<Tiling> t = tiling_choices(small, kDecodeInputs, kDecodeOutput, 2, int64_t{2} << 20, 5);
  ASSERT_EQ(t.size(), 5u);
  for (const Tiling& x : t) {
    Instance in = instantiate(small, kDecodeInputs, kDecodeOutput, {x});
    ASSERT_TRUE(in.ugraph) << in.error;
    EXPECT_GE(ir::numel(x.grid), 2);
    EXPECT_LE(memory_use(*in.ugraph).block_bytes, int64_t{2} << 20);
  }
  // Deterministic.
  EXPECT_EQ(t, tiling_choices(small, kDecodeInputs, kDecodeOutput, 2, int64_t{2} << 20, 5));
}

}  // namespace
}  // namespace orchid::superopt
