// Differential tests of GatherElements, GatherND, Compress and NonZero (rules_gather.cpp) over
// seeded random shapes, attributes, index dtypes and opset versions, against naive reference
// loops written from the ONNX text; and every error message of these rules.
#include <algorithm>

#include "layout_test_util.h"

namespace orchid::layout_test {
namespace {

using testlib::import_model;

void expect_output(const testlib::OnnxModel& m, const std::vector<Tensor>& in, const Tensor& want) {
  std::vector<Tensor> got = run_model(m, in);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(testlib::compare_tensors(got[0], want, 0, 0), "");
}

// Random indices in [-n(f), n(f)) for element f, of dtype t and shape s.
Tensor random_indices(Rng& rng, const TensorType& t, const std::function<int64_t(int64_t)>& n) {
  Tensor ind(t);
  for (int64_t f = 0; f < ind.numel(); ++f) ind.set_i64(f, rng.range(-n(f), n(f)));
  return ind;
}

// The indices as a graph input (given at run time) or an initializer, by coin.
void add_indices(Rng& rng, const Tensor& ind, std::vector<Arg>& args, std::vector<Tensor>& ins) {
  if (rng.coin()) {
    args.push_back(ind);
  } else {
    args.push_back(ind.type());
    ins.push_back(ind);
  }
}

TEST(CoverageGather, GatherElementsMatchesReference) {
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    SCOPED_TRACE(seed_trace("GatherElements", seed));
    Rng rng(seed);
    int64_t opset = seed % 2 ? 11 : 13;
    TensorType t{random_dtype(rng), random_shape(rng, 1, 4, 4)};
    auto rank = static_cast<int64_t>(t.shape.size());
    int64_t axis = rng.range(-rank, rank);
    size_t a = static_cast<size_t>(axis < 0 ? axis + rank : axis);
    Dims q = t.shape;
    for (size_t d = 0; d < q.size(); ++d)
      q[d] = d == a ? rng.range(1, 6) : rng.range(1, t.shape[d] + 1);
    TensorType it{rng.coin() ? DType::I32 : DType::I64, q};
    Tensor ind = random_indices(rng, it, [&](int64_t) { return t.shape[a]; });
    std::vector<Arg> args = {t};
    std::vector<Tensor> ins = {random_data(t, rng)};
    add_indices(rng, ind, args, ins);
    Tensor want = gather_ref(ins[0], q, [&](const Dims& i) {
      Dims j = i;
      int64_t k = ind.get_i64(testlib::flat_offset(q, i));
      j[a] = k < 0 ? k + t.shape[a] : k;
      return j;
    });
    Attrs attrs;
    if (axis != 0 || rng.coin()) attrs.push_back({"axis", axis});
    expect_output(node_model("GatherElements", args, 1, attrs, opset), ins, want);
  }
}

TEST(CoverageGather, GatherNDMatchesReference) {
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    SCOPED_TRACE(seed_trace("GatherND", seed));
    Rng rng(seed);
    static const int64_t kOpsets[] = {11, 12, 13};
    int64_t opset = kOpsets[seed % 3];
    TensorType t{random_dtype(rng), random_shape(rng, 1, 4, 4)};
    auto r = static_cast<int64_t>(t.shape.size());
    int64_t b = opset == 11 ? 0 : rng.range(0, r);
    int64_t k = rng.range(1, r - b + 1);
    Dims q(t.shape.begin(), t.shape.begin() + b);
    for (int64_t e = rng.range(0, 3); e > 0; --e) q.push_back(rng.range(1, 4));
    q.push_back(k);
    TensorType it{DType::I64, q};
    Tensor ind =
        random_indices(rng, it, [&](int64_t f) { return t.shape[static_cast<size_t>(b + f % k)]; });
    std::vector<Arg> args = {t};
    std::vector<Tensor> ins = {random_data(t, rng)};
    add_indices(rng, ind, args, ins);
    size_t lead = q.size() - 1;
    Dims out(q.begin(), q.end() - 1);
    out.insert(out.end(), t.shape.begin() + b + k, t.shape.end());
    Tensor want = gather_ref(ins[0], out, [&](const Dims& i) {
      Dims j(i.begin(), i.begin() + b), at(i.begin(), i.begin() + static_cast<ptrdiff_t>(lead));
      at.push_back(0);
      for (int64_t c = 0; c < k; ++c) {
        at.back() = c;
        int64_t v = ind.get_i64(testlib::flat_offset(q, at));
        j.push_back(v < 0 ? v + t.shape[static_cast<size_t>(b + c)] : v);
      }
      j.insert(j.end(), i.begin() + static_cast<ptrdiff_t>(lead), i.end());
      return j;
    });
    Attrs attrs;
    if (b != 0 || (opset > 11 && rng.coin())) attrs.push_back({"batch_dims", b});
    expect_output(node_model("GatherND", args, 1, attrs, opset), ins, want);
  }
}

TEST(CoverageGather, CompressWithAConstantConditionMatchesNumpy) {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE(seed_trace("Compress", seed));
    Rng rng(seed);
    int64_t opset = seed % 2 ? 9 : 11;
    TensorType t{random_dtype(rng), random_shape(rng, 1, 3, 4)};
    auto rank = static_cast<int64_t>(t.shape.size());
    bool has_axis = rng.coin(0.7);
    int64_t axis = has_axis ? rng.range(opset == 9 ? 0 : -rank, rank) : 0;
    size_t a = static_cast<size_t>(axis < 0 ? axis + rank : axis);
    int64_t n = has_axis ? t.shape[a] : t.numel();
    int64_t len = rng.range(0, n + 3);
    Tensor cond(TensorType{DType::Bool, {len}});
    for (int64_t j = 0; j < len; ++j) cond.set_i64(j, j < n && rng.coin());
    std::vector<int64_t> picked;
    for (int64_t j = 0; j < len; ++j)
      if (cond.get_i64(j)) picked.push_back(j);
    Tensor x = random_data(t, rng);
    Dims in_shape = has_axis ? t.shape : Dims{n};
    Dims out = in_shape;
    out[has_axis ? a : 0] = static_cast<int64_t>(picked.size());
    Tensor flat(TensorType{t.dtype, in_shape}, x.bytes());
    Tensor want = gather_ref(flat, out, [&](const Dims& i) {
      Dims j = i;
      j[has_axis ? a : 0] = picked[static_cast<size_t>(i[has_axis ? a : 0])];
      return j;
    });
    Attrs attrs;
    if (has_axis) attrs.push_back({"axis", axis});
    expect_output(node_model("Compress", {t, cond}, 1, attrs, opset), {x}, want);
  }
}

TEST(CoverageGather, NonZeroOfAConstantMatchesNumpy) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE(seed_trace("NonZero", seed));
    Rng rng(seed);
    TensorType t{random_dtype(rng), random_shape(rng, 0, 3, 4)};
    Tensor x = testlib::random_tensor(t, rng, -1, 2);  // many zeros
    std::vector<Dims> hits;
    Dims i(t.shape.size(), 0);
    for (int64_t f = 0; f < x.numel(); ++f, testlib::next_index(t.shape, i))
      if (x.get_as_double(f) != 0) hits.push_back(i);
    auto n = static_cast<int64_t>(hits.size());
    Tensor want(TensorType{DType::I64, {static_cast<int64_t>(t.shape.size()), n}});
    for (int64_t j = 0; j < n; ++j)
      for (size_t d = 0; d < t.shape.size(); ++d)
        want.set_i64(static_cast<int64_t>(d) * n + j, hits[static_cast<size_t>(j)][d]);
    expect_output(node_model("NonZero", {x}, 1, {}, seed % 2 ? 9 : 13), {}, want);
  }
}

TEST(CoverageGather, RuntimeIndicesOutOfRangeAreRunErrors) {
  TensorType t{DType::F32, {2, 3}}, it{DType::I64, {2, 1}};
  ir::Graph g = import_model(node_model("GatherElements", {t, it}, 1, {{"axis", int64_t{1}}}));
  Tensor ind(it);
  EXPECT_EQ(error_of([&] { interp::run(g, {Tensor(t), ind}); }), "(no error)");
  ind.set_i64(1, -4);
  EXPECT_NE(error_of([&] {
              interp::run(g, {Tensor(t), ind});
            }).find("out of bounds"),
            std::string::npos);
}

TEST(CoverageGather, GatherElementsErrors) {
  TensorType t{DType::F32, {2, 3}};
  expect_error(node_model("GatherElements", {t, TensorType{DType::I64, {2}}}), "GatherElements",
               "data [2,3] and indices [2] need one rank >= 1");
  expect_error(
      node_model("GatherElements", {t, TensorType{DType::I64, {3, 1}}}, 1, {{"axis", int64_t{1}}}),
      "GatherElements", "indices [3,1] are larger than data [2,3] along dim 0");
  Tensor c(TensorType{DType::I64, {1, 2}});
  c.set_i64(1, 3);
  expect_error(node_model("GatherElements", {t, c}, 1, {{"axis", int64_t{1}}}), "GatherElements",
               "index 3 (element 1 of input 1) is out of range for a dim of size 3");
  expect_error(node_model("GatherElements", {t, TensorType{DType::U8, {2, 3}}}), "GatherElements",
               "input 1 has dtype u8; GatherElements-13 allows i32, i64");
  expect_error(node_model("GatherElements",
                          {TensorType{DType::BF16, {2}}, TensorType{DType::I64, {2}}}, 1, {}, 11),
               "GatherElements",
               "input 0 has dtype bf16, which GatherElements allows from version 13 "
               "(this node is GatherElements-11)");
}

TEST(CoverageGather, GatherNDErrors) {
  TensorType t{DType::F32, {2, 3}};
  expect_error(
      node_model("GatherND", {t, TensorType{DType::I64, {2, 1}}}, 1, {{"batch_dims", int64_t{2}}}),
      "GatherND", "batch_dims=2 must lie in [0, 2)");
  expect_error(node_model("GatherND", {t, TensorType{DType::I64, {2, 3}}}), "GatherND",
               "indices [2,3] end in a dim of 3; index tuples into data [2,3] need 1 to 2");
  expect_error(
      node_model("GatherND", {t, TensorType{DType::I64, {3, 1}}}, 1, {{"batch_dims", int64_t{1}}}),
      "GatherND", "the first 1 (batch) dims of data [2,3] and indices [3,1] differ");
  expect_error(node_model("GatherND", {t, TensorType{DType::I64, {2, 1}}}, 1,
                          {{"batch_dims", int64_t{0}}}, 11),
               "GatherND", "attribute 'batch_dims' is not defined before version 12");
  expect_error(node_model("GatherND", {t, TensorType{DType::I32, {2, 1}}}), "GatherND",
               "input 1 has dtype i32; GatherND-13 allows i64");
  expect_error(node_model("GatherND", {TensorType{DType::F32, {}}, TensorType{DType::I64, {1}}}),
               "GatherND", "data [] and indices [1] need rank >= 1");
}

TEST(CoverageGather, CompressAndNonZeroErrors) {
  TensorType t{DType::F32, {2, 3}};
  expect_unsupported(
      node_model("Compress", {t, TensorType{DType::Bool, {2}}}), "Compress",
      "Compress with a run-time condition (the output's shape depends on its values)");
  Tensor c2(TensorType{DType::Bool, {1, 2}});
  expect_error(node_model("Compress", {t, c2}), "Compress", "condition bool[1,2] must have rank 1");
  Tensor far(TensorType{DType::Bool, {4}});
  far.set_i64(3, 1);
  expect_error(node_model("Compress", {t, far}, 1, {{"axis", int64_t{1}}}), "Compress",
               "condition selects index 3 of an axis of size 3");
  expect_error(node_model("Compress", {t, Tensor(TensorType{DType::Bool, {2}})}, 1,
                          {{"axis", int64_t{-1}}}, 9),
               "Compress", "axis=-1: negative axes are defined from version 11");
  expect_error(
      node_model("Compress", {TensorType{DType::F32, {}}, Tensor(TensorType{DType::Bool, {1}})}),
      "Compress", "cannot compress a scalar");
  expect_error(node_model("Compress", {t, TensorType{DType::I64, {2}}}), "Compress",
               "input 1 has dtype i64; Compress-11 allows bool");
  expect_unsupported(node_model("NonZero", {t}), "NonZero",
                     "NonZero of a run-time input (the output's shape depends on its values)");
}

}  // namespace
}  // namespace orchid::layout_test
