// End to end on artifacts built by hand (test_kernels.h): kernels compiled from C++, a plan,
// weights.bin; loaded with Model::load and run through sessions with 1 and 2 threads, with
// aligned and misaligned caller memory, with outputs of every sort, concurrently, and timed.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "runtime/model.h"
#include "runtime/profile.h"
#include "runtime/session.h"
#include "testlib/errors.h"
#include "testlib/temp_dir.h"
#include "test_kernels.h"

namespace orchid::runtime {
namespace {

using testlib::error_of;
using namespace testutil;

// Caller memory for one tensor: aligned, or deliberately 4 bytes off.
struct CallerBuffer {
  AlignedBuffer storage;
  std::byte* data;
  CallerBuffer(int64_t bytes, bool misaligned) : storage(bytes + 64), data(storage.data() + (misaligned ? 4 : 0)) {}
  std::vector<float> floats(size_t n) const {
    std::vector<float> v(n);
    std::memcpy(v.data(), data, n * sizeof(float));
    return v;
  }
};

std::vector<float> floats_of(const ir::Tensor& w) {
  std::vector<float> v(static_cast<size_t>(w.numel()));
  std::memcpy(v.data(), w.data(), v.size() * sizeof(float));
  return v;
}

// Runs the sample model's default outputs (y, t_view, x, w, z) and checks every value.
void run_and_check(Session& session, bool misaligned) {
  std::vector<float> x = sample_x();
  SampleResults want = sample_results(x);
  CallerBuffer in(256, misaligned);
  std::memcpy(in.data, x.data(), 256);
  std::vector<CallerBuffer> out;
  for (int j = 0; j < 5; ++j) out.emplace_back(256, misaligned);
  std::vector<const void*> inputs{in.data};
  std::vector<void*> outputs;
  for (CallerBuffer& b : out) outputs.push_back(b.data);
  session.run(inputs, outputs);
  EXPECT_EQ(out[0].floats(64), want.y);
  EXPECT_EQ(out[1].floats(64), want.t);
  EXPECT_EQ(out[2].floats(64), x);
  EXPECT_EQ(out[3].floats(64), floats_of(sample_w()));
  EXPECT_EQ(out[4].floats(64), want.z);
}

std::shared_ptr<const Model> load_sample(const testlib::TempDir& dir, Plan plan = sample_plan()) {
  write_sample_artifact(std::move(plan), dir.str(), compiled_kernels());
  return Model::load(dir.str());
}

TEST(RuntimeSession, RunsWithOneAndTwoThreads) {
  testlib::TempDir dir;
  auto model = load_sample(dir);
  for (int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    Session session(model, SessionOptions{threads});
    EXPECT_EQ(session.threads(), threads);
    // t (viewed by an output) is the only buffer in the arena: y and z are the caller's.
    EXPECT_EQ(session.arena_bytes(), 256);
    run_and_check(session, false);
    run_and_check(session, true);   // inputs copied in, outputs copied out
    run_and_check(session, false);  // and back
    // Caches evicted between runs (timing steps as a whole run sees them): no result changes.
    session.evict_caches(1 << 20);
    run_and_check(session, false);
    session.evict_caches(0);  // writes nothing
    run_and_check(session, true);
  }
}

TEST(RuntimeSession, DefaultThreadsIsOpenMPs) {
  testlib::TempDir dir;
  Session session(load_sample(dir));
  EXPECT_GE(session.threads(), 1);
  run_and_check(session, false);
}

TEST(RuntimeSession, OutputsListedTwice) {
  testlib::TempDir dir;
  auto model = load_sample(dir, sample_plan({3, 3, 5, 1, 1, 0, 0}));
  Session session(model, SessionOptions{2});
  std::vector<float> x = sample_x();
  SampleResults want = sample_results(x);
  ir::Tensor xt(ir::TensorType{ir::DType::F32, {64}});
  std::memcpy(xt.data(), x.data(), 256);
  std::vector<ir::Tensor> out = session.run({{"x", xt}});
  ASSERT_EQ(out.size(), 7u);
  EXPECT_EQ(floats_of(out[0]), want.y);
  EXPECT_EQ(floats_of(out[1]), want.y);
  EXPECT_EQ(floats_of(out[2]), want.z);
  EXPECT_EQ(floats_of(out[3]), floats_of(sample_w()));
  EXPECT_EQ(floats_of(out[4]), floats_of(sample_w()));
  EXPECT_EQ(out[5], xt);
  EXPECT_EQ(out[6], xt);
}

TEST(RuntimeSession, NamedRunChecksItsInputs) {
  testlib::TempDir dir;
  Session session(load_sample(dir), SessionOptions{1});
  ir::Tensor good(ir::TensorType{ir::DType::F32, {64}});
  ir::Tensor bad(ir::TensorType{ir::DType::F32, {63}});
  EXPECT_EQ(error_of([&] { session.run({}); }), "model 'sample': missing input 'x' (f32[64])");
  EXPECT_EQ(error_of([&] { session.run({{"x", bad}}); }),
            "model 'sample': input 'x' is f32[63], expected f32[64]");
  EXPECT_EQ(error_of([&] { session.run({{"x", good}, {"q", good}}); }),
            "model 'sample' has no input named 'q'");
}

TEST(RuntimeSession, RawRunChecksItsPointers) {
  testlib::TempDir dir;
  Session session(load_sample(dir), SessionOptions{1});
  std::vector<float> x(64), o(64 * 5);
  std::vector<void*> outs{o.data(), o.data() + 64, o.data() + 128, o.data() + 192, o.data() + 256};
  std::vector<const void*> ins{x.data()};
  EXPECT_EQ(error_of([&] { session.run({}, outs); }),
            "model 'sample' takes 1 inputs and 5 outputs, the run passes 0 and 5");
  std::vector<const void*> null_in{nullptr};
  EXPECT_EQ(error_of([&] { session.run(null_in, outs); }), "input 0 ('x') is a null pointer");
  outs[4] = nullptr;
  EXPECT_EQ(error_of([&] { session.run(ins, outs); }), "output 4 ('z') is a null pointer");
}

TEST(RuntimeSession, SessionsShareAModel) {
  testlib::TempDir dir;
  auto model = load_sample(dir);
  std::vector<std::thread> threads;
  std::vector<int> failures(3, 0);
  for (int t = 0; t < 3; ++t)
    threads.emplace_back([&, t] {
      Session session(model, SessionOptions{1});
      std::vector<float> x = sample_x();
      for (float& v : x) v += static_cast<float>(t);
      SampleResults want = sample_results(x);
      ir::Tensor xt(ir::TensorType{ir::DType::F32, {64}});
      std::memcpy(xt.data(), x.data(), 256);
      for (int i = 0; i < 20; ++i) {
        std::vector<ir::Tensor> out = session.run({{"x", xt}});
        if (floats_of(out[0]) != want.y || floats_of(out[4]) != want.z) ++failures[static_cast<size_t>(t)];
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures, (std::vector<int>{0, 0, 0}));
}

// A gather whose indices come from the caller: an index out of range fails the run.
Plan gather_plan() {
  Plan p;
  p.graph_name = "gather";
  p.buffers = {buffer("idx", {ir::DType::I64, {8}}, BufferKind::Input),
               buffer("table", {ir::DType::F32, {64}}, BufferKind::Constant),
               buffer("g", {ir::DType::F32, {8}}, BufferKind::Output)};
  p.inputs = {0};
  p.outputs = {2};
  p.libraries = {PlanLibrary{"kernels.so", 0, ""}};
  p.steps = {generated_step("gather", {1, 0, 2}, 2, 0, 2, 8)};
  return p;
}

TEST(RuntimeSession, KernelIndexChecksFailTheRun) {
  testlib::TempDir dir;
  auto model = load_sample(dir, gather_plan());
  for (int threads : {1, 2}) {
    Session session(model, SessionOptions{threads});
    ir::Tensor idx(ir::TensorType{ir::DType::I64, {8}});
    for (int i = 0; i < 8; ++i) idx.set_i64(i, 7 * i + 3);
    std::vector<ir::Tensor> out = session.run({{"idx", idx}});
    for (int i = 0; i < 8; ++i) EXPECT_EQ(out[0].get_f64(i), 100 + 7 * i + 3);
    idx.set_i64(5, 64);
    EXPECT_EQ(error_of([&] { session.run({{"idx", idx}}); }),
              "model 'gather': step 0 ('gather'): index 64 is out of range (run-time check 3 of the "
              "kernel: an index read from a tensor)");
    idx.set_i64(5, 0);
    EXPECT_EQ(session.run({{"idx", idx}})[0].get_f64(5), 100);  // the session recovers
  }
}

TEST(RuntimeSession, AFailedIndexCheckIsNamedByThePlan) {
  testlib::TempDir dir;
  Plan p = gather_plan();
  p.steps[0].checks = {"check 0", "check 1", "check 2", "node 'G' reads 'table' along dim 0"};
  Session session(load_sample(dir, p), SessionOptions{2});
  ir::Tensor idx(ir::TensorType{ir::DType::I64, {8}});
  idx.set_i64(2, -5);
  EXPECT_EQ(error_of([&] { session.run({{"idx", idx}}); }),
            "model 'gather': step 0 ('gather'): index -5 is out of range: node 'G' reads 'table' along dim 0");
}

// A oneDNN matmul whose weights are a constant: the step gets the weights' address at load.
TEST(RuntimeSession, OneDnnStepWithConstantWeights) {
  testlib::TempDir dir;
  Plan p;
  p.graph_name = "mm";
  p.buffers = {buffer("a", {ir::DType::F32, {4, 16}}, BufferKind::Input),
               buffer("b", {ir::DType::F32, {16, 64}}, BufferKind::Constant),
               buffer("c", {ir::DType::F32, {4, 64}}, BufferKind::Output)};
  p.inputs = {0};
  p.outputs = {2};
  p.steps = {library_step("mm", StepImpl::OneDnn, {0, 1, 2}, 2, R"(graph @mm {
  input %a : f32[4,16]
  input %b : f32[16,64]
  %c : f32[4,64] = matmul(%a, %b) {trans_a=false, trans_b=false}
  output %c
})")};
  ir::Tensor b(ir::TensorType{ir::DType::F32, {16, 64}});
  for (int i = 0; i < 16 * 64; ++i) b.set_f64(i, (i % 5) - 2);
  write_artifact(p, dir.str(), std::vector<ir::Tensor>{b}, {1});
  Session session(Model::load(dir.str()), SessionOptions{2});
  ir::Tensor a(ir::TensorType{ir::DType::F32, {4, 16}});
  for (int i = 0; i < 64; ++i) a.set_f64(i, (i % 3) - 1);
  ir::Tensor c = session.run({{"a", a}})[0];
  for (int m = 0; m < 4; ++m)
    for (int n = 0; n < 64; ++n) {
      double want = 0;
      for (int k = 0; k < 16; ++k) want += a.get_f64(m * 16 + k) * b.get_f64(k * 64 + n);
      EXPECT_EQ(c.get_f64(m * 64 + n), want) << m << "," << n;  // small integers: exact
    }
}

TEST(RuntimeSession, ProfileAndTrace) {
  testlib::TempDir dir;
  auto model = load_sample(dir);
  Session session(model, SessionOptions{2});
  std::vector<float> x = sample_x(), out(5 * 64);
  std::vector<const void*> ins{x.data()};
  std::vector<void*> outs{out.data(), out.data() + 64, out.data() + 128, out.data() + 192, out.data() + 256};
  Profile prof = profile_session(session, ins, outs, ProfileOptions{1, 5, 0.0, 100, true});
  EXPECT_EQ(prof.total.runs, 5);
  EXPECT_GT(prof.total.median, 0);
  EXPECT_LE(prof.total.min, prof.total.median);
  ASSERT_EQ(prof.steps.size(), 3u);
  EXPECT_EQ(prof.steps[2].name, "cumsum");
  EXPECT_EQ(prof.steps[2].impl, StepImpl::Reference);
  EXPECT_EQ(prof.steps[1].stats.runs, 5);

  std::vector<StepSpan> spans;
  session.run(ins, outs, &spans);
  std::string path = dir.file("trace.json");
  write_chrome_trace(path, model->plan(), spans);
  std::ifstream in(path);
  nlohmann::json trace = nlohmann::json::parse(in);
  const auto& events = trace["traceEvents"];
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0]["name"], "add");
  EXPECT_EQ(events[0]["ph"], "X");
  EXPECT_EQ(events[0]["ts"], 0.0);
  EXPECT_EQ(events[0]["args"]["source_ops"], nlohmann::json::array({"Add_0"}));
  EXPECT_EQ(events[0]["args"]["flops"], 64);
  EXPECT_EQ(events[2]["args"]["impl"], "reference");
  for (const auto& e : events) EXPECT_GE(e["dur"].get<double>(), 0.0);
  EXPECT_GE(events[1]["ts"].get<double>(), events[0]["ts"].get<double>() + events[0]["dur"].get<double>());
}

TEST(RuntimeSession, TimingStats) {
  TimingStats s = timing_stats({5, 1, 4, 2, 3, 6, 7, 8, 9, 10});
  EXPECT_EQ(s.runs, 10);
  EXPECT_EQ(s.median, 5.5);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.p10, 1);
  EXPECT_EQ(s.p90, 9);
  EXPECT_DOUBLE_EQ(s.spread, 8 / 5.5);
}

}  // namespace
}  // namespace orchid::runtime
