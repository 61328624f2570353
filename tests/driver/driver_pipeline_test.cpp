// The compiler driver end to end (driver/pipeline.h): small graphs compiled with every
// orchestration strategy into artifact directories, loaded by the runtime and run against the
// reference interpreter on fresh seeded inputs; determinism of the artifact's bytes; refusal
// of artifacts that fail verification and of destinations that are not artifacts.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "driver/artifact.h"
#include "driver/pipeline.h"
#include "driver/pipeline_graphs.h"
#include "interp/interp.h"
#include "interp/random_inputs.h"
#include "ir/parser.h"
#include "runtime/model.h"
#include "runtime/plan.h"
#include "runtime/session.h"
#include "support/random.h"
#include "testlib/errors.h"
#include "testlib/onnx_builder.h"
#include "testlib/temp_dir.h"
#include "testlib/tensors.h"

namespace orchid::driver {
namespace {

namespace fs = std::filesystem;
using orchestrate::Strategy;

// Compiled objects are cached across runs (the cache is content-addressed, so sharing it is
// safe); only the determinism test compiles into caches of its own.
fs::path shared_object_cache() { return fs::temp_directory_path() / "orchid-driver-test-objects"; }

CompileOptions options_for(const std::string& out_dir, Strategy s) {
  CompileOptions o;
  o.model_path = "test.oir";
  o.strategy = s;
  o.out_dir = out_dir;
  o.build.compiler.cache_dir = shared_object_cache();
  o.build.cores = 2;
  o.measure_seconds = 0.01;  // the report's timing runs too, briefly
  return o;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Relative L2 error, computed here rather than with interp::relative_l2, which the driver uses.
double rel_l2(const ir::Tensor& got, const ir::Tensor& want) {
  double num = 0, den = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    double d = got.get_f64(i) - want.get_f64(i);
    num += d * d;
    den += want.get_f64(i) * want.get_f64(i);
  }
  return std::sqrt(num) / std::max(std::sqrt(den), 1e-30);
}

// The largest relative L2 error accepted per dtype; integers and bool must be exact.
double tolerance_of(ir::DType t) {
  switch (t) {
    case ir::DType::F64: return 1e-12;
    case ir::DType::F32: return 1e-5;
    case ir::DType::F16:
    case ir::DType::BF16: return 1e-2;
    default: return 0;
  }
}

// Runs the artifact in `dir` and the interpreter on `g` with the same seeded random inputs.
void expect_matches_interpreter(const std::string& dir, const ir::Graph& g, uint64_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::vector<ir::Tensor> inputs = interp::random_inputs(g, seed);
  std::vector<ir::Tensor> want = interp::run(g, inputs);
  std::map<std::string, ir::Tensor, std::less<>> by_name;
  for (size_t i = 0; i < inputs.size(); ++i) by_name[g.value(g.inputs()[i]).name] = inputs[i];
  runtime::Session session(runtime::Model::load(dir));
  std::vector<ir::Tensor> got = session.run(by_name);
  ASSERT_EQ(got.size(), want.size());
  for (size_t o = 0; o < want.size(); ++o) {
    const std::string& name = g.value(g.outputs()[o]).name;
    ASSERT_EQ(got[o].type(), want[o].type()) << "output " << o << " (" << name << ")";
    if (ir::is_float(want[o].dtype()))
      EXPECT_LE(rel_l2(got[o], want[o]), tolerance_of(want[o].dtype())) << "output " << o << " (" << name << ")";
    else
      EXPECT_EQ(got[o].bytes(), want[o].bytes()) << "output " << o << " (" << name << ")";
  }
}

std::vector<std::string> files_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Every file an artifact consists of is there, and nothing is left beside it.
void expect_artifact_files(const fs::path& dir) {
  runtime::Plan plan = runtime::read_plan(dir.string());
  std::vector<std::string> want = {"graph.oir", "plan.json", "report.html", "report.md", "weights.bin"};
  for (const runtime::PlanLibrary& l : plan.libraries) want.push_back(l.file);
  std::sort(want.begin(), want.end());
  EXPECT_EQ(files_in(dir), want);
  int generated = 0;
  for (const runtime::PlanStep& s : plan.steps) generated += s.impl == runtime::StepImpl::Generated;
  if (generated > 0) {
    ASSERT_FALSE(plan.libraries.empty());
    EXPECT_EQ(plan.libraries[0].file.rfind("kernels_0_", 0), 0u) << plan.libraries[0].file;
  }
  // Staging and bisect folders are gone.
  EXPECT_FALSE(fs::exists(dir.string() + ".staging"));
  EXPECT_EQ(files_in(dir.parent_path()), std::vector<std::string>{dir.filename().string()});
}

// ---- Graphs ----

// ---- Every graph, every strategy ----

class EveryStrategy : public ::testing::TestWithParam<Strategy> {
 protected:
  // Compiles g into a fresh directory, checks the files and the outputs on two seeds.
  runtime::Plan compile_and_check(const ir::Graph& g) {
    fs::path out = fs::path(dir_.str()) / "out" / "artifact";
    fs::create_directories(out.parent_path());
    CompileResult r = compile_graph(g, options_for(out.string(), GetParam()));
    EXPECT_TRUE(r.verified);
    EXPECT_TRUE(r.verify.ok()) << r.verify.summary();
    EXPECT_EQ(r.verify.outputs.size(), g.outputs().size());
    EXPECT_NE(r.report_summary.find("verified against the interpreter: yes"), std::string::npos) << r.report_summary;
    expect_artifact_files(out);
    for (uint64_t seed : {42, 43}) expect_matches_interpreter(out.string(), g, seed);
    return runtime::read_plan(out.string());
  }

  testlib::TempDir dir_{"orchid_driver"};
};

TEST_P(EveryStrategy, OnnxMatMulSoftmax) {
  runtime::Plan plan = compile_and_check(onnx_mlp());
  EXPECT_GT(plan.weights.bytes, 0);  // w and b (or what they folded into)
}

TEST_P(EveryStrategy, OpaqueRoutinesRunAsReferenceSteps) {
  runtime::Plan plan = compile_and_check(ir::parse_graph(kOpaque));
  int reference = 0;
  for (const runtime::PlanStep& s : plan.steps) reference += s.impl == runtime::StepImpl::Reference;
  EXPECT_EQ(reference, 2);
}

TEST_P(EveryStrategy, Views) {
  runtime::Plan plan = compile_and_check(ir::parse_graph(kViews));
  int aliases = 0;
  for (const runtime::PlanBuffer& b : plan.buffers) aliases += b.alias >= 0;
  // Alone in its kernel, a view is an alias of its input's buffer (greedy fuses both views
  // with their neighbours: graph outputs do not stop fusion).
  if (GetParam() != Strategy::Greedy) {
    EXPECT_EQ(aliases, 2);
  }
}

TEST_P(EveryStrategy, OutputsThatAreInputsConstantsOrRepeated) {
  runtime::Plan plan = compile_and_check(ir::parse_graph(kPassThrough));
  ASSERT_EQ(plan.outputs.size(), 6u);
  EXPECT_EQ(plan.outputs[0], plan.outputs[5]);
  EXPECT_EQ(plan.outputs[1], plan.outputs[3]);
  EXPECT_EQ(plan.buffers[plan.outputs[0]].kind, runtime::BufferKind::Input);
  EXPECT_EQ(plan.buffers[plan.outputs[2]].kind, runtime::BufferKind::Constant);
}

TEST_P(EveryStrategy, AGraphWithoutPrimitives) {
  runtime::Plan plan = compile_and_check(ir::parse_graph(kNoSteps));
  EXPECT_TRUE(plan.steps.empty());
  EXPECT_TRUE(plan.libraries.empty());
}

TEST_P(EveryStrategy, IntegerAndBoolOutputs) { compile_and_check(ir::parse_graph(kIntegers)); }

TEST_P(EveryStrategy, HalfPrecision) { compile_and_check(ir::parse_graph(kHalf)); }

INSTANTIATE_TEST_SUITE_P(Driver, EveryStrategy,
                         ::testing::Values(Strategy::Primitive, Strategy::PerOp, Strategy::Greedy),
                         [](const ::testing::TestParamInfo<Strategy>& p) {
                           std::string name(orchestrate::strategy_name(p.param));
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// ---- Layouts ----

// Conv (8 → 16) + Relu, Conv (16 → 16) + residual add, depthwise Conv, Clip, then a 1×1 Conv
// (16 → 8) that is the output: the activations between the convolutions stay in the layout
// oneDNN computes in (nChw8c on AVX2 hosts, nhwc on AVX-512 ones).
ir::Graph onnx_conv_chain() {
  Rng rng(12);
  testlib::OnnxModel m;
  auto f32 = [](ir::Dims d) { return ir::TensorType{ir::DType::F32, std::move(d)}; };
  m.inputs = {{"x", f32({1, 8, 10, 9})}};
  m.initializers = {{"w0", testlib::random_tensor(f32({16, 8, 3, 3}), rng)},
                    {"w1", testlib::random_tensor(f32({16, 16, 3, 3}), rng)},
                    {"w2", testlib::random_tensor(f32({16, 1, 3, 3}), rng)},
                    {"w3", testlib::random_tensor(f32({8, 16, 1, 1}), rng)},
                    {"b", testlib::random_tensor(f32({16}), rng)},
                    {"lo", testlib::random_tensor(f32({}), rng, -0.5, -0.25)},
                    {"hi", testlib::random_tensor(f32({}), rng, 0.25, 0.5)}};
  std::vector<std::pair<std::string, frontend::Attribute>> same = {{"pads", ir::Dims{1, 1, 1, 1}}},
                                                           dw = {{"pads", ir::Dims{1, 1, 1, 1}}, {"group", int64_t{16}}};
  m.nodes = {{"Conv", {"x", "w0", "b"}, {"c0"}, same, "", "conv0"},
             {"Relu", {"c0"}, {"r0"}, {}, "", "relu0"},
             {"Conv", {"r0", "w1"}, {"c1"}, same, "", "conv1"},
             {"Add", {"c1", "r0"}, {"s1"}, {}, "", "residual"},
             {"Conv", {"s1", "w2"}, {"c2"}, dw, "", "depthwise"},
             {"Clip", {"c2", "lo", "hi"}, {"k2"}, {}, "", "clip"},
             {"Conv", {"k2", "w3"}, {"y"}, {}, "", "pointwise"}};
  m.outputs = {"y"};
  return testlib::import_model(m, "convs.onnx");
}

// The layout oneDNN's convolutions compute in on this host.
runtime::BufferLayout host_blocked_layout() {
  return __builtin_cpu_supports("avx512f") ? runtime::BufferLayout::Nhwc : runtime::BufferLayout::NChw8c;
}

int blocked_buffers(const runtime::Plan& plan) {
  int n = 0;
  for (const runtime::PlanBuffer& b : plan.buffers) n += b.layout == host_blocked_layout();
  return n;
}

TEST(DriverLayouts, ConvolutionChainsKeepActivationsBlocked) {
  testlib::TempDir dir("orchid_driver_layouts");
  ir::Graph g = onnx_conv_chain();
  for (bool layouts : {true, false}) {
    SCOPED_TRACE(layouts ? "layouts" : "plain layouts");
    CompileOptions o = options_for(dir.file(layouts ? "blocked" : "plain"), Strategy::Greedy);
    o.build.layouts = layouts;
    CompileResult r = compile_graph(g, o);
    EXPECT_TRUE(r.verify.ok()) << r.verify.summary();
    runtime::Plan plan = runtime::read_plan(o.out_dir);
    int steps = 0;
    for (const runtime::PlanStep& s : plan.steps) steps += s.impl == runtime::StepImpl::OneDnn;
    EXPECT_EQ(steps, 4);  // each conv with its bias, relu, residual or clip
    // r0 (read by conv1 as src and residual), s1 and k2; never x or y.
    EXPECT_EQ(blocked_buffers(plan), layouts ? 3 : 0);
    std::string named = "3 buffers kept in " + std::string(runtime::buffer_layout_name(host_blocked_layout()));
    EXPECT_EQ(r.report_summary.find(named) != std::string::npos, layouts) << r.report_summary;
    for (uint64_t seed : {5, 6}) expect_matches_interpreter(o.out_dir, g, seed);
    EXPECT_EQ(bisect_artifact(o.out_dir, 7, 1e-5), "");  // every step matches
  }
}

// ---- Determinism ----

TEST(DriverDeterminism, TheSameGraphGivesByteIdenticalArtifacts) {
  testlib::TempDir dir("orchid_driver_det");
  ir::Graph g = onnx_mlp();
  std::vector<fs::path> outs;
  for (const char* name : {"a", "b"}) {
    CompileOptions o = options_for(dir.file(std::string("out_") + name), Strategy::Greedy);
    // Caches of their own: the objects are compiled twice, not copied from one cache entry.
    o.build.compiler.cache_dir = dir.file(std::string("cache_") + name);
    compile_graph(g, o);
    outs.push_back(o.out_dir);
  }
  runtime::Plan plan = runtime::read_plan(outs[0].string());
  ASSERT_FALSE(plan.libraries.empty());
  std::vector<std::string> files = {"plan.json", "weights.bin", "graph.oir"};
  for (const runtime::PlanLibrary& l : plan.libraries) files.push_back(l.file);
  for (const std::string& f : files) {
    ASSERT_TRUE(fs::exists(outs[0] / f)) << f;
    EXPECT_EQ(read_file(outs[0] / f), read_file(outs[1] / f)) << f << " differs";
  }
}

// ---- Verification ----

const char* kExp = R"(graph @g {
  input %x : f32[3,4]
  %y : f32[3,4] = elementwise(%x) { exp(%x[i0, i1]) }
  %z : f32[3,4] = elementwise(%x) { neg(%x[i0, i1]) }
  output %y, %z
})";

const char* kExpWrongZ = R"(graph @g {
  input %x : f32[3,4]
  %y : f32[3,4] = elementwise(%x) { exp(%x[i0, i1]) }
  %z : f32[3,4] = elementwise(%x) { abs(%x[i0, i1]) }
  output %y, %z
})";

TEST(DriverVerify, AnArtifactCheckedAgainstAnotherGraphFailsNamingTheOutput) {
  testlib::TempDir dir("orchid_driver_verify");
  std::string out = dir.file("art");
  compile_graph(ir::parse_graph(kExp), options_for(out, Strategy::Greedy));
  VerifyReport same = verify_artifact(out, ir::parse_graph(kExp), 5, 1e-4);
  EXPECT_TRUE(same.ok()) << same.summary();
  VerifyReport other = verify_artifact(out, ir::parse_graph(kExpWrongZ), 5, 1e-4);
  EXPECT_FALSE(other.ok());
  ASSERT_EQ(other.outputs.size(), 2u);
  EXPECT_TRUE(other.outputs[0].ok);
  EXPECT_FALSE(other.outputs[1].ok);
  EXPECT_EQ(other.outputs[1].name, "z");
  std::string summary = other.summary();
  EXPECT_NE(summary.find("output z: relative L2 error"), std::string::npos) << summary;
  EXPECT_NE(summary.find("(exceeds"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("output y: relative L2 error 0 (exceeds"), std::string::npos) << summary;
}

TEST(DriverVerify, AFailedVerificationWritesNothingAndKeepsTheEarlierArtifact) {
  testlib::TempDir dir("orchid_driver_refuse");
  std::string out = dir.file("art");
  compile_graph(ir::parse_graph(kExp), options_for(out, Strategy::Greedy));
  std::string plan_before = read_file(fs::path(out) / "plan.json");
  // No error is small enough for a negative tolerance: every output fails.
  CompileOptions o = options_for(out, Strategy::Primitive);
  o.tolerance = -1;
  std::string msg = testlib::error_of([&] { compile_graph(ir::parse_graph(kExp), o); });
  EXPECT_NE(msg.find("test.oir: the compiled artifact does not match the reference interpreter (seed 1); nothing written"),
            std::string::npos) << msg;
  EXPECT_NE(msg.find("output y: relative L2 error"), std::string::npos) << msg;
  EXPECT_EQ(read_file(fs::path(out) / "plan.json"), plan_before);
  EXPECT_EQ(files_in(dir.str()), std::vector<std::string>{"art"});
  // Into a new directory: nothing at all.
  o.out_dir = dir.file("new");
  EXPECT_NE(testlib::error_of([&] { compile_graph(ir::parse_graph(kExp), o); }), "(no error)");
  EXPECT_EQ(files_in(dir.str()), std::vector<std::string>{"art"});
}

// ---- Publishing ----

TEST(DriverPublish, ANonArtifactDirectoryIsNeverReplaced) {
  testlib::TempDir dir("orchid_driver_publish");
  std::string taken = dir.file("taken");
  dir.file("taken/notes.txt", "keep me");
  std::string staging = dir.file("staging");
  dir.file("staging/plan.json", "{}");
  std::string msg = testlib::error_of([&] { publish_artifact(staging, taken); });
  EXPECT_NE(msg.find(taken + " exists and is not an Orchid artifact; not replacing it"), std::string::npos) << msg;
  EXPECT_EQ(read_file(fs::path(taken) / "notes.txt"), "keep me");
  // A file in the way is refused as well.
  std::string file = dir.file("afile", "data");
  msg = testlib::error_of([&] { publish_artifact(staging, file); });
  EXPECT_NE(msg.find("afile exists and is not an Orchid artifact"), std::string::npos) << msg;
  // An empty directory, or an earlier artifact, is replaced.
  std::string empty = dir.file("empty");
  fs::create_directories(empty);
  publish_artifact(staging, empty);
  EXPECT_TRUE(fs::exists(fs::path(empty) / "plan.json"));
  EXPECT_FALSE(fs::exists(staging));
}

TEST(DriverPublish, CompilingOverAnEarlierArtifactReplacesIt) {
  testlib::TempDir dir("orchid_driver_replace");
  std::string out = dir.file("art");
  compile_graph(ir::parse_graph(kOpaque), options_for(out, Strategy::Primitive));
  fs::remove(fs::path(out) / "report.html");
  compile_graph(ir::parse_graph(kOpaque), options_for(out, Strategy::Primitive));
  expect_artifact_files(out);
  expect_matches_interpreter(out, ir::parse_graph(kOpaque), 7);
}

// Libraries are opened RTLD_NODELETE, and dlopen hands back the object already loaded under
// the same path: kernel libraries are named by their content, so that a process compiling a
// different graph into the same directory never runs the first one's kernels.
TEST(DriverPublish, RecompilingAnotherGraphIntoTheSameDirectoryInOneProcess) {
  testlib::TempDir dir("orchid_driver_reload");
  std::string out = dir.file("art");
  compile_graph(ir::parse_graph(kExp), options_for(out, Strategy::Greedy));
  expect_matches_interpreter(out, ir::parse_graph(kExp), 7);
  compile_graph(ir::parse_graph(kOpaque), options_for(out, Strategy::Greedy));
  EXPECT_EQ(runtime::read_plan(out).graph_name, "opaque");
  expect_matches_interpreter(out, ir::parse_graph(kOpaque), 7);
}

TEST(DriverPublish, CompilingIntoANonArtifactDirectoryLeavesItAndNothingElse) {
  testlib::TempDir dir("orchid_driver_taken");
  std::string taken = dir.file("taken");
  dir.file("taken/notes.txt", "keep me");
  std::string msg = testlib::error_of(
      [&] { compile_graph(ir::parse_graph(kExp), options_for(taken, Strategy::Greedy)); });
  EXPECT_NE(msg.find("exists and is not an Orchid artifact; not replacing it"), std::string::npos) << msg;
  EXPECT_EQ(files_in(taken), std::vector<std::string>{"notes.txt"});
  EXPECT_EQ(files_in(dir.str()), std::vector<std::string>{"taken"});  // no staging left behind
}

TEST(DriverPublish, AnOutputDirectoryWithATrailingSlash) {
  testlib::TempDir dir("orchid_driver_slash");
  std::string out = dir.file("art") + "/";
  compile_graph(ir::parse_graph(kExp), options_for(out, Strategy::Greedy));
  expect_artifact_files(dir.file("art"));
  // And again, over the artifact now there.
  compile_graph(ir::parse_graph(kExp), options_for(out, Strategy::Greedy));
  expect_artifact_files(dir.file("art"));
}

}  // namespace
}  // namespace orchid::driver
