// Differential tests of the arg-reduction, hardmax, scan and top-k fission rules (ArgMax,
// ArgMin, Hardmax, CumSum, TopK): each ONNX node, imported through the real loader, is run by
// the interpreter and compared with a naive reference on seeded random shapes, attributes,
// opsets and dtypes (with many ties, NaN and infinities); plus the rules' error messages.
#include <algorithm>
#include <numeric>

#include "coverage_reduce_util.h"

namespace orchid {
namespace {

using namespace coverage;

// ---- ArgMax / ArgMin ----

struct ArgCase {
  bool max;
  int64_t opset;
  DType dtype;
};

Tensor ref_arg_tensor(const Tensor& x, int64_t axis, bool keepdims, bool max, bool last) {
  Dims out = x.shape();
  if (keepdims) out[static_cast<size_t>(axis)] = 1;
  else out.erase(out.begin() + axis);
  Tensor y(TensorType{DType::I64, out});
  Lines l(x.shape(), axis);
  for (int64_t line = 0; line < l.count(); ++line) y.set_i64(line, ref_arg(x, l, line, max, last));
  return y;
}

void check_arg(const ArgCase& c, uint64_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed) + " opset " + std::to_string(c.opset) + " " +
               std::string(ir::dtype_name(c.dtype)));
  Rng rng(seed * 7919 + static_cast<uint64_t>(c.opset));
  TensorType xt{c.dtype, random_shape(rng, 1, 4)};
  int64_t rank = xt.rank();
  int64_t axis = rng.range(c.opset >= 11 ? -rank : 0, rank);
  bool keepdims = rng.coin(), last = c.opset >= 12 && rng.coin();
  Attrs attrs = {{"axis", axis}, {"keepdims", int64_t{keepdims}}};
  if (c.opset >= 12) attrs.emplace_back("select_last_index", int64_t{last});
  bool is_unsigned = ir::dtype_class(c.dtype) == ir::DTypeClass::Unsigned;
  Tensor x = tie_tensor(xt, rng, is_unsigned ? 0 : -3, 4, true);
  OnnxModel m = single_node(c.max ? "ArgMax" : "ArgMin", {xt}, 1, attrs, c.opset);
  Tensor want = ref_arg_tensor(x, axis < 0 ? axis + rank : axis, keepdims, c.max, last);
  EXPECT_EQ(testlib::compare_tensors(run(m, {x})[0], want), "")
      << "x " << ir::type_str(xt) << " axis " << axis << " keepdims " << keepdims << " last " << last;
}

TEST(CoverageReduce, ArgMaxArgMin) {
  const DType dtypes[] = {DType::F32, DType::F64, DType::F16, DType::I32, DType::U8, DType::I64, DType::U64};
  for (bool max : {true, false})
    for (int64_t opset : {1, 11, 12, 13})
      for (DType t : dtypes)
        for (uint64_t seed = 1; seed <= 3; ++seed) check_arg({max, opset, t}, seed);
  for (uint64_t seed = 1; seed <= 3; ++seed) check_arg({true, 13, DType::BF16}, seed);
}

// A line of NaN, a line of -inf, a line with NaN after +inf: numpy's answers.
TEST(CoverageReduce, ArgMaxSpecialValues) {
  for (DType t : {DType::F32, DType::F64}) {
    SCOPED_TRACE(std::string(ir::dtype_name(t)));
    TensorType xt{t, {4, 3}};
    Tensor x(xt);
    const double v[] = {kNaN, kNaN, kNaN, -kInf, -kInf, -kInf, kInf, kNaN, kInf, 1, kInf, kInf};
    for (int64_t i = 0; i < 12; ++i) x.set_f64(i, v[i]);
    for (bool last : {false, true}) {
      Attrs a = {{"axis", int64_t{1}}, {"keepdims", int64_t{0}}, {"select_last_index", int64_t{last}}};
      EXPECT_EQ(testlib::compare_tensors(run(single_node("ArgMax", {xt}, 1, a, 13), {x})[0],
                                         i64_tensor({4}, last ? std::vector<int64_t>{2, 2, 1, 2}
                                                              : std::vector<int64_t>{0, 0, 1, 1})),
                "");
      EXPECT_EQ(testlib::compare_tensors(run(single_node("ArgMin", {xt}, 1, a, 13), {x})[0],
                                         i64_tensor({4}, last ? std::vector<int64_t>{2, 2, 1, 0}
                                                              : std::vector<int64_t>{0, 0, 1, 0})),
                "");
    }
  }
}

TEST(CoverageReduceErrors, ArgMax) {
  TensorType x{DType::F32, {2, 3}};
  EXPECT_ERROR(single_node("ArgMax", {x}, 1, {{"select_last_index", int64_t{1}}}, 11),
               "attribute 'select_last_index' is not defined before version 12");
  EXPECT_ERROR(single_node("ArgMin", {x}, 1, {{"axis", int64_t{2}}}, 13), "axis 2 is out of range for rank 2");
  EXPECT_ERROR(single_node("ArgMax", {{DType::BF16, {2}}}, 1, {}, 12), "input 0 has dtype bf16; ArgMax-12 allows");
  EXPECT_ERROR(single_node("ArgMax", {{DType::F32, {2, 0}}}, 1, {{"axis", int64_t{1}}}, 13),
               "axis 1 of f32[2,0] is empty: no maximum to index");
  OnnxModel b = single_node("ArgMax", {{DType::Bool, {2}}}, 1, {}, 13);
  EXPECT_TRUE(is_unsupported(b));
  EXPECT_ERROR(b, "not supported: input 0 of dtype bool (supported: numeric)");
}

// ---- Hardmax ----

// 1 at numpy's argmax of each line along `axis` (before opset 13: of each row of x viewed
// as [outer, inner] around axis), 0 elsewhere.
Tensor ref_hardmax(const Tensor& x, int64_t axis, bool coerce) {
  Dims s = x.shape();
  Lines l(s, axis);
  if (coerce) l = Lines({l.outer, l.len * l.inner}, 1);
  Tensor y(x.type());
  for (int64_t line = 0; line < l.count(); ++line) y.set_f64(l.at(line, ref_arg(x, l, line, true, false)), 1);
  return y;
}

TEST(CoverageReduce, Hardmax) {
  for (int64_t opset : {1, 11, 13})
    for (uint64_t seed = 1; seed <= 6; ++seed) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " opset " + std::to_string(opset));
      Rng rng(seed * 613 + static_cast<uint64_t>(opset));
      DType t = seed % 3 == 0 ? DType::F64 : seed % 3 == 1 ? DType::F32 : DType::F16;
      TensorType xt{t, random_shape(rng, 1, 4)};
      int64_t rank = xt.rank();
      int64_t axis = rng.range(opset >= 11 ? -rank : 0, rank);
      Attrs attrs;
      if (rng.coin(0.8)) attrs.emplace_back("axis", axis);
      else axis = opset >= 13 ? -1 : 1;
      if (axis == 1 && rank == 1 && opset < 13) axis = 0, attrs = {{"axis", int64_t{0}}};
      Tensor x = tie_tensor(xt, rng, -2, 3, true);
      Tensor want = ref_hardmax(x, axis < 0 ? axis + rank : axis, opset < 13);
      EXPECT_EQ(testlib::compare_tensors(run(single_node("Hardmax", {xt}, 1, attrs, opset), {x})[0], want), "")
          << "x " << ir::type_str(xt) << " axis " << axis;
    }
}

TEST(CoverageReduceErrors, Hardmax) {
  EXPECT_ERROR(single_node("Hardmax", {{DType::BF16, {2, 2}}}, 1, {}, 11), "Hardmax-11 allows f16, f32, f64");
  EXPECT_ERROR(single_node("Hardmax", {{DType::F32, {2, 2}}}, 1, {{"axis", int64_t{-3}}}, 13),
               "axis -3 is out of range for rank 2");
  EXPECT_ERROR(single_node("Hardmax", {{DType::I32, {2}}}, 1, {}, 13), "not supported: input 0 of dtype i32");
}

// ---- CumSum ----

Tensor ref_cumsum(const Tensor& x, int64_t axis, bool exclusive, bool reverse) {
  Tensor y(x.type());
  Lines l(x.shape(), axis);
  for (int64_t line = 0; line < l.count(); ++line) {
    double fs = 0;
    int64_t is = 0;
    for (int64_t s = 0; s < l.len; ++s) {
      int64_t at = l.at(line, reverse ? l.len - 1 - s : s);
      bool f = ir::is_float(x.dtype());
      if (exclusive) f ? y.set_f64(at, fs) : y.set_i64(at, is);
      if (f) fs += x.get_f64(at);
      else is += x.get_i64(at);
      if (!exclusive) f ? y.set_f64(at, fs) : y.set_i64(at, is);
    }
  }
  return y;
}

// CumSum with its axis as an initializer (of dtype axis_t, a scalar or a [1] tensor).
OnnxModel cumsum_model(const TensorType& xt, int64_t axis, DType axis_t, bool as_vector, Attrs attrs, int64_t opset) {
  OnnxModel m = single_node("CumSum", {xt}, 1, std::move(attrs), opset);
  Tensor a(TensorType{axis_t, as_vector ? Dims{1} : Dims{}});
  a.set_i64(0, axis);
  m.initializers.emplace_back("axis", a);
  m.nodes[0].inputs.push_back("axis");
  return m;
}

TEST(CoverageReduce, CumSum) {
  const DType dtypes[] = {DType::F32, DType::F64, DType::I32, DType::I64, DType::U32, DType::U64, DType::F16, DType::BF16};
  for (int64_t opset : {11, 14})
    for (DType t : dtypes) {
      if (opset < 14 && (t == DType::F16 || t == DType::BF16)) continue;
      for (uint64_t seed = 1; seed <= 3; ++seed) {
        SCOPED_TRACE("seed " + std::to_string(seed) + " opset " + std::to_string(opset) + " " +
                     std::string(ir::dtype_name(t)));
        Rng rng(seed * 389 + static_cast<uint64_t>(t) * 7 + static_cast<uint64_t>(opset));
        TensorType xt{t, random_shape(rng, 1, 4, 5)};
        int64_t rank = xt.rank(), axis = rng.range(-rank, rank);
        bool exclusive = rng.coin(), reverse = rng.coin();
        Attrs attrs;
        if (exclusive || rng.coin()) attrs.emplace_back("exclusive", int64_t{exclusive});
        if (reverse || rng.coin()) attrs.emplace_back("reverse", int64_t{reverse});
        OnnxModel m = cumsum_model(xt, axis, rng.coin() ? DType::I32 : DType::I64, rng.coin(), attrs, opset);
        bool is_unsigned = ir::dtype_class(t) == ir::DTypeClass::Unsigned;
        Tensor x = tie_tensor(xt, rng, is_unsigned ? 0 : -8, 9, false);
        double rtol = ir::dtype_bytes(t) == 2 ? 1e-2 : 1e-6;
        EXPECT_EQ(testlib::compare_tensors(run(m, {x})[0], ref_cumsum(x, axis < 0 ? axis + rank : axis, exclusive, reverse),
                                           rtol, rtol),
                  "")
            << "x " << ir::type_str(xt) << " axis " << axis << " exclusive " << exclusive << " reverse " << reverse;
      }
    }
}

// The rule makes one opaque cumsum primitive.
TEST(CoverageReduce, CumSumIsOneOpaquePrimitive) {
  ir::Graph g = import_model(cumsum_model({DType::F32, {3, 4}}, -1, DType::I64, false, {{"reverse", int64_t{1}}}, 14));
  ASSERT_EQ(g.num_nodes(), 1);
  EXPECT_EQ(g.nodes()[0].op, ir::PrimOp::Opaque);
  const auto& a = std::get<ir::OpaqueAttrs>(g.nodes()[0].attrs);
  EXPECT_EQ(a.routine, ir::OpaqueRoutine::CumSum);
  EXPECT_EQ(a.param("axis"), 1);
  EXPECT_EQ(a.param("reverse"), 1);
}

TEST(CoverageReduceErrors, CumSum) {
  TensorType x{DType::F32, {2, 3}};
  OnnxModel runtime = single_node("CumSum", {x, {DType::I64, {}}}, 1, {}, 14);
  EXPECT_TRUE(is_unsupported(runtime));
  EXPECT_ERROR(runtime, "not supported: axis computed at run time (input 1 'x1' must be a constant)");
  OnnxModel two = cumsum_model(x, 0, DType::I64, true, {}, 14);
  two.initializers[0].second = i64_tensor({2}, {0, 1});
  EXPECT_ERROR(two, "axis (input 1) has shape [2]; expected a single value");
  EXPECT_ERROR(cumsum_model(x, 2, DType::I64, false, {}, 14), "axis 2 is out of range for rank 2");
  EXPECT_ERROR(cumsum_model(x, 0, DType::I64, false, {{"exclusive", int64_t{2}}}, 14),
               "attribute 'exclusive' = 2 must be 0 or 1");
  EXPECT_ERROR(cumsum_model({DType::F16, {2}}, 0, DType::I64, false, {}, 11), "input 0 has dtype f16; CumSum-11 allows");
  EXPECT_ERROR(cumsum_model({DType::I8, {2}}, 0, DType::I64, false, {}, 14), "input 0 has dtype i8; CumSum-14 allows");
  EXPECT_ERROR(cumsum_model(x, 0, DType::I16, false, {}, 14), "input 1 has dtype i16; CumSum-14 allows i32, i64");
}

// ---- TopK ----

// The first k of each line sorted largest (smallest) first, NaN above every number, equal
// values by index.
std::vector<Tensor> ref_topk(const Tensor& x, int64_t axis, int64_t k, bool largest) {
  Dims s = x.shape();
  s[static_cast<size_t>(axis)] = k;
  Tensor values(TensorType{x.dtype(), s}), indices(TensorType{DType::I64, s});
  Lines l(x.shape(), axis);
  for (int64_t line = 0; line < l.count(); ++line) {
    std::vector<int64_t> order(static_cast<size_t>(l.len));
    std::iota(order.begin(), order.end(), 0);
    auto key = [&](int64_t t) { return x.get_as_double(l.at(line, t)); };
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      double u = key(a), v = key(b);
      if (std::isnan(u) || std::isnan(v)) return largest ? std::isnan(u) && !std::isnan(v) : std::isnan(v) && !std::isnan(u);
      return largest ? u > v : u < v;
    });
    for (int64_t t = 0; t < k; ++t) {
      int64_t src = l.at(line, order[static_cast<size_t>(t)]), dst = l.at(line, t, k);
      if (ir::is_float(x.dtype())) values.set_f64(dst, x.get_f64(src));
      else values.set_i64(dst, x.get_i64(src));
      indices.set_i64(dst, order[static_cast<size_t>(t)]);
    }
  }
  return {values, indices};
}

void check_topk(int64_t opset, DType t, uint64_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed) + " opset " + std::to_string(opset) + " " + std::string(ir::dtype_name(t)));
  Rng rng(seed * 211 + static_cast<uint64_t>(opset) * 3 + static_cast<uint64_t>(t));
  TensorType xt{t, random_shape(rng, 1, 3, 6)};
  int64_t rank = xt.rank(), axis = rng.range(-rank, rank);
  int64_t dim = xt.shape[static_cast<size_t>(axis < 0 ? axis + rank : axis)];
  int64_t k = rng.range(1, dim + 1);
  bool largest = opset < 11 || rng.coin();
  Attrs attrs = {{"axis", axis}};
  if (opset >= 11) attrs.emplace_back("largest", int64_t{largest});
  if (opset >= 11 && rng.coin()) attrs.emplace_back("sorted", int64_t{1});
  if (opset < 10) attrs.emplace_back("k", k);
  OnnxModel m = single_node("TopK", {xt}, 2, attrs, opset);
  if (opset >= 10) {
    m.initializers.emplace_back("K", i64_tensor({1}, {k}));
    m.nodes[0].inputs.push_back("K");
  }
  bool is_unsigned = ir::dtype_class(t) == ir::DTypeClass::Unsigned;
  Tensor x = tie_tensor(xt, rng, is_unsigned ? 0 : -3, 4, true);
  std::vector<Tensor> got = run(m, {x}), want = ref_topk(x, axis < 0 ? axis + rank : axis, k, largest);
  for (size_t o = 0; o < 2; ++o)
    EXPECT_EQ(testlib::compare_tensors(got[o], want[o]), "")
        << "output " << o << " of x " << ir::type_str(xt) << " axis " << axis << " k " << k << " largest " << largest;
}

TEST(CoverageReduce, TopK) {
  for (int64_t opset : {1, 10, 11})
    for (DType t : {DType::F32, DType::F64, DType::F16, DType::I32, DType::U8, DType::I64}) {
      if (opset < 11 && !ir::is_float(t)) continue;
      for (uint64_t seed = 1; seed <= 3; ++seed) check_topk(opset, t, seed);
    }
}

// K = 0 gives empty outputs.
TEST(CoverageReduce, TopKZero) {
  OnnxModel m = single_node("TopK", {{DType::F32, {3, 4}}}, 2, {}, 11);
  m.initializers.emplace_back("K", i64_tensor({1}, {0}));
  m.nodes[0].inputs.push_back("K");
  std::vector<Tensor> got = run(m, {Tensor(TensorType{DType::F32, {3, 4}})});
  EXPECT_EQ(got[0].type(), (TensorType{DType::F32, {3, 0}}));
  EXPECT_EQ(got[1].type(), (TensorType{DType::I64, {3, 0}}));
}

TEST(CoverageReduceErrors, TopK) {
  TensorType x{DType::F32, {2, 3}};
  OnnxModel runtime = single_node("TopK", {x, {DType::I64, {1}}}, 2, {}, 11);
  EXPECT_TRUE(is_unsupported(runtime));
  EXPECT_ERROR(runtime, "not supported: K computed at run time (input 1 'x1' must be a constant)");
  auto with_k = [&](std::vector<int64_t> k, Attrs attrs, int64_t opset, TensorType xt) {
    OnnxModel m = single_node("TopK", {xt}, 2, std::move(attrs), opset);
    m.initializers.emplace_back("K", i64_tensor({static_cast<int64_t>(k.size())}, k));
    m.nodes[0].inputs.push_back("K");
    return m;
  };
  EXPECT_ERROR(with_k({4}, {}, 11, x), "K = 4 is out of range for axis 1 of f32[2,3] (0 <= K <= 3)");
  EXPECT_ERROR(with_k({1, 2}, {}, 11, x), "K (input 1) has shape [2]; expected a single value");
  EXPECT_ERROR(with_k({1}, {{"largest", int64_t{0}}}, 10, x), "attribute 'largest' is not defined before version 11");
  EXPECT_ERROR(with_k({1}, {{"sorted", int64_t{3}}}, 11, x), "attribute 'sorted' = 3 must be 0 or 1");
  EXPECT_ERROR(with_k({1}, {}, 10, {DType::I32, {3}}), "input 0 has dtype i32; TopK-10 allows f16, f32, f64");
  EXPECT_ERROR(single_node("TopK", {x}, 2, {}, 1), "attribute 'k' is required");
  EXPECT_ERROR(single_node("TopK", {x}, 2, {{"k", int64_t{1}}, {"axis", int64_t{2}}}, 1),
               "axis 2 is out of range for rank 2");
}

}  // namespace
}  // namespace orchid
