// Two-level tiling (schedule.h, Schedule::inner and split; lower.h, InnerLoop): a task's tile
// cut again into sub-tiles, the kernel's last primitives computed per sub-tile from what the
// first computed over the task. Conv + bias/ReLU + MaxPool and MatMul + Softmax, fused through
// both levels under several splits and sub-tile sizes (dividing and not), and random kernels
// under random two-level schedules, match the reference interpreter; the lowering has the
// levels the schedule asks for.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/cpu/lower.h"
#include "codegen/kernel_cases.h"
#include "codegen/kernel_graphs.h"
#include "testlib/random_graph.h"

namespace orchid::codegen::cpu {
namespace {

// The whole graph as one kernel under each schedule; each lowers to two levels, the nodes
// from `split` on (those computed) in the inner loop; all match the interpreter.
void check_two_level(const std::string& text, const std::vector<TwoLevelTiling>& schedules, const std::string& prefix) {
  std::vector<Case> cases;
  for (const TwoLevelTiling& t : schedules) {
    auto pick = [&](const ir::Graph&, const tile::Kernel&, Rng&) {
      Schedule s;
      s.tile = t.tile;
      s.inner = t.inner;
      s.split = t.split;
      return s;
    };
    Case c = make_case(7000 + cases.size(), text, pick, prefix + std::to_string(cases.size()));
    SCOPED_TRACE(schedule_str(c.schedule));
    KernelLowering kl = lower_kernel(c.graph, c.kernel, c.schedule);
    ASSERT_TRUE(kl.inner.has_value());
    for (size_t i = 0; i < kl.nodes.size(); ++i)
      EXPECT_EQ(kl.nodes[i].inner, !kl.nodes[i].inlined && static_cast<int>(i) >= t.split) << "node " << i;
    EXPECT_NE(c.generated.source.find("const int64_t ti = "), std::string::npos) << c.generated.source;
    cases.push_back(std::move(c));
  }
  check_cases(cases);
}

TEST(TwoLevel, ConvReluMaxPoolMatchesInterpreter) {
  check_two_level(conv_relu_pool_graph(), conv_relu_pool_tilings(), "orc_crp");
}

TEST(TwoLevel, MatMulSoftmaxMatchesInterpreter) {
  check_two_level(matmul_softmax_graph(96), matmul_softmax_tilings(), "orc_ms");
}

// Random kernels of random graphs, each under a random schedule made two-level: most lower to
// two levels (the rest have one task's tile of one sub-tile, or no computed node past the
// split), and all match the interpreter.
TEST(TwoLevel, RandomKernelsMatchInterpreter) {
  std::vector<Case> cases;
  int two_level = 0;
  for (uint64_t seed = 51000; cases.size() < 40; ++seed) {
    Rng rng(seed * 31 + 7);
    auto drawn = random_graph_kernel(seed, rng);
    if (!drawn) continue;
    auto& [g, k] = *drawn;
    Schedule s = random_schedule(g, k, rng);
    const ir::Dims& shape = g.type(k.outputs[anchor_output(g, k)]).shape;
    s.inner.clear();
    for (size_t d = 0; d < shape.size(); ++d) {
      s.tile[d] = shape[d];
      s.inner.push_back(static_cast<int64_t>(1 + rng.next() % (shape[d] + 1)));
    }
    s.split = static_cast<int>(rng.next() % k.nodes.size());
    SCOPED_TRACE("seed " + std::to_string(seed) + ", " + schedule_str(s));
    two_level += lower_kernel(g, k, s).inner.has_value();
    GeneratedKernel gk = generate_kernel(g, k, s, "orc_tl" + std::to_string(cases.size()));
    cases.push_back(Case{seed, std::move(g), std::move(k), s, std::move(gk)});
  }
  EXPECT_GE(two_level, 20);
  check_cases(cases);
}

TEST(TwoLevel, ScheduleTextRoundTrips) {
  Schedule s;
  s.tile = {8, 0};
  s.inner = {2, 16};
  s.split = 3;
  EXPECT_EQ(schedule_str(s), "tile=8x0 vec=8 unroll=1 inline=1 stream=0 prefetch=0 gemm=1 inner=2x16 split=3");
  EXPECT_EQ(parse_schedule(schedule_str(s)), s);
  s.inner.clear();
  EXPECT_EQ(schedule_str(s).find("inner"), std::string::npos);
}

}  // namespace
}  // namespace orchid::codegen::cpu
