// Tuning a generated kernel's schedule (driver/tune.h): schedules are timed many to a shared
// object by `orchid time-kernels` in a helper process, a sample per round each, in the
// order given; a batch that cannot run gives empty samples and a failure, not an error; and a
// tuned softmax kernel keeps to its budget and its best schedule computes what the
// interpreter computes.
#include <gtest/gtest.h>

#include <memory>

#include "codegen/kernel_cases.h"
#include "codegen/kernel_graphs.h"
#include "driver/tune.h"
#include "tune/db.h"
#include "target/host.h"
#include "testlib/temp_dir.h"
#include "testlib/tile_fixtures.h"

namespace orchid::driver {
namespace {

namespace fs = std::filesystem;
using codegen::cpu::Schedule;

struct Tuned {
  ir::Graph g;
  tile::Kernel k;
  BuildOptions build;
  MeasureOptions measure;
};

Tuned tuned_setup(const std::string& text, const testlib::TempDir& dir) {
  Tuned s{ir::parse_graph(text), {}, {}, {}};
  s.k = testlib::whole_graph_kernel(s.g);
  s.build.compiler.cache_dir = fs::temp_directory_path() / "orchid-test-objects";
  s.build.compiler.extra_flags = codegen::cpu::codegen_flags();
  s.build.cores = 2;
  s.measure.orchid_exe = ORCHID_BIN;
  s.measure.work_dir = dir.file("candidates");
  s.measure.threads = 2;
  return s;
}

TEST(DriverTune, SchedulesAreTimedManyToALibraryInTheirOrder) {
  testlib::TempDir dir;
  Tuned s = tuned_setup(codegen::softmax_rows(64, 300), dir);
  std::vector<Schedule> scheds;
  for (int i = 0; i < 20; ++i) {
    Schedule c = codegen::cpu::default_schedule(s.g, s.k, 2);
    c.tile = {1 + i % 8, 0};
    c.vector_width = i % 2 ? 16 : 1;
    scheds.push_back(c);
  }
  std::vector<std::string> failures;
  std::vector<std::vector<double>> t = ScheduleTimer(s.build, s.measure).time(s.g, s.k, scheds, 2, 3, &failures);
  EXPECT_TRUE(failures.empty()) << failures.front();
  ASSERT_EQ(t.size(), scheds.size());
  for (const std::vector<double>& samples : t) {
    EXPECT_EQ(samples.size(), 2u);  // a sample per round
    for (double ms : samples) EXPECT_GT(ms, 0);
  }
}

// A compile with --flush-denormals times its kernels alone as its plan runs them: the helper
// takes --flush-denormals and times them as before.
TEST(DriverTune, KernelsOfAFlushedCompileAreTimedFlushed) {
  testlib::TempDir dir;
  Tuned s = tuned_setup(codegen::softmax_rows(8, 64), dir);
  s.build.flush_denormals = true;
  std::vector<std::string> failures;
  std::vector<std::vector<double>> t =
      ScheduleTimer(s.build, s.measure).time(s.g, s.k, {codegen::cpu::default_schedule(s.g, s.k, 2)}, 2, 2, &failures);
  EXPECT_TRUE(failures.empty()) << failures.front();
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].size(), 2u);
}

TEST(DriverTune, ABatchThatCannotRunGivesNoSamplesAndAFailure) {
  testlib::TempDir dir;
  Tuned s = tuned_setup(codegen::softmax_rows(8, 64), dir);
  s.measure.orchid_exe = "/bin/false";
  std::vector<std::string> failures;
  std::vector<std::vector<double>> t = ScheduleTimer(s.build, s.measure).time(s.g, s.k, {codegen::cpu::default_schedule(s.g, s.k, 2)}, 1, 1, &failures);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_TRUE(t[0].empty());
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_NE(failures[0].find("exit 1"), std::string::npos) << failures[0];
}

TEST(DriverTune, ATunedKernelKeepsToItsBudgetAndMatchesTheInterpreter) {
  testlib::TempDir dir;
  const std::string text = testlib::matmul_softmax(384);
  Tuned s = tuned_setup(text, dir);
  TuneOptions o;
  o.explore_trials = 60;
  o.measure_top = 4;
  o.budget = 14;
  o.rounds = 2;
  o.runs = 2;
  target::Target t = testlib::toy_cpu_target();
  TuneResult r = tune_kernel(s.g, s.k, t, s.build, s.measure, o);
  EXPECT_TRUE(r.failures.empty()) << r.failures.front();
  EXPECT_GE(r.measured, 5);
  EXPECT_LE(r.measured, o.budget);
  EXPECT_GT(r.best_ms, 0);
  EXPECT_GT(r.initial_ms, 0);
  EXPECT_EQ(r.initial, codegen::cpu::default_schedule(s.g, s.k, 2));
  std::vector<codegen::cpu::Case> cases;
  cases.push_back(codegen::cpu::make_case(
      5, text, [&](const ir::Graph&, const tile::Kernel&, Rng&) { return r.best; }, "orc_tuned"));
  codegen::cpu::check_cases(cases);
}

// Two steps running the same kernel (two row softmaxes of one shape) and a third of another
// shape: the plan's tuning makes two tasks, tunes the shared one once for both steps, reports a
// line per kernel and a summary, records the decisions, and a second call reads them back
// without measuring.
TEST(DriverTune, APlansKernelsAreTunedOnceEachAndTheirDecisionsKept) {
  testlib::TempDir dir;
  const std::string text =
      "graph @g {\n  input %a : f32[32,256]\n  input %b : f32[32,256]\n  input %c : f32[8,64]\n"
      "  %ea : f32[32,256] = elementwise(%a) { exp(%a[i0, i1]) }\n"
      "  %sa : f32[32,1] = reduce sum(%ea) over [256] { %ea[i0, r0] }\n"
      "  %eb : f32[32,256] = elementwise(%b) { exp(%b[i0, i1]) }\n"
      "  %sb : f32[32,1] = reduce sum(%eb) over [256] { %eb[i0, r0] }\n"
      "  %ec : f32[8,64] = elementwise(%c) { exp(%c[i0, i1]) }\n"
      "  %sc : f32[8,1] = reduce sum(%ec) over [64] { %ec[i0, r0] }\n"
      "  output %sa, %sb, %sc\n}\n";
  Tuned s = tuned_setup(text, dir);
  tune::TuningDb db(dir.file("t.db"));
  s.measure.db = &db;
  s.measure.target = "test-target";
  std::vector<StepChoice> steps;
  for (int first : {0, 2, 4}) {
    StepChoice c;
    c.kernel.nodes = {ir::NodeId(first), ir::NodeId(first + 1)};
    c.kernel.outputs = {s.g.node(ir::NodeId(first + 1)).outputs[0]};
    c.inputs = tile::kernel_inputs(s.g, c.kernel);
    steps.push_back(c);
  }
  PlanTuneOptions o;
  o.minutes = 5;
  o.kernel.explore_trials = 40;
  o.kernel.measure_top = 3;
  o.kernel.budget = 10;
  o.kernel.rounds = 2;
  o.kernel.runs = 2;
  std::vector<std::string> notes, progress;
  PlanTuning out = tune_steps(s.g, steps, testlib::toy_cpu_target(), s.build, s.measure, o,
                              [&](const std::string& line) { progress.push_back(line); }, &notes);
  ASSERT_EQ(out.schedules.size(), 3u);
  ASSERT_TRUE(out.schedules[0] && out.schedules[1] && out.schedules[2]);
  EXPECT_EQ(*out.schedules[0], *out.schedules[1]);
  ASSERT_EQ(notes.size(), 3u);
  EXPECT_EQ(notes[0].rfind("steps 0, 1: ", 0), 0u) << notes[0];
  EXPECT_EQ(notes[1].rfind("step 2: ", 0), 0u) << notes[1];
  EXPECT_EQ(notes[2].rfind("2 distinct kernels, ", 0), 0u) << notes[2];
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress[0].rfind("tuning kernel 1 of 2 (steps 0, 1), unit 1", 0), 0u) << progress[0];  // the heavier first
  EXPECT_TRUE(db.decision("test-target", "tune " + kernel_key(s.g, steps[0])).has_value());

  notes.clear();
  progress.clear();
  PlanTuning again = tune_steps(s.g, steps, testlib::toy_cpu_target(), s.build, s.measure, o,
                          [&](const std::string& line) { progress.push_back(line); }, &notes);
  EXPECT_TRUE(progress.empty());
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[0].find("(tuned before, "), std::string::npos) << notes[0];
  EXPECT_EQ(again.schedules, out.schedules);
  EXPECT_EQ(again.tuned, 0);
  EXPECT_EQ(out.tuned, 2);
}

// The tuned plan is checked whole against the defaults': a "tuned" schedule far slower than the
// default (scalar, without the GEMM micro-kernel, a row per task) is dropped, and the answer is
// read back from the database the next time; one equal to the default times nothing.
TEST(DriverTune, ATunedPlanSlowerWholeThanTheDefaultsIsDropped) {
  testlib::TempDir dir;
  Tuned s = tuned_setup(testlib::matmul_softmax(2048), dir);
  tune::TuningDb db(dir.file("t.db"));
  s.measure.db = &db;
  s.measure.target = "test-target";
  std::vector<StepChoice> steps(1);
  steps[0].kernel = s.k;
  steps[0].inputs = tile::kernel_inputs(s.g, s.k);
  Schedule bad = codegen::cpu::default_schedule(s.g, s.k, 2);
  bad.vector_width = 1;
  bad.gemm = false;
  bad.tile = {1, 0};
  PlanTuning tuned{steps, {bad}};
  std::vector<std::string> notes;
  keep_tuned_if_faster(s.g, steps, tuned, s.build, s.measure, &notes);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].rfind("whole plans: tuned ", 0), 0u) << notes[0];
  EXPECT_NE(notes[0].find("→ default schedules kept"), std::string::npos) << notes[0];
  EXPECT_FALSE(tuned.schedules[0].has_value());
  // The answer is kept, and read back without timing.
  notes.clear();
  tuned = {steps, {bad}};
  s.measure.orchid_exe = "/bin/false";
  keep_tuned_if_faster(s.g, steps, tuned, s.build, s.measure, &notes);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "whole plans: tuned not faster (decided before) → default schedules kept");
  EXPECT_FALSE(tuned.schedules[0].has_value());

  notes.clear();
  tuned = {steps, {codegen::cpu::default_schedule(s.g, s.k, 2)}};
  keep_tuned_if_faster(s.g, steps, tuned, s.build, s.measure, &notes);
  EXPECT_TRUE(notes.empty());
  EXPECT_TRUE(tuned.schedules[0].has_value());
}

// A generated step is measured with the schedule decided for its kernel only where the options
// use decisions and the decision is not the default schedule.
TEST(DriverTune, MeasurementsUseDecidedSchedulesOtherThanTheDefault) {
  testlib::TempDir dir;
  Tuned s = tuned_setup(codegen::softmax_rows(64, 300), dir);
  tune::TuningDb db(dir.file("t.db"));
  s.measure.db = &db;
  s.measure.target = "test-target";
  StepChoice step;
  step.kernel = s.k;
  step.inputs = tile::kernel_inputs(s.g, s.k);
  Schedule def = codegen::cpu::default_schedule(s.g, s.k, 2), other = def;
  other.vector_width = 1;
  EXPECT_FALSE(tuned_schedule(s.g, step, s.measure, 2));  // no decision
  db.decide("test-target", tuning_key(s.g, step), codegen::cpu::schedule_str(other), {1e6, 0, 1, ""});
  EXPECT_FALSE(tuned_schedule(s.g, step, s.measure, 2));  // decisions not used
  s.measure.tuned = true;
  ASSERT_TRUE(tuned_schedule(s.g, step, s.measure, 2));
  EXPECT_EQ(*tuned_schedule(s.g, step, s.measure, 2), other);
  db.decide("test-target", tuning_key(s.g, step), codegen::cpu::schedule_str(def), {1e6, 0, 1, ""});
  EXPECT_FALSE(tuned_schedule(s.g, step, s.measure, 2));  // the default: measured untuned
  step.kind = StepKind::OneDnn;
  EXPECT_FALSE(tuned_schedule(s.g, step, s.measure, 2));
}

// A matmul as a one-step plan of a oneDNN step, with a tuning database, and a schedule of
// its generated kernel far slower than the default (scalar, a row per task).
struct LibraryPlan {
  Tuned s;
  std::unique_ptr<tune::TuningDb> db;
  std::vector<StepChoice> steps;
  Schedule bad;
};

LibraryPlan library_plan(const testlib::TempDir& dir) {
  LibraryPlan p{tuned_setup("graph @g {\n  input %a : f32[64,256]\n  input %b : f32[256,128]\n"
                            "  %y : f32[64,128] = matmul(%a, %b) {trans_a=false, trans_b=false}\n  output %y\n}\n",
                            dir),
                std::make_unique<tune::TuningDb>(dir.file("t.db")), std::vector<StepChoice>(1), {}};
  p.s.measure.db = p.db.get();
  p.s.measure.target = "test-target";
  p.steps[0].kernel = p.s.k;
  p.steps[0].inputs = tile::kernel_inputs(p.s.g, p.s.k);
  p.steps[0].kind = StepKind::OneDnn;
  p.bad = codegen::cpu::default_schedule(p.s.g, p.s.k, 2);
  p.bad.vector_width = 1;
  p.bad.gemm = false;
  p.bad.tile = {1, 0};
  return p;
}

// Library or generated code is a knob of a linear kernel's space: a oneDNN step's generated
// alternative is tuned like any kernel, then timed against the library under its tuned
// schedule, and the step becomes generated only where that is faster with significance. A
// "tuned" schedule far slower (scalar, a row per task) leaves the step to oneDNN without a
// schedule; the answer is read back the next time without timing (the helper then
// /bin/false), and an answer the other way makes the step generated.
TEST(DriverTune, ALibraryStepBecomesGeneratedWhereItsTunedKernelIsFaster) {
  testlib::TempDir dir;
  LibraryPlan lp = library_plan(dir);
  Tuned& s = lp.s;
  tune::TuningDb& db = *lp.db;
  const std::vector<StepChoice>& steps = lp.steps;
  const Schedule& bad = lp.bad;
  const std::string tune_key = tuning_key(s.g, steps[0]);
  db.decide("test-target", tune_key, codegen::cpu::schedule_str(bad), {1e6, 0, 1, ""});
  PlanTuneOptions o;
  o.minutes = 1;
  std::vector<std::string> notes;
  PlanTuning slower = tune_steps(s.g, steps, testlib::toy_cpu_target(), s.build, s.measure, o, {}, &notes);
  ASSERT_EQ(slower.steps.size(), 1u);
  EXPECT_EQ(slower.steps[0].kind, StepKind::OneDnn);
  EXPECT_FALSE(slower.schedules[0].has_value());
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[0].find("(tuned before, "), std::string::npos) << notes[0];
  EXPECT_EQ(notes[1].rfind("step 0: generated and tuned against oneDNN: ", 0), 0u) << notes[1];
  EXPECT_NE(notes[1].find(" (medians) → oneDNN"), std::string::npos) << notes[1];

  s.measure.orchid_exe = "/bin/false";
  notes.clear();
  PlanTuning again = tune_steps(s.g, steps, testlib::toy_cpu_target(), s.build, s.measure, o, {}, &notes);
  EXPECT_EQ(again.steps[0].kind, StepKind::OneDnn);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[1], "step 0: generated and tuned against oneDNN: not faster (decided before) → oneDNN");

  // The comparison's answer turned the other way round.
  int turned = 0;
  for (const tune::TuningDb::Row& r : db.decisions())
    if (r.kernel != tune_key) db.decide(r.target, r.kernel, "first", r.m), ++turned;
  ASSERT_EQ(turned, 1);
  notes.clear();
  PlanTuning faster = tune_steps(s.g, steps, testlib::toy_cpu_target(), s.build, s.measure, o, {}, &notes);
  EXPECT_EQ(faster.steps[0].kind, StepKind::Generated);
  ASSERT_TRUE(faster.schedules[0].has_value());
  EXPECT_EQ(*faster.schedules[0], bad);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[1], "step 0: generated and tuned against oneDNN: faster (decided before) → generated");

  // A decision of the default schedule: choose_by_measuring compared that already.
  db.decide("test-target", tune_key, codegen::cpu::schedule_str(codegen::cpu::default_schedule(s.g, s.k, 2)),
            {1e6, 0, 1, ""});
  notes.clear();
  PlanTuning plain = tune_steps(s.g, steps, testlib::toy_cpu_target(), s.build, s.measure, o, {}, &notes);
  EXPECT_EQ(plain.steps[0].kind, StepKind::OneDnn);
  EXPECT_FALSE(plain.schedules[0].has_value());
  EXPECT_EQ(notes.size(), 1u);
}

// A library step whose generated kernel took more than twice the library's time when the
// implementations were chosen (times read back from the database) is not tuned.
TEST(DriverTune, ALibraryStepFarFasterThanGeneratedCodeIsNotTuned) {
  testlib::TempDir dir;
  LibraryPlan lp = library_plan(dir);
  Tuned& s = lp.s;
  s.measure.orchid_exe = "/bin/false";
  StepChoice generated = lp.steps[0];
  generated.kind = StepKind::Generated;
  const std::string key = kernel_key(s.g, lp.steps[0]);
  lp.db->record("test-target", key, candidate_impl(s.g, lp.steps[0], s.measure, 2), {1e6, 0, 1, ""});
  lp.db->record("test-target", key, candidate_impl(s.g, generated, s.measure, 2), {3e6, 0, 1, ""});
  PlanTuneOptions o;
  o.minutes = 1;
  std::vector<std::string> notes, progress;
  PlanTuning t = tune_steps(s.g, lp.steps, testlib::toy_cpu_target(), s.build, s.measure, o,
                            [&](const std::string& line) { progress.push_back(line); }, &notes);
  EXPECT_TRUE(progress.empty());
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "step 0: not tuned (generated code took 3.0× the library's time)");
  EXPECT_EQ(t.steps[0].kind, StepKind::OneDnn);
  EXPECT_FALSE(t.schedules[0].has_value());
  // Within twice the library's time, it is tuned (here the helper cannot run: its batches fail).
  lp.db->record("test-target", key, candidate_impl(s.g, generated, s.measure, 2), {1.5e6, 0, 1, ""});
  o.kernel.explore_trials = 20;
  o.kernel.budget = 8;
  progress.clear();
  tune_steps(s.g, lp.steps, testlib::toy_cpu_target(), s.build, s.measure, o,
             [&](const std::string& line) { progress.push_back(line); }, nullptr);
  EXPECT_FALSE(progress.empty());
}

// A kernel multiplying by constant weights is timed reading them as the artifact stores them:
// as panels, not packed on every run; and its timing runs.
TEST(DriverTune, ConstantWeightsAreTimedAsPanels) {
  testlib::TempDir dir;
  Tuned s = tuned_setup(
      "graph @g {\n  input %a : f32[16,512]\n  const %w : f32[512,256] = splat(0.5)\n"
      "  %y : f32[16,256] = matmul(%a, %w) {trans_a=false, trans_b=false}\n  output %y\n}\n",
      dir);
  Schedule d = codegen::cpu::default_schedule(s.g, s.k, 2);
  codegen::cpu::GeneratedKernel gk = timed_kernel(s.g, s.k, d, "orc_t0");
  EXPECT_NE(gk.source.find("orc_gemm_panels("), std::string::npos) << gk.source;
  EXPECT_EQ(gk.source.find("gemm_pa, gemm_pb,"), std::string::npos) << gk.source;  // B not packed
  ScheduleTimer timer(s.build, s.measure);
  std::vector<std::string> failures;
  std::vector<std::vector<double>> t = timer.time(s.g, s.k, {d}, 2, 2, &failures);
  EXPECT_TRUE(failures.empty()) << failures.front();
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].size(), 2u);
}

// The tuned plan checked whole includes the steps it made generated: kept with them where
// faster, else the plan's own steps under default schedules (answers read back here).
TEST(DriverTune, TheWholePlanCheckWeighsLibraryStepsMadeGenerated) {
  testlib::TempDir dir;
  LibraryPlan lp = library_plan(dir);
  PlanTuning tuned{lp.steps, {lp.bad}};
  tuned.steps[0].kind = StepKind::Generated;
  std::vector<std::string> notes;
  std::vector<StepChoice> plan = lp.steps;
  keep_tuned_if_faster(lp.s.g, plan, tuned, lp.s.build, lp.s.measure, &notes);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].rfind("whole plans: tuned ", 0), 0u) << notes[0];  // timed, not failed
  EXPECT_NE(notes[0].find(" (medians) → default schedules kept"), std::string::npos) << notes[0];
  EXPECT_EQ(plan[0].kind, StepKind::OneDnn);
  EXPECT_EQ(tuned.steps[0].kind, StepKind::OneDnn);
  EXPECT_FALSE(tuned.schedules[0].has_value());
}

}  // namespace
}  // namespace orchid::driver
