// Plans compiled with --flush-denormals (Plan::flush_denormals) read and write subnormal floats
// as zero in every kind of step, generated kernels on several threads and library steps alike;
// plans without it keep them (IEEE gradual underflow); either way every thread's
// floating-point mode is what it was after the run.
#include <gtest/gtest.h>

#include <filesystem>

#include "driver/artifact.h"
#include "driver/implement.h"
#include "driver/plan_builder.h"
#include "ir/parser.h"
#include "orchestrate/strategies.h"
#include "runtime/denormals.h"
#include "runtime/model.h"
#include "runtime/session.h"
#include "testlib/temp_dir.h"

namespace orchid::driver {
namespace {

namespace fs = std::filesystem;

// 3 x of subnormal x (generated, 64 tasks: DAZ reads x as 0), s times s of s = 1e-20 (FTZ
// writes the subnormal product as 0), and x times a matrix of ones (oneDNN or the micro-kernel,
// as greedy implements it): without flushing, 3 x, 1e-40 and 64 x, all subnormal.
const char* kGraph = R"(
graph @g {
  input %x : f32[64,64]
  input %s : f32[64,64]
  const %w : f32[64,16] = splat(1)
  %z : f32[64,64] = elementwise(%x) { mul(%x[i0, i1], 3:f32) }
  %u : f32[64,64] = elementwise(%s) { mul(%s[i0, i1], %s[i0, i1]) }
  %y : f32[64,16] = matmul(%x, %w) {trans_a=false, trans_b=false}
  output %z, %u, %y
})";

// Whether any thread of a team of `threads` flushes subnormals.
bool any_thread_flushes(int threads) {
  bool any = false;
#pragma omp parallel num_threads(threads) reduction(|| : any)
  any = runtime::denormals_flushed();
  return any;
}

TEST(FlushDenormals, PlansFlushSubnormalsOnlyWhereCompiledTo) {
  ir::Graph g = ir::parse_graph(kGraph);
  std::vector<StepChoice> steps = implement(g, orchestrate::orchestrate(g, orchestrate::Strategy::Greedy));
  ir::Tensor x({ir::DType::F32, {64, 64}}), s({ir::DType::F32, {64, 64}});
  const float tiny = 1e-40f, small = 1e-20f;  // tiny, 3 tiny, 64 tiny and small^2: subnormal
  for (int64_t i = 0; i < x.numel(); ++i) {
    x.set_f64(i, tiny);
    s.set_f64(i, small);
  }
  testlib::TempDir dir("orchid_denormals");
  // Flushed first: a thread the run starts must not keep the flushed mode after it.
  for (bool flush : {true, false}) {
    SCOPED_TRACE(flush ? "flushed" : "kept");
    BuildOptions o;
    o.compiler.cache_dir = fs::temp_directory_path() / "orchid-driver-test-objects";
    o.cores = 4;
    o.flush_denormals = flush;
    std::string out = dir.file(flush ? "flush" : "keep");
    BuiltArtifact a = build_artifact(g, steps, o);
    write_artifact(a, out);
    runtime::SessionOptions so;
    so.threads = 4;
    runtime::Session session(runtime::Model::load(out), so);
    ASSERT_EQ(session.model().plan().flush_denormals, flush);
    std::vector<ir::Tensor> got = session.run({{"x", x}, {"s", s}});
    EXPECT_FALSE(any_thread_flushes(4));
    for (int64_t i = 0; i < got[0].numel(); i += 97) {
      EXPECT_EQ(got[0].get_f64(i), flush ? 0.0 : double(3 * tiny)) << i;
      EXPECT_EQ(got[1].get_f64(i), flush ? 0.0 : double(small * small)) << i;
    }
    for (int64_t i = 0; i < got[2].numel(); i += 31)
      EXPECT_EQ(got[2].get_f64(i), flush ? 0.0 : double(64 * tiny)) << i;
  }
}

// Scopes nest on a thread: the outermost one's mode comes back at its end.
TEST(FlushDenormals, ScopesNestAndPutTheModeBack) {
  EXPECT_FALSE(runtime::denormals_flushed());
  {
    runtime::FlushDenormals outer(2);
    EXPECT_TRUE(runtime::denormals_flushed());
    {
      runtime::FlushDenormals inner(1);
      EXPECT_TRUE(runtime::denormals_flushed());
    }
    EXPECT_TRUE(runtime::denormals_flushed());
  }
  EXPECT_FALSE(runtime::denormals_flushed());
}

}  // namespace
}  // namespace orchid::driver
