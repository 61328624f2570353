// Reduced-precision storage: which values are stored in 16 bits and which stay f32, and the
// converted graph computes the original function within the rounding of its storage.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "interp/compare.h"
#include "interp/interp.h"
#include "interp/random_inputs.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "rewrite/store_precision.h"

namespace orchid::rewrite {
namespace {

using ir::DType;

// A projection with bias and relu, its transpose, a softmax over rows, positions computed
// from indices, and an index read from a float tensor.
constexpr const char* kGraph = R"(
graph @g {
  input %x : f32[8,16]
  input %pos : f32[8,32]
  const %w : f32[16,32] = splat(0.125)
  const %b : f32[32] = splat(0.5)
  %h : f32[8,32] = matmul(%x, %w) {trans_a=false, trans_b=false}
  %a : f32[8,32] = elementwise(%h, %b) { max(add(%h[i0, i1], %b[i1]), 0:f32) }
  %t : f32[32,8] = layout(%a) { %a[i1, i0] }
  %m : f32[32,1] = reduce max(%t) over [8] { %t[i0, r0] }
  %e : f32[32,8] = elementwise(%t, %m) { exp(sub(%t[i0, i1], %m[i0, 0])) }
  %s : f32[32,1] = reduce sum(%e) over [8] { %e[i0, r0] }
  %y : f32[32,8] = elementwise(%e, %s) { div(%e[i0, i1], %s[i0, 0]) }
  %iota : f32[8,32] = elementwise() { cast<f32>(add(mul(i0, 32), i1)) }
  %q : f32[8,32] = elementwise(%iota, %a) { add(%iota[i0, i1], %a[i0, i1]) }
  %k : f32[8,32] = elementwise(%pos) { mul(%pos[i0, i1], 4:f32) }
  %ki : i64[8,32] = elementwise(%k) { cast<i64>(min(max(%k[i0, i1], 0:f32), 31:f32)) }
  %g : f32[8,32] = layout(%pos, %ki) { %pos[i0, %ki[i0, i1]] }
  output %y, %q, %g
}
)";

DType dtype_of(const ir::Graph& g, const char* name) { return g.type(*g.find_value(name)).dtype; }

TEST(StorePrecision, StoresComputedF32ValuesIn16BitsAndKeepsAccumulatorsAndTheInterface) {
  ir::Graph g = ir::parse_graph(kGraph);
  for (DType to : {DType::BF16, DType::F16}) {
    SCOPED_TRACE(ir::dtype_name(to));
    ir::Graph h = store_floats_as(g, to);
    EXPECT_EQ(dtype_of(h, "w"), to);  // weights
    EXPECT_EQ(dtype_of(h, "h"), to);  // a product, operands read in `to`
    EXPECT_EQ(dtype_of(h, ("x." + std::string(ir::dtype_name(to))).c_str()), to);  // x cast for the product
    EXPECT_EQ(dtype_of(h, "a"), to);  // elementwise
    EXPECT_EQ(dtype_of(h, "t"), to);  // movement follows its input
    EXPECT_EQ(dtype_of(h, "e"), to);
    EXPECT_EQ(dtype_of(h, "m"), DType::F32);     // reductions
    EXPECT_EQ(dtype_of(h, "s"), DType::F32);
    EXPECT_EQ(dtype_of(h, "iota"), DType::F32);  // from indices alone
    EXPECT_EQ(dtype_of(h, "k"), DType::F32);     // cast to an index
    for (const char* out : {"y", "q", "g"}) EXPECT_EQ(dtype_of(h, out), DType::F32) << out;  // the interface
    EXPECT_EQ(dtype_of(h, "x"), DType::F32);
    ASSERT_EQ(h.outputs().size(), 3u);
    EXPECT_EQ(h.value(h.outputs()[0]).name, "y");
    EXPECT_EQ(h.value(h.outputs()[1]).name, "q");
    EXPECT_EQ(h.value(h.outputs()[2]).name, "g");
  }
}

// The converted graph in its own precision against the original in f64, on seeded inputs:
// close (bf16 keeps 8 bits, f16 11), and not equal (the values were rounded).
TEST(StorePrecision, ComputesTheOriginalFunctionWithinTheRoundingOfItsStorage) {
  ir::Graph g = ir::parse_graph(kGraph);
  auto in = interp::random_inputs(g, 7);
  std::vector<ir::Tensor> want = interp::run(g, in);
  for (auto [to, bound] : {std::pair{DType::BF16, 2e-2}, std::pair{DType::F16, 3e-3}}) {
    SCOPED_TRACE(ir::dtype_name(to));
    ir::Graph h = store_floats_as(g, to);
    std::vector<ir::Tensor> got = interp::run(h, in, {interp::Precision::Own});
    ASSERT_EQ(got.size(), want.size());
    double largest = 0;
    for (size_t k = 0; k < got.size(); ++k) {
      std::string why;
      double err = interp::relative_l2(got[k], want[k], &why);
      EXPECT_EQ(why, "");
      EXPECT_LT(err, bound) << "output " << k;
      largest = std::max(largest, err);
    }
    EXPECT_GT(largest, 1e-5);
    std::printf("stored in %s: largest relative L2 error %.2e\n", std::string(ir::dtype_name(to)).c_str(), largest);
  }
}

// Exact values stay exact: a constant index table and a value moved by a view before it is
// cast to an index keep f32. Beyond f16's range: a finite constant saturates rather than
// becoming infinite, a body holding one keeps its result f32, and a predicated load's fill
// stays an f32 constant outside the cast.
TEST(StorePrecision, IndicesStayExactAndF16SaturatesWhatItCannotHold) {
  ir::Graph g = ir::parse_graph(R"(
graph @g {
  input %x : f32[4,300]
  input %m : f32[4,300]
  const %table : f32[300] = splat(2049)
  const %big : f32[300] = splat(-1e9)
  %ti : i64[300] = elementwise(%table) { cast<i64>(%table[i0]) }
  %r : f32[4,300] = elementwise(%x) { floor(mul(%x[i0, i1], 100:f32)) }
  %rv : f32[1200] = view(%r)
  %ri : i64[1200] = elementwise(%rv) { cast<i64>(%rv[i0]) }
  %mask : f32[4,300] = elementwise(%m) { mul(%m[i0, i1], -1e9:f32) }
  %sm : f32[4,300] = elementwise(%x, %mask) { add(%x[i0, i1], %mask[i0, i1]) }
  %b : f32[4,300] = elementwise(%x, %big) { add(%x[i0, i1], %big[i1]) }
  %x2 : f32[4,300] = elementwise(%x) { mul(%x[i0, i1], 2:f32) }
  %pool : f32[4,1] = reduce max(%x2) over [302] { %x2[i0, sub(r0, 1)] if and(ge(r0, 1), lt(r0, 301)) else -3e38:f32 }
  output %ti, %ri, %sm, %b, %pool
}
)");
  ir::Graph h = store_floats_as(g, DType::F16);
  EXPECT_EQ(dtype_of(h, "table"), DType::F32);
  EXPECT_EQ(dtype_of(h, "r"), DType::F32);  // moved by a view, then cast to an index
  EXPECT_EQ(dtype_of(h, "rv"), DType::F32);
  EXPECT_EQ(dtype_of(h, "big"), DType::F16);
  EXPECT_EQ(h.constant(*h.find_value("big")).get_f64(0), -65504.0);
  EXPECT_EQ(dtype_of(h, "mask"), DType::F32);  // its body holds -1e9
  EXPECT_EQ(dtype_of(h, "x2"), DType::F16);
  std::string text = ir::print_graph(h);
  EXPECT_NE(text.find("-3e+38:f32"), std::string::npos) << text;
  auto in = interp::random_inputs(g, 3);
  std::vector<ir::Tensor> want = interp::run(g, in), got = interp::run(h, in, {interp::Precision::Own});
  EXPECT_EQ(got[0], want[0]);  // the index table, exactly
  EXPECT_EQ(got[1], want[1]);  // the floored values, exactly
  for (size_t k = 2; k < got.size(); ++k)
    for (int64_t i = 0; i < got[k].numel(); ++i)
      EXPECT_EQ(std::isfinite(got[k].get_f64(i)), std::isfinite(want[k].get_f64(i))) << "output " << k << " at " << i;
}

TEST(StorePrecision, LeavesGraphsWithoutF32ValuesAsTheyAre) {
  ir::Graph g = ir::parse_graph(R"(
graph @g {
  input %x : f16[4]
  input %n : i64[4]
  %y : f16[4] = elementwise(%x) { exp(%x[i0]) }
  %m : i64[4] = elementwise(%n) { add(%n[i0], 1) }
  output %y, %m
}
)");
  EXPECT_EQ(ir::print_graph(store_floats_as(g, DType::BF16)), ir::print_graph(g));
}

// Elementwise epilogues are written cast(dtype, f32 arithmetic on cast(f32, loads)): the form
// GPU library patterns read under the rounding (tests/cuda_compile/lt_matmul_test.cpp).
TEST(StorePrecision, EpiloguesComputeInF32BetweenCasts) {
  ir::Graph g = ir::parse_graph(R"(
graph @g {
  input %x : f32[8,16]
  input %w : f32[16,32]
  %h : f32[8,32] = matmul(%x, %w) {trans_a=false, trans_b=false}
  %c : f32[8,32] = elementwise(%h) { mul(%h[i0, i1], 2:f32) }
  %y : f32[8,32] = elementwise(%c) { max(%c[i0, i1], 0:f32) }
  output %y
}
)");
  std::string text = ir::print_graph(store_floats_as(g, DType::BF16));
  EXPECT_NE(text.find("cast<bf16>(mul(cast<f32>(%h[i0, i1]), 2:f32))"), std::string::npos) << text;
  EXPECT_NE(text.find("max(cast<f32>(%c[i0, i1]), 0:f32)"), std::string::npos) << text;  // y: an output, f32
}

}  // namespace
}  // namespace orchid::rewrite
