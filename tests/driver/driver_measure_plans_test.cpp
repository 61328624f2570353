// Choices checked on whole plans and whole kernels (driver/measure.h, check_choices_on_plans,
// choose_whole_over_split), through the built `orchid` binary: a generated step chosen inside a chain of oneDNN convolutions (whose
// activations the plan keeps in nChw8c or nhwc) has its whole plan measured against the plan without
// it, the faster kept, and the times recorded so that a recompile decides alike; a generated
// step that touches no blocked buffer is left as chosen, with nothing measured; a rewritten
// graph goes on only where its plan runs faster whole, whatever its kernels sum to alone.
#include <gtest/gtest.h>

#include <filesystem>

#include "driver/artifact.h"
#include "driver/implement.h"
#include "driver/measure.h"
#include "driver/optimal_costs.h"
#include "driver/plan_builder.h"
#include "ir/parser.h"
#include "orchestrate/strategies.h"
#include "testlib/temp_dir.h"
#include "tune/db.h"

namespace orchid::driver {
namespace {

namespace fs = std::filesystem;

// Three convolutions 16 -> 16 with biases and a relu: oneDNN keeps both activations between
// them blocked.
const char* kChain = R"(graph @chain {
  input %x : f32[1,16,10,10]
  const %w0 : f32[16,16,3,3] = splat(0.02)
  const %w1 : f32[16,16,3,3] = splat(-0.01)
  const %w2 : f32[16,16,1,1] = splat(0.05)
  const %b : f32[16,1,1] = splat(0.1)
  %c0 : f32[1,16,10,10] = conv(%x, %w0) {strides=[1,1], dilations=[1,1], pads_begin=[1,1], pads_end=[1,1], groups=1}
  %a0 : f32[1,16,10,10] = elementwise(%c0, %b) { max(add(%c0[i0, i1, i2, i3], %b[i1, 0, 0]), 0:f32) }
  %c1 : f32[1,16,10,10] = conv(%a0, %w1) {strides=[1,1], dilations=[1,1], pads_begin=[1,1], pads_end=[1,1], groups=1}
  %a1 : f32[1,16,10,10] = elementwise(%c1, %b) { add(%c1[i0, i1, i2, i3], %b[i1, 0, 0]) }
  %y : f32[1,16,10,10] = conv(%a1, %w2) {strides=[1,1], dilations=[1,1], pads_begin=[0,0], pads_end=[0,0], groups=1}
  output %y
})";

struct Case {
  ir::Graph g;
  std::vector<StepChoice> before;
  BuildOptions build;
  MeasureOptions measure;
};

Case make_case(const char* text, const testlib::TempDir& dir) {
  Case s{ir::parse_graph(text), {}, {}, {}};
  s.before = implement(s.g, orchestrate::orchestrate(s.g, orchestrate::Strategy::Greedy));
  s.build.compiler.cache_dir = fs::temp_directory_path() / "orchid-test-objects";
  s.build.cores = 2;
  s.measure.orchid_exe = ORCHID_BIN;
  s.measure.work_dir = dir.file("candidates");
  s.measure.min_seconds = 0.01;
  s.measure.min_runs = 2;
  s.measure.rounds = 1;
  return s;
}

std::vector<size_t> onednn_steps(const std::vector<StepChoice>& steps) {
  std::vector<size_t> out;
  for (size_t i = 0; i < steps.size(); ++i)
    if (steps[i].kind == StepKind::OneDnn) out.push_back(i);
  return out;
}

// Whether the host's oneDNN keeps the chain's activations in nChw8c (AVX2) or nhwc
// (AVX-512; a host without either computes plain: layouts.h).
bool chain_is_blocked(const Case& s) {
  for (const runtime::PlanBuffer& b : build_artifact(s.g, s.before, s.build).plan.buffers)
    if (b.layout != runtime::BufferLayout::Plain) return true;
  return false;
}

TEST(MeasurePlans, AGeneratedStepInsideAConvChainIsMeasuredOnWholePlans) {
  testlib::TempDir dir("orchid_measure_plans");
  Case s = make_case(kChain, dir);
  if (!chain_is_blocked(s)) GTEST_SKIP() << "oneDNN keeps no activation blocked on this host";
  std::vector<size_t> dnn = onednn_steps(s.before);
  ASSERT_EQ(dnn.size(), 3u);
  tune::TuningDb db(dir.file("tuning.db"));
  s.measure.db = &db;
  s.measure.target = "test-target";
  std::vector<std::string> decided;
  for (int compile = 0; compile < 2; ++compile) {
    SCOPED_TRACE(compile == 0 ? "measured" : "from the database");
    std::vector<StepChoice> steps = s.before;
    steps[dnn[1]].kind = StepKind::Generated;  // the middle conv: reads and writes blocked buffers
    std::vector<std::string> notes;
    check_choices_on_plans(s.g, s.before, steps, s.build, s.measure, &notes);
    ASSERT_EQ(notes.size(), 1u);
    const std::string& n = notes[0];
    EXPECT_EQ(n.rfind("whole plans", 0), 0u) << n;
    EXPECT_NE(n.find("as measured alone "), std::string::npos) << n;
    EXPECT_NE(n.find("oneDNN kept "), std::string::npos) << n;
    EXPECT_EQ(n.find("failed"), std::string::npos) << n;
    EXPECT_EQ(n.find("(cached)") != std::string::npos, compile == 1) << n;
    bool kept = steps[dnn[1]].kind == StepKind::OneDnn;
    EXPECT_NE(n.find(kept ? "→ oneDNN kept" : "→ as measured alone"), std::string::npos) << n;
    decided.push_back(kept ? "kept" : "generated");
    EXPECT_TRUE(fs::is_empty(dir.file("candidates")));  // every plan directory removed
  }
  EXPECT_EQ(decided[0], decided[1]);  // a recompile with the database decides alike
}

// Measuring weighs oneDNN's Winograd convolution beside its direct one and generated code for
// the 3×3 convolutions (where the host's oneDNN has it: AVX-512), not for the 1×1 one; the
// fastest is kept and the plan built from the choices verifies.
TEST(MeasurePlans, WinogradIsMeasuredForThreeByThreeConvolutions) {
  testlib::TempDir dir("orchid_measure_winograd");
  Case s = make_case(kChain, dir);
  std::vector<StepChoice> steps = s.before;
  std::vector<std::string> notes;
  choose_by_measuring(s.g, steps, s.build, s.measure, &notes);
  ASSERT_EQ(notes.size(), 3u);
  bool winograd_here = __builtin_cpu_supports("avx512f");
  for (size_t k = 0; k < 3; ++k) {
    SCOPED_TRACE(notes[k]);
    EXPECT_EQ(notes[k].find(", Winograd ") != std::string::npos, winograd_here && k < 2);
    EXPECT_EQ(notes[k].find("failed"), std::string::npos);
  }
  for (const StepChoice& c : steps)
    if (c.kind == StepKind::OneDnnWinograd)
      for (ir::NodeId n : c.kernel.nodes)
        if (s.g.node(n).op == ir::PrimOp::Conv) {
          EXPECT_EQ(s.g.type(s.g.node(n).inputs[1]).shape[3], 3);  // 3×3
        }
  BuiltArtifact a = build_artifact(s.g, steps, s.build);
  write_artifact(a, dir.file("chosen"));
  EXPECT_TRUE(verify_artifact(dir.file("chosen"), s.g, 3, 1e-4).ok());
}

TEST(MeasurePlans, AGeneratedStepOutsideChainsIsLeftAsChosen) {
  testlib::TempDir dir("orchid_measure_plans_alone");
  // One conv: its input and output are the graph's, never blocked.
  Case s = make_case(R"(graph @one {
  input %x : f32[1,16,10,10]
  const %w : f32[16,16,3,3] = splat(0.02)
  %y : f32[1,16,10,10] = conv(%x, %w) {strides=[1,1], dilations=[1,1], pads_begin=[1,1], pads_end=[1,1], groups=1}
  output %y
})",
                  dir);
  std::vector<size_t> dnn = onednn_steps(s.before);
  ASSERT_EQ(dnn.size(), 1u);
  std::vector<StepChoice> steps = s.before;
  steps[dnn[0]].kind = StepKind::Generated;
  std::vector<std::string> notes;
  check_choices_on_plans(s.g, s.before, steps, s.build, s.measure, &notes);
  EXPECT_TRUE(notes.empty());
  EXPECT_EQ(steps[dnn[0]].kind, StepKind::Generated);
  EXPECT_FALSE(fs::exists(dir.file("candidates")));  // nothing measured
}

// A product with a bias and x·erf(x), which oneDNN has no post-op for: oneDNN takes the product
// and its bias, the rest is a generated step after it.
const char* kFfn = R"(graph @ffn {
  input %x : f32[64,128]
  const %w : f32[128,256] = splat(0.02)
  const %b : f32[256] = splat(0.1)
  %y : f32[64,256] = matmul(%x, %w) {trans_a=false, trans_b=false}
  %yb : f32[64,256] = elementwise(%y, %b) { add(%y[i0, i1], %b[i1]) }
  %z : f32[64,256] = elementwise(%yb) { mul(%yb[i0, i1], erf(%yb[i0, i1])) }
  output %z
})";

// The milliseconds after `label` in a note ("... steps 0.0123 ms ...").
double ms_after(const std::string& note, const std::string& label) {
  size_t at = note.find(label);
  EXPECT_NE(at, std::string::npos) << note;
  return at == std::string::npos ? -1 : std::stod(note.substr(at + label.size()));
}

// The split product and its epilogue are measured against the kernel generated whole; the faster
// stays, in the choices and in the plan before them alike, and a recompile with the database
// decides alike from cached times.
TEST(MeasurePlans, ASplitProductIsMeasuredAgainstTheKernelWhole) {
  testlib::TempDir dir("orchid_measure_split");
  Case s = make_case(kFfn, dir);
  std::vector<tile::Kernel> kernels = orchestrate::orchestrate(s.g, orchestrate::Strategy::Greedy);
  ASSERT_EQ(kernels.size(), 1u);
  ASSERT_EQ(s.before.size(), 2u);
  ASSERT_EQ(s.before[0].kind, StepKind::OneDnn);
  ASSERT_EQ(s.before[1].kind, StepKind::Generated);
  tune::TuningDb db(dir.file("tuning.db"));
  s.measure.db = &db;
  s.measure.target = "test-target";
  std::vector<size_t> decided;
  for (int compile = 0; compile < 2; ++compile) {
    SCOPED_TRACE(compile == 0 ? "measured" : "from the database");
    std::vector<StepChoice> chosen = s.before;
    std::vector<std::string> notes;
    std::vector<StepChoice> before =
        choose_whole_over_split(s.g, kernels, implement_each(s.g, kernels), chosen, s.build, s.measure, &notes);
    ASSERT_EQ(notes.size(), 1u);
    const std::string& n = notes[0];
    EXPECT_EQ(n.find("failed"), std::string::npos) << n;
    EXPECT_EQ(n.find("(cached)") != std::string::npos, compile == 1) << n;
    bool whole = ms_after(n, "whole generated ") < ms_after(n, "split into 2 steps ");
    EXPECT_NE(n.find(whole ? "→ whole" : "→ split"), std::string::npos) << n;
    ASSERT_EQ(chosen.size(), before.size());
    EXPECT_EQ(chosen.size(), whole ? 1u : 2u);
    for (size_t i = 0; i < chosen.size(); ++i) EXPECT_EQ(chosen[i].kind, before[i].kind);
    if (whole) {
      EXPECT_EQ(chosen[0].kernel.nodes.size(), 3u);
    }
    decided.push_back(chosen.size());
  }
  EXPECT_EQ(decided[0], decided[1]);
}

// A time the database holds from another moment (a cost-loop round, say) does not decide a
// choice between implementations: the options are timed afresh, side by side, the stale time
// replaced, and the choice kept as a decision that a recompile reads back.
TEST(MeasurePlans, ImplementationsAreChosenOnTimesTakenTogether) {
  testlib::TempDir dir("orchid_measure_together");
  Case s = make_case(kFfn, dir);
  tune::TuningDb db(dir.file("tuning.db"));
  s.measure.db = &db;
  s.measure.target = "test-target";
  std::vector<size_t> dnn = onednn_steps(s.before);
  ASSERT_EQ(dnn.size(), 1u);
  std::vector<CandidateTime> once = measure_alternating(s.g, {s.before[dnn[0]]}, s.build, s.measure, 1);
  ASSERT_TRUE(once[0].ms.has_value()) << once[0].failure;
  std::vector<tune::TuningDb::Row> rows = db.measurements();
  ASSERT_EQ(rows.size(), 1u);
  db.record(rows[0].target, rows[0].kernel, rows[0].schedule, {1e9, 0, 1, ""});  // 1000 ms: stale
  std::vector<std::string> decided;
  for (int compile = 0; compile < 2; ++compile) {
    SCOPED_TRACE(compile == 0 ? "timed" : "read back");
    std::vector<StepChoice> steps = s.before;
    std::vector<std::string> notes;
    choose_by_measuring(s.g, steps, s.build, s.measure, &notes);
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_EQ(notes[0].find("1000.0000 ms"), std::string::npos) << notes[0];
    EXPECT_EQ(notes[0].find("(cached)") != std::string::npos, compile == 1) << notes[0];
    EXPECT_EQ(notes[0].find("(decided before)") != std::string::npos, compile == 1) << notes[0];
    decided.push_back(std::string(step_kind_name(steps[dnn[0]].kind)));
  }
  EXPECT_EQ(decided[0], decided[1]);
  std::optional<tune::Measurement> now = db.lookup(rows[0].target, rows[0].kernel, rows[0].schedule);
  ASSERT_TRUE(now.has_value());
  EXPECT_LT(now->median_ns, 1e9);
  EXPECT_EQ(db.decisions().size(), 1u);
}

// A choice with an option that failed is not kept as a decision (a failure may pass): the
// option that ran is taken now, and a later compile times the choice again.
TEST(MeasurePlans, AChoiceWithAFailedOptionIsNotADecision) {
  testlib::TempDir dir("orchid_measure_failed_option");
  Case s = make_case(R"(graph @add {
  input %x : f32[64,32]
  %y : f32[64,32] = elementwise(%x) { add(%x[i0, i1], 1:f32) }
  output %y
})",
                     dir);
  tune::TuningDb db(dir.file("tuning.db"));
  s.measure.db = &db;
  s.measure.target = "test-target";
  ASSERT_EQ(s.before.size(), 1u);
  StepChoice library = s.before[0];
  library.kind = StepKind::OneDnn;  // no linear primitive: the step cannot be made
  for (int compile = 0; compile < 2; ++compile) {
    std::vector<TimedChoice> d = choose_fastest(s.g, {{{library}, {s.before[0]}}}, s.build, s.measure);
    ASSERT_EQ(d.size(), 1u);
    EXPECT_FALSE(d[0].decided_before);
    EXPECT_EQ(d[0].best, 1u);
    ASSERT_EQ(d[0].times.size(), 2u);
    EXPECT_FALSE(d[0].times[0].ms.has_value());
    EXPECT_TRUE(d[0].times[1].ms.has_value()) << d[0].times[1].failure;
    EXPECT_TRUE(db.decisions().empty());
  }
}

// Without the program that times candidates nothing is measured and the split stays.
TEST(MeasurePlans, NothingIsJoinedWithoutMeasuring) {
  testlib::TempDir dir("orchid_measure_split_off");
  Case s = make_case(kFfn, dir);
  s.measure.orchid_exe.clear();
  std::vector<StepChoice> chosen = s.before;
  std::vector<std::string> notes;
  std::vector<tile::Kernel> kernels = orchestrate::orchestrate(s.g, orchestrate::Strategy::Greedy);
  std::vector<StepChoice> before =
      choose_whole_over_split(s.g, kernels, implement_each(s.g, kernels), chosen, s.build, s.measure, &notes);
  EXPECT_TRUE(notes.empty());
  EXPECT_EQ(chosen.size(), 2u);
  EXPECT_EQ(before.size(), 2u);
}

// Eight elementwise steps over 4 MiB each against one kernel of them: the plan of eight is the
// slower whole, so a "rewritten" graph planned so is dropped even where its kernels' sum (here
// set by hand) says otherwise, and kept where it is the one kernel.
TEST(MeasurePlans, TheRewrittenGraphGoesOnWhereItsPlanIsFasterWhole) {
  std::string text = "graph @chain {\n  input %x : f32[1024,1024]\n";
  std::string last = "x";
  for (int i = 0; i < 8; ++i) {
    std::string v = "e" + std::to_string(i);
    text += "  %" + v + " : f32[1024,1024] = elementwise(%" + last + ") { add(mul(%" + last + "[i0, i1], 0.5:f32), 0.25:f32) }\n";
    last = v;
  }
  text += "  output %" + last + "\n}\n";
  testlib::TempDir dir("orchid_measure_plans");
  Case s = make_case(text.c_str(), dir);
  OptimalPlan split, fused;
  split.kernels = orchestrate::orchestrate(s.g, orchestrate::Strategy::Primitive);
  fused.kernels = orchestrate::orchestrate(s.g, orchestrate::Strategy::Greedy);
  ASSERT_EQ(split.kernels.size(), 8u);
  ASSERT_EQ(fused.kernels.size(), 1u);
  split.measured_seconds = 1e-6;  // alone, the split plan "sums" to less
  fused.measured_seconds = 1.0;
  std::string line;
  EXPECT_FALSE(rewritten_plan_kept(s.g, split, {}, s.g, fused, s.build, s.measure, &line)) << line;
  EXPECT_NE(line.find("rewrites dropped"), std::string::npos) << line;
  EXPECT_TRUE(rewritten_plan_kept(s.g, fused, {}, s.g, split, s.build, s.measure, &line)) << line;
  EXPECT_NE(line.find("rewrites kept"), std::string::npos) << line;
}

}  // namespace
}  // namespace orchid::driver
