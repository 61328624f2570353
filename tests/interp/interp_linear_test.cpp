// Matmul and conv fast paths against naive loops, and against the generic evaluation of their
// own derived expressions.
#include <cmath>

#include "interp_test_util.h"
#include "support/random.h"

namespace orchid::interp::test {
namespace {

std::vector<double> random_values(int64_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<double> v;
  for (int64_t k = 0; k < n; ++k) v.push_back(static_cast<float>(rng.uniform(-1, 1)));
  return v;
}

Graph linear_graph(PrimOp op, PrimAttrs attrs, TensorType a, TensorType b, TensorType out) {
  Primitive p;
  p.op = op;
  p.attrs = std::move(attrs);
  p.name = "linear";
  return one_node({a, b}, p, {out});
}

// The same tensor expression as node 0 of g, evaluated as a generic reduce primitive.
Graph as_generic(const Graph& g) {
  Primitive p = g.node(NodeId(0));
  p.op = PrimOp::Reduce;
  p.attrs = NoAttrs{};
  return one_node({g.type(g.inputs()[0]), g.type(g.inputs()[1])}, p, {g.type(g.outputs()[0])});
}

// Naive batched matmul in double, k in order.
std::vector<double> naive_matmul(const std::vector<double>& a, const Dims& as, const std::vector<double>& b,
                                 const Dims& bs, const Dims& os, bool ta, bool tb) {
  size_t R = os.size();
  int64_t M = os[R - 2], N = os[R - 1];
  int64_t K = ta ? as[as.size() - 2] : as.back();
  Dims batch(os.begin(), os.end() - 2);
  std::vector<double> out;
  Dims idx(batch.size(), 0);
  for (int64_t bi = 0; bi < numel(batch); ++bi) {
    auto offset = [&](const Dims& s) {  // broadcast batch offset of an operand
      int64_t off = 0, stride = s[s.size() - 1] * s[s.size() - 2];
      for (size_t j = s.size() - 2; j-- > 0;) {
        size_t oj = j + (R - s.size());
        if (s[j] != 1) off += idx[oj] * stride;
        stride *= s[j];
      }
      return off;
    };
    int64_t oa = offset(as), ob = offset(bs);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k) {
          double x = a[static_cast<size_t>(oa + (ta ? k * M + m : m * K + k))];
          double y = b[static_cast<size_t>(ob + (tb ? n * K + k : k * N + n))];
          s += x * y;
        }
        out.push_back(s);
      }
    for (size_t j = batch.size(); j-- > 0;) {
      if (++idx[j] < batch[j]) break;
      idx[j] = 0;
    }
  }
  return out;
}

void check_matmul(Dims as, Dims bs, bool ta, bool tb, DType t = DType::F32) {
  MatMulAttrs attrs{ta, tb};
  TensorType at{t, as}, bt{t, bs};
  TensorType ot = matmul_result_type(at, bt, attrs);
  Graph g = linear_graph(PrimOp::MatMul, attrs, at, bt, ot);
  std::vector<double> a = random_values(numel(as), 1), b = random_values(numel(bs), 2);
  std::vector<Tensor> in = {tensor_f(t, as, a), tensor_f(t, bs, b)};
  a = doubles(in[0]), b = doubles(in[1]);  // as stored
  std::vector<double> want = naive_matmul(a, as, b, bs, ot.shape, ta, tb);
  std::string what = type_str(at) + " x " + type_str(bt) + (ta ? " ta" : "") + (tb ? " tb" : "");
  auto f64 = doubles(run(g, in, f64_out())[0]);
  auto own_out = doubles(run(g, in, own())[0]);
  auto generic = doubles(run(as_generic(g), in, f64_out())[0]);
  ASSERT_EQ(f64.size(), want.size()) << what;
  for (size_t k = 0; k < want.size(); ++k) {
    // The naive loop may be compiled with fused multiply-adds; the interpreter never fuses.
    ASSERT_NEAR(f64[k], want[k], 1e-12 * (1 + std::fabs(want[k]))) << what << " at " << k;
    ASSERT_TRUE(same(f64[k], generic[k])) << what << " at " << k << ": fast path != generic";
    ASSERT_EQ(own_out[k], round_to_dtype(f64[k], t)) << what << " at " << k << ": one rounding";
  }
}

TEST(MatMul, OddSizesAndTransposes) {
  for (int64_t M : {1, 7, 17, 100})
    for (int64_t N : {1, 7, 17, 100})
      for (int64_t K : {1, 7, 17, 100})
        for (int t = 0; t < 4; ++t) {
          bool ta = t & 1, tb = t & 2;
          check_matmul(ta ? Dims{K, M} : Dims{M, K}, tb ? Dims{N, K} : Dims{K, N}, ta, tb);
        }
}

TEST(MatMul, BatchBroadcasting) {
  check_matmul({2, 1, 7, 17}, {3, 17, 5}, false, false);
  check_matmul({4, 17, 7}, {1, 5, 17}, true, true);
  check_matmul({7, 17}, {2, 3, 17, 9}, false, false);
  check_matmul({2, 3, 7, 17}, {17, 9}, false, false);
  check_matmul({1, 3, 1, 7, 3}, {2, 1, 4, 3, 6}, false, false);
}

TEST(MatMul, LargerThanOneCacheBlock) {
  check_matmul({300, 520}, {520, 270}, false, false, DType::F64);
  check_matmul({130, 300}, {270, 300}, false, true, DType::F16);
}

TEST(MatMul, OneValueAsBothOperands) {
  // matmul(%x, %x) {trans_b}: the Gram matrix x · xᵀ.
  Graph g;
  ValueId x = g.add_input("x", {DType::F64, {3, 4}});
  Primitive p;
  p.op = PrimOp::MatMul;
  p.attrs = MatMulAttrs{false, true};
  p.inputs = {x, x};
  NodeId n = g.add_node(p, {{DType::F64, {3, 3}}}, {"gram"});
  g.set_outputs(g.node(n).outputs);
  std::vector<double> v = random_values(12, 9);
  auto out = doubles(run(g, {tensor_f(DType::F64, {3, 4}, v)})[0]);
  std::vector<double> want = naive_matmul(v, {3, 4}, v, {3, 4}, {3, 3}, false, true);
  ASSERT_EQ(out.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) EXPECT_NEAR(out[k], want[k], 1e-14) << k;
  EXPECT_EQ(out[1], out[3]);  // symmetric
}

TEST(MatMul, EmptyInnerDimensionGivesZeros) {
  Graph g = linear_graph(PrimOp::MatMul, MatMulAttrs{}, {DType::F32, {3, 0}}, {DType::F32, {0, 4}},
                         {DType::F32, {3, 4}});
  auto out = doubles(run(g, {Tensor({DType::F32, {3, 0}}), Tensor({DType::F32, {0, 4}})})[0]);
  EXPECT_EQ(out, std::vector<double>(12, 0.0));
}

TEST(MatMul, IntegersAreExactAndWrap) {
  Graph g = linear_graph(PrimOp::MatMul, MatMulAttrs{}, {DType::I8, {2, 3}}, {DType::I8, {3, 2}},
                         {DType::I8, {2, 2}});
  auto out = ints(run(g, {tensor_i(DType::I8, {2, 3}, {100, 100, 1, -1, 2, 3}),
                          tensor_i(DType::I8, {3, 2}, {1, 2, 1, 0, 5, 1})})[0]);
  // row 0: 100 + 100 + 5 = 205 -> -51; 200 + 0 + 1 = 201 -> -55. row 1: -1 + 2 + 15, -2 + 0 + 3.
  EXPECT_EQ(out, (std::vector<int64_t>{-51, -55, 16, 1}));
}

// Naive conv in double from the formula of docs/ir.md.
std::vector<double> naive_conv(const std::vector<double>& x, const Dims& xs, const std::vector<double>& w,
                               const Dims& ws, const Dims& os, const ConvAttrs& a) {
  size_t S = xs.size() - 2;
  int64_t cg = ws[1], kg = ws[0] / a.groups;
  Dims spatial_out(os.begin() + 2, os.end()), kernel(ws.begin() + 2, ws.end());
  std::vector<double> out;
  for (int64_t n = 0; n < os[0]; ++n)
    for (int64_t o = 0; o < os[1]; ++o)
      for (int64_t p = 0; p < numel(spatial_out); ++p) {
        Dims pi(S);
        for (int64_t rem = p, d = static_cast<int64_t>(S) - 1; d >= 0; --d)
          pi[static_cast<size_t>(d)] = rem % spatial_out[static_cast<size_t>(d)], rem /= spatial_out[static_cast<size_t>(d)];
        double s = 0;
        for (int64_t c = 0; c < cg; ++c)
          for (int64_t q = 0; q < numel(kernel); ++q) {
            Dims qi(S);
            for (int64_t rem = q, d = static_cast<int64_t>(S) - 1; d >= 0; --d)
              qi[static_cast<size_t>(d)] = rem % kernel[static_cast<size_t>(d)], rem /= kernel[static_cast<size_t>(d)];
            int64_t xoff = n * xs[1] + (o / kg) * cg + c;
            bool inside = true;
            for (size_t d = 0; d < S; ++d) {
              int64_t pos = pi[d] * a.strides[d] + qi[d] * a.dilations[d] - a.pads_begin[d];
              inside = inside && pos >= 0 && pos < xs[2 + d];
              xoff = xoff * xs[2 + d] + pos;
            }
            double xv = inside ? x[static_cast<size_t>(xoff)] : 0.0;
            s += xv * w[static_cast<size_t>((o * cg + c) * numel(kernel) + q)];
          }
        out.push_back(s);
      }
  return out;
}

void check_conv(Dims xs, Dims ws, ConvAttrs attrs) {
  TensorType xt{DType::F32, xs}, wt{DType::F32, ws};
  TensorType ot = conv_result_type(xt, wt, attrs);
  Graph g = linear_graph(PrimOp::Conv, attrs, xt, wt, ot);
  std::vector<Tensor> in = {tensor_f(DType::F32, xs, random_values(numel(xs), 3)),
                            tensor_f(DType::F32, ws, random_values(numel(ws), 4))};
  std::vector<double> want = naive_conv(doubles(in[0]), xs, doubles(in[1]), ws, ot.shape, attrs);
  auto f64 = doubles(run(g, in, f64_out())[0]);
  auto own_out = doubles(run(g, in, own())[0]);
  auto generic = doubles(run(as_generic(g), in, f64_out())[0]);
  std::string what = type_str(xt) + " * " + type_str(wt) + " groups " + std::to_string(attrs.groups);
  ASSERT_EQ(f64.size(), want.size()) << what;
  for (size_t k = 0; k < want.size(); ++k) {
    ASSERT_NEAR(f64[k], want[k], 1e-12 * (1 + std::fabs(want[k]))) << what << " at " << k;
    ASSERT_TRUE(same(f64[k], generic[k])) << what << " at " << k << ": fast path != generic";
    ASSERT_EQ(own_out[k], round_to_dtype(f64[k], DType::F32)) << what << " at " << k;
  }
}

TEST(Conv, OneDimensional) {
  check_conv({2, 4, 17}, {6, 4, 3}, {{1}, {1}, {0}, {0}, 1});
  check_conv({2, 4, 17}, {6, 2, 3}, {{2}, {1}, {1}, {2}, 2});
  check_conv({1, 3, 20}, {3, 1, 4}, {{3}, {2}, {3}, {1}, 3});  // depthwise
}

TEST(Conv, TwoDimensional) {
  check_conv({1, 3, 9, 7}, {5, 3, 3, 3}, {{1, 1}, {1, 1}, {1, 1}, {1, 1}, 1});
  check_conv({2, 6, 11, 8}, {4, 3, 3, 2}, {{2, 1}, {1, 2}, {0, 1}, {2, 0}, 2});
  check_conv({1, 8, 7, 7}, {8, 1, 3, 3}, {{1, 1}, {2, 2}, {2, 2}, {2, 2}, 8});
  check_conv({1, 2, 1, 1}, {3, 2, 1, 1}, {{1, 1}, {1, 1}, {0, 0}, {0, 0}, 1});
  check_conv({1, 4, 40, 40}, {8, 4, 5, 5}, {{1, 1}, {1, 1}, {2, 2}, {2, 2}, 1});
}

TEST(Conv, ThreeDimensional) {
  check_conv({1, 2, 5, 6, 7}, {3, 2, 2, 3, 2}, {{1, 2, 1}, {1, 1, 2}, {1, 0, 1}, {0, 1, 1}, 1});
  check_conv({2, 4, 4, 4, 4}, {4, 2, 3, 1, 3}, {{2, 1, 1}, {1, 1, 1}, {1, 0, 1}, {1, 0, 1}, 2});
}

}  // namespace
}  // namespace orchid::interp::test
