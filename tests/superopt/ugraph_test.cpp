// μGraphs: the text form round-trips, the verifier names what is wrong, lowering computes what
// the μGraph means (interpreter against the reference program on random inputs), and the
// finite-field check accepts the GQA and LoRA μGraphs Mirage finds and rejects wrong ones.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "interp/compare.h"
#include "interp/interp.h"
#include "interp/random_inputs.h"
#include "ir/parser.h"
#include "superopt/check_ugraph.h"
#include "superopt/lower.h"
#include "superopt/text.h"
#include "superopt/threads.h"
#include "support/error.h"
#include "verify/check.h"

namespace orchid::superopt {
namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::string kDir = "tests/data/superopt/";

std::string replace(std::string s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

verify::Verdict check(const std::string& program, const UGraph& u) {
  ir::Graph ref = ir::parse_graph_file(kDir + program);
  verify::Verdict v = check_ugraph(ref, u);
  std::cerr << verify::describe(v) << "\n";
  return v;
}

// The μGraph in `text` differs from the program, certainly (not through an uninterpreted
// function).
void expect_different(const std::string& program, const std::string& text) {
  verify::Verdict v = check(program, parse_ugraph(text));
  EXPECT_EQ(v.outcome, verify::Outcome::Different);
  EXPECT_TRUE(v.definitive);
}

// The lowered μGraph run by the interpreter agrees with the reference program.
void expect_same_values(const std::string& program, const UGraph& u, uint64_t seed) {
  ir::Graph ref = ir::parse_graph_file(kDir + program);
  ir::Graph low = lower(u);
  std::vector<ir::Tensor> in = interp::random_inputs(ref, seed);
  std::vector<ir::Tensor> want = interp::run(ref, in), got = interp::run(low, in);
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k)
    EXPECT_EQ(interp::compare_tensors(got[k], want[k], 1e-9, 1e-9), "") << "seed " << seed;
}

TEST(UGraph, TextRoundTrips) {
  for (const char* name : {"gqa.ugraph", "lora.ugraph"}) {
    UGraph g = parse_ugraph_file(kDir + name);
    std::string text = print_ugraph(g);
    UGraph again = parse_ugraph(text);
    EXPECT_EQ(print_ugraph(again), text) << name;
    EXPECT_EQ(again.tensors.size(), g.tensors.size());
  }
}

TEST(UGraph, ThreadGraphRoundTripsAndLowers) {
  std::string text = R"(ugraph @t {
  input %X : f32[4,8]
  input %Y : f32[4,8]
  block(%X, %Y) grid=[2] loop=1 {
    %x : f32[2,8] = in_iter(%X) imap=[0] fmap=rep
    %y : f32[2,8] = in_iter(%Y) imap=[0] fmap=rep
    thread(%x, %y) store=[%o] {
      %t : f32[2,8] = exp(%x)
      %o : f32[2,8] = div(%t, %y)
    }
    %O : f32[4,8] = out_accum(%o) omap=[0] fmap=rep
  }
  output %O
}
)";
  UGraph g = parse_ugraph(text);
  EXPECT_EQ(print_ugraph(g), text);
  EXPECT_EQ(g.tensor(*g.find("t")).level, Level::Thread);
  EXPECT_EQ(g.tensor(*g.find("o")).level, Level::Block);
  ir::Graph ref = ir::parse_graph(R"(graph @r {
  input %X : f32[4,8]
  input %Y : f32[4,8]
  %O : f32[4,8] = elementwise(%X, %Y) { div(exp(%X[i0, i1]), %Y[i0, i1]) }
  output %O
})");
  EXPECT_EQ(verify::check_equivalence(ref, lower(g)).outcome, verify::Outcome::Equivalent);
  // Registers are not the block's memory: only %x, %y and %o are stored.
  EXPECT_EQ(memory_use(g).block_bytes, 3 * 2 * 8 * 4);
}

// exp → mul → div with single readers becomes one thread graph; a result two operators read
// stays in the block's memory.
TEST(UGraph, ThreadGraphsFuseElementwiseTrees) {
  UGraph g = parse_ugraph(R"(ugraph @t {
  input %X : f32[4,8]
  input %Y : f32[4,8]
  block(%X, %Y) grid=[2] loop=1 {
    %x : f32[2,8] = in_iter(%X) imap=[0] fmap=rep
    %y : f32[2,8] = in_iter(%Y) imap=[0] fmap=rep
    %e : f32[2,8] = exp(%x)
    %m : f32[2,8] = mul(%e, %y)
    %d : f32[2,8] = div(%m, %y)
    %s : f32[2,8] = add(%d, %x)
    %u : f32[2,8] = exp(%s)
    %O : f32[4,8] = out_accum(%u) omap=[0] fmap=rep
    %P : f32[4,8] = out_accum(%s) omap=[0] fmap=rep
  }
  output %O
})");
  UGraph t = with_thread_graphs(g);
  std::string text = print_ugraph(t);
  EXPECT_NE(text.find("thread(%x, %y) store=[%s] {"), std::string::npos) << text;
  EXPECT_EQ(t.tensor(*t.find("e")).level, Level::Thread);
  EXPECT_EQ(t.tensor(*t.find("s")).level, Level::Block);
  EXPECT_EQ(t.tensor(*t.find("u")).level, Level::Block);  // a tree of one stays an operator
  EXPECT_LT(memory_use(t).block_bytes, memory_use(g).block_bytes);
  verify::Verdict v = verify::check_equivalence(lower(g), lower(t));
  EXPECT_EQ(v.outcome, verify::Outcome::Equivalent) << verify::describe(v);
}

TEST(UGraph, GqaIsVerified) {
  UGraph g = parse_ugraph_file(kDir + "gqa.ugraph");
  EXPECT_EQ(check("gqa.oir", g).outcome, verify::Outcome::Equivalent);
  for (uint64_t seed : {1, 2, 3}) expect_same_values("gqa.oir", g, seed);
}

TEST(UGraph, LoraIsVerified) {
  UGraph g = parse_ugraph_file(kDir + "lora.ugraph");
  EXPECT_EQ(check("lora.oir", g).outcome, verify::Outcome::Equivalent);
  for (uint64_t seed : {1, 2, 3}) expect_same_values("lora.oir", g, seed);
}

// Two grid dims partitioning one data dim, the outer first: the kv heads' partials land next
// to each other, and one sum across consecutive elements adds the splits.
TEST(UGraph, GridDimsSharingADataDimAreVerified) {
  std::string text = read(kDir + "gqa.ugraph");
  text = replace(text, "%A : f32[2,4,8] = out_accum(%n) omap=[0,1]", "%A : f32[4,2,8] = out_accum(%n) omap=[0,0]");
  text = replace(text, "%B : f32[2,4,1] = out_accum(%d) omap=[0,1]", "%B : f32[4,2,1] = out_accum(%d) omap=[0,0]");
  size_t at = text.find("  %A4 :");
  text = text.substr(0, at) + R"(  %As : f32[2,2,8] = sum(%A) dim=0 k=2
  %Bs : f32[2,2,1] = sum(%B) dim=0 k=2
  %Os : f32[2,2,8] = div(%As, %Bs)
  %O : f32[4,1,8] = reshape(%Os)
  output %O
}
)";
  UGraph g = parse_ugraph(text);
  EXPECT_EQ(check("gqa.oir", g).outcome, verify::Outcome::Equivalent);
  expect_same_values("gqa.oir", g, 7);
  // The same split read by in_iter: grid dims y then x over K's and V's sequence dim.
  std::string lora = read(kDir + "lora.ugraph");
  lora = replace(lora, "grid=[2] loop=2", "grid=[2,2] loop=1");
  lora = replace(lora, "in_iter(%W) imap=[0] fmap=1", "in_iter(%W) imap=[0,1] fmap=rep");
  lora = replace(lora, "%x : f32[8,8] = in_iter(%X) imap=[rep] fmap=0", "%x : f32[8,8] = in_iter(%X) imap=[rep,0] fmap=rep");
  lora = replace(lora, "%a : f32[4,8] = in_iter(%A) imap=[rep] fmap=1", "%a : f32[4,8] = in_iter(%A) imap=[rep,1] fmap=rep");
  lora = replace(lora, "in_iter(%B) imap=[0] fmap=rep", "in_iter(%B) imap=[0,rep] fmap=rep");
  lora = replace(lora, "%O : f32[8,8] = out_accum(%o) omap=[0] fmap=rep", "%P : f32[8,16] = out_accum(%o) omap=[0,1] fmap=rep");
  lora = replace(lora, "  output %O", "  %P3 : f32[8,2,8] = reshape(%P)\n  %O : f32[8,1,8] = sum(%P3) dim=1 k=2\n  %O2 : f32[8,8] = reshape(%O)\n  output %O2");
  UGraph split_k = parse_ugraph(lora);
  EXPECT_EQ(check("lora.oir", split_k).outcome, verify::Outcome::Equivalent);
}

// A block's kv head chosen by the split index and the split by the kv-head index: same shapes,
// other elements.
TEST(UGraph, WrongImapIsRejected) {
  expect_different("gqa.oir", replace(read(kDir + "gqa.ugraph"), "in_iter(%V) imap=[0,1]", "in_iter(%V) imap=[1,0]"));
}

// Each split's numerator divided by its own partial denominator, then summed: the partial
// sums of exp are not accumulated across splits before the division.
TEST(UGraph, MissingAccumulationIsRejected) {
  std::string text = read(kDir + "gqa.ugraph");
  size_t at = text.find("  %A4 :");
  text = text.substr(0, at) + R"(  %P : f32[2,4,8] = div(%A, %B)
  %P4 : f32[2,2,2,8] = reshape(%P)
  %Os : f32[2,1,2,8] = sum(%P4) dim=1 k=2
  %O : f32[4,1,8] = reshape(%Os)
  output %O
}
)";
  expect_different("gqa.oir", text);
}

// The for-loop's partial results concatenated where they must be summed: the shapes no longer
// fit, and the verifier names the operator.
TEST(UGraph, ConcatenatedAccumulationIsRejectedByShape) {
  std::string text = replace(read(kDir + "gqa.ugraph"), "out_accum(%n) omap=[0,1] fmap=rep", "out_accum(%n) omap=[0,1] fmap=2");
  try {
    parse_ugraph(text);
    FAIL() << "accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("out_accum → %A"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[2,4,16]"), std::string::npos) << e.what();
  }
}

TEST(UGraph, SwappedDivisionIsRejected) {
  expect_different("gqa.oir", replace(read(kDir + "gqa.ugraph"), "div(%As, %Bs)", "div(%Bs, %As)"));
}

// LoRA with its for-loop replicating X and W instead of walking the contracted dim counts
// W·X twice.
TEST(UGraph, WrongFmapIsRejected) {
  std::string text = read(kDir + "lora.ugraph");
  text = replace(text, "grid=[2] loop=2", "grid=[2] loop=1");
  text = replace(text, "%w : f32[4,8] = in_iter(%W) imap=[0] fmap=1", "%w : f32[4,16] = in_iter(%W) imap=[0] fmap=rep");
  text = replace(text, "%x : f32[8,8] = in_iter(%X) imap=[rep] fmap=0", "%x : f32[16,8] = in_iter(%X) imap=[rep] fmap=rep");
  text = replace(text, "%a : f32[4,8] = in_iter(%A) imap=[rep] fmap=1", "%a : f32[4,16] = in_iter(%A) imap=[rep] fmap=rep");
  UGraph ok = parse_ugraph(text);  // loop = 1: one iteration holds everything
  EXPECT_EQ(check("lora.oir", ok).outcome, verify::Outcome::Equivalent);
  text = replace(text, "loop=1", "loop=2");
  verify::Verdict v = check("lora.oir", parse_ugraph(text));
  EXPECT_EQ(v.outcome, verify::Outcome::Different);
}

void expect_error(const std::string& text, const std::string& part) {
  try {
    parse_ugraph(text);
    FAIL() << "accepted: " << text;
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(UGraph, VerifierNamesTheProblem) {
  std::string head = "ugraph @e {\n  input %X : f32[4,8]\n";
  expect_error(head + "  %Y : f32[4,4] = exp(%X)\n  output %Y\n}", "the operator gives [4,8]");
  expect_error(head + "  %Y : f32[4,8] = in_iter(%X) imap=[0] fmap=rep\n  output %Y\n}", "is not a kernel operator");
  expect_error(head + "  %Y : f32[4,8] = exp(%Z)\n  output %Y\n}", "unknown tensor %Z");
  expect_error(head + "  block(%X) grid=[3] loop=1 {\n    %x : f32[1,8] = in_iter(%X) imap=[0] fmap=rep\n"
                      "    %Y : f32[3,8] = out_accum(%x) omap=[0] fmap=rep\n  }\n  output %Y\n}",
               "does not split into 3 blocks");
  expect_error(head + "  block(%X) grid=[2] loop=1 {\n    %x : f32[4,8] = in_iter(%X) imap=[rep] fmap=rep\n"
                      "    %Y : f32[4,8] = out_accum(%x) omap=[rep] fmap=rep\n  }\n  output %Y\n}",
               "blocks would write the same elements");
  expect_error(head + "  block(%X) grid=[2] loop=1 {\n    %x : f32[2,8] = in_iter(%X) imap=[0] fmap=rep\n"
                      "    %u : f32[2,8] = exp(%x)\n"
                      "    %Y : f32[4,8] = out_accum(%x) omap=[0] fmap=rep\n  }\n  output %Y\n}",
               "block tensor %u is never read");
  expect_error(head + "  %Y : f32[4,8] = exp(%X)\n}", "has no outputs");
  expect_error("ugraph @e {\n  input %X : f32[4,8]\n  %X : f32[4,8] = exp(%X)\n  output %X\n}", "defined twice");
}

TEST(UGraph, MemoryUseCountsBlockTensorsAndAccumulators) {
  UGraph g = parse_ugraph_file(kDir + "gqa.ugraph");
  MemoryUse m = memory_use(g);
  // q 16 + k 32 + v 32 + q2 16 + s 8 + e 8 + n 16 + d 2 elements, and the two accumulators
  // of n and d (the loop sums): 146 floats.
  EXPECT_EQ(m.block_bytes, (16 + 32 + 32 + 16 + 8 + 8 + 16 + 2 + 16 + 2) * 4);
  EXPECT_GT(m.device_bytes, 0);
}

}  // namespace
}  // namespace orchid::superopt
