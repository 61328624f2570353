// Reductions whose trailing terms every load reads as one contiguous range are reduced over
// lanes as one run (NodeLowering::reduce_run, lower_runs.cpp); reads that are not one range
// keep their dims apart. Both kinds match the interpreter.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/cpu/lower.h"
#include "codegen/kernel_cases.h"
#include "ir/parser.h"

namespace orchid::codegen::cpu {
namespace {

struct RunCase {
  const char* what;
  std::string text;
  int32_t run;  // reduce_run of the graph's reduction under the default schedule
};

std::vector<RunCase> run_cases() {
  return {
      {"instance norm statistics over [56, 56]",
       "graph @g {\n  input %x : f32[1,4,56,56]\n"
       "  %m, %v : f32[1,4], f32[1,4] = reduce welford(%x) over [56,56] { %x[i0, i1, r0, r1] }\n  output %m, %v\n}\n",
       2},
      {"sum over three dims, a tail past the chunks",
       "graph @g {\n  input %x : f32[5,4,7,9]\n"
       "  %y : f32[5] = reduce sum(%x) over [4,7,9] { %x[i0, r0, r1, r2] }\n  output %y\n}\n",
       3},
      {"welford over three dims, of which the last two are one range",
       "graph @g {\n  input %x : f32[2,3,6,8]\n"
       "  %m, %v : f32[2], f32[2] = reduce welford(%x) over [3,5,8] { %x[i0, r0, r1, r2] }\n  output %m, %v\n}\n",
       2},
      {"through an inlined elementwise producer",
       "graph @g {\n  input %x : f32[3,6,40]\n"
       "  %e : f32[3,6,40] = elementwise(%x) { exp(%x[i0, i1, i2]) }\n"
       "  %y : f32[3] = reduce sum(%e) over [6,40] { %e[i0, r0, r1] }\n  output %y\n}\n",
       2},
      {"from a value the kernel also outputs",
       "graph @g {\n  input %x : f32[3,6,40]\n"
       "  %e : f32[3,6,40] = elementwise(%x) { mul(%x[i0, i1, i2], 2:f32) }\n"
       "  %y : f32[3] = reduce max(%e) over [6,40] { %e[i0, r0, r1] }\n  output %e, %y\n}\n",
       2},
      {"two loads, both one range",
       "graph @g {\n  input %x : f32[2,8,24]\n  input %w : f32[8,24]\n"
       "  %y : f32[2] = reduce sum(%x, %w) over [8,24] { mul(%x[i0, r0, r1], %w[r0, r1]) }\n  output %y\n}\n",
       2},
      {"integers over two dims, a tail of 5 past 16 lanes",
       "graph @g {\n  input %x : i32[4,3,7]\n"
       "  %y : i32[4] = reduce sum(%x) over [3,7] { %x[i0, r0, r1] }\n  output %y\n}\n",
       2},
      {"a product over two dims",
       "graph @g {\n  input %x : f32[4,3,11]\n"
       "  %y : f32[4] = reduce prod(%x) over [3,11] { add(mul(%x[i0, r0, r1], 0.01:f32), 1:f32) }\n  output %y\n}\n",
       2},
      {"a matmul's tile, its rows 48 floats apart, summed over 6 x 40",
       "graph @g {\n  input %a : f32[3,6,32]\n  input %b : f32[32,40]\n"
       "  %m : f32[3,6,40] = matmul(%a, %b) {trans_a=false, trans_b=false}\n"
       "  %y : f32[3] = reduce sum(%m) over [6,40] { %m[i0, r0, r1] }\n  output %y\n}\n",
       1},
      {"read transposed",
       "graph @g {\n  input %x : f32[2,40,6]\n"
       "  %y : f32[2] = reduce sum(%x) over [6,40] { %x[i0, r1, r0] }\n  output %y\n}\n",
       1},
      {"part of each row",
       "graph @g {\n  input %x : f32[2,10,40]\n"
       "  %y : f32[2] = reduce max(%x) over [10,33] { %x[i0, r0, r1] }\n  output %y\n}\n",
       1},
      {"a variable used as a number",
       "graph @g {\n  input %x : f32[2,8,40]\n"
       "  %y : f32[2] = reduce sum(%x) over [8,40] { select(lt(r1, 20), %x[i0, r0, r1], 0:f32) }\n  output %y\n}\n",
       1},
      {"one load a range, the other along the outer dim only",
       "graph @g {\n  input %x : f32[2,8,40]\n  input %w : f32[8]\n"
       "  %y : f32[2] = reduce sum(%x, %w) over [8,40] { mul(%x[i0, r0, r1], %w[r0]) }\n  output %y\n}\n",
       1},
      {"through an inlined slice",
       "graph @g {\n  input %x : f32[3,6,41]\n"
       "  %e : f32[3,6,40] = layout(%x) { %x[i0, i1, add(i2, 1)] }\n"
       "  %y : f32[3] = reduce sum(%e) over [6,40] { %e[i0, r0, r1] }\n  output %y\n}\n",
       1},
  };
}

int32_t reduce_run_of(const ir::Graph& g, const KernelLowering& kl) {
  for (const NodeLowering& nl : kl.nodes)
    if (!g.node(nl.node).reduce_domain.empty()) return nl.reduce_run;
  return 0;
}

TEST(ReductionRuns, TrailingDimsReadAsOneRangeAreOneRun) {
  for (const RunCase& c : run_cases()) {
    SCOPED_TRACE(c.what);
    ir::Graph g = ir::parse_graph(c.text);
    tile::Kernel k = whole_kernel(g);
    Schedule s = default_schedule(g, k, 2);
    KernelLowering kl = lower_kernel(g, k, s);
    EXPECT_EQ(reduce_run_of(g, kl), c.run);
    // The dims before a run are looped over, those of the run but the last are not.
    GeneratedKernel gk = generate_kernel(g, k, s, "orc_run");
    int32_t dims = static_cast<int32_t>(g.node(ir::NodeId(g.num_nodes() - 1)).reduce_domain.size());
    for (int32_t d = 0; c.run > 1 && d + 1 < dims; ++d) {
      bool looped = gk.source.find("for (int64_t r" + std::to_string(d) + " = ") != std::string::npos;
      EXPECT_EQ(looped, d < dims - c.run) << "r" << d << "\n" << gk.source;
    }
  }
}

TEST(ReductionRuns, MatchInterpreter) {
  std::vector<RunCase> runs = run_cases();
  std::vector<Case> cases;
  for (size_t i = 0; i < runs.size(); ++i)
    for (int rep = 0; rep < 4; ++rep) {
      SCOPED_TRACE(runs[i].what);
      auto pick = [rep](const ir::Graph& g, const tile::Kernel& k, Rng& rng) {
        if (rep >= 2) return random_schedule(g, k, rng);
        Schedule s = default_schedule(g, k, 2);
        s.inline_single_use = rep == 0;  // rep 1: producers computed into scratch
        return s;
      };
      cases.push_back(make_case(97000 + 10 * i + rep, runs[i].text, pick, "orc_u" + std::to_string(cases.size())));
    }
  check_cases(cases);
}

}  // namespace
}  // namespace orchid::codegen::cpu
