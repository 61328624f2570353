// The `orchid` CLI: exit codes (0 ok, 1 user error, 2 internal error) and messages.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "ir/npy.h"
#include "testlib/onnx_builder.h"
#include "testlib/subprocess.h"

namespace orchid {
namespace {

namespace fs = std::filesystem;
using testlib::run_process;

testlib::ProcessResult orchid_cli(std::vector<std::string> args) {
  args.insert(args.begin(), ORCHID_BIN);
  return run_process(args);
}

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() / ("orchid_cli_" + std::to_string(::getpid()) + "_" +
                                         std::to_string(counter_++));
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name, const std::string& text = "") const {
    std::string p = (path_ / name).string();
    if (!text.empty()) std::ofstream(p) << text;
    return p;
  }
  std::string str() const { return path_.string(); }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

const char* kExample = ORCHID_SOURCE_DIR "/examples/attention.oir";

TEST(Cli, VersionAndHelp) {
  auto v = orchid_cli({"--version"});
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_NE(v.output.find("orchid 0."), std::string::npos) << v.output;
  auto h = orchid_cli({"--help"});
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_NE(h.output.find("ir-run"), std::string::npos) << h.output;
  auto sub = orchid_cli({"ir-run", "--help"});
  EXPECT_EQ(sub.exit_code, 0);
  EXPECT_NE(sub.output.find("--output-dir"), std::string::npos) << sub.output;
}

TEST(Cli, BadUsageIsAUserError) {
  EXPECT_EQ(orchid_cli({}).exit_code, 1);
  EXPECT_EQ(orchid_cli({"frobnicate"}).exit_code, 1);
  EXPECT_EQ(orchid_cli({"ir-run"}).exit_code, 1);
  auto r = orchid_cli({"ir-run", kExample, "--precision", "f8"});
  EXPECT_EQ(r.exit_code, 1);
}

TEST(Cli, IrRunsTheExampleDeterministically) {
  auto a = orchid_cli({"ir-run", kExample, "--seed", "7"});
  ASSERT_EQ(a.exit_code, 0) << a.output;
  EXPECT_NE(a.output.find("graph @attention: 18 primitives, 5 inputs, 2 outputs"), std::string::npos)
      << a.output;
  EXPECT_NE(a.output.find("out: f32[6,16]"), std::string::npos) << a.output;
  EXPECT_EQ(orchid_cli({"ir-run", kExample, "--seed", "7"}).output, a.output);
  EXPECT_NE(orchid_cli({"ir-run", kExample, "--seed", "8"}).output, a.output);
}

TEST(Cli, IrRunReadsInputsAndWritesOutputs) {
  TempDir dir;
  std::string oir = dir.file("neg.oir",
                             "graph @g {\n  input %x : f32[3]\n"
                             "  %\"y/odd name\" : f32[3] = elementwise(%x) { neg(%x[i0]) }\n"
                             "  output %\"y/odd name\"\n}\n");
  ir::Tensor x(ir::TensorType{ir::DType::F32, {3}});
  for (int i = 0; i < 3; ++i) x.set_f64(i, i + 0.5);
  ir::write_npy(dir.file("x.npy"), x);
  auto r = orchid_cli({"ir-run", oir, "--input", "x=" + dir.file("x.npy"), "--output-dir",
                       dir.file("out")});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The output's name is not a safe file name: it is sanitised, never used as a path.
  ir::Tensor y = ir::read_npy(dir.file("out") + "/y_odd_name.npy");
  for (int i = 0; i < 3; ++i) EXPECT_EQ(y.get_f64(i), -(i + 0.5));
}

TEST(Cli, IrRunErrorsNameTheFileAndTheInput) {
  TempDir dir;
  auto missing = orchid_cli({"ir-run", dir.file("nope.oir")});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find("nope.oir"), std::string::npos) << missing.output;

  std::string bad = dir.file("bad.oir", "graph @g {\n  input %x : f32[3\n}\n");
  auto parse = orchid_cli({"ir-run", bad});
  EXPECT_EQ(parse.exit_code, 1);
  EXPECT_NE(parse.output.find("bad.oir:3:1: error: expected ',' or ']'"), std::string::npos) << parse.output;

  auto noinput = orchid_cli({"ir-run", kExample, "--input", "y=" + dir.file("y.npy")});
  EXPECT_EQ(noinput.exit_code, 1);
  EXPECT_NE(noinput.output.find("the graph has no input named 'y'"), std::string::npos)
      << noinput.output;

  ir::Tensor wrong(ir::TensorType{ir::DType::F64, {6, 16}});
  ir::write_npy(dir.file("x.npy"), wrong);
  auto type = orchid_cli({"ir-run", kExample, "--input", "x=" + dir.file("x.npy")});
  EXPECT_EQ(type.exit_code, 1);
  EXPECT_NE(type.output.find("input 'x' expects f32[6,16], the file holds f64[6,16]"),
            std::string::npos)
      << type.output;

  auto form = orchid_cli({"ir-run", kExample, "--input", "x"});
  EXPECT_EQ(form.exit_code, 1);
  EXPECT_NE(form.output.find("expected name=file.npy"), std::string::npos) << form.output;
}

// x0 + w, then Relu: 2 x 3 floats, one 24-byte initializer.
std::string write_small_model(const TempDir& dir) {
  ir::TensorType t{ir::DType::F32, {2, 3}};
  testlib::OnnxModel m = testlib::single_node("Add", {t});
  m.nodes[0].inputs.push_back("w");
  m.nodes[0].outputs = {"sum"};
  ir::Tensor w(t);
  for (int i = 0; i < 6; ++i) w.set_f64(i, i - 2.5);
  m.initializers.emplace_back("w", w);
  m.nodes.push_back({"Relu", {"sum"}, {"y0"}, {}, ""});
  std::string path = dir.file("small.onnx");
  std::ofstream(path, std::ios::binary) << testlib::serialize_model(m);
  return path;
}

TEST(Cli, InspectSummarisesAModel) {
  TempDir dir;
  auto r = orchid_cli({"inspect", write_small_model(dir)});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* part : {"opset 17, 2 nodes", "Add                          1", "x0                           f32[2,3]",
                           "y0                           f32[2,3]", "(24 bytes in 1 constants)",
                           "FLOPs: 12 FLOP (12)", "primitives: 2", "elementwise                  2"})
    EXPECT_NE(r.output.find(part), std::string::npos) << part << "\n" << r.output;
}

TEST(Cli, RunsAModelOnGivenInputs) {
  TempDir dir;
  ir::Tensor x(ir::TensorType{ir::DType::F32, {2, 3}});
  for (int i = 0; i < 6; ++i) x.set_f64(i, 1.0);
  ir::write_npy(dir.file("x.npy"), x);
  auto r = orchid_cli({"run", write_small_model(dir), "--input", "x0=" + dir.file("x.npy"),
                       "--output-dir", dir.file("out")});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ir::Tensor y = ir::read_npy(dir.file("out") + "/y0.npy");
  for (int i = 0; i < 6; ++i) EXPECT_EQ(y.get_f64(i), std::max(0.0, 1.0 + i - 2.5));
}

TEST(Cli, ModelErrorsNameFileNodeAndOp) {
  TempDir dir;
  auto missing = orchid_cli({"run", dir.file("none.onnx")});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find("none.onnx: cannot open"), std::string::npos) << missing.output;
  std::string bad = dir.file("bad.onnx", "this is not protobuf at all \xff\xff");
  auto corrupt = orchid_cli({"inspect", bad});
  EXPECT_EQ(corrupt.exit_code, 1);
  EXPECT_NE(corrupt.output.find("bad.onnx: not an ONNX model"), std::string::npos) << corrupt.output;
  testlib::OnnxModel m = testlib::single_node("Frobnicate", {{ir::DType::F32, {2}}});
  std::string path = dir.file("unknown.onnx");
  std::ofstream(path, std::ios::binary) << testlib::serialize_model(m);
  auto unknown = orchid_cli({"run", path});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.output.find("node 'node' (Frobnicate, opset 17): not supported"), std::string::npos)
      << unknown.output;
  auto shape = orchid_cli({"run", path, "--shape", "x0"});
  EXPECT_EQ(shape.exit_code, 1);
  EXPECT_NE(shape.output.find("--shape 'x0': expected name=dims"), std::string::npos) << shape.output;
}

// `orchid superopt` on a LAX program finds and verifies LoRA's one-kernel μGraph, stores the
// result in the tuning database and reads it back the second time.
TEST(CliSuperopt, SearchesVerifiesAndCaches) {
  TempDir dir;
  std::vector<std::string> args = {"superopt", ORCHID_SOURCE_DIR "/tests/data/superopt/lora.oir", "--grid", "2",
                                    "--loop", "2", "--max-kernel-ops", "1", "--max-block-ops", "2",
                                    "--max-results", "1", "--db", dir.file("tuning.db")};
  auto first = orchid_cli(args);
  EXPECT_EQ(first.exit_code, 0) << first.output;
  EXPECT_NE(first.output.find("search: "), std::string::npos) << first.output;
  EXPECT_NE(first.output.find("# μgraph 1 of 1, estimated"), std::string::npos) << first.output;
  EXPECT_NE(first.output.find("= concat_matmul("), std::string::npos) << first.output;
  auto again = orchid_cli(args);
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("search (cached): "), std::string::npos) << again.output;
  EXPECT_EQ(again.output.substr(again.output.find("# μgraph")), first.output.substr(first.output.find("# μgraph")));
}

// On a model, the LAX subprograms are searched: LoRA's matmuls and add are one.
TEST(CliSuperopt, SearchesTheLaxSubprogramsOfAModel) {
  TempDir dir;
  testlib::OnnxModel m;
  m.inputs = {{"W", {ir::DType::F32, {8, 16}}}, {"X", {ir::DType::F32, {16, 8}}},
              {"A", {ir::DType::F32, {4, 16}}}, {"B", {ir::DType::F32, {8, 4}}}};
  m.nodes = {{"MatMul", {"W", "X"}, {"WX"}, {}, "", "wx"},
             {"MatMul", {"A", "X"}, {"AX"}, {}, "", "ax"},
             {"MatMul", {"B", "AX"}, {"BAX"}, {}, "", "bax"},
             {"Add", {"WX", "BAX"}, {"y"}, {}, "", "add"}};
  m.outputs = {"y"};
  std::string path = dir.file("lora.onnx");
  std::ofstream(path, std::ios::binary) << testlib::serialize_model(m);
  auto r = orchid_cli({"superopt", path, "--grid", "2", "--loop", "2", "--max-kernel-ops", "1", "--max-block-ops",
                       "2", "--max-results", "1", "--no-cache"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("1 LAX subprogram searched"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("subprogram computing %y (4 primitives, 1 in the model)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("= concat_matmul("), std::string::npos) << r.output;
  auto bad = orchid_cli({"superopt", path, "--grid", "2x0", "--no-cache"});
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_NE(bad.output.find("--grid '2x0': expected sizes such as 4x2"), std::string::npos) << bad.output;
}

// A program outside the fragment is reported, not searched.
TEST(CliSuperopt, ReportsAProgramOutsideTheFragment) {
  TempDir dir;
  std::string prog = dir.file("max.oir", R"(graph @m {
  input %x : f32[2,6]
  %m : f32[2,1] = reduce max(%x) over [6] { %x[i0, r0] }
  output %m
}
)");
  auto r = orchid_cli({"superopt", prog, "--no-cache"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("not searched: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("reduce max"), std::string::npos) << r.output;
}

// The LoRA search's μGraphs instantiated at a larger LoRA, checked, timed against the program
// compiled without them, and the fastest written as an artifact that verifies.
TEST(CliSuperopt, SearchAtInstantiatesBenchesAndWritesTheFastest) {
  TempDir dir;
  std::string prog = ORCHID_SOURCE_DIR "/tests/data/superopt/lora64.oir";
  std::string out = dir.file("a");
  auto r = orchid_cli({"superopt", prog, "--search-at", ORCHID_SOURCE_DIR "/tests/data/superopt/lora.oir", "--grid", "2",
                       "--loop", "2", "--max-kernel-ops", "1", "--max-block-ops", "2", "--max-results", "1",
                       "--tilings", "2", "--bench", "--rounds", "1", "--db", dir.file("tuning.db"), "--out", out});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("search of "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("# μgraph 1 at grid "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("input %W : f32[64,128]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("measured on this machine"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("x the compiled program's speed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("the program compiled without the superoptimizer: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("wrote " + out), std::string::npos) << r.output;
  auto v = orchid_cli({"verify", out});
  EXPECT_EQ(v.exit_code, 0) << v.output;
}

// --shrink searches a small copy the program itself gives.
TEST(CliSuperopt, ShrinkSearchesASmallCopy) {
  auto r = orchid_cli({"superopt", ORCHID_SOURCE_DIR "/tests/data/superopt/lora64.oir", "--shrink", "--grid", "2",
                       "--loop", "2", "--max-kernel-ops", "1", "--max-block-ops", "2", "--max-results", "1",
                       "--tilings", "1", "--no-cache"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("searching a shrunk copy:\ngraph @lora {\n  input %W : f32[8,8]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("search of the shrunk program: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("# μgraph 1 at grid "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("input %W : f32[64,128]"), std::string::npos) << r.output;
  auto both = orchid_cli({"superopt", ORCHID_SOURCE_DIR "/tests/data/superopt/lora64.oir", "--shrink", "--search-at",
                          ORCHID_SOURCE_DIR "/tests/data/superopt/lora.oir"});
  EXPECT_EQ(both.exit_code, 1) << both.output;
  EXPECT_NE(both.output.find("--shrink makes the small program itself"), std::string::npos) << both.output;
}

// A μGraph from a file is checked over finite fields first; one that differs is refused.
TEST(CliSuperopt, AGivenMuGraphIsCheckedFirst) {
  std::string gqa = ORCHID_SOURCE_DIR "/tests/data/superopt/gqa.oir";
  std::string fig = ORCHID_SOURCE_DIR "/tests/data/superopt/gqa.ugraph";
  TempDir dir;
  auto ok = orchid_cli({"superopt", gqa, "--ugraph", fig, "--out", dir.file("a")});
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("gqa.ugraph: verified (10611 finite-field tests)"), std::string::npos) << ok.output;
  std::ifstream in(fig);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text.replace(text.find("div(%As, %Bs)"), 13, "mul(%As, %Bs)");
  auto bad = orchid_cli({"superopt", gqa, "--ugraph", dir.file("bad.ugraph", text)});
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_NE(bad.output.find("bad.ugraph: the μGraph does not compute the program"), std::string::npos) << bad.output;
  auto both = orchid_cli({"superopt", gqa, "--ugraph", fig, "--search-at", gqa});
  EXPECT_EQ(both.exit_code, 1) << both.output;
  EXPECT_NE(both.output.find("--ugraph and --search-at exclude each other"), std::string::npos) << both.output;
}

TEST(Cli, EquivExitCodesSayEquivalentDifferentUndecided) {
  std::string a = ORCHID_SOURCE_DIR "/examples/equiv/attention.oir";
  std::string b = ORCHID_SOURCE_DIR "/examples/equiv/attention_merged.oir";
  auto same = orchid_cli({"equiv", a, b});
  EXPECT_EQ(same.exit_code, 0) << same.output;
  EXPECT_NE(same.output.find("equivalent (1493 of 1493 tests; k = 72"), std::string::npos) << same.output;
  TempDir dir;
  std::ifstream in(b);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text.replace(text.find("add(i1, 5)"), 10, "add(i1, 4)");
  auto diff = orchid_cli({"equiv", a, dir.file("wrong.oir", text)});
  EXPECT_EQ(diff.exit_code, 3) << diff.output;
  EXPECT_NE(diff.output.find("different: output 0 (%o) differs at ["), std::string::npos) << diff.output;
  auto few = orchid_cli({"equiv", a, b, "--max-tests", "100"});
  EXPECT_EQ(few.exit_code, 4) << few.output;
  EXPECT_NE(few.output.find("needs 1493 tests, more than the limit of 100"), std::string::npos) << few.output;
  auto missing = orchid_cli({"equiv", a, dir.file("absent.oir")});
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_NE(missing.output.find("absent.oir"), std::string::npos) << missing.output;
}

}  // namespace
}  // namespace orchid
