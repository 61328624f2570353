// Opaque routines (cumsum, topk) against reference loops.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "interp_test_util.h"
#include "support/random.h"

namespace orchid::interp::test {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Graph opaque_graph(OpaqueRoutine r, std::map<std::string, int64_t> params, TensorType in,
                   std::vector<TensorType> outs) {
  Primitive p;
  p.op = PrimOp::Opaque;
  p.attrs = OpaqueAttrs{r, std::move(params)};
  p.domain = outs[0].shape;
  p.name = "lib";
  return one_node({in}, p, outs);
}

TEST(CumSum, EveryAxisExclusiveAndReverse) {
  Dims shape = {3, 4, 5};
  Rng rng(7);
  std::vector<double> x;
  for (int k = 0; k < 60; ++k) x.push_back(std::round(rng.uniform(-10, 10)));
  Tensor in = tensor_f(DType::F32, shape, x);
  for (int64_t axis = 0; axis < 3; ++axis)
    for (int ex = 0; ex < 2; ++ex)
      for (int rev = 0; rev < 2; ++rev) {
        Graph g = opaque_graph(OpaqueRoutine::CumSum, {{"axis", axis}, {"exclusive", ex}, {"reverse", rev}},
                               {DType::F32, shape}, {{DType::F32, shape}});
        auto got = doubles(run(g, {in})[0]);
        Dims st = row_major_strides(shape);
        for (int64_t f = 0; f < 60; ++f) {
          int64_t pos = (f / st[static_cast<size_t>(axis)]) % shape[static_cast<size_t>(axis)];
          double want = 0;
          for (int64_t t = 0; t < shape[static_cast<size_t>(axis)]; ++t) {
            bool take = rev ? (ex ? t > pos : t >= pos) : (ex ? t < pos : t <= pos);
            if (take) want += x[static_cast<size_t>(f + (t - pos) * st[static_cast<size_t>(axis)])];
          }
          ASSERT_EQ(got[static_cast<size_t>(f)], want) << "axis " << axis << " ex " << ex << " rev " << rev;
        }
      }
}

TEST(CumSum, IntegersWrapAndOwnF16AccumulatesInF32) {
  Graph g = opaque_graph(OpaqueRoutine::CumSum, {{"axis", 0}, {"exclusive", 0}, {"reverse", 0}},
                         {DType::I8, {3}}, {{DType::I8, {3}}});
  EXPECT_EQ(ints(run(g, {tensor_i(DType::I8, {3}, {100, 100, -100})})[0]), (std::vector<int64_t>{100, -56, 100}));
  Graph h = opaque_graph(OpaqueRoutine::CumSum, {{"axis", 0}, {"exclusive", 0}, {"reverse", 0}},
                         {DType::F16, {4098}}, {{DType::F16, {4098}}});
  auto out = doubles(run(h, {tensor_f(DType::F16, {4098}, std::vector<double>(4098, 1.0))}, own())[0]);
  EXPECT_EQ(out[2047], 2048);
  EXPECT_EQ(out[4095], 4096);  // an f16 accumulator would be stuck at 2048
  EXPECT_EQ(out[4096], 4096);  // 4097 rounds to even in f16
}

std::vector<int64_t> ref_topk(const std::vector<double>& v, int64_t k, bool largest) {
  std::vector<int64_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  // NaN counts as larger than every number: first when largest, last when smallest.
  auto key = [&](int64_t i) { return std::isnan(v[static_cast<size_t>(i)]) ? 1e300 : v[static_cast<size_t>(i)]; };
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) {
    return largest ? key(a) > key(b) : key(a) < key(b);
  });
  idx.resize(static_cast<size_t>(k));
  return idx;
}

TEST(TopK, LargestAndSmallestWithTiesAndNaN) {
  std::vector<double> x = {3, 1, 4, 1, 5, kNaN, 2, 6, 5, 3};
  for (int largest = 0; largest < 2; ++largest)
    for (int64_t k : {1, 3, 10}) {
      Graph g = opaque_graph(OpaqueRoutine::TopK, {{"axis", 0}, {"k", k}, {"largest", largest}, {"sorted", 1}},
                             {DType::F32, {10}}, {{DType::F32, {k}}, {DType::I64, {k}}});
      auto out = run(g, {tensor_f(DType::F32, {10}, x)});
      std::vector<int64_t> want = ref_topk(x, k, largest);
      EXPECT_EQ(ints(out[1]), want) << "largest " << largest << " k " << k;
      for (int64_t t = 0; t < k; ++t)
        EXPECT_TRUE(same(doubles(out[0])[static_cast<size_t>(t)], static_cast<double>(static_cast<float>(x[static_cast<size_t>(want[static_cast<size_t>(t)])]))));
    }
}

TEST(TopK, MiddleAxisOfIntegers) {
  // x: [2, 4, 3]; top 2 along axis 1.
  std::vector<int64_t> x = {5, 1, 7, 5, 9, 7, 0, 9, 2, 3, 3, 3,
                            -1, -2, -3, -4, -5, -6, -1, -2, -3, 8, 8, 8};
  Graph g = opaque_graph(OpaqueRoutine::TopK, {{"axis", 1}, {"k", 2}, {"largest", 1}, {"sorted", 1}},
                         {DType::I32, {2, 4, 3}}, {{DType::I32, {2, 2, 3}}, {DType::I64, {2, 2, 3}}});
  auto out = run(g, {tensor_i(DType::I32, {2, 4, 3}, x)});
  EXPECT_EQ(ints(out[0]), (std::vector<int64_t>{5, 9, 7, 5, 9, 7, 8, 8, 8, -1, -2, -3}));
  EXPECT_EQ(ints(out[1]), (std::vector<int64_t>{0, 1, 0, 1, 2, 1, 3, 3, 3, 0, 0, 0}));
}

TEST(TopK, BadParameterIsAUserError) {
  Graph g = opaque_graph(OpaqueRoutine::TopK, {{"axis", 0}, {"k", 5}, {"largest", 1}, {"sorted", 1}},
                         {DType::F32, {3}}, {{DType::F32, {5}}, {DType::I64, {5}}});
  std::string msg = error_of(g, {tensor_f(DType::F32, {3}, {1, 2, 3})});
  EXPECT_NE(msg.find("parameter k=5 outside [1, 3]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("node 0 (%y0 = opaque, from \"lib\")"), std::string::npos) << msg;
}

}  // namespace
}  // namespace orchid::interp::test
