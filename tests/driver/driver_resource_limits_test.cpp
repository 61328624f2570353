// Models that ask for more than a machine has are refused with a clear message before any
// large allocation: values that need more memory at once than the machine (or a set limit)
// has, a million nodes, negative and overflowing dimensions, attributes of absurd size. A long
// chain of nodes is no such model: it compiles, in kernels of bounded size. (A cyclic graph is
// refused by the loader: loader_test's NodesAreOrderedAndCyclesRefused.)
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "driver/compile_options.h"
#include "driver/memory_check.h"
#include "driver/pipeline.h"
#include "fission/fission.h"
#include "frontend/onnx_loader.h"
#include "ir/parser.h"
#include "ir/stats.h"
#include "runtime/model.h"
#include "support/error.h"
#include "target/detect.h"
#include "testlib/errors.h"
#include "testlib/onnx_builder.h"
#include "testlib/temp_dir.h"

namespace orchid::driver {
namespace {

namespace fs = std::filesystem;
using testlib::error_of;
using testlib::OnnxModel;
using testlib::OnnxNode;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

ir::Tensor ints(const std::vector<int64_t>& v) {
  ir::Tensor t({ir::DType::I64, {static_cast<int64_t>(v.size())}});
  for (size_t k = 0; k < v.size(); ++k) t.set_i64(static_cast<int64_t>(k), v[k]);
  return t;
}

ir::Tensor floats(const std::vector<double>& v) {
  ir::Tensor t({ir::DType::F32, {static_cast<int64_t>(v.size())}});
  for (size_t k = 0; k < v.size(); ++k) t.set_f64(static_cast<int64_t>(k), v[k]);
  return t;
}

CompileOptions options(const std::string& model, const std::string& out) {
  CompileOptions o = test_compile_options(model, out);
  o.rewrite = false;
  return o;
}

std::string write_model(const testlib::TempDir& dir, const std::string& name, const OnnxModel& m) {
  std::string path = dir.file(name);
  std::ofstream(path, std::ios::binary) << testlib::serialize_model(m);
  return path;
}

// `outputs` graph outputs, each x (one f32) expanded to `elements` elements.
OnnxModel expansions(int outputs, int64_t elements) {
  OnnxModel m;
  m.inputs = {{"x", {ir::DType::F32, {1}}}};
  m.initializers = {{"shape", ints({elements})}};
  for (int k = 0; k < outputs; ++k) {
    std::string y = "y" + std::to_string(k);
    m.nodes.push_back(OnnxNode{"Expand", {"x", "shape"}, {y}, {}, "", "expand_" + std::to_string(k)});
    m.outputs.push_back(y);
  }
  return m;
}

std::string compile_error(const std::string& model, const std::string& out, int64_t memory_limit = 0) {
  CompileOptions o = options(model, out);
  o.memory_limit_bytes = memory_limit;
  return error_of([&] { compile_onnx(o); });
}

TEST(ResourceLimits, PeakMemoryFollowsTheLifetimesOfValues) {
  ir::Graph g = ir::parse_graph(R"(graph @g {
    input %x : f32[1000]
    const %k : f32[2] = [1, 2]
    %a : f32[1000] = elementwise(%x) { neg(%x[i0]) }
    %b : f32[1000] = elementwise(%a) { exp(%a[i0]) }
    %c : f32[4,1000] = broadcast(%b) { %b[i1] }
    %d : f32[4,1000] = elementwise(%c) { neg(%c[i0, i1]) }
    output %d, %a
  })");
  // Each value lives from its node to its last reader, x from the start, the constant k and
  // the outputs a and d to the end: at d, k, a, c and d are live (x and b are gone).
  ir::MemoryPeak p = ir::peak_memory(g);
  EXPECT_EQ(p.bytes, 8 + 4000 + 16000 + 16000);
  EXPECT_EQ(p.node, 3);
  EXPECT_EQ(ir::peak_memory(g, 8).bytes, 2 * (8 + 4000 + 16000 + 16000));
  MemoryNeed interp = memory_need(g, Evaluator::Interpreter);  // the constants also in the graph
  EXPECT_EQ(interp.bytes, 2 * (8 + 4000 + 16000 + 16000) + 8);
}

TEST(ResourceLimits, ValuesBeyondTheMemoryLimitAreRefusedBeforeAnyWork) {
  testlib::TempDir dir("orchid_limits");
  std::string model = write_model(dir, "expand.onnx", expansions(2, 1 << 20));
  std::string msg = compile_error(model, dir.file("out"), int64_t{8} << 20);
  EXPECT_TRUE(contains(msg, model + ": the model's values need at least 0.0 GiB of memory at once (node "
                                    "'expand_1', as the reference interpreter that checks the compile holds "
                                    "them, 8 bytes per element), more than the limit of 0.0 GiB"))
      << msg;
  EXPECT_FALSE(fs::exists(dir.file("out")));
  EXPECT_FALSE(fs::exists(dir.file("out.staging")));
  // Cross-compiled, nothing runs the interpreter: the artifact's own need (4 bytes an
  // element, 8 MiB) is held against the limit.
  CompileOptions o = options(model, dir.file("out"));
  o.host_target = false;
  o.memory_limit_bytes = int64_t{8} << 20;
  EXPECT_TRUE(contains(error_of([&] { compile_onnx(o); }), "each in its own type"));
  o.memory_limit_bytes = int64_t{9} << 20;
  EXPECT_EQ(error_of([&] { compile_onnx(o); }), "(no error)");
}

TEST(ResourceLimits, ValuesBeyondThisMachinesMemoryAreRefused) {
  int64_t physical = target::physical_memory_bytes();
  if (physical <= 0) GTEST_SKIP() << "the system does not say how much memory it has";
  // Outputs of 2^29 elements (2 GiB as f32, under the 4 GiB a single value may take; 4 GiB in
  // the interpreter), one more than the machine holds.
  int outputs = static_cast<int>(physical / (int64_t{4} << 30)) + 1;
  testlib::TempDir dir("orchid_limits");
  std::string model = write_model(dir, "huge.onnx", expansions(outputs, int64_t{1} << 29));
  std::string msg = compile_error(model, dir.file("out"));
  EXPECT_TRUE(contains(msg, "of memory at once (node 'expand_")) << msg;
  EXPECT_TRUE(contains(msg, "more than this machine's ")) << msg;
}

// x -> Relu -> Relu -> ... -> y.
OnnxModel chain(int64_t nodes) {
  OnnxModel m;
  m.inputs = {{"x", {ir::DType::F32, {4}}}};
  m.nodes.reserve(static_cast<size_t>(nodes));
  for (int64_t k = 0; k < nodes; ++k)
    m.nodes.push_back(OnnxNode{"Relu", {k == 0 ? "x" : "t" + std::to_string(k)},
                               {k + 1 == nodes ? "y" : "t" + std::to_string(k + 1)}, {}, "", ""});
  m.outputs = {"y"};
  return m;
}

TEST(ResourceLimits, AMillionNodesAreRefusedBeforeAnyWorkOnThem) {
  std::string bytes = testlib::serialize_model(chain(1000000));
  EXPECT_EQ(error_of([&] { frontend::load_onnx_bytes(bytes, "big.onnx"); }),
            "big.onnx: the model has 1000000 nodes (If branches inlined), more than the limit of 200000 "
            "(raise it with --max-nodes)");
  frontend::ImportOptions o;
  o.max_nodes = 10;
  EXPECT_TRUE(contains(error_of([&] { frontend::load_onnx_bytes(testlib::serialize_model(chain(11)), "c.onnx", o); }),
                       "the model has 11 nodes"));
  EXPECT_EQ(frontend::load_onnx_bytes(testlib::serialize_model(chain(10)), "c.onnx", o).nodes.size(), 10u);
}

TEST(ResourceLimits, ALongChainCompilesInKernelsOfBoundedSize) {
  // Once one kernel inlining 8000 primitives: an expression too deep to emit (a stack
  // overflow) and, at 4000, minutes in the C compiler.
  testlib::TempDir dir("orchid_limits");
  std::string model = write_model(dir, "chain.onnx", chain(3000));
  CompileResult r = compile_onnx(options(model, dir.file("out")));
  EXPECT_TRUE(r.verified);
  auto artifact = runtime::Model::load(dir.file("out"));
  EXPECT_GE(artifact->plan().steps.size(), 12u);  // 3000 / 256
}

// The message importing (and fissioning) a one-node model gives.
std::string import_error(const OnnxModel& m) {
  return error_of([&] { fission::fission(frontend::load_onnx_bytes(testlib::serialize_model(m), "m.onnx")); });
}

TEST(ResourceLimits, NegativeAndOverflowingDimensionsAreRefused) {
  ir::TensorType small{ir::DType::F32, {4}};
  OnnxModel neg = testlib::single_node("Relu", {{ir::DType::F32, {4, -2}}});
  EXPECT_EQ(import_error(neg), "m.onnx: input 'x0': dimension 1 is negative (-2)");
  OnnxModel big = testlib::single_node("Relu", {{ir::DType::F32, {int64_t{1} << 40, int64_t{1} << 40}}});
  EXPECT_EQ(import_error(big), "m.onnx: input 'x0': shape [1099511627776,1099511627776] is too large");

  OnnxModel expand = testlib::single_node("Expand", {{ir::DType::F32, {1}}});
  expand.nodes[0].inputs = {"x0", "s"};
  int64_t e = int64_t{1} << 40;
  expand.initializers = {{"s", ints({e, e, e})}};
  EXPECT_TRUE(contains(import_error(expand), "node 'node' (Expand, opset 17): a result of shape "
                                             "[1099511627776,1099511627776,1099511627776] has a negative dimension "
                                             "or too many elements"))
      << import_error(expand);

  OnnxModel reshape = testlib::single_node("Reshape", {small});
  reshape.nodes[0].inputs = {"x0", "s"};
  reshape.initializers = {{"s", ints({-3, -3})}};
  EXPECT_TRUE(contains(import_error(reshape), "node 'node' (Reshape, opset 17)")) << import_error(reshape);

  OnnxModel fill = testlib::single_node("ConstantOfShape", {});
  fill.nodes[0].inputs = {"s"};
  fill.initializers = {{"s", ints({int64_t{1} << 20, int64_t{1} << 20})}};
  EXPECT_TRUE(contains(import_error(fill), "a result of type f32[1048576,1048576] takes 4398046511104 bytes, more "
                                           "than the limit of 4294967296"))
      << import_error(fill);
}

TEST(ResourceLimits, AttributesOfAbsurdSizeAreRefused) {
  ir::TensorType img{ir::DType::F32, {1, 1, 8, 8}};
  std::vector<int64_t> perm(100000);
  for (size_t k = 0; k < perm.size(); ++k) perm[k] = static_cast<int64_t>(k);
  std::string msg = import_error(testlib::single_node("Transpose", {{ir::DType::F32, {4, 8}}}, 1, {{"perm", perm}}));
  EXPECT_TRUE(contains(msg, "is not a permutation of the 2 dims")) << msg.substr(0, 200);

  // Resize by 1e9 along two axes: once a std::bad_alloc building its index tables.
  OnnxModel resize = testlib::single_node("Resize", {img});
  resize.nodes[0].inputs = {"x0", "", "scales"};
  resize.initializers = {{"scales", floats({1, 1, 1e9, 1e9})}};
  EXPECT_TRUE(contains(import_error(resize), "node 'node' (Resize, opset 17): a result of shape "
                                             "[1,1,8000000000,8000000000] has a negative dimension or too many "
                                             "elements"))
      << import_error(resize);

  OnnxModel pool = testlib::single_node("MaxPool", {img}, 1, {{"kernel_shape", std::vector<int64_t>{int64_t{1} << 40, 2}}});
  EXPECT_TRUE(contains(import_error(pool), "the window (span 1099511627776) is larger than the padded input (8)"));

  OnnxModel topk = testlib::single_node("TopK", {{ir::DType::F32, {4, 8}}}, 2);
  topk.nodes[0].inputs = {"x0", "k"};
  topk.initializers = {{"k", ints({int64_t{1} << 60})}};
  EXPECT_TRUE(contains(import_error(topk), "K = 1152921504606846976 is out of range for axis 1 of f32[4,8]"));
}

TEST(ResourceLimits, MessagesReachTheTerminalBoundedAndEscaped) {
  EXPECT_EQ(for_terminal("node 'a\x1b[2Jb'\n\tline\x7f"), "node 'a\\x1b[2Jb'\n\tline\\x7f");
  std::string huge = "start " + std::string(1 << 20, 'Q') + " end";
  std::string shown = for_terminal(huge, 100);
  EXPECT_LT(shown.size(), 160u);
  EXPECT_EQ(shown.substr(0, 6), "start ");
  EXPECT_EQ(shown.substr(shown.size() - 4), " end");
  EXPECT_TRUE(contains(shown, "[... 1048486 bytes left out ...]")) << shown;
}

}  // namespace
}  // namespace orchid::driver
