// Differential tests of ScatterElements, ScatterND, Scatter and MaxUnpool (rules_scatter.cpp,
// the opaque scatter routines) over seeded random shapes, attributes, reductions and opset
// versions, against naive reference loops written from the ONNX text (MaxUnpool: ONNX's
// reference implementation); and every error message of these rules.
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

// A reference output buffer: floats in double, integers modulo 2^64 (bool: or / and), written
// to a tensor of the data's dtype at the end, as the interpreter's f64 precision does.
struct RefBuffer {
  Tensor t;
  std::vector<double> f;
  std::vector<uint64_t> i;
  explicit RefBuffer(const Tensor& data) : t(data) {
    for (int64_t k = 0; k < data.numel(); ++k) {
      f.push_back(ir::is_float(data.dtype()) ? data.get_f64(k) : 0);
      i.push_back(static_cast<uint64_t>(ir::is_float(data.dtype()) ? 0 : data.get_i64(k)));
    }
  }
  void apply(int64_t at, const Tensor& upd, int64_t j, int64_t red) {
    auto k = static_cast<size_t>(at);
    if (ir::is_float(t.dtype())) {
      double b = upd.get_f64(j);
      f[k] = red == 0 ? b : red == 1 ? f[k] + b : f[k] * b;
      return;
    }
    auto b = static_cast<uint64_t>(upd.get_i64(j));
    bool flag = ir::is_bool(t.dtype());
    if (red == 0)
      i[k] = b;
    else if (red == 1)
      i[k] = flag ? (i[k] | b) : i[k] + b;
    else
      i[k] = flag ? (i[k] & b) : i[k] * b;
  }
  Tensor done() {
    for (int64_t k = 0; k < t.numel(); ++k) {
      if (ir::is_float(t.dtype()))
        t.set_f64(k, f[static_cast<size_t>(k)]);
      else
        t.set_i64(k, static_cast<int64_t>(i[static_cast<size_t>(k)]));
    }
    return t;
  }
};

const char* kReductions[] = {"none", "add", "mul"};

// Small values, so that sums and products of integers stay small.
Tensor small_data(const TensorType& t, Rng& rng) { return testlib::random_tensor(t, rng, -3, 4); }

TEST(CoverageScatter, ScatterElementsAndScatterMatchReference) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE(seed_trace("ScatterElements", seed));
    Rng rng(seed);
    static const int64_t kOpsets[] = {11, 13, 16, 9};
    int64_t opset = kOpsets[seed % 4];
    std::string op = opset == 9 || seed % 5 == 0 ? "Scatter" : "ScatterElements";
    if (op == "Scatter" && opset > 11) opset = 11;
    TensorType t{random_dtype(rng), random_shape(rng, 1, 3, 4)};
    auto rank = static_cast<int64_t>(t.shape.size());
    int64_t axis = rng.range(-rank, rank);
    size_t a = static_cast<size_t>(axis < 0 ? axis + rank : axis);
    Dims q = t.shape;
    for (size_t d = 0; d < q.size(); ++d)
      q[d] = d == a ? rng.range(0, 6) : rng.range(1, t.shape[d] + 1);
    TensorType it{rng.coin() ? DType::I32 : DType::I64, q};
    Tensor ind(it);
    for (int64_t f = 0; f < ind.numel(); ++f) ind.set_i64(f, rng.range(-t.shape[a], t.shape[a]));
    int64_t red = opset >= 16 && op == "ScatterElements" ? rng.range(0, 3) : 0;
    Tensor data = small_data(t, rng), upd = small_data({t.dtype, q}, rng);
    RefBuffer ref(data);
    Dims pos(q.size(), 0);
    for (int64_t j = 0; j < upd.numel(); ++j, testlib::next_index(q, pos)) {
      Dims at = pos;
      int64_t k = ind.get_i64(j);
      at[a] = k < 0 ? k + t.shape[a] : k;
      ref.apply(testlib::flat_offset(t.shape, at), upd, j, red);
    }
    bool constant = rng.coin();
    std::vector<Arg> args = {t, constant ? Arg{ind} : Arg{it}, TensorType{t.dtype, q}};
    std::vector<Tensor> ins = {data};
    if (!constant) ins.push_back(ind);
    ins.push_back(upd);
    Attrs attrs = {{"axis", axis}};
    if (red != 0 || (opset >= 16 && rng.coin()))
      attrs.push_back({"reduction", std::string(kReductions[red])});
    expect_output(node_model(op, args, 1, attrs, opset), ins, ref.done());
  }
}

TEST(CoverageScatter, ScatterNDMatchesReference) {
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    SCOPED_TRACE(seed_trace("ScatterND", seed));
    Rng rng(seed);
    static const int64_t kOpsets[] = {11, 13, 16};
    int64_t opset = kOpsets[seed % 3];
    TensorType t{random_dtype(rng), random_shape(rng, 1, 3, 4)};
    auto r = static_cast<int64_t>(t.shape.size());
    int64_t k = rng.range(1, r + 1);
    Dims q = random_shape(rng, 1, 2, 3), u = q;
    q.push_back(k);
    u.insert(u.end(), t.shape.begin() + k, t.shape.end());
    Tensor ind(TensorType{DType::I64, q});
    for (int64_t f = 0; f < ind.numel(); ++f) {
      int64_t n = t.shape[static_cast<size_t>(f % k)];
      ind.set_i64(f, rng.range(-n, n));
    }
    int64_t red = opset >= 16 ? rng.range(0, 3) : 0;
    Tensor data = small_data(t, rng), upd = small_data({t.dtype, u}, rng);
    RefBuffer ref(data);
    int64_t slice = ir::numel(Dims(t.shape.begin() + k, t.shape.end()));
    for (int64_t p = 0; p < ir::numel(Dims(q.begin(), q.end() - 1)); ++p) {
      Dims at(t.shape.size(), 0);
      for (int64_t c = 0; c < k; ++c) {
        int64_t v = ind.get_i64(p * k + c);
        at[static_cast<size_t>(c)] = v < 0 ? v + t.shape[static_cast<size_t>(c)] : v;
      }
      for (int64_t s = 0; s < slice; ++s)
        ref.apply(testlib::flat_offset(t.shape, at) + s, upd, p * slice + s, red);
    }
    Attrs attrs;
    if (red != 0) attrs.push_back({"reduction", std::string(kReductions[red])});
    expect_output(node_model("ScatterND", {t, TensorType{DType::I64, q}, TensorType{t.dtype, u}}, 1,
                             attrs, opset),
                  {data, ind, upd}, ref.done());
  }
}

TEST(CoverageScatter, DataAlsoTheUpdatesIsCopiedFirst) {
  testlib::OnnxModel m;
  m.opset = 16;
  m.inputs = {{"x", TensorType{DType::F32, {3}}}, {"i", TensorType{DType::I64, {3}}}};
  m.nodes.push_back(
      {"ScatterElements", {"x", "i", "x"}, {"y"}, {{"reduction", std::string("add")}}, ""});
  m.outputs = {"y"};
  Tensor x(TensorType{DType::F32, {3}});
  for (int64_t k = 0; k < 3; ++k) x.set_f64(k, static_cast<double>(k + 1));
  Tensor out = run_model(m, {x, i64s({2, 2, 0})})[0];
  EXPECT_EQ(out.get_f64(0), 1 + 3);
  EXPECT_EQ(out.get_f64(1), 2);
  EXPECT_EQ(out.get_f64(2), 3 + 1 + 2);
}

// ONNX's reference MaxUnpool: unpooled u = zeros, u.flat[I.flat[j]] = X.flat[j], placed at the
// origin of the output_shape tensor when one is given.
TEST(CoverageScatter, MaxUnpoolMatchesReference) {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE(seed_trace("MaxUnpool", seed));
    Rng rng(seed);
    auto S = static_cast<size_t>(rng.range(1, 3));
    Dims xs = {rng.range(1, 3), rng.range(1, 3)}, kernel, strides, pads(2 * S, 0),
         unpooled = {xs[0], xs[1]};
    bool given = rng.coin();
    for (size_t d = 0; d < S; ++d) {
      xs.push_back(rng.range(1, 4));
      kernel.push_back(rng.range(1, 4));
      strides.push_back(rng.range(1, 3));
      pads[d] = given ? 0 : rng.range(0, kernel[d]);
      pads[d + S] = given ? 0 : rng.range(0, kernel[d] - pads[d]);
      unpooled.push_back((xs.back() - 1) * strides[d] + kernel[d] - pads[d] - pads[d + S]);
    }
    Dims out = unpooled;
    for (size_t d = 2; given && d < out.size(); ++d) out[d] += rng.range(0, 3);
    TensorType xt{seed % 3 ? DType::F32 : DType::F64, xs};
    Tensor x = random_data(xt, rng), ind(TensorType{DType::I64, xs});
    for (int64_t f = 0; f < ind.numel(); ++f) ind.set_i64(f, rng.range(0, ir::numel(unpooled)));
    Tensor u(TensorType{xt.dtype, unpooled}), want(TensorType{xt.dtype, out});
    for (int64_t f = 0; f < x.numel(); ++f) copy_elem(u, ind.get_i64(f), x, f);
    Dims i(unpooled.size(), 0);
    for (int64_t f = 0; f < u.numel(); ++f, testlib::next_index(unpooled, i))
      copy_elem(want, testlib::flat_offset(out, i), u, f);
    Attrs attrs = {{"kernel_shape", kernel}, {"strides", strides}};
    if (!given) attrs.push_back({"pads", pads});
    std::vector<Arg> args = {xt, TensorType{DType::I64, xs}};
    if (given) args.push_back(i64s(out));
    expect_output(node_model("MaxUnpool", args, 1, attrs, seed % 2 ? 9 : 11), {x, ind}, want);
  }
}

TEST(CoverageScatter, ScatterElementsErrors) {
  TensorType t{DType::F32, {2, 3}}, it{DType::I64, {2, 2}}, ut{DType::F32, {2, 2}};
  expect_error(
      node_model("ScatterElements", {t, it, TensorType{DType::F32, {2, 1}}}), "ScatterElements",
      "data [2,3], indices [2,2] and updates [2,1] need one rank >= 1, and indices the shape of "
      "updates");
  expect_error(node_model("ScatterElements",
                          {t, TensorType{DType::I64, {3, 1}}, TensorType{DType::F32, {3, 1}}}, 1,
                          {{"axis", int64_t{1}}}),
               "ScatterElements", "indices [3,1] are larger than data [2,3] along dim 0");
  expect_error(node_model("ScatterElements", {t, it, TensorType{DType::F16, {2, 2}}}),
               "ScatterElements", "updates of dtype f16 differ from data of dtype f32");
  expect_error(node_model("ScatterElements", {t, it, ut}, 1, {{"reduction", std::string("max")}}),
               "ScatterElements", "reduction 'max' is not none, add or mul");
  expect_error(
      node_model("ScatterElements", {t, it, ut}, 1, {{"reduction", std::string("add")}}, 13),
      "ScatterElements", "attribute 'reduction' is not defined before version 16");
  expect_error(node_model("ScatterElements", {t, TensorType{DType::I16, {2, 2}}, ut}),
               "ScatterElements", "input 1 has dtype i16; ScatterElements-16 allows i32, i64");
  Tensor c(it);
  c.set_i64(2, -3);
  expect_error(node_model("ScatterElements", {t, c, ut}), "ScatterElements",
               "index -3 (element 2 of input 1) is out of range for a dim of size 2");
  expect_error(node_model("ScatterElements",
                          {TensorType{DType::BF16, {2}}, TensorType{DType::I64, {1}},
                           TensorType{DType::BF16, {1}}},
                          1, {}, 11),
               "ScatterElements",
               "input 0 has dtype bf16, which ScatterElements allows from version 13 (this "
               "node is ScatterElements-11)");
}

TEST(CoverageScatter, ScatterNDErrors) {
  TensorType t{DType::F32, {2, 3}};
  expect_error(
      node_model("ScatterND", {t, TensorType{DType::I64, {2, 3}}, TensorType{DType::F32, {2}}}),
      "ScatterND", "indices [2,3] must end in a dim of 1 to 2 (the rank of data [2,3])");
  expect_error(
      node_model("ScatterND", {t, TensorType{DType::I64, {4, 1}}, TensorType{DType::F32, {4}}}),
      "ScatterND", "updates [4] should be [4,3] for data [2,3] and indices [4,1]");
  expect_error(
      node_model("ScatterND", {t, TensorType{DType::I32, {4, 1}}, TensorType{DType::F32, {4, 3}}}),
      "ScatterND", "input 1 has dtype i32; ScatterND-16 allows i64");
  expect_error(node_model("ScatterND", {t, i64s({0, 5}), TensorType{DType::F32, {}}}), "ScatterND",
               "index 5 (element 1 of input 1) is out of range for a dim of size 3");
}

TEST(CoverageScatter, MaxUnpoolErrors) {
  TensorType x{DType::F32, {1, 1, 2, 2}}, i{DType::I64, {1, 1, 2, 2}};
  Attrs k2 = {{"kernel_shape", Dims{2, 2}}, {"strides", Dims{2, 2}}};
  expect_error(node_model("MaxUnpool", {x, TensorType{DType::I64, {1, 1, 2}}}, 1, k2), "MaxUnpool",
               "X [1,1,2,2] needs rank >= 3 and indices I of its shape, found [1,1,2]");
  expect_error(node_model("MaxUnpool", {x, i}), "MaxUnpool",
               "attribute 'kernel_shape' is required");
  expect_error(
      node_model("MaxUnpool", {x, i, i64s({1, 1, 3, 4})}, 1, k2), "MaxUnpool",
      "output_shape [1,1,3,4] must keep X's batch and channels and be no smaller than [1,1,4,4]");
  TensorType x1{DType::F32, {1, 1, 1, 2}}, i1{DType::I64, {1, 1, 1, 2}};
  expect_error(node_model("MaxUnpool", {x1, i1}, 1,
                          {{"kernel_shape", Dims{1, 1}}, {"pads", Dims{1, 0, 1, 0}}}),
               "MaxUnpool", "the unpooled shape [1,1,-1,2] has a negative dim");
  expect_unsupported(
      node_model("MaxUnpool", {x, i, TensorType{DType::I64, {4}}}, 1, k2), "MaxUnpool",
      "input 2 ('x2') must be a constant (computable at compile time): shapes are static");
  expect_error(node_model("MaxUnpool", {x, TensorType{DType::I32, {1, 1, 2, 2}}}, 1, k2),
               "MaxUnpool", "input 1 has dtype i32; MaxUnpool-11 allows i64");
}

}  // namespace
}  // namespace orchid::layout_test
