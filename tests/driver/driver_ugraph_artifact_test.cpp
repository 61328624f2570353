// μGraphs built into artifacts (driver/ugraph_artifact.h, codegen/cpu/ugraph_kernel.h) compute
// what the interpreter computes: Mirage's GQA and LoRA μGraphs against their programs, every
// μGraph the LoRA search verifies, and hand-written block graphs that exercise each way a
// block tensor can live (views, copies, scratch, results computed in the output, summed or
// concatenated across iterations, thread graphs) against their own lowering.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "driver/artifact.h"
#include "driver/ugraph_test_options.h"
#include "driver/ugraph_artifact.h"
#include "ir/movement.h"
#include "interp/compare.h"
#include "interp/interp.h"
#include "interp/random_inputs.h"
#include "ir/parser.h"
#include "runtime/model.h"
#include "runtime/session.h"
#include "superopt/check_ugraph.h"
#include "superopt/generator.h"
#include "superopt/instantiate.h"
#include "superopt/lower.h"
#include "superopt/search_form.h"
#include "superopt/text.h"
#include "support/error.h"
#include "testlib/temp_dir.h"

namespace orchid::driver {
namespace {

namespace fs = std::filesystem;
using superopt::UGraph;

const std::string kDir = "tests/data/superopt/";

// Runs the artifact twice in one session into output buffers full of NaN (every element must
// be written, none only added to) and compares with the interpreter.
void expect_runs_again(const std::string& dir, const ir::Graph& program, uint64_t seed) {
  std::vector<ir::Tensor> inputs = interp::random_inputs(program, seed);
  std::vector<ir::Tensor> want = interp::run(program, inputs, {interp::Precision::F64});
  runtime::Session s(runtime::Model::load(dir));
  std::vector<const void*> in;
  for (const ir::Tensor& t : inputs) in.push_back(t.data());
  for (int run = 0; run < 2; ++run) {
    std::vector<ir::Tensor> got;
    std::vector<void*> out;
    for (ir::ValueId v : program.outputs()) {
      got.emplace_back(program.type(v));
      std::fill_n(reinterpret_cast<float*>(got.back().data()), ir::numel(program.type(v).shape), NAN);
      out.push_back(got.back().data());
    }
    s.run(in, out);
    for (size_t o = 0; o < want.size(); ++o) {
      std::string why;
      EXPECT_LE(interp::relative_l2(got[o], want[o], &why), 1e-4) << "run " << run << ", output " << o << " " << why;
    }
  }
}

// Builds u, runs it on seeded random inputs and compares with the interpreter on `program`.
VerifyReport build_and_verify(const UGraph& u, const ir::Graph& program, uint64_t seed = 1) {
  testlib::TempDir dir("orchid_ugraph_artifact");
  BuiltArtifact a = build_ugraph_artifact(u, program, ugraph_build_options());
  std::string at = dir.file("a");
  write_artifact(a, at);
  expect_runs_again(at, program, seed);
  return verify_artifact(at, program, seed, 1e-4);
}

TEST(UGraphArtifact, MirageGqaAndLoraMatchTheirPrograms) {
  for (const char* name : {"gqa", "lora"}) {
    ir::Graph program = ir::parse_graph_file(kDir + name + ".oir");
    UGraph u = superopt::parse_ugraph_file(kDir + name + ".ugraph");
    for (uint64_t seed : {1, 2}) {
      VerifyReport r = build_and_verify(u, program, seed);
      EXPECT_TRUE(r.ok()) << name << " seed " << seed << "\n" << r.summary();
    }
  }
}

TEST(UGraphArtifact, GqaStepsAreTheKernelOperatorsAndReshapesAreViews) {
  ir::Graph program = ir::parse_graph_file(kDir + "gqa.oir");
  BuiltArtifact a = build_ugraph_artifact(superopt::parse_ugraph_file(kDir + "gqa.ugraph"), program, ugraph_build_options());
  // block, sum, sum, div; the three kernel-level reshapes are aliases.
  ASSERT_EQ(a.plan.steps.size(), 4u);
  EXPECT_EQ(a.plan.steps[0].tasks, 4);  // a task per block of the 2 x 2 grid
  EXPECT_EQ(a.steps[0].schedule, "block grid=2x2 loop=2");
  int views = 0;
  for (const runtime::PlanBuffer& b : a.plan.buffers) views += b.alias >= 0;
  EXPECT_EQ(views, 3);
  EXPECT_EQ(a.plan.buffers[static_cast<size_t>(a.plan.outputs[0])].name, "O");
}

// GQA decoding at a larger size: 8 query heads over 2 kv heads, 128 cached tokens, head dim
// 64; a block per (kv head, quarter of the cache), looping over 4 chunks of 8 tokens.
TEST(UGraphArtifact, LargerGqaMatchesItsProgram) {
  ir::Graph program = ir::parse_graph_file(kDir + "gqa8.oir");
  UGraph u = superopt::parse_ugraph(R"(ugraph @gqa {
  input %Q : f32[8,1,64]
  input %K : f32[2,64,128]
  input %V : f32[2,128,64]
  block(%Q, %K, %V) grid=[2,4] loop=4 {
    %q : f32[4,1,64] = in_iter(%Q) imap=[0,rep] fmap=rep
    %k : f32[1,64,8] = in_iter(%K) imap=[0,2] fmap=2
    %v : f32[1,8,64] = in_iter(%V) imap=[0,1] fmap=1
    %q2 : f32[1,4,64] = reshape(%q)
    %s : f32[1,4,8] = matmul(%q2, %k)
    %e : f32[1,4,8] = exp(%s)
    %n : f32[1,4,64] = matmul(%e, %v)
    %d : f32[1,4,1] = sum(%e) dim=2 k=8
    %A : f32[2,16,64] = out_accum(%n) omap=[0,1] fmap=rep
    %B : f32[2,16,1] = out_accum(%d) omap=[0,1] fmap=rep
  }
  %A4 : f32[2,4,4,64] = reshape(%A)
  %As : f32[2,1,4,64] = sum(%A4) dim=1 k=4
  %B4 : f32[2,4,4,1] = reshape(%B)
  %Bs : f32[2,1,4,1] = sum(%B4) dim=1 k=4
  %Os : f32[2,1,4,64] = div(%As, %Bs)
  %O : f32[8,1,64] = reshape(%Os)
  output %O
}
)");
  VerifyReport r = build_and_verify(u, program);
  EXPECT_TRUE(r.ok()) << r.summary();
}

// Every μGraph the LoRA search returns (verified, or screened and then checked here) runs.
TEST(UGraphArtifact, EveryLoraSearchResultMatchesTheProgram) {
  ir::Graph program = ir::parse_graph_file(kDir + "lora.oir");
  superopt::SearchResult s = superopt::search(program, lora_search_options());
  std::vector<UGraph> all = s.found;
  for (const UGraph& u : s.unverified)
    if (superopt::check_ugraph(program, u).outcome == verify::Outcome::Equivalent) all.push_back(u);
  ASSERT_GE(all.size(), 4u);
  for (const UGraph& u : all) {
    VerifyReport r = build_and_verify(u, program);
    EXPECT_TRUE(r.ok()) << superopt::print_ugraph(u) << r.summary();
  }
}

// μGraphs found for the small programs, instantiated at larger sizes with the tilings worth
// timing there (superopt/instantiate.h), compute the larger programs.
TEST(UGraphArtifact, InstantiatedMuGraphsMatchTheLargerPrograms) {
  ir::Graph gqa = ir::parse_graph_file(kDir + "gqa8.oir");
  ir::Graph lora = ir::parse_graph_file(kDir + "lora64.oir");
  std::vector<std::pair<const ir::Graph*, UGraph>> cases;
  cases.emplace_back(&gqa, superopt::parse_ugraph_file(kDir + "gqa_found.ugraph"));
  cases.emplace_back(&gqa, superopt::parse_ugraph_file(kDir + "gqa_split.ugraph"));
  for (const UGraph& u : superopt::search(ir::parse_graph_file(kDir + "lora.oir"), lora_search_options()).found)
    cases.emplace_back(&lora, u);
  ASSERT_GE(cases.size(), 3u);
  int built = 0;
  for (const auto& [program, small] : cases) {
    std::vector<ir::Dims> inputs;
    for (ir::ValueId v : program->inputs()) inputs.push_back(program->type(v).shape);
    ir::Dims output = program->type(program->outputs()[0]).shape;
    for (const superopt::Tiling& t : superopt::tiling_choices(small, inputs, output, 2, int64_t{1} << 20, 3)) {
      superopt::Instance in = superopt::instantiate(small, inputs, output, {t});
      ASSERT_TRUE(in.ugraph) << in.error;
      VerifyReport r = build_and_verify(*in.ugraph, *program);
      EXPECT_TRUE(r.ok()) << superopt::print_ugraph(*in.ugraph) << r.summary();
      ++built;
    }
  }
  EXPECT_GE(built, 4);
}

// Checked against the μGraph's own lowering (superopt/lower.h, the semantics of μGraphs).
void expect_matches_lowering(const std::string& text) {
  UGraph u = superopt::parse_ugraph(text);
  ir::Graph reference = superopt::lower(u);
  for (uint64_t seed : {1, 7}) {
    VerifyReport r = build_and_verify(u, reference, seed);
    EXPECT_TRUE(r.ok()) << text << r.summary();
  }
}

// A thread graph whose result one out_accum concatenates (computed in the output) and a sum
// reads too (so kept in scratch and copied); the sums accumulated across the iterations.
TEST(UGraphArtifact, ThreadGraphsAndConcatenatedOrSummedIterations) {
  expect_matches_lowering(R"(ugraph @t {
  input %X : f32[4,8]
  input %Y : f32[4,8]
  block(%X, %Y) grid=[2] loop=2 {
    %x : f32[2,4] = in_iter(%X) imap=[0] fmap=1
    %y : f32[2,4] = in_iter(%Y) imap=[0] fmap=1
    thread(%x, %y) store=[%o] {
      %t : f32[2,4] = exp(%x)
      %o : f32[2,4] = mul(%t, %y)
    }
    %s : f32[2,1] = sum(%o) dim=1 k=4
    %O : f32[4,8] = out_accum(%o) omap=[0] fmap=1
    %P : f32[4,1] = out_accum(%s) omap=[0] fmap=rep
  }
  output %O, %P
}
)");
  expect_matches_lowering(R"(ugraph @t {
  input %X : f32[4,8]
  input %Y : f32[4,8]
  block(%X, %Y) grid=[2] loop=2 {
    %x : f32[2,4] = in_iter(%X) imap=[0] fmap=1
    %y : f32[2,4] = in_iter(%Y) imap=[0] fmap=1
    %o : f32[2,4] = add(%x, %y)
    %O : f32[4,8] = out_accum(%o) omap=[0] fmap=1
  }
  output %O
}
)");
}

// A reshape that regroups a strided part (copied), a repeat, a sum along a dim that is not
// the last, a matmul whose right operand's rows are strided (dot products), and
// broadcasting operands.
TEST(UGraphArtifact, CopiedReshapesRepeatsAndStridedOperands) {
  expect_matches_lowering(R"(ugraph @r {
  input %X : f32[4,6]
  block(%X) grid=[2] loop=1 {
    %x : f32[4,3] = in_iter(%X) imap=[1] fmap=rep
    %xt : f32[3,4] = reshape(%x)
    %r : f32[6,4] = repeat(%xt) dim=0 k=2
    %s : f32[2,4] = sum(%r) dim=0 k=3
    %O : f32[2,8] = out_accum(%s) omap=[1] fmap=rep
  }
  output %O
}
)");
  expect_matches_lowering(R"(ugraph @m {
  input %A : f32[2,4,6]
  input %B : f32[1,6,8]
  input %C : f32[2,4,1]
  input %W : f32[1,6,1]
  block(%A, %B, %C, %W) grid=[2] loop=2 {
    %a : f32[2,2,3] = in_iter(%A) imap=[1] fmap=2
    %b : f32[1,3,8] = in_iter(%B) imap=[rep] fmap=1
    %c : f32[2,2,1] = in_iter(%C) imap=[1] fmap=rep
    %w : f32[1,3,1] = in_iter(%W) imap=[rep] fmap=1
    %p : f32[2,2,8] = matmul(%a, %b)
    %q : f32[2,2,8] = div(%p, %c)
    %pw : f32[2,2,1] = matmul(%a, %w)
    %O : f32[2,4,8] = out_accum(%q) omap=[1] fmap=rep
    %P : f32[2,4,1] = out_accum(%pw) omap=[1] fmap=rep
  }
  %R : f32[2,4,8] = exp(%O)
  output %R, %P
}
)");
}

// Matmuls in register tiles: full tiles in loops and edge tiles along both dims, accumulated
// across iterations in the output, and assigned in scratch.
TEST(UGraphArtifact, MatmulTilesWithEdges) {
  expect_matches_lowering(R"(ugraph @t {
  input %A : f32[2,14,10]
  input %B : f32[2,10,37]
  block(%A, %B) grid=[2] loop=2 {
    %a : f32[1,14,5] = in_iter(%A) imap=[0] fmap=2
    %b : f32[1,5,37] = in_iter(%B) imap=[0] fmap=1
    %p : f32[1,14,37] = matmul(%a, %b)
    %O : f32[2,14,37] = out_accum(%p) omap=[0] fmap=rep
  }
  output %O
}
)");
  expect_matches_lowering(R"(ugraph @t {
  input %A : f32[13,10]
  input %B : f32[10,40]
  block(%A, %B) grid=[2] loop=1 {
    %a : f32[13,10] = in_iter(%A) imap=[rep] fmap=rep
    %b : f32[10,20] = in_iter(%B) imap=[1] fmap=rep
    %p : f32[13,20] = matmul(%a, %b)
    %e : f32[13,20] = exp(%p)
    %s : f32[13,20] = add(%p, %e)
    %O : f32[13,40] = out_accum(%s) omap=[1] fmap=rep
  }
  output %O
}
)");
  // Rows of b too long for L2 together: the terms in chunks (64 of 150 here: two in a loop,
  // then the edge), into scratch and summed across iterations into the output.
  for (const char* kept : {"%q : f32[7,1100] = exp(%p)\n    %O : f32[14,1100] = out_accum(%q) omap=[0] fmap=rep",
                           "%O : f32[14,1100] = out_accum(%p) omap=[0] fmap=rep"})
    expect_matches_lowering(std::string(R"(ugraph @t {
  input %A : f32[14,300]
  input %B : f32[300,1100]
  block(%A, %B) grid=[2] loop=2 {
    %a : f32[7,150] = in_iter(%A) imap=[0] fmap=1
    %b : f32[150,1100] = in_iter(%B) imap=[rep] fmap=0
    %p : f32[7,1100] = matmul(%a, %b)
    )") + kept + R"(
  }
  output %O
}
)");
}

// A kernel input read transposed (a strided view): dots of a's rows side by side in partial
// sums, the terms past the last full vector added after; alone, and summed across iterations
// into the output.
TEST(UGraphArtifact, DotsOfTransposedOperandsSideBySide) {
  for (const char* loop : {"loop=1", "loop=2"})
    expect_matches_lowering(std::string(R"(ugraph @t {
  input %A : f32[2,5,40]
  input %Bt : f32[2,23,40]
  %B : f32[2,40,23] = transpose(%Bt) perm=[0,2,1]
  block(%A, %B) grid=[2] )") + loop + (std::string(loop) == "loop=1" ? R"( {
    %a : f32[1,5,40] = in_iter(%A) imap=[0] fmap=rep
    %b : f32[1,40,23] = in_iter(%B) imap=[0] fmap=rep)" : R"( {
    %a : f32[1,5,20] = in_iter(%A) imap=[0] fmap=2
    %b : f32[1,20,23] = in_iter(%B) imap=[0] fmap=1)") + R"(
    %p : f32[1,5,23] = matmul(%a, %b)
    %O : f32[2,5,23] = out_accum(%p) omap=[0] fmap=rep
  }
  output %O
}
)");
}

TEST(UGraphArtifact, ReshapedStridesFollowNumpysNoCopyRule) {
  // The shared rule (ir/movement.h) the kernels' reshapes follow; dims of one element are
  // never indexed, so only the others' strides matter.
  using ir::reshaped_strides;
  // A part [4,1,64] of [8,1,64] seen as [1,4,64]: a view.
  std::optional<ir::Dims> rows = reshaped_strides({4, 1, 64}, {64, 64, 1}, {1, 4, 64});
  ASSERT_TRUE(rows);
  EXPECT_EQ((ir::Dims{(*rows)[1], (*rows)[2]}), (ir::Dims{64, 1}));
  // Merging contiguous dims, splitting one.
  EXPECT_EQ(reshaped_strides({2, 3, 4}, {24, 4, 1}, {2, 12}), (std::vector<int64_t>{24, 1}));
  EXPECT_EQ(reshaped_strides({2, 12}, {100, 1}, {2, 3, 4}), (std::vector<int64_t>{100, 4, 1}));
  // Columns 0..2 of rows of 6 cannot be regrouped as [3,4].
  EXPECT_EQ(reshaped_strides({4, 3}, {6, 1}, {3, 4}), std::nullopt);
}

// Attention as a model exports it (views, transposed keys, a constant scale): a μGraph of its
// search form with the boundary attached. The blocks read the keys where they lie, strided
// (the transpose is a view, no step); a kernel-level matmul reading them gets a copy instead.
TEST(UGraphArtifact, ModelFormAttentionReadsItsKeysTransposedInPlace) {
  ir::Graph program = ir::parse_graph_file(kDir + "attention_model.oir");
  superopt::SearchForm form = superopt::search_form(program);
  UGraph blocked = superopt::attach(form, program, superopt::parse_ugraph_file(kDir + "attention_form.ugraph"));
  BuiltArtifact a = build_ugraph_artifact(blocked, program, ugraph_build_options());
  // scale (of q's view), block, div; q's and the output's reshapes and k's transpose are views.
  ASSERT_EQ(a.plan.steps.size(), 3u);
  int views = 0;
  for (const runtime::PlanBuffer& b : a.plan.buffers) views += b.alias >= 0;
  EXPECT_EQ(views, 3);
  for (uint64_t seed : {1, 2}) {
    VerifyReport r = build_and_verify(blocked, program, seed);
    EXPECT_TRUE(r.ok()) << "seed " << seed << "\n" << r.summary();
  }
  // The same form computed by kernel operators only: k's transpose is copied for the matmul.
  UGraph flat = superopt::attach(form, program, superopt::parse_ugraph(R"(ugraph @attention {
  input %q : f32[1,2,4,8]
  input %k : f32[1,2,8,16]
  input %v : f32[1,2,16,8]
  %s : f32[1,2,4,16] = matmul(%q, %k)
  %e : f32[1,2,4,16] = exp(%s)
  %r : f32[1,2,4,1] = sum(%e) dim=3 k=16
  %d : f32[1,2,4,16] = div(%e, %r)
  %o : f32[1,2,4,8] = matmul(%d, %v)
  output %o
}
)"));
  BuiltArtifact b = build_ugraph_artifact(flat, program, ugraph_build_options());
  EXPECT_EQ(b.plan.steps.size(), 7u);  // scale, transpose, matmul, exp, sum, div, matmul
  VerifyReport r = build_and_verify(flat, program);
  EXPECT_TRUE(r.ok()) << r.summary();
}

TEST(UGraphArtifact, OtherTypesThanF32AreRefusedNamingTheTensor) {
  UGraph u = superopt::parse_ugraph(R"(ugraph @d {
  input %X : f64[4,8]
  block(%X) grid=[2] loop=1 {
    %x : f64[2,8] = in_iter(%X) imap=[0] fmap=rep
    %e : f64[2,8] = exp(%x)
    %O : f64[4,8] = out_accum(%e) omap=[0] fmap=rep
  }
  output %O
}
)");
  try {
    build_ugraph_artifact(u, superopt::lower(u), ugraph_build_options());
    FAIL() << "built";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("f32 tensors only; X is f64"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace orchid::driver
