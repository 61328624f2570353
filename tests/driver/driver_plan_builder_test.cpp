// Artifacts built from implemented kernels (driver/plan_builder.h): constant weights that
// every reader multiplies by in the GEMM micro-kernel are stored as B panels (panels16) and the
// artifact computes what the interpreter does; weights also read otherwise stay plain.
#include <gtest/gtest.h>

#include <filesystem>

#include "driver/artifact.h"
#include "driver/plan_builder.h"
#include "interp/compare.h"
#include "interp/interp.h"
#include "interp/random_inputs.h"
#include "ir/parser.h"
#include "runtime/model.h"
#include "runtime/session.h"
#include "testlib/temp_dir.h"

namespace orchid::driver {
namespace {

namespace fs = std::filesystem;
using ir::NodeId;

// x [20, 64] x w [64, 48] + bias, relu; a second matmul by w2 [48, 32]; w2 also read by an
// elementwise kernel (so it must stay plain).
const char* kMlpBody = R"(
  %h : f32[20,48] = matmul(%x, %w) {trans_a=false, trans_b=false}
  %r : f32[20,48] = elementwise(%h, %b) { max(add(%h[i0, i1], %b[i1]), 0:f32) }
  %y : f32[20,32] = matmul(%r, %w2) {trans_a=false, trans_b=false}
  %s : f32[48,32] = elementwise(%w2) { mul(%w2[i0, i1], 2:f32) }
  output %y, %s
})";

// Weights of distinct values, so that a misplaced one shows.
std::string values(int64_t n, int64_t mod) {
  std::string s;
  for (int64_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(static_cast<double>(i * 7919 % mod) / mod - 0.5);
  return "[" + s + "]";
}

std::string mlp_text() {
  return "graph @mlp {\n  input %x : f32[20,64]\n  const %w : f32[64,48] = " + values(64 * 48, 1009) +
         "\n  const %b : f32[48] = splat(-0.25)\n  const %w2 : f32[48,32] = " + values(48 * 32, 997) + "\n" + kMlpBody;
}

StepChoice generated(const ir::Graph& g, std::vector<NodeId> nodes, std::vector<ir::ValueId> outputs) {
  StepChoice s;
  s.kernel = tile::Kernel{std::move(nodes), std::move(outputs)};
  s.inputs = tile::kernel_inputs(g, s.kernel);
  return s;
}

// The artifact at `out`, run on input x, computes g's two outputs.
void expect_runs_like_interpreter(const ir::Graph& g, const std::string& out) {
  std::vector<ir::Tensor> in = interp::random_inputs(g, 5);
  std::vector<ir::Tensor> want = interp::run(g, in);
  runtime::Session session(runtime::Model::load(out));
  std::vector<ir::Tensor> got = session.run({{"x", in[0]}});
  ASSERT_EQ(got.size(), 2u);
  for (size_t k = 0; k < 2; ++k) EXPECT_EQ(interp::compare_tensors(got[k], want[k], 1e-5, 1e-4), "") << k;
}

BuildOptions two_cores(bool layouts) {
  BuildOptions o;
  o.compiler.cache_dir = fs::temp_directory_path() / "orchid-driver-test-objects";
  o.cores = 2;
  o.layouts = layouts;
  return o;
}

TEST(PlanBuilder, WeightsReadOnlyByTheMicroKernelAreStoredAsPanels) {
  ir::Graph g = ir::parse_graph(mlp_text());
  auto v = [&](const char* name) { return *g.find_value(name); };
  std::vector<StepChoice> steps = {generated(g, {NodeId(0), NodeId(1)}, {v("r")}),
                                   generated(g, {NodeId(2)}, {v("y")}), generated(g, {NodeId(3)}, {v("s")})};
  testlib::TempDir dir("orchid_plan_builder");
  for (bool layouts : {true, false}) {
    BuiltArtifact a = build_artifact(g, steps, two_cores(layouts));
    std::string out = dir.file(layouts ? "panels" : "plain");
    write_artifact(a, out);
    runtime::Plan plan = runtime::read_plan(out);
    for (const runtime::PlanBuffer& b : plan.buffers) {
      bool want = layouts && b.name == "w";  // w2 is also read by the elementwise kernel
      EXPECT_EQ(b.layout == runtime::BufferLayout::Panels16, want) << b.name;
    }
    EXPECT_EQ(a.layouts.packed_weights, layouts ? 1 : 0);
    expect_runs_like_interpreter(g, out);
    EXPECT_EQ(bisect_artifact(out, 6, 1e-5), "");
  }
}

// Weights a matmul reads transposed (ONNX Gemm's transB) are stored as the panels of their
// transpose (panels16t); where two steps read one constant, one plainly and one transposed,
// it stays plain.
TEST(PlanBuilder, TransposedWeightsAreStoredAsPanelsOfTheirTranspose) {
  ir::Graph g = ir::parse_graph("graph @t {\n  input %x : f32[20,64]\n  const %w : f32[48,64] = " + values(48 * 64, 1009) +
                                "\n  const %v : f32[48,48] = " + values(48 * 48, 997) + R"(
  %h : f32[20,48] = matmul(%x, %w) {trans_a=false, trans_b=true}
  %y : f32[20,48] = matmul(%h, %v) {trans_a=false, trans_b=true}
  %z : f32[20,48] = matmul(%h, %v) {trans_a=false, trans_b=false}
  output %y, %z
})");
  auto v = [&](const char* name) { return *g.find_value(name); };
  std::vector<StepChoice> steps = {generated(g, {NodeId(0)}, {v("h")}), generated(g, {NodeId(1)}, {v("y")}),
                                   generated(g, {NodeId(2)}, {v("z")})};
  testlib::TempDir dir("orchid_plan_builder_t");
  BuiltArtifact a = build_artifact(g, steps, two_cores(true));
  std::string out = dir.file("panels");
  write_artifact(a, out);
  runtime::Plan plan = runtime::read_plan(out);
  for (const runtime::PlanBuffer& b : plan.buffers)
    EXPECT_EQ(b.layout, b.name == "w" ? runtime::BufferLayout::Panels16T : runtime::BufferLayout::Plain) << b.name;
  expect_runs_like_interpreter(g, out);
}

}  // namespace
}  // namespace orchid::driver
