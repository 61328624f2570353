// `orchid compile`, `orchid run DIR` and `orchid verify DIR` through the built binary: the
// artifact directory, output summaries and .npy files, --bench --json, --profile traces,
// verification and bisection of a tampered graph.oir, measuring with a tuning database,
// tuning schedules, and
// the messages of bad flags and paths (exit code 1).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "ir/npy.h"
#include "support/random.h"
#include "testlib/onnx_builder.h"
#include "testlib/subprocess.h"
#include "testlib/temp_dir.h"
#include "testlib/tensors.h"

namespace orchid {
namespace {

namespace fs = std::filesystem;
using testlib::TempDir;

testlib::ProcessResult orchid_cli(std::vector<std::string> args) {
  args.insert(args.begin(), ORCHID_BIN);
  return testlib::run_process(args);
}

// Compiled objects are cached across runs (content-addressed, safe to share).
std::string object_cache() { return (fs::temp_directory_path() / "orchid-cli-test-objects").string(); }

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << part << "' is not in:\n" << text;
}

// x f32[4,8] -> MatMul (weights) -> LeakyRelu (alpha 2: a `2:f32` in a body of graph.oir)
// -> Softmax -> y.
std::string write_model(const TempDir& dir) {
  Rng rng(3);
  testlib::OnnxModel m;
  m.inputs = {{"x", {ir::DType::F32, {4, 8}}}};
  m.initializers = {{"w", testlib::random_tensor({ir::DType::F32, {8, 6}}, rng)}};
  m.nodes = {{"MatMul", {"x", "w"}, {"xw"}, {}, "", "mm"},
             {"LeakyRelu", {"xw"}, {"h"}, {{"alpha", 2.0}}, "", "leaky"},
             {"Softmax", {"h"}, {"y"}, {{"axis", int64_t{1}}}, "", "softmax"}};
  m.outputs = {"y"};
  std::string path = dir.file("model.onnx");
  std::ofstream(path, std::ios::binary) << testlib::serialize_model(m);
  return path;
}

// `orchid compile MODEL -o OUT --no-measure` into the shared object cache; fails the test on
// a non-zero exit.
testlib::ProcessResult compile_no_measure(const std::string& model, const std::string& out) {
  auto r = orchid_cli({"compile", model, "-o", out, "--no-measure", "--cache-dir", object_cache()});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r;
}

nlohmann::json read_json(const fs::path& p) { return nlohmann::json::parse(read_file(p)); }

// The rewrite stage runs by default and reports its windows (the softmax's row sum is a
// sum-to-matmul site); --no-rewrite skips it, and the report has no Rewrites section.
TEST(CliCompile, RewriteStageIsReportedAndCanBeSkipped) {
  TempDir dir("orchid_cli_rewrite");
  std::string model = write_model(dir);
  auto with = compile_no_measure(model, dir.file("with"));
  std::string report = read_file(fs::path(dir.file("with")) / "report.md");
  EXPECT_TRUE(contains(report, "## Rewrites\n\n- 1 rewrite sites, 1 windows,"));
  EXPECT_TRUE(contains(report, "| rewrite |"));
  auto without = orchid_cli({"compile", model, "-o", dir.file("without"), "--no-measure", "--no-rewrite", "--cache-dir",
                             object_cache()});
  ASSERT_EQ(without.exit_code, 0) << without.output;
  report = read_file(fs::path(dir.file("without")) / "report.md");
  EXPECT_FALSE(contains(report, "## Rewrites"));
  EXPECT_FALSE(contains(report, "| rewrite |"));
}

TEST(CliCompile, CompileThenRunAnArtifact) {
  TempDir dir("orchid_cli_compile");
  std::string model = write_model(dir), out = dir.file("art");
  auto c = compile_no_measure(model, out);
  EXPECT_TRUE(contains(c.output, "wrote " + out));
  EXPECT_TRUE(contains(c.output, "- model: model.onnx, strategy greedy"));
  EXPECT_TRUE(contains(c.output, "verification (seed 1):\n  output y: relative L2 error"));
  for (const char* f : {"plan.json", "weights.bin", "graph.oir", "report.md", "report.html"})
    EXPECT_TRUE(fs::exists(fs::path(out) / f)) << f;
  EXPECT_FALSE(fs::exists(out + ".staging"));
  EXPECT_FALSE(fs::exists(out + ".candidates"));

  auto run = orchid_cli({"run", out});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  size_t steps = read_json(fs::path(out) / "plan.json").at("steps").size();
  EXPECT_TRUE(contains(run.output, "artifact " + out + ": " + std::to_string(steps) + " steps, 1 inputs, 1 outputs\n"));
  EXPECT_TRUE(contains(run.output, "  y: f32[4,6]  min "));

  // The artifact's outputs are the interpreter's (both draw the inputs from seed 0).
  auto written = orchid_cli({"run", out, "--output-dir", dir.file("o")});
  ASSERT_EQ(written.exit_code, 0) << written.output;
  EXPECT_TRUE(contains(written.output, "wrote " + dir.file("o") + "/y.npy"));
  auto reference = orchid_cli({"run", model, "--output-dir", dir.file("ref")});
  ASSERT_EQ(reference.exit_code, 0) << reference.output;
  ir::Tensor got = ir::read_npy(dir.file("o") + "/y.npy"), want = ir::read_npy(dir.file("ref") + "/y.npy");
  ASSERT_EQ(got.type(), want.type());
  EXPECT_EQ(testlib::compare_tensors(got, want), "");

  // Another seed gives other outputs.
  auto seeded = orchid_cli({"run", out, "--seed", "5"});
  ASSERT_EQ(seeded.exit_code, 0) << seeded.output;
  EXPECT_NE(seeded.output, run.output);
}

// --target cuda: CUDA code compiled to CUBIN for every architecture on any machine; verified
// and runnable where a GPU is, written unverified (and refused by `run`, naming why) where not.
TEST(CliCompile, CompileForCudaWithOrWithoutAGpu) {
#ifndef ORCHID_HAVE_CUDA
  GTEST_SKIP() << "built without the CUDA toolkit";
#endif
  TempDir dir("orchid_cli_cuda");
  std::string model = write_model(dir), out = dir.file("art");
  auto c = orchid_cli({"compile", model, "-o", out, "--target", "cuda", "--cache-dir", object_cache()});
  ASSERT_EQ(c.exit_code, 0) << c.output;
  EXPECT_TRUE(contains(c.output, "- device: NVIDIA GPU (CUDA; CUBIN for sm_80, sm_90a)"));
  for (const char* f : {"plan.json", "weights.bin", "graph.oir", "kernels.sm_80.cubin", "kernels.sm_90a.cubin", "kernels.cu"})
    EXPECT_TRUE(fs::exists(fs::path(out) / f)) << f;
  nlohmann::json plan = read_json(fs::path(out) / "plan.json");
  EXPECT_EQ(plan.at("device"), "cuda");
  for (const auto& step : plan.at("steps")) EXPECT_EQ(step.at("impl"), "cuda");
  bool gpu = c.output.find("verified against the interpreter: yes") != std::string::npos;
  auto run = orchid_cli({"run", out});
  if (gpu) {
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_TRUE(contains(run.output, "(CUDA): " + std::to_string(plan.at("steps").size()) + " steps"));
  } else {
    EXPECT_TRUE(contains(c.output, "- verified against the interpreter: no (no GPU here: "));
    EXPECT_EQ(run.exit_code, 1);
    EXPECT_TRUE(contains(run.output, "orchid: error: no GPU to run on: "));
  }
  // A damaged CUBIN is refused by name, GPU or not.
  {
    std::fstream f(fs::path(out) / "kernels.sm_80.cubin", std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(100);
    char byte = static_cast<char>(f.get() ^ 0xff);
    f.seekp(100);
    f.put(byte);
  }
  auto damaged = orchid_cli({"run", out});
  EXPECT_EQ(damaged.exit_code, 1);
  EXPECT_TRUE(contains(damaged.output, "kernels.sm_80.cubin: checksum "));
  EXPECT_TRUE(contains(damaged.output, "does not match the plan's"));
}

// --gpu names the preset the schedules are for (said in the report and the plan); without it,
// the GPU present, or h100's datasheet figures where there is none. It is for --target cuda.
TEST(CliCompile, GpuPresetsAreForCuda) {
  TempDir dir("orchid_cli_gpu");
  std::string model = write_model(dir);
  auto cpu = orchid_cli({"compile", model, "-o", dir.file("c"), "--gpu", "a100"});
  EXPECT_EQ(cpu.exit_code, 1);
  EXPECT_TRUE(contains(cpu.output, "--gpu a100 is for --target cuda")) << cpu.output;
  auto unknown = orchid_cli({"compile", model, "-o", dir.file("u"), "--target", "cuda", "--gpu", "v100"});
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_TRUE(contains(unknown.output, "--gpu")) << unknown.output;
#ifdef ORCHID_HAVE_CUDA
  auto a100 = orchid_cli({"compile", model, "-o", dir.file("a"), "--target", "cuda", "--gpu", "a100", "--cache-dir",
                          object_cache()});
  ASSERT_EQ(a100.exit_code, 0) << a100.output;
  EXPECT_TRUE(contains(a100.output, "schedules for NVIDIA A100 SXM4 80GB (preset a100, datasheet figures)"))
      << a100.output;
  EXPECT_EQ(read_json(fs::path(dir.file("a")) / "plan.json").at("target"), "cuda: NVIDIA A100 SXM4 80GB (108 SMs)");
  auto present = orchid_cli({"compile", model, "-o", dir.file("p"), "--target", "cuda", "--cache-dir", object_cache()});
  ASSERT_EQ(present.exit_code, 0) << present.output;
  EXPECT_TRUE(contains(present.output, "(preset h100, datasheet figures: no GPU here)") ||
              contains(present.output, "(preset h100, datasheet figures: no preset for the ") ||
              contains(present.output, " GFLOP/s measured)"))
      << present.output;
#endif
}

TEST(CliCompile, OptimalOrchestrationIsRefusedForCuda) {
  TempDir dir("orchid_cli_cuda_optimal");
  std::string model = write_model(dir);
  auto optimal = orchid_cli({"compile", model, "-o", dir.file("b"), "--target", "cuda", "--orchestrate", "optimal"});
  EXPECT_EQ(optimal.exit_code, 1);
  EXPECT_TRUE(contains(optimal.output, "--orchestrate optimal measures kernels on the CPU; for --target cuda use greedy"));
}

// --superopt is for the CPU and measures. The model's LAX subprogram (the softmax's exp, sum
// and division) is searched, its μGraphs timed against it compiled, and the decision reported.
TEST(CliCompile, SuperoptIsForTheCpuMeasuresAndIsReported) {
  TempDir dir("orchid_cli_superopt");
  std::string model = write_model(dir);
  auto cuda = orchid_cli({"compile", model, "-o", dir.file("a"), "--target", "cuda", "--superopt"});
  EXPECT_EQ(cuda.exit_code, 1);
  EXPECT_TRUE(contains(cuda.output, "--superopt makes CPU kernels; it does not take --target cuda"));
  auto unmeasured = orchid_cli({"compile", model, "-o", dir.file("b"), "--superopt", "--no-measure"});
  EXPECT_EQ(unmeasured.exit_code, 1);
  EXPECT_TRUE(contains(unmeasured.output, "--superopt measures μGraphs against compiled kernels"));
  auto r = orchid_cli({"compile", model, "-o", dir.file("c"), "--superopt", "--superopt-seconds", "5", "--db",
                       dir.file("tuning.db"), "--cache-dir", object_cache()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::string report = read_file(dir.file("c") + "/report.md");
  EXPECT_TRUE(contains(report, "## Superoptimizer\n\n- %y (3 primitives, 1 in the model): a shrunk copy searched"));
  EXPECT_TRUE(contains(report, "compiled without the superoptimizer "));
  EXPECT_TRUE(contains(report, "| superopt |"));
}

// --precision tf32, fp16 and bf16 are for --target cuda, and the plan and the summary say them.
TEST(CliCompile, PrecisionIsForCudaAndSaidInThePlan) {
  for (auto [precision, said] : {std::pair{"tf32", "(TF32 allowed)"}, std::pair{"bf16", "(bf16 storage, f32 accumulation)"},
                                 std::pair{"fp16", "(fp16 storage, f32 accumulation)"}}) {
    SCOPED_TRACE(precision);
    TempDir dir("orchid_cli_precision");
    std::string model = write_model(dir);
    auto cpu = orchid_cli({"compile", model, "-o", dir.file("c"), "--precision", precision});
    EXPECT_EQ(cpu.exit_code, 1);
    EXPECT_TRUE(contains(cpu.output, "--precision " + std::string(precision) + " is for --target cuda")) << cpu.output;
    EXPECT_FALSE(fs::exists(dir.file("c")));
#ifdef ORCHID_HAVE_CUDA
    auto cuda = orchid_cli({"compile", model, "-o", dir.file("g"), "--target", "cuda", "--precision", precision,
                            "--cache-dir", object_cache()});
    ASSERT_EQ(cuda.exit_code, 0) << cuda.output;
    EXPECT_EQ(read_json(fs::path(dir.file("g")) / "plan.json").at("precision"), precision);
    EXPECT_TRUE(contains(cuda.output, said)) << cuda.output;
#endif
  }
}

TEST(CliCompile, BenchJsonAndProfile) {
  TempDir dir("orchid_cli_bench");
  std::string out = dir.file("art");
  compile_no_measure(write_model(dir), out);

  auto bench = orchid_cli({"run", out, "--bench", "--json", "--min-time", "0.01", "--min-runs", "3"});
  ASSERT_EQ(bench.exit_code, 0) << bench.output;
  nlohmann::json j = nlohmann::json::parse(bench.output);  // nothing but the JSON document
  ASSERT_TRUE(j.at("times_ms").is_array());
  EXPECT_GE(j["times_ms"].size(), 3u);
  for (const auto& t : j["times_ms"]) EXPECT_GT(t.get<double>(), 0);
  EXPECT_GT(j.at("peak_rss_mb").get<double>(), 0);

  std::string trace = dir.file("t.json");
  auto prof = orchid_cli({"run", out, "--profile", trace});
  ASSERT_EQ(prof.exit_code, 0) << prof.output;
  nlohmann::json plan = read_json(fs::path(out) / "plan.json");
  nlohmann::json t = read_json(trace);
  const nlohmann::json& events = t.at("traceEvents");
  ASSERT_EQ(events.size(), plan.at("steps").size());
  for (size_t s = 0; s < events.size(); ++s) {
    EXPECT_EQ(events[s].at("ph"), "X");
    EXPECT_EQ(events[s].at("name"), plan["steps"][s].at("name"));
    EXPECT_GE(events[s].at("dur").get<double>(), 0);
  }
}

// `orchid time-artifacts` times several artifacts in one process, a sample per round each,
// and reports an artifact it cannot load with its error while timing the others.
TEST(CliCompile, TimeArtifactsTimesEachInRoundsAndReportsOneThatFails) {
  TempDir dir("orchid_cli_time_artifacts");
  std::string out = dir.file("art");
  compile_no_measure(write_model(dir), out);
  fs::create_directories(dir.file("empty"));
  auto r = orchid_cli({"time-artifacts", out, dir.file("empty"), out, "--json", "--rounds", "3", "--min-time", "0.01",
                       "--min-runs", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  nlohmann::json j = nlohmann::json::parse(r.output).at("artifacts");
  ASSERT_EQ(j.size(), 3u);
  for (size_t i : {0u, 2u}) {
    EXPECT_EQ(j[i].at("error"), "");
    ASSERT_EQ(j[i].at("rounds_ms").size(), 3u);
    for (const auto& t : j[i]["rounds_ms"]) EXPECT_GT(t.get<double>(), 0);
  }
  EXPECT_TRUE(j[1].at("rounds_ms").empty());
  EXPECT_TRUE(contains(j[1].at("error").get<std::string>(), "plan.json"));

  auto text = orchid_cli({"time-artifacts", out, "--rounds", "1", "--min-time", "0.01", "--min-runs", "2"});
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_TRUE(contains(text.output, out + ": fastest "));
  EXPECT_TRUE(contains(text.output, " ms over 1 rounds"));

  // Runs of 2 s against a limit of 0.3 s: the first artifact times out, the process ends with
  // it, and the second was not reached.
  auto late = orchid_cli({"time-artifacts", out, out, "--json", "--rounds", "1", "--min-time", "2", "--timeout", "0.3"});
  ASSERT_EQ(late.exit_code, 0) << late.output;
  nlohmann::json l = nlohmann::json::parse(late.output).at("artifacts");
  ASSERT_EQ(l.size(), 2u);
  EXPECT_TRUE(contains(l[0].at("error").get<std::string>(), "timed out (over 0.3 s in one round)"));
  EXPECT_EQ(l[1].at("error"), "");
  EXPECT_TRUE(l[1].at("rounds_ms").empty());
}

// --flush-bytes: each run after the threads wrote that much (untimed), in `time-artifacts` and
// `run --bench` alike; a negative count is refused.
TEST(CliCompile, TimingWithFlushedCachesRunsAndRefusesANegativeCount) {
  TempDir dir("orchid_cli_flush");
  std::string out = dir.file("art");
  compile_no_measure(write_model(dir), out);
  auto r = orchid_cli({"time-artifacts", out, out, "--json", "--rounds", "2", "--min-time", "0.01", "--min-runs", "2",
                       "--flush-bytes", "4194304"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  nlohmann::json j = nlohmann::json::parse(r.output).at("artifacts");
  ASSERT_EQ(j.size(), 2u);
  for (const auto& a : j) {
    EXPECT_EQ(a.at("error"), "");
    ASSERT_EQ(a.at("rounds_ms").size(), 2u);
  }
  auto run = orchid_cli({"run", out, "--bench", "--json", "--min-time", "0.01", "--min-runs", "3", "--flush-bytes", "65536"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_GE(nlohmann::json::parse(run.output).at("times_ms").size(), 3u);
  EXPECT_NE(orchid_cli({"time-artifacts", out, "--flush-bytes", "-1"}).exit_code, 0);
}

TEST(CliCompile, VerifyAndBisectATamperedGraph) {
  TempDir dir("orchid_cli_verify");
  std::string out = dir.file("art");
  compile_no_measure(write_model(dir), out);
  auto ok = orchid_cli({"verify", out});
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_TRUE(contains(ok.output, out + ": every step matches the interpreter (seed 1)"));

  // LeakyRelu's slope 2 becomes 3 in the graph the artifact is checked against; its step
  // computes with 2, so that step is the first to diverge.
  std::string oir = read_file(fs::path(out) / "graph.oir");
  size_t at = oir.find("2:f32");
  ASSERT_NE(at, std::string::npos) << oir;
  for (; at != std::string::npos; at = oir.find("2:f32", at)) oir.replace(at, 5, "3:f32");
  std::ofstream(fs::path(out) / "graph.oir", std::ios::binary) << oir;
  std::string step;
  nlohmann::json plan = read_json(fs::path(out) / "plan.json");
  for (const auto& s : plan.at("steps"))
    for (const auto& op : s.at("source_ops"))
      if (op == "leaky" && step.empty()) step = s.at("name").get<std::string>();
  ASSERT_FALSE(step.empty()) << plan.dump(1);

  auto bad = orchid_cli({"verify", out, "--bisect"});
  EXPECT_EQ(bad.exit_code, 3) << bad.output;
  EXPECT_TRUE(contains(bad.output, out + ": first divergence: step " + step + " ("));
  EXPECT_TRUE(contains(bad.output, "with relative L2 error"));
  EXPECT_FALSE(fs::exists(out + ".bisect"));
}

TEST(CliCompile, BadFlagsAndPathsAreUserErrors) {
  TempDir dir("orchid_cli_errors");
  std::string model = write_model(dir);
  auto strategy = orchid_cli({"compile", model, "-o", dir.file("a"), "--orchestrate", "fancy"});
  EXPECT_EQ(strategy.exit_code, 1);
  EXPECT_TRUE(contains(strategy.output, "--orchestrate: fancy not in {primitive,per-op,greedy,optimal}"));

  auto target = orchid_cli({"compile", model, "-o", dir.file("a"), "--target", "tpu", "--no-measure"});
  EXPECT_EQ(target.exit_code, 1);
  EXPECT_TRUE(contains(target.output, "--target: tpu not in {cpu,cuda}"));

  auto missing = orchid_cli({"compile", dir.file("none.onnx"), "-o", dir.file("a"), "--no-measure"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_TRUE(contains(missing.output, "orchid: error: " + dir.file("none.onnx") + ": cannot open"));

  // A directory that is not an artifact is refused before any work, and left as it was;
  // with measuring, nothing is left beside it either.
  std::string taken = dir.file("taken");
  dir.file("taken/notes.txt", "mine");
  for (bool measure : {false, true}) {
    std::vector<std::string> args = {"compile", model, "-o", taken, "--cache-dir", object_cache()};
    if (measure) {
      args.push_back("--db");
      args.push_back(dir.file("t.db"));
    } else {
      args.push_back("--no-measure");
    }
    auto r = orchid_cli(args);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_TRUE(contains(r.output, "orchid: error: " + taken + " exists and is not an Orchid artifact; not replacing it"));
    EXPECT_EQ(read_file(fs::path(taken) / "notes.txt"), "mine");
    EXPECT_FALSE(fs::exists(taken + ".staging"));
    EXPECT_FALSE(fs::exists(taken + ".candidates"));
  }
  EXPECT_FALSE(fs::exists(dir.file("a")));

  // An artifact that fails verification (no error is within a negative tolerance) is not
  // written, and neither is anything beside it, after measuring too.
  auto wrong = orchid_cli({"compile", model, "-o", dir.file("v"), "--tolerance", "-1", "--db", dir.file("t.db"),
                           "--cache-dir", object_cache()});
  EXPECT_EQ(wrong.exit_code, 1) << wrong.output;
  EXPECT_TRUE(contains(wrong.output, "orchid: error: " + model +
                                         ": the compiled artifact does not match the reference interpreter (seed 1); "
                                         "nothing written:\n  output y: relative L2 error"));
  for (const char* suffix : {"", ".staging", ".candidates"}) EXPECT_FALSE(fs::exists(dir.file("v") + suffix)) << suffix;

  auto no_artifact = orchid_cli({"verify", dir.file("nothing")});
  EXPECT_EQ(no_artifact.exit_code, 1) << no_artifact.output;
  EXPECT_TRUE(contains(no_artifact.output, "nothing"));
}

TEST(CliCompile, MeasuringChoosesAnImplementationAndCachesTheTimes) {
  TempDir dir("orchid_cli_measure");
  std::string model = write_model(dir), db = dir.file("t.db");
  // A trailing slash names the same directory: candidates and staging go beside it. Greedy
  // measures nothing before the implementations (optimal, the default, measures its kernels
  // as it orchestrates: the implementation stage then finds them in the database).
  auto first = orchid_cli({"compile", model, "-o", dir.file("a") + "/", "--orchestrate", "greedy", "--db", db,
                           "--cache-dir", object_cache()});
  ASSERT_EQ(first.exit_code, 0) << first.output;
  std::string report = read_file(dir.file("a") + "/report.md");
  EXPECT_TRUE(contains(report, "## Implementations chosen by measuring\n\n- kernel "));
  EXPECT_TRUE(contains(report, "(mm): oneDNN "));
  EXPECT_EQ(report.find("(cached)"), std::string::npos) << report;
  EXPECT_TRUE(fs::exists(db));

  auto second = orchid_cli({"compile", model, "-o", dir.file("b"), "--orchestrate", "greedy", "--db", db,
                            "--cache-dir", object_cache()});
  ASSERT_EQ(second.exit_code, 0) << second.output;
  std::string again = read_file(dir.file("b") + "/report.md");
  EXPECT_TRUE(contains(again, "## Implementations chosen by measuring"));
  size_t oneDnn = again.find("oneDNN "), cached = again.find("(cached)");
  EXPECT_NE(oneDnn, std::string::npos);
  EXPECT_NE(cached, std::string::npos) << again;
  EXPECT_NE(again.find("(cached)", cached + 1), std::string::npos) << again;  // both candidates
  // Nothing is left beside the artifacts (the database may keep its WAL files).
  for (const auto& e : fs::directory_iterator(dir.str())) {
    std::string name = e.path().filename().string();
    EXPECT_TRUE(name == "a" || name == "b" || name == "model.onnx" || name.rfind("t.db", 0) == 0) << name;
  }
}

// --flush-denormals is said in the plan and the report; its plans are timed apart: a compile
// without it finds none of the flushed compile's times in the database. It is for the CPU.
TEST(CliCompile, FlushedPlansAreSaidAndTimedApart) {
  TempDir dir("orchid_cli_flush");
  std::string model = write_model(dir), db = dir.file("t.db");
  auto flushed = orchid_cli({"compile", model, "-o", dir.file("f"), "--orchestrate", "greedy", "--flush-denormals",
                             "--db", db, "--cache-dir", object_cache()});
  ASSERT_EQ(flushed.exit_code, 0) << flushed.output;
  EXPECT_EQ(read_json(fs::path(dir.file("f")) / "plan.json").at("flush_denormals"), true);
  EXPECT_TRUE(contains(flushed.output, "subnormal floats: read and written as zero")) << flushed.output;
  auto kept = orchid_cli({"compile", model, "-o", dir.file("k"), "--orchestrate", "greedy", "--db", db,
                          "--cache-dir", object_cache()});
  ASSERT_EQ(kept.exit_code, 0) << kept.output;
  EXPECT_FALSE(read_json(fs::path(dir.file("k")) / "plan.json").contains("flush_denormals"));
  std::string report = read_file(dir.file("k") + "/report.md");
  EXPECT_TRUE(contains(report, "## Implementations chosen by measuring")) << report;
  EXPECT_EQ(report.find("(cached)"), std::string::npos) << report;
  auto cuda = orchid_cli({"compile", model, "-o", dir.file("g"), "--target", "cuda", "--flush-denormals"});
  EXPECT_EQ(cuda.exit_code, 1);
  EXPECT_TRUE(contains(cuda.output, "--flush-denormals is for CPU plans")) << cuda.output;
}

// --orchestrate optimal measures the kernels it chooses and greedy's, and its report says how
// the solve went and where the two plans differ; the artifact verifies.
TEST(CliCompile, OptimalOrchestrationIsMeasuredAndComparedWithGreedy) {
  TempDir dir("orchid_cli_optimal");
  std::string model = write_model(dir), db = dir.file("t.db");
  auto r = orchid_cli({"compile", model, "-o", dir.file("a"), "--orchestrate", "optimal", "--db", db, "--cache-dir",
                       object_cache()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::string report = read_file(dir.file("a") + "/report.md");
  EXPECT_TRUE(contains(report, "- model: model.onnx, strategy optimal"));
  EXPECT_TRUE(contains(report, "- verified against the interpreter: yes"));
  EXPECT_TRUE(contains(report, "## Orchestration\n\n- optimal: "));
  EXPECT_TRUE(contains(report, " kernels measured; plan cost "));
  EXPECT_TRUE(contains(report, "- subgraph from '"));
  EXPECT_TRUE(contains(report, "- analytic costs scaled by the median measured/analytic of their class"));
  EXPECT_TRUE(contains(report, "- kernels measured alone: optimal's plan "));
  EXPECT_TRUE(contains(report, "- the plans differ in "));
  // The plan kept is the database's decision: a second compile takes it, measuring nothing.
  // Optimal is the default where the compile measures on the CPU. Every row keeps its time of
  // recording: nothing was measured or decided again.
  ASSERT_EQ(orchid_cli({"tune-db", "export", dir.file("rows-a.json"), "--db", db}).exit_code, 0);
  auto again = orchid_cli({"compile", model, "-o", dir.file("b"), "--db", db, "--cache-dir", object_cache()});
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_TRUE(contains(read_file(dir.file("b") + "/report.md"),
                       "- optimal: the plan an earlier compile of this graph settled on (tuning database), "));
  ASSERT_EQ(orchid_cli({"tune-db", "export", dir.file("rows-b.json"), "--db", db}).exit_code, 0);
  EXPECT_EQ(read_file(dir.file("rows-a.json")), read_file(dir.file("rows-b.json")));
  EXPECT_EQ(read_file(dir.file("a") + "/plan.json"), read_file(dir.file("b") + "/plan.json"));
}

// Every file of an artifact directory but its reports, by name.
std::map<std::string, std::string> artifact_files(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename().string().rfind("report", 0) != 0)
      out[fs::relative(e.path(), dir).string()] = read_file(e.path());
  return out;
}

// --tune-minutes tunes the generated kernels' schedules, with a progress line per kernel and
// the decisions in the report; a second compile with the same database reads them back,
// measures nothing and writes the same artifact, byte for byte (but for the reports). The
// database's rows go to JSON and into another database, and are pruned there.
TEST(CliCompile, TuningIsReportedAndAWarmDatabaseMeasuresNothing) {
  TempDir dir("orchid_cli_tune");
  std::string model = write_model(dir), db = dir.file("t.db");
  std::vector<std::string> flags = {"--db", db, "--cache-dir", object_cache(), "--tune-minutes", "5", "--tune-budget", "6"};
  std::vector<std::string> a = {"compile", model, "-o", dir.file("a")}, b = {"compile", model, "-o", dir.file("b")};
  a.insert(a.end(), flags.begin(), flags.end());
  b.insert(b.end(), flags.begin(), flags.end());
  auto first = orchid_cli(a);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_TRUE(contains(first.output, "orchid: tuning kernel 1 of "));
  std::string report = read_file(dir.file("a") + "/report.md");
  EXPECT_TRUE(contains(report, "## Schedules tuned\n\n- step "));
  EXPECT_TRUE(contains(report, " measured in "));
  EXPECT_TRUE(contains(report, "| tune | "));

  auto rows = orchid_cli({"tune-db", "stats", "--db", db});
  auto second = orchid_cli(b);
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_EQ(second.output.find("tuning kernel"), std::string::npos) << second.output;
  EXPECT_EQ(orchid_cli({"tune-db", "stats", "--db", db}).output, rows.output);  // nothing measured or decided
  std::string again = read_file(dir.file("b") + "/report.md");
  EXPECT_TRUE(contains(again, "(tuned before, "));
  EXPECT_EQ(again.find(" measured in "), std::string::npos) << again;
  std::map<std::string, std::string> fa = artifact_files(dir.file("a")), fb = artifact_files(dir.file("b"));
  EXPECT_GE(fa.size(), 3u);
  for (const auto& [name, bytes] : fa) {
    ASSERT_TRUE(fb.count(name)) << name;
    EXPECT_TRUE(fb.at(name) == bytes) << name << " differs";
  }
  EXPECT_EQ(fa.size(), fb.size());

  auto refused = orchid_cli({"compile", model, "-o", dir.file("c"), "--tune-minutes", "1", "--no-measure"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_TRUE(contains(refused.output, "--tune-minutes measures kernels"));

  // `orchid tune-db`: the rows carried to another database through JSON, then pruned.
  auto stats = orchid_cli({"tune-db", "stats", "--db", db});
  ASSERT_EQ(stats.exit_code, 0) << stats.output;
  EXPECT_TRUE(contains(stats.output, " decisions\n"));
  std::string json = dir.file("rows.json"), other = dir.file("other.db");
  ASSERT_EQ(orchid_cli({"tune-db", "export", json, "--db", db}).exit_code, 0);
  auto imported = orchid_cli({"tune-db", "import", json, "--db", other});
  ASSERT_EQ(imported.exit_code, 0) << imported.output;
  auto copied = orchid_cli({"tune-db", "stats", "--db", other});
  EXPECT_EQ(copied.output.substr(copied.output.find('\n')), stats.output.substr(stats.output.find('\n')));
  auto pruned = orchid_cli({"tune-db", "prune", "--db", other, "--keep-target", "another machine"});
  ASSERT_EQ(pruned.exit_code, 0) << pruned.output;
  EXPECT_TRUE(contains(orchid_cli({"tune-db", "stats", "--db", other}).output, "0 measurements, 0 decisions"));
  std::string bad = dir.file("bad.json", "{\"measurements\": [{\"target\": 1}], \"decisions\": []}");
  auto rejected = orchid_cli({"tune-db", "import", bad, "--db", other});
  EXPECT_EQ(rejected.exit_code, 1);
  EXPECT_TRUE(contains(rejected.output, "bad.json': a row of measurements"));
}

// With --tune-minutes, the optimal strategy solves again after tuning, with the tuned kernels'
// times; a second compile with the same database measures and decides nothing and writes the
// same artifact.
TEST(CliCompile, OptimalSolvesAgainWithTunedTimesAndAWarmDatabaseMeasuresNothing) {
  TempDir dir("orchid_cli_optimal_tuned");
  std::string model = write_model(dir), db = dir.file("t.db");
  std::vector<std::string> flags = {"--orchestrate", "optimal", "--db", db, "--cache-dir", object_cache(),
                                    "--tune-minutes", "5", "--tune-budget", "8"};
  std::vector<std::string> a = {"compile", model, "-o", dir.file("a")}, b = {"compile", model, "-o", dir.file("b")};
  a.insert(a.end(), flags.begin(), flags.end());
  b.insert(b.end(), flags.begin(), flags.end());
  auto first = orchid_cli(a);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  std::string report = read_file(dir.file("a") + "/report.md");
  EXPECT_TRUE(contains(report, "- solved again with the tuned kernels' times: ")) << report;
  EXPECT_TRUE(contains(report, "| re-solve | "));
  EXPECT_TRUE(contains(report, "- verified against the interpreter: yes"));
  auto rows = orchid_cli({"tune-db", "stats", "--db", db});
  auto second = orchid_cli(b);
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_EQ(orchid_cli({"tune-db", "stats", "--db", db}).output, rows.output);
  std::map<std::string, std::string> fa = artifact_files(dir.file("a")), fb = artifact_files(dir.file("b"));
  EXPECT_EQ(fa, fb);
}

// A model's names reach the terminal escaped and bounded: an unsupported op named with an
// escape sequence and 100 KB of text.
TEST(CliCompile, ErrorsShowNamesEscapedAndBounded) {
  TempDir dir("orchid_cli_names");
  testlib::OnnxModel m = testlib::single_node("FrobnicateTensor", {{ir::DType::F32, {4}}});
  m.nodes[0].name = "bad\x1b[2Jname" + std::string(100000, 'N');
  std::string model = dir.file("m.onnx");
  std::ofstream(model, std::ios::binary) << testlib::serialize_model(m);
  auto r = orchid_cli({"compile", model, "-o", dir.file("a"), "--no-measure"});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "node 'bad\\x1b[2JnameNNN"));
  EXPECT_EQ(r.output.find('\x1b'), std::string::npos);
  EXPECT_TRUE(contains(r.output, " bytes left out ...] "));
  EXPECT_LT(r.output.size(), 9000u);
}

// A damaged tuning database is moved aside with a warning, and the compile goes on with a
// new one.
TEST(CliCompile, ACorruptTuningDatabaseIsMovedAsideAndTheCompileGoesOn) {
  TempDir dir("orchid_cli_corrupt_db");
  std::string model = write_model(dir), db = dir.file("t.db", std::string(5000, '#'));
  auto r = orchid_cli({"compile", model, "-o", dir.file("a"), "--db", db, "--cache-dir", object_cache()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "orchid: warning: tuning database '" + db + "': file is not a database; moved aside to '" +
                                     db + ".corrupt-"));
  EXPECT_TRUE(fs::exists(dir.file("a") + "/plan.json"));
  int aside = 0;
  for (const auto& e : fs::directory_iterator(dir.str()))
    if (e.path().filename().string().rfind("t.db.corrupt-", 0) == 0) {
      ++aside;
      EXPECT_EQ(read_file(e.path()), std::string(5000, '#'));
    }
  EXPECT_EQ(aside, 1);
}

}  // namespace
}  // namespace orchid
