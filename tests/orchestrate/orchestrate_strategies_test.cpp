// The solver-free orchestration strategies (primitive, per-op, greedy): every result is a
// valid partition on hundreds of seeded random graphs; exact groupings on small graphs in
// text IR (softmax, layer normalisation, matmul epilogues, conv chains, shared values,
// opaque primitives); per-op on a fissioned ONNX model; and the checker's messages on bad
// partitions.
#include <gtest/gtest.h>

#include <iostream>

#include "ir/movement.h"
#include "ir/parser.h"
#include "orchestrate/strategies.h"
#include "support/error.h"
#include "support/random.h"
#include "testlib/onnx_builder.h"
#include "testlib/random_graph.h"

namespace orchid::orchestrate {
namespace {

using ir::DType;
using ir::NodeId;
using ir::ValueId;
using tile::Kernel;

constexpr Strategy kAll[] = {Strategy::Primitive, Strategy::PerOp, Strategy::Greedy};

// Each kernel as the names of its nodes' first outputs, then "->" and its outputs' names.
std::vector<std::string> describe(const ir::Graph& g, const std::vector<Kernel>& ks) {
  std::vector<std::string> out;
  for (const Kernel& k : ks) {
    std::string s;
    for (NodeId n : k.nodes) s += (s.empty() ? "" : " ") + g.value(g.node(n).outputs[0]).name;
    s += " ->";
    for (ValueId v : k.outputs) s += " " + g.value(v).name;
    out.push_back(s);
  }
  return out;
}

std::vector<std::string> greedy(const std::string& text) {
  ir::Graph g = ir::parse_graph(text);
  return describe(g, orchestrate(g, Strategy::Greedy));
}

std::string problems_of(const ir::Graph& g, const std::vector<Kernel>& ks) {
  std::string all;
  for (const std::string& p : kernel_problems(g, ks)) all += p + "\n";
  return all;
}

TEST(Strategies, NamesRoundTrip) {
  for (Strategy s : kAll) EXPECT_EQ(parse_strategy(strategy_name(s)), s);
  EXPECT_EQ(strategy_name(Strategy::PerOp), "per-op");
  EXPECT_EQ(parse_strategy("optimal"), Strategy::Optimal);
  EXPECT_FALSE(parse_strategy("best"));
  EXPECT_FALSE(parse_strategy("Greedy"));
}

TEST(Strategies, OptimalIsTheDefaultWhereKernelsAreMeasuredOnTheCpu) {
  EXPECT_EQ(default_strategy(false, true), Strategy::Optimal);
  EXPECT_EQ(default_strategy(false, false), Strategy::Greedy);
  EXPECT_EQ(default_strategy(true, true), Strategy::Greedy);
  EXPECT_EQ(default_strategy(true, false), Strategy::Greedy);
}

// check_kernels holds for every strategy on random graphs of up to 30 nodes; primitive gives
// one kernel per node; results are deterministic. Prints how much greedy and per-op fuse.
TEST(Strategies, ValidOnRandomGraphs) {
  int64_t nodes = 0, greedy_kernels = 0, per_op_kernels = 0;
  for (uint64_t seed = 0; seed < 320; ++seed) {
    testlib::RandomGraphOptions opts;
    opts.max_nodes = 1 + static_cast<int>(seed % 30);
    opts.min_nodes = std::min(opts.max_nodes, 1 + static_cast<int>(seed % 7));
    ir::Graph g = testlib::random_graph(seed, opts);
    for (Strategy s : kAll) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " strategy " + std::string(strategy_name(s)));
      std::vector<Kernel> ks = orchestrate(g, s);
      EXPECT_EQ(problems_of(g, ks), "");
      EXPECT_EQ(describe(g, ks), describe(g, orchestrate(g, s)));
      if (s == Strategy::Primitive) {
        EXPECT_EQ(static_cast<int32_t>(ks.size()), g.num_nodes());
      }
      if (s == Strategy::Greedy) greedy_kernels += static_cast<int64_t>(ks.size());
      if (s == Strategy::PerOp) per_op_kernels += static_cast<int64_t>(ks.size());
    }
    nodes += g.num_nodes();
  }
  std::cout << "random graphs: " << nodes << " primitives; greedy " << greedy_kernels << " kernels ("
            << 100.0 * static_cast<double>(nodes - greedy_kernels) / static_cast<double>(nodes)
            << "% of primitives fused away), per-op " << per_op_kernels << " kernels\n";
}

// Greedy's structural promises on any graph: a linear primitive shares its kernel with no
// reduction, and is the first node of its kernel (it absorbs no prologue) unless it is a conv
// whose prologue is views and permutations; in a conv's kernel no elementwise node follows a
// view or permutation of its result.
void expect_greedy_rules(const ir::Graph& g, const std::vector<Kernel>& ks) {
  for (const Kernel& k : ks) {
    bool linear = false, reduction = false, moved = false;
    for (size_t j = 0; j < k.nodes.size(); ++j) {
      const ir::Primitive& p = g.node(k.nodes[j]);
      bool movement = ir::is_movement(g, k.nodes[j]);
      if (p.kind() == ir::PrimKind::Linear) {
        linear = true;
        for (size_t i = 0; i < j; ++i)
          EXPECT_TRUE(p.op == ir::PrimOp::Conv && ir::is_movement(g, k.nodes[i]))
              << "linear node " << k.nodes[j].v << " has a prologue of more than views and permutations";
      } else if (linear) {
        EXPECT_FALSE(moved && p.op == ir::PrimOp::Elementwise) << "node " << k.nodes[j].v << " follows a permutation";
        moved |= movement;
      }
      reduction |= p.op == ir::PrimOp::Reduce;
    }
    EXPECT_FALSE(linear && reduction) << "kernel of node " << k.nodes[0].v;
  }
}

TEST(Strategies, GreedyRulesAndPerOpPiecesOnRandomGraphs) {
  const std::string names[] = {"a", "b", "c", ""};
  for (uint64_t seed = 1000; seed < 1300; ++seed) {
    testlib::RandomGraphOptions opts;
    opts.max_nodes = 2 + static_cast<int>(seed % 29);
    ir::Graph g = testlib::random_graph(seed, opts);
    SCOPED_TRACE("seed " + std::to_string(seed));
    expect_greedy_rules(g, orchestrate(g, Strategy::Greedy));
    // Provenance drawn from a small pool: per-op must split same-name nodes into convex pieces.
    Rng rng(seed);
    for (int32_t n = 0; n < g.num_nodes(); ++n) g.mutable_node(NodeId(n)).name = names[rng.range(0, 4)];
    std::vector<Kernel> ks = orchestrate(g, Strategy::PerOp);
    EXPECT_EQ(problems_of(g, ks), "");
    for (const Kernel& k : ks) {
      for (NodeId n : k.nodes) EXPECT_EQ(g.node(n).name, g.node(k.nodes[0]).name);
      if (g.node(k.nodes[0]).name.empty()) {
        EXPECT_EQ(k.nodes.size(), 1u);
      }
    }
  }
}

// Primitives of one op that do not form a convex set are split into convex pieces.
TEST(Strategies, PerOpSplitsANonConvexOpIntoConvexPieces) {
  ir::Graph g = ir::parse_graph(R"(graph @g {
    input %x : f32[4]
    %a : f32[4] = elementwise(%x) { exp(%x[i0]) } from "op"
    %b : f32[4] = elementwise(%a) { neg(%a[i0]) } from "other"
    %c : f32[4] = elementwise(%a, %b) { add(%a[i0], %b[i0]) } from "op"
    %d : f32[4] = elementwise(%x) { abs(%x[i0]) } from "op"
    %e : f32[4] = elementwise(%c) { exp(%c[i0]) }
    %f : f32[4] = elementwise(%e) { exp(%e[i0]) }
    output %c, %d, %f
  })");
  // a, c with b between them is not convex; d joins c (latest piece of "op" first); nodes
  // without provenance are alone.
  EXPECT_EQ(describe(g, orchestrate(g, Strategy::PerOp)),
            (std::vector<std::string>{"a -> a", "b -> b", "c d -> c d", "e -> e", "f -> f"}));
}

const char* kSoftmax = R"(graph @softmax {
  input %x : f32[4,8]
  %m : f32[4,1] = reduce max(%x) over [8] { %x[i0, r0] }
  %mb : f32[4,8] = broadcast(%m) { %m[i0, 0] }
  %d : f32[4,8] = elementwise(%x, %mb) { sub(%x[i0, i1], %mb[i0, i1]) }
  %e : f32[4,8] = elementwise(%d) { exp(%d[i0, i1]) }
  %s : f32[4,1] = reduce sum(%e) over [8] { %e[i0, r0] }
  %sb : f32[4,8] = broadcast(%s) { %s[i0, 0] }
  %p : f32[4,8] = elementwise(%e, %sb) { div(%e[i0, i1], %sb[i0, i1]) }
  output %p
})";

TEST(Greedy, SoftmaxIsOneKernel) {
  EXPECT_EQ(greedy(kSoftmax), (std::vector<std::string>{"m mb d e s sb p -> p"}));
}

TEST(Greedy, SoftmaxOfAProducedValueTakesItsProducer) {
  // The input's producer is injective: both reductions and the epilogue join it; a reduction
  // without kept dims ([2,3]) and one with ([2,3,1]) have the same rows.
  EXPECT_EQ(greedy(R"(graph @g {
    input %x : f32[2,3,8]
    %t : f32[2,3,8] = elementwise(%x) { mul(%x[i0, i1, i2], 0.5:f32) }
    %m : f32[2,3] = reduce max(%t) over [8] { %t[i0, i1, r0] }
    %mb : f32[2,3,8] = broadcast(%m) { %m[i0, i1] }
    %e : f32[2,3,8] = elementwise(%t, %mb) { exp(sub(%t[i0, i1, i2], %mb[i0, i1, i2])) }
    %s : f32[2,3,1] = reduce sum(%e) over [8] { %e[i0, i1, r0] }
    %p : f32[2,3,8] = elementwise(%e, %s) { div(%e[i0, i1, i2], %s[i0, i1, 0]) }
    output %p
  })"),
            (std::vector<std::string>{"t m mb e s p -> p"}));
}

TEST(Greedy, LayerNormIsOneKernel) {
  EXPECT_EQ(greedy(R"(graph @ln {
    input %x : f32[4,16]
    const %g : f32[16] = splat(1.5)
    const %b : f32[16] = splat(0.25)
    %mu, %var : f32[4,1], f32[4,1] = reduce welford(%x) over [16] { %x[i0, r0] }
    %inv : f32[4,1] = elementwise(%var) { rsqrt(add(%var[i0, i1], 0.00001:f32)) }
    %y : f32[4,16] = elementwise(%x, %mu, %inv, %g, %b) { add(mul(mul(sub(%x[i0, i1], %mu[i0, 0]), %inv[i0, 0]), %g[i1]), %b[i1]) }
    output %y
  })"),
            (std::vector<std::string>{"mu inv y -> y"}));
}

TEST(Greedy, TwoPassLayerNormIsOneKernel) {
  // ONNX's older export: ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div over the last two
  // axes; the reductions have rows [2].
  EXPECT_EQ(greedy(R"(graph @ln {
    input %x : f32[2,3,4]
    %s : f32[2,1,1] = reduce sum(%x) over [3,4] { %x[i0, r0, r1] }
    %mean : f32[2,1,1] = elementwise(%s) { div(%s[i0, i1, i2], 12:f32) }
    %d : f32[2,3,4] = elementwise(%x, %mean) { sub(%x[i0, i1, i2], %mean[i0, 0, 0]) }
    %q : f32[2,3,4] = elementwise(%d) { mul(%d[i0, i1, i2], %d[i0, i1, i2]) }
    %v : f32[2,1,1] = reduce sum(%q) over [3,4] { div(%q[i0, r0, r1], 12:f32) }
    %sd : f32[2,1,1] = elementwise(%v) { sqrt(add(%v[i0, i1, i2], 0.00001:f32)) }
    %y : f32[2,3,4] = elementwise(%d, %sd) { div(%d[i0, i1, i2], %sd[i0, 0, 0]) }
    output %y
  })"),
            (std::vector<std::string>{"s mean d q v sd y -> y"}));
}

TEST(Greedy, ReductionsOverDifferentRowsAreSeparate) {
  // Rows [2,3] then rows [2]: the second reduction starts a kernel; %e is read by it.
  EXPECT_EQ(greedy(R"(graph @g {
    input %x : f32[2,3,4]
    %m : f32[2,3,1] = reduce max(%x) over [4] { %x[i0, i1, r0] }
    %e : f32[2,3,4] = elementwise(%x, %m) { exp(sub(%x[i0, i1, i2], %m[i0, i1, 0])) }
    %s : f32[2,1,1] = reduce sum(%e) over [3,4] { %e[i0, r0, r1] }
    output %s
  })"),
            (std::vector<std::string>{"m e -> e", "s -> s"}));
}

TEST(Greedy, SoftmaxOverAMiddleAxisIsTwoKernels) {
  // Reducing axis 1 of [2,5,3] keeps dim 2: not a row reduction, so the sum starts a kernel.
  EXPECT_EQ(greedy(R"(graph @g {
    input %x : f32[2,5,3]
    %m : f32[2,1,3] = reduce max(%x) over [5] { %x[i0, r0, i2] }
    %e : f32[2,5,3] = elementwise(%x, %m) { exp(sub(%x[i0, i1, i2], %m[i0, 0, i2])) }
    %s : f32[2,1,3] = reduce sum(%e) over [5] { %e[i0, r0, i2] }
    %p : f32[2,5,3] = elementwise(%e, %s) { div(%e[i0, i1, i2], %s[i0, 0, i2]) }
    output %p
  })"),
            (std::vector<std::string>{"m e -> e", "s p -> p"}));
}

TEST(Greedy, MatMulBiasReluIsOneKernel) {
  EXPECT_EQ(greedy(R"(graph @g {
    input %x : f32[8,16]
    const %w : f32[16,32] = splat(0.5)
    const %bias : f32[32] = splat(0.1)
    %m : f32[8,32] = matmul(%x, %w) {trans_a=false, trans_b=false}
    %a : f32[8,32] = elementwise(%m, %bias) { add(%m[i0, i1], %bias[i1]) }
    %r : f32[8,32] = elementwise(%a) { max(%a[i0, i1], 0:f32) }
    output %r
  })"),
            (std::vector<std::string>{"m a r -> r"}));
}

const char* kConvReluConv = R"(graph @g {
  input %x : f32[1,3,8,8]
  const %w1 : f32[4,3,3,3] = splat(0.1)
  const %w2 : f32[4,4,3,3] = splat(0.1)
  %c1 : f32[1,4,8,8] = conv(%x, %w1) {strides=[1,1], dilations=[1,1], pads_begin=[1,1], pads_end=[1,1], groups=1}
  %r : f32[1,4,8,8] = elementwise(%c1) { max(%c1[i0, i1, i2, i3], 0:f32) }
  %c2 : f32[1,4,8,8] = conv(%r, %w2) {strides=[1,1], dilations=[1,1], pads_begin=[1,1], pads_end=[1,1], groups=1}
  output %c2
})";

TEST(Greedy, ConvReluConvIsTwoKernels) {
  EXPECT_EQ(greedy(kConvReluConv), (std::vector<std::string>{"c1 r -> r", "c2 -> c2"}));
}

TEST(Greedy, LinearAbsorbsNoPrologueAndNoReduction) {
  EXPECT_EQ(greedy(R"(graph @g {
    input %x : f32[8,16]
    const %w : f32[16,4] = splat(0.5)
    %t : f32[8,16] = elementwise(%x) { exp(%x[i0, i1]) }
    %m : f32[8,4] = matmul(%t, %w) {trans_a=false, trans_b=false}
    %s : f32[8,1] = reduce sum(%m) over [4] { %m[i0, r0] }
    %m2 : f32[8,4] = matmul(%t, %w) {trans_a=false, trans_b=false}
    output %s, %m2
  })"),
            (std::vector<std::string>{"t -> t", "m -> m", "s -> s", "m2 -> m2"}));
}

// A transformer's depthwise conv (Segformer's Mix-FFN): tokens [1, HW, C] permuted to
// [1, C, HW] and viewed as NCHW, the conv and its bias, then viewed and permuted back. The
// views and permutations on both sides join the conv's kernel (a oneDNN step reads and writes
// them in place through strides); the GELU after the permutation starts a kernel of its own,
// and a transpose feeding a conv leaves the producer that computes it (the exp here).
TEST(Greedy, ConvTakesThePermutationsAroundIt) {
  EXPECT_EQ(greedy(R"(graph @g {
    input %x : f32[1,16,8]
    const %w : f32[8,1,3,3] = splat(0.1)
    const %bias : f32[8,1,1] = splat(0.2)
    %e : f32[1,16,8] = elementwise(%x) { exp(%x[i0, i1, i2]) }
    %t : f32[1,8,16] = layout(%e) { %e[i0, i2, i1] }
    %v : f32[1,8,4,4] = view(%t)
    %c : f32[1,8,4,4] = conv(%v, %w) {strides=[1,1], dilations=[1,1], pads_begin=[1,1], pads_end=[1,1], groups=8}
    %cb : f32[1,8,4,4] = elementwise(%c, %bias) { add(%c[i0, i1, i2, i3], %bias[i1, 0, 0]) }
    %r : f32[1,8,16] = view(%cb)
    %y : f32[1,16,8] = layout(%r) { %r[i0, i2, i1] }
    %g : f32[1,16,8] = elementwise(%y) { mul(%y[i0, i1, i2], 0.5:f32) }
    output %g
  })"),
            (std::vector<std::string>{"e -> e", "t v c cb r y -> y", "g -> g"}));
  // A stage's output that is also the next stage's input (Segformer's features) stays a
  // kernel of its own: the conv's kernel would write two outputs.
  EXPECT_EQ(greedy(R"(graph @g {
    input %x : f32[1,16,8]
    const %w : f32[8,8,3,3] = splat(0.1)
    %t : f32[1,8,16] = layout(%x) { %x[i0, i2, i1] }
    %v : f32[1,8,4,4] = view(%t)
    %c : f32[1,8,4,4] = conv(%v, %w) {strides=[1,1], dilations=[1,1], pads_begin=[1,1], pads_end=[1,1], groups=1}
    %r : f32[1,8,16] = view(%c)
    %y : f32[1,16,8] = layout(%r) { %r[i0, i2, i1] }
    output %v, %c, %y
  })"),
            (std::vector<std::string>{"t v -> v", "c -> c", "r y -> y"}));
  // A view merging dims that the permutation left apart (EfficientViT's context) has no
  // strides: the transpose stays a kernel of its own; so does a permutation of the result
  // that strides cannot write.
  EXPECT_EQ(greedy(R"(graph @g {
    input %x : f32[1,4,16,4]
    const %w : f32[8,16,3,3] = splat(0.1)
    %t : f32[1,4,4,16] = layout(%x) { %x[i0, i1, i3, i2] }
    %v : f32[1,16,4,4] = view(%t)
    %c : f32[1,8,4,4] = conv(%v, %w) {strides=[1,1], dilations=[1,1], pads_begin=[1,1], pads_end=[1,1], groups=1}
    %a : f32[1,4,4,8] = view(%c)
    %p : f32[1,4,8,4] = layout(%a) { %a[i0, i1, i3, i2] }
    output %p
  })"),
            (std::vector<std::string>{"t v -> v", "c a -> a", "p -> p"}));
}

TEST(Greedy, ValueWithConsumersInTwoKernelsIsAnOutput) {
  // %r feeds the second matmul (a new kernel) and the add that joins that matmul's kernel:
  // both consumers share a kernel, but not %r's, so %r is written.
  EXPECT_EQ(greedy(R"(graph @g {
    input %x : f32[8,8]
    const %w : f32[8,8] = splat(0.5)
    %m : f32[8,8] = matmul(%x, %w) {trans_a=false, trans_b=false}
    %r : f32[8,8] = elementwise(%m) { max(%m[i0, i1], 0:f32) }
    %m2 : f32[8,8] = matmul(%r, %w) {trans_a=false, trans_b=false}
    %y : f32[8,8] = elementwise(%r, %m2) { add(%r[i0, i1], %m2[i0, i1]) }
    output %y
  })"),
            (std::vector<std::string>{"m r -> r", "m2 y -> y"}));
}

TEST(Greedy, ValueReadInsideAndOutsideItsKernelEndsTheKernel) {
  // %a is read by a reduction that could absorb it and by a layout that a reduction group
  // cannot take: %a is materialised, and its producer ends a kernel.
  EXPECT_EQ(greedy(R"(graph @g {
    input %x : f32[4,8]
    %a : f32[4,8] = elementwise(%x) { exp(%x[i0, i1]) }
    %s : f32[4,1] = reduce sum(%a) over [8] { %a[i0, r0] }
    %t : f32[8,4] = layout(%a) { %a[i1, i0] }
    output %s, %t
  })"),
            (std::vector<std::string>{"a -> a", "s -> s", "t -> t"}));
}

TEST(Greedy, KernelsStayOrderable) {
  // %ap could join the matmul's kernel without breaking its convexity, but that kernel would
  // then need %bp from the kernel that needs %a: a cycle. %ap starts a kernel.
  EXPECT_EQ(greedy(R"(graph @g {
    input %x : f32[4,4]
    %rb : f32[4,4] = elementwise(%x) { exp(%x[i0, i1]) }
    %a : f32[4,4] = matmul(%x, %x) {trans_a=false, trans_b=false}
    %b : f32[4,1] = reduce sum(%rb, %a) over [4] { add(%rb[i0, r0], %a[i0, r0]) }
    %bp : f32[4,4] = elementwise(%rb) { neg(%rb[i0, i1]) }
    %ap : f32[2,4,4] = elementwise(%a, %bp) { add(%a[i1, i2], %bp[i1, i2]) }
    output %b, %ap
  })"),
            (std::vector<std::string>{"a -> a", "rb b bp -> b bp", "ap -> ap"}));
}

TEST(Greedy, OpaqueIsAlone) {
  EXPECT_EQ(greedy(R"(graph @g {
    input %x : f32[4,8]
    %a : f32[4,8] = elementwise(%x) { exp(%x[i0, i1]) }
    %c : f32[4,8] = opaque cumsum(%a) {axis=1, exclusive=0, reverse=0}
    %b : f32[4,8] = elementwise(%c) { neg(%c[i0, i1]) }
    output %b
  })"),
            (std::vector<std::string>{"a -> a", "c -> c", "b -> b"}));
}

TEST(Greedy, GraphOutputsInsideAKernelAreWritten) {
  EXPECT_EQ(greedy(R"(graph @g {
    input %x : f32[4]
    %a : f32[4] = elementwise(%x) { exp(%x[i0]) }
    %b : f32[4] = elementwise(%a) { neg(%a[i0]) }
    output %a, %b
  })"),
            (std::vector<std::string>{"a b -> a b"}));
}

// A model of five ONNX nodes, fissioned: per-op gives one kernel per node, each holding
// exactly the primitives of that node.
TEST(PerOp, OneKernelPerOnnxNode) {
  testlib::OnnxModel m;
  m.opset = 17;
  m.inputs = {{"x", {DType::F32, {1, 2, 4, 4}}}};
  Rng rng(7);
  auto tensor = [&](ir::Dims shape) {
    ir::Tensor t({DType::F32, shape});
    for (int64_t i = 0; i < t.numel(); ++i) t.set_f64(i, rng.uniform(-1, 1));
    return t;
  };
  m.initializers = {{"w", tensor({3, 2, 3, 3})}, {"b", tensor({3})}, {"s", tensor({4})}, {"bb", tensor({4})}};
  using A = frontend::Attribute;
  m.nodes = {
      {"Conv", {"x", "w", "b"}, {"c"}, {{"pads", A(std::vector<int64_t>{1, 1, 1, 1})}}, "", "conv"},
      {"Relu", {"c"}, {"r"}, {}, "", "relu"},
      {"Softmax", {"r"}, {"p"}, {{"axis", A(int64_t{-1})}}, "", "softmax"},
      {"LayerNormalization", {"p", "s", "bb"}, {"y"}, {{"axis", A(int64_t{-1})}}, "", "ln"},
      {"Transpose", {"y"}, {"t"}, {{"perm", A(std::vector<int64_t>{0, 1, 3, 2})}}, "", "transpose"},
  };
  m.outputs = {"t"};
  ir::Graph g = testlib::import_model(m);
  std::vector<Kernel> ks = orchestrate(g, Strategy::PerOp);
  std::vector<std::string> names;
  for (const Kernel& k : ks) {
    names.push_back(g.node(k.nodes[0]).name);
    for (NodeId n : k.nodes) EXPECT_EQ(g.node(n).name, names.back());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"conv", "relu", "softmax", "ln", "transpose"}));
  EXPECT_GT(g.num_nodes(), 5);
  // Greedy fuses across ops: conv + bias + relu; softmax + layer norm (same rows). The view of
  // the bias depends on no input and stays apart.
  EXPECT_EQ(describe(g, orchestrate(g, Strategy::Greedy)),
            (std::vector<std::string>{"c/bias -> c/bias", "c/conv c r -> r",
                                      "p/max p/exp p/sum p y/moments0 y/inv_std_dev y -> y", "t -> t"}));
}

// ---- The checker rejects bad partitions with clear messages. ----

class CheckKernels : public ::testing::Test {
 protected:
  // %a -> %b -> %c, %a -> %c.
  ir::Graph g = ir::parse_graph(R"(graph @g {
    input %x : f32[4]
    %a : f32[4] = elementwise(%x) { exp(%x[i0]) }
    %b : f32[4] = elementwise(%a) { neg(%a[i0]) }
    %c : f32[4] = elementwise(%a, %b) { add(%a[i0], %b[i0]) }
    output %c
  })");
  ValueId a = *g.find_value("a"), b = *g.find_value("b"), c = *g.find_value("c");
};

TEST_F(CheckKernels, AcceptsAValidPartition) {
  EXPECT_NO_THROW(check_kernels(g, {{{NodeId(0), NodeId(1)}, {a, b}}, {{NodeId(2)}, {c}}}));
  EXPECT_NO_THROW(check_kernels(g, {{{NodeId(2), NodeId(1), NodeId(0)}, {c}}}));
}

TEST_F(CheckKernels, RejectsNonConvex) {
  std::vector<Kernel> ks = {{{NodeId(0), NodeId(2)}, {a, c}}, {{NodeId(1)}, {b}}};
  EXPECT_NE(problems_of(g, ks).find("kernel 0 is not convex: a path leaves it and re-enters at node 2 (%c = "
                                    "elementwise) through node 1 (%b = elementwise) of kernel 1"),
            std::string::npos)
      << problems_of(g, ks);
  EXPECT_THROW(check_kernels(g, ks), InternalError);
}

TEST_F(CheckKernels, RejectsMissingAndExtraOutputs) {
  EXPECT_EQ(problems_of(g, {{{NodeId(0), NodeId(1)}, {b}}, {{NodeId(2)}, {c}}}),
            "kernel 0 does not output %a, which kernel 1 reads (missing output)\n");
  EXPECT_EQ(problems_of(g, {{{NodeId(0), NodeId(1), NodeId(2)}, {}}}),
            "kernel 0 does not output %c, which is a graph output (missing output)\n");
  EXPECT_EQ(problems_of(g, {{{NodeId(0), NodeId(1), NodeId(2)}, {b, c}}}),
            "kernel 0 outputs %b, which no other kernel reads and the graph does not output (extra output)\n");
  EXPECT_EQ(problems_of(g, {{{NodeId(0), NodeId(1), NodeId(2)}, {c, c}}}), "kernel 0 lists output %c twice\n");
  EXPECT_EQ(problems_of(g, {{{NodeId(0), NodeId(1)}, {a, b, c}}, {{NodeId(2)}, {c}}}),
            "kernel 0 outputs %c, which none of its nodes computes\n");
}

TEST_F(CheckKernels, RejectsNodeTwiceOrMissing) {
  EXPECT_EQ(problems_of(g, {{{NodeId(0), NodeId(1)}, {a, b}}, {{NodeId(1), NodeId(2)}, {c}}}),
            "node 1 (%b = elementwise) is in kernel 0 and again in kernel 1\n");
  EXPECT_EQ(problems_of(g, {{{NodeId(0), NodeId(1)}, {a, b}}, {}}),
            "kernel 1 has no nodes\nnode 2 (%c = elementwise) is in no kernel\n");
  EXPECT_EQ(problems_of(g, {{{NodeId(0), NodeId(1), NodeId(2), NodeId(9)}, {c}}}),
            "kernel 0 names node 9, which the graph does not have (it has 3 nodes)\n");
}

TEST_F(CheckKernels, RejectsWrongOrder) {
  EXPECT_EQ(problems_of(g, {{{NodeId(2)}, {c}}, {{NodeId(0), NodeId(1)}, {a, b}}}),
            "kernel 0 reads %a before kernel 1 computes it (kernels out of topological order)\n"
            "kernel 0 reads %b before kernel 1 computes it (kernels out of topological order)\n");
}

TEST_F(CheckKernels, RejectsConvexKernelsThatNeedEachOther) {
  ir::Graph h = ir::parse_graph(R"(graph @h {
    input %x : f32[4]
    %a : f32[4] = elementwise(%x) { exp(%x[i0]) }
    %b : f32[4] = elementwise(%a) { neg(%a[i0]) }
    %bp : f32[4] = elementwise(%x) { abs(%x[i0]) }
    %ap : f32[4] = elementwise(%bp) { neg(%bp[i0]) }
    output %b, %ap
  })");
  auto v = [&](const char* name) { return *h.find_value(name); };
  // {a, ap} and {b, bp} are each convex, but need each other's outputs in either order.
  std::vector<Kernel> ks = {{{NodeId(0), NodeId(3)}, {v("a"), v("ap")}}, {{NodeId(1), NodeId(2)}, {v("b"), v("bp")}}};
  EXPECT_EQ(problems_of(h, ks), "kernel 0 reads %bp before kernel 1 computes it (kernels out of topological order)\n");
  std::swap(ks[0], ks[1]);
  EXPECT_EQ(problems_of(h, ks), "kernel 0 reads %a before kernel 1 computes it (kernels out of topological order)\n");
}

TEST(CheckKernelKinds, RejectsOpaqueWithOthersAndTwoLinear) {
  ir::Graph g = ir::parse_graph(R"(graph @g {
    input %x : f32[4,4]
    %m : f32[4,4] = matmul(%x, %x) {trans_a=false, trans_b=false} from "mm"
    %m2 : f32[4,4] = matmul(%m, %x) {trans_a=false, trans_b=false}
    %c : f32[4,4] = opaque cumsum(%m2) {axis=1, exclusive=0, reverse=0}
    output %c
  })");
  ValueId c = *g.find_value("c");
  EXPECT_EQ(problems_of(g, {{{NodeId(0), NodeId(1), NodeId(2)}, {c}}}),
            "kernel 0: opaque node 2 (%c = opaque) shares its kernel with other nodes (an opaque primitive is alone)\n"
            "kernel 0 holds 2 linear primitives (at most one): node 0 (%m = matmul, from \"mm\") and node 1 (%m2 = matmul)\n");
  try {
    check_kernels(g, {{{NodeId(0), NodeId(1), NodeId(2)}, {c}}});
    FAIL() << "no error";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("invalid orchestration of @g into 1 kernels:\n  kernel 0: opaque"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace orchid::orchestrate
