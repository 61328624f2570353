// Differential tests of Trilu, OneHot, EyeLike, DepthToSpace, SpaceToDepth, CastLike and
// ReverseSequence (rules_layout2.cpp) over seeded random shapes, attributes, dtypes and opset
// versions, against naive reference loops written from the ONNX text (DepthToSpace and
// SpaceToDepth: its reshape / transpose / reshape recipe, run literally); and every error
// message of these rules.
#include <algorithm>

#include "frontend/tensor_proto.h"
#include "layout_test_util.h"

namespace orchid::layout_test {
namespace {

using testlib::import_model;

void expect_output(const testlib::OnnxModel& m, const std::vector<Tensor>& in, const Tensor& want) {
  std::vector<Tensor> got = run_model(m, in);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(testlib::compare_tensors(got[0], want, 0, 0), "");
}

// A tensor of x's dtype and `shape`: element i is x's element src(i), or zero where src gives
// a negative offset.
Tensor build(const Tensor& x, const Dims& shape, const std::function<int64_t(const Dims&)>& src) {
  Tensor out(TensorType{x.dtype(), shape});
  Dims i(shape.size(), 0);
  for (int64_t f = 0; f < out.numel(); ++f, testlib::next_index(shape, i))
    if (int64_t s = src(i); s >= 0) copy_elem(out, f, x, s);
  return out;
}

// numpy: reshape(transpose(reshape(x, a), perm), out) as a flat offset map.
Tensor reshape_transpose(const Tensor& x, const Dims& a, const std::vector<size_t>& perm,
                         const Dims& out) {
  Dims t;
  for (size_t p : perm) t.push_back(a[p]);
  return build(x, out, [&](const Dims& i) {
    int64_t rest = testlib::flat_offset(out, i);
    Dims ti(t.size()), ai(a.size());
    for (size_t k = t.size(); k-- > 0;) ti[k] = rest % t[k], rest /= t[k];
    for (size_t k = 0; k < perm.size(); ++k) ai[perm[k]] = ti[k];
    return testlib::flat_offset(a, ai);
  });
}

TEST(CoverageLayout2, TriluMatchesReference) {
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    SCOPED_TRACE(seed_trace("Trilu", seed));
    Rng rng(seed);
    TensorType t{random_dtype(rng), random_shape(rng, 2, 4, 5)};
    bool upper = rng.coin();
    int64_t k = rng.range(-6, 7);
    int kind = static_cast<int>(rng.range(0, 3));  // k: omitted, constant, run-time
    if (kind == 0) k = 0;
    Tensor x = random_data(t, rng);
    std::vector<Arg> args = {t};
    std::vector<Tensor> ins = {x};
    TensorType kt{DType::I64, rng.coin() ? Dims{} : Dims{1}};
    Tensor kv(kt);
    kv.set_i64(0, k);
    if (kind == 1) args.push_back(kv);
    if (kind == 2) args.push_back(kt), ins.push_back(kv);
    size_t r = t.shape.size();
    Tensor want = build(x, t.shape, [&](const Dims& i) {
      int64_t diag = i[r - 1] - i[r - 2];
      return (upper ? diag >= k : diag <= k) ? testlib::flat_offset(t.shape, i) : -1;
    });
    Attrs attrs;
    if (!upper || rng.coin()) attrs.push_back({"upper", int64_t{upper}});
    expect_output(node_model("Trilu", args, 1, attrs, 14), ins, want);
  }
}

TEST(CoverageLayout2, OneHotMatchesReference) {
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    SCOPED_TRACE(seed_trace("OneHot", seed));
    Rng rng(seed);
    int64_t opset = seed % 2 ? 9 : 11;
    static const DType kIndexTypes[] = {DType::I64, DType::I32, DType::F32, DType::F64};
    TensorType it{kIndexTypes[rng.range(0, 4)], random_shape(rng, 0, 3, 4)};
    int64_t depth = rng.range(1, 6);
    Tensor ind(it);
    for (int64_t f = 0; f < ind.numel(); ++f) {
      double v = static_cast<double>(rng.range(-depth - 2, depth + 2));
      if (ir::is_float(it.dtype))
        ind.set_f64(f, v + (rng.coin() ? 0.5 : 0));
      else
        ind.set_i64(f, static_cast<int64_t>(v));
    }
    DType depth_t = rng.coin() ? DType::I64 : DType::F32;
    Tensor dv(TensorType{depth_t, rng.coin() ? Dims{} : Dims{1}});
    if (ir::is_float(depth_t))
      dv.set_f64(0, static_cast<double>(depth) + 0.25);
    else
      dv.set_i64(0, depth);
    TensorType vt{random_dtype(rng), {2}};
    if (vt.dtype == DType::Bool) vt.dtype = DType::I8;
    Tensor values = random_data(vt, rng);
    auto r = static_cast<int64_t>(it.shape.size());
    int64_t axis = rng.range(-r - 1, r + 1);
    size_t a = static_cast<size_t>(axis < 0 ? axis + r + 1 : axis);
    Dims out = it.shape;
    out.insert(out.begin() + static_cast<ptrdiff_t>(a), depth);
    Tensor want = build(values, out, [&](const Dims& i) {
      Dims at = i;
      at.erase(at.begin() + static_cast<ptrdiff_t>(a));
      int64_t f = testlib::flat_offset(it.shape, at);
      auto k = ir::is_float(it.dtype) ? static_cast<int64_t>(ind.get_f64(f)) : ind.get_i64(f);
      if (opset >= 11 && k < 0) k += depth;
      return k == i[a] ? 1 : 0;
    });
    bool const_values = rng.coin();
    std::vector<Arg> args = {it, dv, const_values ? Arg{values} : Arg{vt}};
    std::vector<Tensor> ins = {ind};
    if (!const_values) ins.push_back(values);
    Attrs attrs;
    if (axis != -1 || rng.coin()) attrs.push_back({"axis", axis});
    expect_output(node_model("OneHot", args, 1, attrs, opset), ins, want);
  }
}

TEST(CoverageLayout2, EyeLikeMatchesReference) {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    SCOPED_TRACE(seed_trace("EyeLike", seed));
    Rng rng(seed);
    TensorType t{random_dtype(rng), random_shape(rng, 2, 2, 5)};
    static const int32_t kCodes[] = {1, 2, 3, 5, 6, 7, 9, 10, 11, 12, 13, 16};
    bool has_dtype = rng.coin();
    int32_t code = kCodes[rng.range(0, 12)];
    DType out_t = has_dtype ? *frontend::dtype_from_onnx(code) : t.dtype;
    int64_t k = rng.range(-5, 6);
    Tensor want(TensorType{out_t, t.shape});
    for (int64_t r = 0; r < t.shape[0]; ++r)
      for (int64_t c = 0; c < t.shape[1]; ++c) {
        if (c - r != k) continue;
        if (ir::is_float(out_t))
          want.set_f64(r * t.shape[1] + c, 1);
        else
          want.set_i64(r * t.shape[1] + c, 1);
      }
    Attrs attrs;
    if (has_dtype) attrs.push_back({"dtype", int64_t{code}});
    if (k != 0 || rng.coin()) attrs.push_back({"k", k});
    expect_output(node_model("EyeLike", {t}, 1, attrs, 9), {random_data(t, rng)}, want);
  }
}

TEST(CoverageLayout2, DepthToSpaceMatchesNumpyRecipe) {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE(seed_trace("DepthToSpace", seed));
    Rng rng(seed);
    static const int64_t kOpsets[] = {1, 11, 13};
    int64_t opset = kOpsets[seed % 3];
    bool crd = opset >= 11 && rng.coin();
    int64_t b = rng.range(1, 4), c = rng.range(1, 4);
    Dims s = {rng.range(1, 3), c * b * b, rng.range(1, 4), rng.range(1, 4)};
    TensorType t{random_dtype(rng), s};
    Tensor x = random_data(t, rng);
    Dims out = {s[0], c, s[2] * b, s[3] * b};
    Tensor want = crd ? reshape_transpose(x, {s[0], c, b, b, s[2], s[3]}, {0, 1, 4, 2, 5, 3}, out)
                      : reshape_transpose(x, {s[0], b, b, c, s[2], s[3]}, {0, 3, 4, 1, 5, 2}, out);
    Attrs attrs = {{"blocksize", b}};
    if (crd)
      attrs.push_back({"mode", std::string("CRD")});
    else if (opset >= 11 && rng.coin())
      attrs.push_back({"mode", std::string("DCR")});
    expect_output(node_model("DepthToSpace", {t}, 1, attrs, opset), {x}, want);
  }
}

TEST(CoverageLayout2, SpaceToDepthMatchesNumpyRecipe) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE(seed_trace("SpaceToDepth", seed));
    Rng rng(seed);
    int64_t b = rng.range(1, 4);
    Dims s = {rng.range(1, 3), rng.range(1, 4), b * rng.range(1, 3), b * rng.range(1, 3)};
    TensorType t{random_dtype(rng), s};
    Tensor x = random_data(t, rng);
    Dims out = {s[0], s[1] * b * b, s[2] / b, s[3] / b};
    Tensor want =
        reshape_transpose(x, {s[0], s[1], s[2] / b, b, s[3] / b, b}, {0, 3, 5, 1, 2, 4}, out);
    expect_output(node_model("SpaceToDepth", {t}, 1, {{"blocksize", b}}, seed % 2 ? 1 : 13), {x},
                  want);
  }
}

TEST(CoverageLayout2, CastLikeMatchesCast) {
  static const DType kTypes[] = {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I8,
                                 DType::U8,  DType::I32, DType::I64, DType::Bool};
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE(seed_trace("CastLike", seed));
    Rng rng(seed);
    TensorType t{kTypes[rng.range(0, 9)], random_shape(rng, 0, 3, 4)};
    TensorType like{kTypes[rng.range(0, 9)], random_shape(rng, 0, 2, 3)};
    Tensor x = random_data(t, rng), want(TensorType{like.dtype, t.shape});
    for (int64_t f = 0; f < x.numel(); ++f) {
      double v = x.get_as_double(f);
      if (ir::is_float(like.dtype))
        want.set_f64(f, v);  // exact: |v| < 9 with few bits
      else if (ir::is_float(t.dtype))
        want.set_i64(f, ir::float_to_integral(v, like.dtype));
      else
        want.set_i64(f, ir::wrap_to_dtype(x.get_i64(f), like.dtype));
    }
    expect_output(node_model("CastLike", {t, like}, 1, {}, 15), {x, Tensor(like)}, want);
  }
}

TEST(CoverageLayout2, ReverseSequenceMatchesReference) {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE(seed_trace("ReverseSequence", seed));
    Rng rng(seed);
    TensorType t{random_dtype(rng), random_shape(rng, 2, 4, 5)};
    bool time_first = rng.coin();
    size_t ta = time_first ? 0 : 1, ba = 1 - ta;
    Tensor lens(TensorType{DType::I64, {t.shape[ba]}});
    for (int64_t j = 0; j < lens.numel(); ++j) lens.set_i64(j, rng.range(0, t.shape[ta] + 1));
    Tensor x = random_data(t, rng);
    Tensor want = build(x, t.shape, [&](const Dims& i) {
      Dims j = i;
      int64_t len = lens.get_i64(i[ba]);
      if (i[ta] < len) j[ta] = len - 1 - i[ta];
      return testlib::flat_offset(t.shape, j);
    });
    bool constant = rng.coin();
    std::vector<Arg> args = {t, constant ? Arg{lens} : Arg{lens.type()}};
    std::vector<Tensor> ins = {x};
    if (!constant) ins.push_back(lens);
    Attrs attrs;
    if (!time_first || rng.coin())
      attrs = {{"time_axis", int64_t(ta)}, {"batch_axis", int64_t(ba)}};
    expect_output(node_model("ReverseSequence", args, 1, attrs, 10), ins, want);
  }
}

TEST(CoverageLayout2, CastLikeToTheSameDtypeIsTheInput) {
  TensorType t{DType::F32, {2}};
  EXPECT_EQ(
      import_model(node_model("CastLike", {t, TensorType{DType::F32, {}}}, 1, {}, 15)).num_nodes(),
      0);
}

TEST(CoverageLayout2, TriluAndOneHotErrors) {
  expect_error(node_model("Trilu", {TensorType{DType::F32, {3}}}, 1, {}, 14), "Trilu",
               "input [3] needs rank >= 2");
  expect_error(
      node_model("Trilu", {TensorType{DType::F32, {2, 2}}, TensorType{DType::I32, {}}}, 1, {}, 14),
      "Trilu", "k must be one int64, found i32[]");
  TensorType ind{DType::I64, {3}}, vals{DType::F32, {2}};
  expect_error(node_model("OneHot", {ind, i64s({2, 3}), vals}), "OneHot",
               "depth must be one number, found i64[2]");
  expect_error(node_model("OneHot", {ind, i64s({0}), vals}), "OneHot", "depth 0 is not positive");
  expect_error(node_model("OneHot", {ind, i64s({3}), TensorType{DType::F32, {3}}}), "OneHot",
               "values must be [off_value, on_value], found f32[3]");
  expect_error(node_model("OneHot", {ind, i64s({3}), vals}, 1, {{"axis", int64_t{2}}}), "OneHot",
               "axis 2 is out of range for rank 2");
  expect_unsupported(
      node_model("OneHot", {ind, TensorType{DType::I64, {}}, vals}), "OneHot",
      "input 1 ('x1') must be a constant (computable at compile time): shapes are static");
}

TEST(CoverageLayout2, EyeLikeAndBlockErrors) {
  expect_error(node_model("EyeLike", {TensorType{DType::F32, {3}}}, 1, {}, 9), "EyeLike",
               "input [3] must have rank 2");
  expect_unsupported(
      node_model("EyeLike", {TensorType{DType::F32, {2, 2}}}, 1, {{"dtype", int64_t{8}}}, 9),
      "EyeLike", "dtype STRING");
  TensorType t{DType::F32, {1, 8, 2, 3}};
  expect_error(
      node_model("DepthToSpace", {t}, 1, {{"blocksize", int64_t{3}}}), "DepthToSpace",
      "input [1,8,2,3] must have rank 4 and channels divisible by blocksize^2 (blocksize 3)");
  expect_error(
      node_model("DepthToSpace", {t}, 1, {{"blocksize", int64_t{2}}, {"mode", std::string("RCD")}}),
      "DepthToSpace", "mode 'RCD' is not DCR or CRD");
  expect_error(node_model("DepthToSpace", {t}, 1,
                          {{"blocksize", int64_t{2}}, {"mode", std::string("DCR")}}, 9),
               "DepthToSpace", "attribute 'mode' is not defined before version 11");
  expect_error(node_model("DepthToSpace", {t}), "DepthToSpace",
               "attribute 'blocksize' is required");
  expect_error(node_model("SpaceToDepth", {t}, 1, {{"blocksize", int64_t{2}}}), "SpaceToDepth",
               "input [1,8,2,3] must have rank 4 and height and width divisible by blocksize 2");
  expect_error(node_model("SpaceToDepth", {TensorType{DType::BF16, {1, 1, 2, 2}}}, 1,
                          {{"blocksize", int64_t{2}}}, 9),
               "SpaceToDepth",
               "input 0 has dtype bf16, which SpaceToDepth allows from version 13 (this node is "
               "SpaceToDepth-1)");
}

TEST(CoverageLayout2, ReverseSequenceErrors) {
  TensorType t{DType::F32, {4, 2, 3}};
  expect_error(node_model("ReverseSequence", {t, TensorType{DType::I64, {2}}}, 1,
                          {{"time_axis", int64_t{0}}, {"batch_axis", int64_t{2}}}, 10),
               "ReverseSequence",
               "time_axis=0 and batch_axis=2 must be 0 and 1 in some order, of an input of rank >= "
               "2 (found [4,2,3])");
  expect_error(node_model("ReverseSequence", {t, TensorType{DType::I64, {4}}}, 1, {}, 10),
               "ReverseSequence", "sequence_lens [4] should be [2] (the batch size)");
  expect_error(node_model("ReverseSequence", {t, i64s({5, 1})}, 1, {}, 10), "ReverseSequence",
               "sequence length 5 (batch 0) is outside [0, 4]");
  expect_error(node_model("ReverseSequence", {t, TensorType{DType::I32, {2}}}, 1, {}, 10),
               "ReverseSequence", "input 1 has dtype i32; ReverseSequence-10 allows i64");
}

}  // namespace
}  // namespace orchid::layout_test
