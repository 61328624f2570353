// Schedules: the canonical text round-trips, malformed text is a UserError naming the field,
// and the default schedule of row kernels (softmax, layernorm over f32[4096,4096]) takes whole
// rows per task, streams its output and prefetches its input a task ahead; task sizes count
// work (FLOPs); a matmul's makes tasks the cores share evenly.
#include <gtest/gtest.h>

#include "codegen/cpu/schedule.h"
#include "ir/parser.h"
#include "support/random.h"
#include "testlib/errors.h"

namespace orchid::codegen::cpu {
namespace {

TEST(Schedule, CanonicalTextRoundTrips) {
  Rng rng(7);
  const int widths[] = {1, 4, 8, 16}, unrolls[] = {1, 2, 4, 8}, prefetches[] = {0, 64, 16384, 1 << 20};
  for (int i = 0; i < 200; ++i) {
    Schedule s;
    s.tile.clear();
    for (uint64_t d = rng.next() % 4; d > 0; --d) s.tile.push_back(static_cast<int64_t>(rng.next() % 100));
    s.vector_width = widths[rng.next() % 4];
    s.unroll = unrolls[rng.next() % 4];
    s.inline_single_use = rng.next() % 2 == 0;
    s.stream = rng.next() % 2 == 0;
    s.prefetch = prefetches[rng.next() % 4];
    s.gemm = rng.next() % 2 == 0;
    EXPECT_EQ(parse_schedule(schedule_str(s)), s) << schedule_str(s);
  }
  EXPECT_EQ(schedule_str(Schedule{{8, 0}, 16, 4, true, true, 16384, false}),
            "tile=8x0 vec=16 unroll=4 inline=1 stream=1 prefetch=16384 gemm=0");
}

TEST(Schedule, MalformedFieldsAreUserErrorsNamingThem) {
  auto error = [](const std::string& text) { return testlib::error_of([&] { parse_schedule(text); }); };
  EXPECT_NE(error("gemm=yes").find("gemm must be 0 or 1"), std::string::npos);
  EXPECT_NE(error("stream=2").find("stream must be 0 or 1"), std::string::npos);
  EXPECT_NE(error("prefetch=100").find("prefetch must be a multiple of 64 up to 1048576"), std::string::npos);
  EXPECT_NE(error("prefetch=2097152").find("prefetch must be a multiple of 64"), std::string::npos);
  EXPECT_NE(error("prefetch=-64").find("\"-64\" is not a non-negative integer"), std::string::npos);
  EXPECT_NE(error("vec=3").find("vec must be 1, 4, 8 or 16"), std::string::npos);
  EXPECT_NE(error("fancy=1").find("unknown key \"fancy\""), std::string::npos);
}

tile::Kernel whole(const ir::Graph& g) {
  tile::Kernel k;
  for (int32_t n = 0; n < g.num_nodes(); ++n) k.nodes.push_back(ir::NodeId(n));
  k.outputs = g.outputs();
  return k;
}

TEST(Schedule, DefaultOfRowKernelsTakesRowsStreamsAndPrefetches) {
  ir::Graph softmax = ir::parse_graph(R"(
graph @softmax {
  input %x : f32[4096,4096]
  %m : f32[4096,1] = reduce max(%x) over [4096] { %x[i0, r0] }
  %e : f32[4096,4096] = elementwise(%x, %m) { exp(sub(%x[i0, i1], %m[i0, 0])) }
  %s : f32[4096,1] = reduce sum(%e) over [4096] { %e[i0, r0] }
  %y : f32[4096,4096] = elementwise(%e, %s) { div(%e[i0, i1], %s[i0, 0]) }
  output %y
}
)");
  Schedule s = default_schedule(softmax, whole(softmax), 2);
  EXPECT_EQ(schedule_str(s), "tile=1x4096 vec=16 unroll=4 inline=1 stream=1 prefetch=16384 gemm=1");
  // Small kernels neither stream nor prefetch.
  ir::Graph small = ir::parse_graph(R"(
graph @small {
  input %x : f32[64,256]
  %y : f32[64,256] = elementwise(%x) { exp(%x[i0, i1]) }
  output %y
}
)");
  Schedule t = default_schedule(small, whole(small), 2);
  EXPECT_FALSE(t.stream);
  EXPECT_EQ(t.prefetch, 0);
}

int64_t tasks_of(const ir::Graph& g, const Schedule& s) {
  const ir::Dims& shape = g.type(g.outputs()[0]).shape;
  int64_t tasks = 1;
  for (size_t d = 0; d < shape.size(); ++d) tasks *= (shape[d] + s.tile[d] - 1) / s.tile[d];
  return tasks;
}

// Task sizes count work (FLOPs, ir/stats.h: per domain point and term), not elements of the
// anchor, and dims of one index are passed over: softmax's statistics over 5 x 1024 rows of
// 1024 (5120 outputs of 2048 terms each) make tasks for every core, as does a chain of
// elementwise primitives over [1, 64, 128] (as many as the cores share evenly); 64 elements
// of one add stay one task, as do copies, which count nothing.
TEST(Schedule, DefaultTasksCountWorkAndPassOverDimsOfOneIndex) {
  ir::Graph stats = ir::parse_graph(R"(
graph @stats {
  input %x : f32[1,5,1024,1024]
  %m : f32[1,5,1024,1] = reduce max(%x) over [1024] { %x[i0, i1, i2, r0] }
  %s : f32[1,5,1024,1] = reduce sum(%x, %m) over [1024] { exp(sub(%x[i0, i1, i2, r0], %m[i0, i1, i2, 0])) }
  output %s
}
)");
  EXPECT_GE(tasks_of(stats, default_schedule(stats, whole(stats), 2)), 8);
  // 8K elements (64 KiB touched: no cut for size) of 6 primitives: 48K FLOPs make 3 tasks of
  // 16K, then 2 for 2 cores.
  ir::Graph chain = ir::parse_graph(R"(
graph @chain {
  input %x : f32[1,64,128]
  %a : f32[1,64,128] = elementwise(%x) { exp(%x[i0, i1, i2]) }
  %b : f32[1,64,128] = elementwise(%a) { tanh(%a[i0, i1, i2]) }
  %c : f32[1,64,128] = elementwise(%b) { erf(%b[i0, i1, i2]) }
  %d : f32[1,64,128] = elementwise(%c) { exp(%c[i0, i1, i2]) }
  %e : f32[1,64,128] = elementwise(%d) { tanh(%d[i0, i1, i2]) }
  %f : f32[1,64,128] = elementwise(%e) { erf(%e[i0, i1, i2]) }
  output %f
}
)");
  Schedule c = default_schedule(chain, whole(chain), 2);
  EXPECT_EQ(c.tile, (ir::Dims{1, 32, 128}));
  ir::Graph tiny = ir::parse_graph(R"(
graph @tiny {
  input %x : f32[1,64]
  %y : f32[1,64] = elementwise(%x) { add(%x[i0, i1], 1:f32) }
  output %y
}
)");
  EXPECT_EQ(tasks_of(tiny, default_schedule(tiny, whole(tiny), 2)), 1);
  // Layout primitives move data and count nothing: a broadcast and two copies of 12K elements
  // stay one task (counted per point, they would make 36K, two tasks).
  ir::Graph copies = ir::parse_graph(R"(
graph @copies {
  input %x : f32[1,1,128]
  %a : f32[1,96,128] = layout(%x) { %x[i0, 0, i2] }
  %b : f32[1,96,128] = layout(%a) { %a[i0, i1, i2] }
  %c : f32[1,96,128] = layout(%b) { %b[i0, i1, i2] }
  output %c
}
)");
  EXPECT_EQ(tasks_of(copies, default_schedule(copies, whole(copies), 2)), 1);
}

// A task that touches too much is cut, but its innermost dim keeps a vector's lanes: a relu of
// [1, 16, 1024, 16] with its sums over the 1024 rows (every task reads its columns' whole
// rows) was cut to 4 columns and ran 9x slower.
TEST(Schedule, DefaultTilesKeepTheInnermostDimsLanes) {
  ir::Graph g = ir::parse_graph(R"(
graph @sums {
  input %x : f32[1,16,1024,48]
  %k : f32[1,16,1024,16] = layout(%x) { %x[i0, i1, i2, add(i3, 16)] }
  %r : f32[1,16,1024,16] = elementwise(%k) { max(%k[i0, i1, i2, i3], 0:f32) }
  %s : f32[1,16,1,16] = reduce sum(%r) over [1024] { %r[i0, i1, r0, i3] }
  output %r, %s
}
)");
  Schedule s = default_schedule(g, whole(g), 2);
  EXPECT_EQ(s.tile.back(), 16) << schedule_str(s);
}

// A matmul's default tiles make a number of tasks the cores share evenly where there are few:
// 4096 rows make 11 tiles of 378 rows, which 2 cores run as 6 and 5; 12 of 342 instead (and
// 4 cores: 12 as well). Many tasks are left as they are.
TEST(Schedule, DefaultGemmTilesMakeTasksTheCoresShareEvenly) {
  auto matmul = [](int64_t m, int64_t n) {
    return ir::parse_graph("graph @mm {\n  input %a : f32[" + std::to_string(m) + ",256]\n  input %b : f32[256," +
                           std::to_string(n) + "]\n  %y : f32[" + std::to_string(m) + "," + std::to_string(n) +
                           "] = matmul(%a, %b) {trans_a=false, trans_b=false}\n  output %y\n}\n");
  };
  auto tasks = [](const ir::Graph& g, const Schedule& s) {
    const ir::Dims& shape = g.type(g.outputs()[0]).shape;
    int64_t t = 1;
    for (size_t d = 0; d < shape.size(); ++d) t *= (shape[d] + s.tile[d] - 1) / s.tile[d];
    return t;
  };
  ir::Graph mlp = matmul(4096, 256);
  Schedule two = default_schedule(mlp, whole(mlp), 2);
  EXPECT_EQ(two.tile[0], 342);
  EXPECT_EQ(tasks(mlp, two), 12);
  EXPECT_EQ(tasks(mlp, default_schedule(mlp, whole(mlp), 4)) % 4, 0);
  ir::Graph tall = matmul(100000, 256);  // 261 tasks: left alone
  EXPECT_EQ(default_schedule(tall, whole(tall), 2).tile[0], 384);
}

}  // namespace
}  // namespace orchid::codegen::cpu
