// Names from a model never reach generated code or a command line, and every file a compile
// writes lands inside its output directory: a model whose tensor and node names hold quotes,
// newlines, comment ends, preprocessor lines, shell substitutions, path pieces and a 1 MB
// string compiles and runs correctly for the CPU and compiles for CUDA, its kernels (shared
// objects, CUBINs) hold none of those strings, and nothing is written beside the artifact.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>

#include "driver/compile_options.h"
#include "driver/cuda_plan_builder.h"
#include "driver/pipeline.h"
#include "interp/compare.h"
#include "interp/interp.h"
#include "interp/random_inputs.h"
#include "runtime/model.h"
#include "runtime/plan.h"
#include "runtime/session.h"
#include "support/random.h"
#include "testlib/onnx_builder.h"
#include "testlib/temp_dir.h"
#include "testlib/tensors.h"

namespace orchid::driver {
namespace {

namespace fs = std::filesystem;

// Names no generated source may hold: each unique enough to find in a binary.
std::vector<std::string> hostile_names() {
  return {"x\"; system(\"echo pwned\"); //",
          "w\n#include </etc/passwd>\n",
          "*/ int injected = 1; /*",
          "$(touch ../../escaped_by_name)",
          "../../../tmp/orchid_escape_w2",
          "`id` \\\\ '\\'' y",
          std::string(1 << 20, 'Q') + "_long"};
}

// x -> MatMul w1 -> Add b -> Relu -> MatMul w2 -> Softmax -> y, every tensor and node named
// with one of the hostile names.
testlib::OnnxModel hostile_model() {
  std::vector<std::string> n = hostile_names();
  Rng rng(5);
  testlib::OnnxModel m;
  m.inputs = {{n[0], {ir::DType::F32, {4, 8}}}};
  m.initializers = {{n[1], testlib::random_tensor({ir::DType::F32, {8, 16}}, rng)},
                    {n[2], testlib::random_tensor({ir::DType::F32, {16}}, rng)},
                    {n[6], testlib::random_tensor({ir::DType::F32, {16, 8}}, rng)}};
  m.nodes = {{"MatMul", {n[0], n[1]}, {n[3]}, {}, "", n[4]},
             {"Add", {n[3], n[2]}, {n[5]}, {}, "", n[3]},
             {"Relu", {n[5]}, {"r"}, {}, "", n[6]},
             {"MatMul", {"r", n[6]}, {"h"}, {}, "", n[0]},
             {"Softmax", {"h"}, {n[4]}, {{"axis", int64_t{1}}}, "", n[5]}};
  m.outputs = {n[4]};
  return m;
}

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Every file below `dir`, relative to it.
std::vector<std::string> files_below(const fs::path& dir) {
  std::vector<std::string> out;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(dir))
    out.push_back(fs::relative(e.path(), dir).string());
  std::sort(out.begin(), out.end());
  return out;
}

// No kernel of the artifact (shared objects, CUBINs, the CUDA source) holds a model name.
void expect_kernels_free_of_names(const fs::path& out) {
  for (const fs::directory_entry& e : fs::directory_iterator(out)) {
    std::string ext = e.path().extension().string();
    if (ext != ".so" && ext != ".cubin" && ext != ".cu") continue;
    std::string bytes = read_bytes(e.path());
    for (const std::string& name : hostile_names())
      EXPECT_EQ(bytes.find(name.substr(0, 24)), std::string::npos) << e.path() << " holds '" << name.substr(0, 24) << "'";
  }
}

CompileOptions options(const std::string& model, const std::string& out) { return test_compile_options(model, out); }

TEST(HostileNames, CompileAndRunWithoutReachingCodeOrLeavingTheOutputDirectory) {
  testlib::TempDir dir("orchid_hostile_names");
  fs::path work = fs::path(dir.str()) / "work";
  fs::create_directories(work);
  std::string model = (work / "model $(touch x).onnx").string();
  std::ofstream(model, std::ios::binary) << testlib::serialize_model(hostile_model());
  std::vector<std::string> before = files_below(dir.str());

  std::string out = (work / "art").string();
  CompileResult r = compile_onnx(options(model, out));
  EXPECT_TRUE(r.verified);
  EXPECT_TRUE(r.verify.ok()) << r.verify.summary();
  expect_kernels_free_of_names(out);

  // The artifact runs and matches the interpreter on the model's own graph.
  ir::Graph g = testlib::import_model(hostile_model());
  std::vector<ir::Tensor> inputs = interp::random_inputs(g, 3);
  std::vector<ir::Tensor> want = interp::run(g, inputs);
  runtime::Session session(runtime::Model::load(out));
  std::vector<ir::Tensor> got = session.run({{hostile_names()[0], inputs[0]}});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_LE(interp::relative_l2(got[0], want[0], nullptr), 1e-5);

  std::vector<std::string> cuda_files;
  if (cuda_codegen_built()) {
    CompileOptions o = options(model, (work / "gpu").string());
    o.device = runtime::PlanDevice::Cuda;
    o.build.target = "cuda";
    compile_onnx(o);
    expect_kernels_free_of_names(work / "gpu");
    for (const std::string& f : files_below(work / "gpu")) cuda_files.push_back("work/gpu/" + f);
  }

  // Nothing was written but the artifacts (and their files).
  std::vector<std::string> after = files_below(dir.str()), want_files = before;
  want_files.push_back("work/art");
  for (const std::string& f : files_below(out)) want_files.push_back("work/art/" + f);
  if (cuda_codegen_built()) want_files.push_back("work/gpu");
  want_files.insert(want_files.end(), cuda_files.begin(), cuda_files.end());
  std::sort(want_files.begin(), want_files.end());
  EXPECT_EQ(after, want_files);
  EXPECT_FALSE(fs::exists("escaped_by_name"));
  EXPECT_FALSE(fs::exists("/tmp/orchid_escape_w2"));
}

}  // namespace
}  // namespace orchid::driver
