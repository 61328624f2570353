// Differential tests of the reduction and softmax fission rules: each ONNX op, imported
// through the real loader, is run by the interpreter and compared with a naive reference on
// seeded random shapes, axes, keepdims, opsets and dtypes; plus the rules' error messages.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "interp/interp.h"
#include "support/error.h"
#include "testlib/errors.h"
#include "testlib/onnx_builder.h"
#include "testlib/tensors.h"

namespace orchid {
namespace {

using ir::DType;
using ir::Dims;
using ir::Tensor;
using ir::TensorType;
using testlib::import_model;
using testlib::OnnxModel;
using testlib::single_node;
using Attrs = std::vector<std::pair<std::string, frontend::Attribute>>;

constexpr double kInf = std::numeric_limits<double>::infinity();

Dims random_shape(Rng& rng, int64_t min_rank, int64_t max_rank) {
  Dims s(static_cast<size_t>(rng.range(min_rank, max_rank + 1)));
  for (auto& d : s) d = rng.range(1, 5);
  return s;
}

// A random subset of [0, rank), each axis written as itself or as its negative alias.
std::vector<int64_t> random_axes(Rng& rng, int64_t rank) {
  std::vector<int64_t> axes;
  for (int64_t a = 0; a < rank; ++a)
    if (rng.coin()) axes.push_back(rng.coin() ? a : a - rank);
  if (rng.coin()) std::reverse(axes.begin(), axes.end());
  return axes;
}

std::vector<int64_t> normalized(std::vector<int64_t> axes, int64_t rank) {
  if (axes.empty())
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  for (auto& a : axes) a = a < 0 ? a + rank : a;
  std::sort(axes.begin(), axes.end());
  return axes;
}

bool contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// The index of x's element `idx` in the reduced tensor (with keepdims).
Dims group_index(const Dims& idx, const std::vector<int64_t>& axes) {
  Dims g = idx;
  for (int64_t a : axes) g[static_cast<size_t>(a)] = 0;
  return g;
}

Dims kept_shape(const Dims& shape, const std::vector<int64_t>& axes) {
  Dims s = shape;
  for (int64_t a : axes) s[static_cast<size_t>(a)] = 1;
  return s;
}

// Naive reduction: acc = step(acc, x) from `init` over each group, then finish(acc, count).
struct RefReduce {
  double init;
  std::function<double(double, double)> step;
  std::function<double(double, int64_t)> finish = [](double a, int64_t) { return a; };
};

Tensor ref_reduce(const Tensor& x, const std::vector<int64_t>& axes, bool keepdims, const RefReduce& r) {
  Dims kept = kept_shape(x.shape(), axes);
  std::vector<double> acc(static_cast<size_t>(ir::numel(kept)), r.init);
  int64_t count = 1;
  for (int64_t a : axes) count *= x.shape()[static_cast<size_t>(a)];
  Dims idx(x.shape().size(), 0);
  for (int64_t i = 0; i < x.numel(); ++i, testlib::next_index(x.shape(), idx)) {
    auto& a = acc[static_cast<size_t>(testlib::flat_offset(kept, group_index(idx, axes)))];
    a = r.step(a, x.get_as_double(i));
  }
  Dims out_shape;
  for (size_t d = 0; d < kept.size(); ++d)
    if (keepdims || !contains(axes, static_cast<int64_t>(d))) out_shape.push_back(kept[d]);
  Tensor out(TensorType{x.dtype(), out_shape});
  for (size_t k = 0; k < acc.size(); ++k) {
    double v = r.finish(acc[k], count);
    if (ir::is_float(x.dtype())) out.set_f64(static_cast<int64_t>(k), v);
    else out.set_i64(static_cast<int64_t>(k), static_cast<int64_t>(std::trunc(v)));
  }
  return out;
}

// A Reduce* node over x0 with the axes as an attribute, or for ReduceSum from opset 13 as a
// constant input (omitted when empty).
OnnxModel reduce_model(const std::string& op, const TensorType& t, const std::vector<int64_t>& axes,
                       bool keepdims, int64_t opset, Attrs extra = {}) {
  Attrs attrs = std::move(extra);
  attrs.emplace_back("keepdims", int64_t{keepdims});
  bool axes_input = op == "ReduceSum" && opset >= 13;
  if (!axes_input && !axes.empty()) attrs.emplace_back("axes", axes);
  OnnxModel m = single_node(op, {t}, 1, attrs, opset);
  if (axes_input && !axes.empty()) {
    Tensor a(TensorType{DType::I64, {static_cast<int64_t>(axes.size())}});
    for (size_t k = 0; k < axes.size(); ++k) a.set_i64(static_cast<int64_t>(k), axes[k]);
    m.initializers.emplace_back("axes", a);
    m.nodes[0].inputs.push_back("axes");
  }
  return m;
}

struct ReduceCase {
  std::string op;
  RefReduce ref;
  std::vector<DType> dtypes;
  double lo = -3, hi = 3;
};

void check_reduce(const ReduceCase& c) {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE(c.op + " seed " + std::to_string(seed));
    Rng rng(seed * 104729 + c.op.size());
    DType dt = c.dtypes[static_cast<size_t>(rng.range(0, static_cast<int64_t>(c.dtypes.size())))];
    TensorType t{dt, random_shape(rng, 0, 4)};
    std::vector<int64_t> axes = random_axes(rng, t.rank());
    bool keepdims = rng.coin();
    static const int64_t kOpsets[] = {1, 11, 13};
    int64_t opset = kOpsets[rng.range(0, 3)];
    Tensor x = testlib::random_tensor(t, rng, c.lo, c.hi);
    ir::Graph g = import_model(reduce_model(c.op, t, axes, keepdims, opset));
    Tensor want = ref_reduce(x, normalized(axes, t.rank()), keepdims, c.ref);
    EXPECT_EQ(testlib::compare_tensors(interp::run(g, {x})[0], want, 1e-5, 1e-5), "")
        << "shape " << ir::dims_str(t.shape) << " dtype " << ir::dtype_name(dt) << " opset " << opset;
  }
}

const std::vector<DType> kFloats = {DType::F32, DType::F64};
const std::vector<DType> kNumeric = {DType::F32, DType::F64, DType::I32, DType::I64};

double add(double a, double b) { return a + b; }

TEST(ReduceFission, ReduceSum) { check_reduce({"ReduceSum", {0, add}, kNumeric}); }

TEST(ReduceFission, ReduceMean) {
  check_reduce({"ReduceMean", {0, add, [](double a, int64_t n) { return a / static_cast<double>(n); }}, kNumeric});
}

TEST(ReduceFission, ReduceMax) {
  check_reduce({"ReduceMax", {-kInf, [](double a, double b) { return std::max(a, b); }}, kNumeric});
}

TEST(ReduceFission, ReduceMin) {
  check_reduce({"ReduceMin", {kInf, [](double a, double b) { return std::min(a, b); }}, kNumeric});
}

TEST(ReduceFission, ReduceProd) {
  check_reduce({"ReduceProd", {1, [](double a, double b) { return a * b; }}, kNumeric, 0.5, 1.5});
}

TEST(ReduceFission, ReduceSumSquare) {
  check_reduce({"ReduceSumSquare", {0, [](double a, double b) { return a + b * b; }}, kNumeric});
}

TEST(ReduceFission, ReduceL1) {
  check_reduce({"ReduceL1", {0, [](double a, double b) { return a + std::fabs(b); }}, kNumeric});
}

TEST(ReduceFission, ReduceL2) {
  check_reduce({"ReduceL2",
                {0, [](double a, double b) { return a + b * b; }, [](double a, int64_t) { return std::sqrt(a); }},
                kFloats});
}

TEST(ReduceFission, ReduceLogSum) {
  check_reduce({"ReduceLogSum", {0, add, [](double a, int64_t) { return std::log(a); }}, kFloats, 0.1, 2});
}

TEST(ReduceFission, ReduceLogSumExp) {  // large terms: the rule must not overflow
  check_reduce({"ReduceLogSumExp",
                {0, [](double a, double b) { return a + std::exp(b); }, [](double a, int64_t) { return std::log(a); }},
                kFloats, -80, 80});
}

// ReduceSum-13 with noop_with_empty_axes: no axes is the identity, given axes still reduce.
TEST(ReduceFission, ReduceSumNoopWithEmptyAxes) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Rng rng(seed);
    TensorType t{DType::F32, random_shape(rng, 1, 4)};
    Tensor x = testlib::random_tensor(t, rng);
    Attrs noop = {{"noop_with_empty_axes", int64_t{1}}};
    ir::Graph id = import_model(reduce_model("ReduceSum", t, {}, true, 13, noop));
    EXPECT_EQ(testlib::compare_tensors(interp::run(id, {x})[0], x), "");
    std::vector<int64_t> axes = {t.rank() - 1};
    ir::Graph g = import_model(reduce_model("ReduceSum", t, axes, false, 13, noop));
    EXPECT_EQ(testlib::compare_tensors(interp::run(g, {x})[0], ref_reduce(x, axes, false, {0, add})), "");
  }
}

// An axes input fed at run time whose static shape is [0] is known to be empty.
TEST(ReduceFission, ReduceSumEmptyRuntimeAxes) {
  TensorType t{DType::F32, {2, 3}};
  OnnxModel m = single_node("ReduceSum", {t, {DType::I64, {0}}}, 1, {{"keepdims", int64_t{0}}}, 13);
  Rng rng(5);
  Tensor x = testlib::random_tensor(t, rng);
  Tensor none(TensorType{DType::I64, {0}});
  Tensor got = interp::run(import_model(m), {x, none})[0];
  EXPECT_EQ(testlib::compare_tensors(got, ref_reduce(x, {0, 1}, false, {0, add})), "");
}

// Reductions over an empty set: sums give 0, means NaN, max/min the extremes of the dtype.
TEST(ReduceFission, EmptyReductionDomain) {
  struct Case {
    std::string op;
    DType dt;
    double want;
  };
  const Case cases[] = {
      {"ReduceMax", DType::I32, std::numeric_limits<int32_t>::min()},
      {"ReduceMin", DType::I32, std::numeric_limits<int32_t>::max()},
      {"ReduceMax", DType::U32, 0},
      {"ReduceMin", DType::U32, std::numeric_limits<uint32_t>::max()},
      {"ReduceMax", DType::F32, -kInf},
      {"ReduceMin", DType::F32, kInf},
      {"ReduceSum", DType::I64, 0},
      {"ReduceProd", DType::F32, 1},
      {"ReduceMean", DType::F32, std::nan("")},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op + " " + std::string(ir::dtype_name(c.dt)));
    TensorType t{c.dt, {2, 0, 3}};
    ir::Graph g = import_model(reduce_model(c.op, t, {1}, false, 11));
    Tensor got = interp::run(g, {Tensor(t)})[0];
    Tensor want(TensorType{c.dt, {2, 3}});
    for (int64_t i = 0; i < want.numel(); ++i) {
      if (ir::is_float(c.dt)) want.set_f64(i, c.want);
      else want.set_i64(i, static_cast<int64_t>(c.want));
    }
    EXPECT_EQ(testlib::compare_tensors(got, want), "");
  }
}

// ---- Softmax and LogSoftmax ----

// Naive (log-)softmax over the groups of `axes`, in the textbook max-shifted form.
Tensor ref_softmax(const Tensor& x, const std::vector<int64_t>& axes, bool log) {
  Tensor m = ref_reduce(x, axes, true, {-kInf, [](double a, double b) { return std::max(a, b); }});
  Dims kept = kept_shape(x.shape(), axes);
  std::vector<double> sum(static_cast<size_t>(ir::numel(kept)), 0.0);
  Dims idx(x.shape().size(), 0);
  for (int64_t i = 0; i < x.numel(); ++i, testlib::next_index(x.shape(), idx)) {
    int64_t g = testlib::flat_offset(kept, group_index(idx, axes));
    sum[static_cast<size_t>(g)] += std::exp(x.get_f64(i) - m.get_f64(g));
  }
  Tensor out(x.type());
  idx.assign(x.shape().size(), 0);
  for (int64_t i = 0; i < x.numel(); ++i, testlib::next_index(x.shape(), idx)) {
    int64_t g = testlib::flat_offset(kept, group_index(idx, axes));
    double d = x.get_f64(i) - m.get_f64(g), s = sum[static_cast<size_t>(g)];
    out.set_f64(i, log ? d - std::log(s) : std::exp(d) / s);
  }
  return out;
}

void check_softmax(const std::string& op) {
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE(op + " seed " + std::to_string(seed));
    Rng rng(seed * 7907);
    static const int64_t kOpsets[] = {1, 11, 13};
    int64_t opset = kOpsets[rng.range(0, 3)];
    TensorType t{rng.coin(0.75) ? DType::F32 : DType::F64, random_shape(rng, 1, 4)};
    Attrs attrs;
    int64_t axis = opset >= 13 ? -1 : 1;
    if (rng.coin(0.8) || (opset < 13 && t.rank() == 1)) {
      axis = rng.range(-t.rank(), t.rank());
      attrs.emplace_back("axis", axis);
    }
    if (axis < 0) axis += t.rank();
    std::vector<int64_t> axes = {axis};
    for (int64_t a = axis + 1; opset < 13 && a < t.rank(); ++a) axes.push_back(a);
    Tensor x = testlib::random_tensor(t, rng, seed % 3 == 0 ? -500 : -4, seed % 3 == 0 ? 500 : 4);
    ir::Graph g = import_model(single_node(op, {t}, 1, attrs, opset));
    EXPECT_EQ(testlib::compare_tensors(interp::run(g, {x})[0], ref_softmax(x, axes, op == "LogSoftmax"), 1e-5, 1e-6),
              "")
        << "shape " << ir::dims_str(t.shape) << " axis " << axis << " opset " << opset;
  }
}

TEST(ReduceFission, Softmax) { check_softmax("Softmax"); }
TEST(ReduceFission, LogSoftmax) { check_softmax("LogSoftmax"); }

// 16-bit floats in the interpreter's own precision (every result rounded to f16).
TEST(ReduceFission, SoftmaxHalfOwnPrecision) {
  for (const std::string op : {"Softmax", "LogSoftmax"}) {
    SCOPED_TRACE(op);
    Rng rng(21);
    TensorType t{DType::F16, {3, 40}};
    Tensor x = testlib::random_tensor(t, rng, -6, 6);
    ir::Graph g = import_model(single_node(op, {t}, 1, {}, 13));
    Tensor got = interp::run(g, {x}, {interp::Precision::Own, false})[0];
    EXPECT_EQ(testlib::compare_tensors(got, ref_softmax(x, {1}, op == "LogSoftmax"), 1e-2, 1e-3), "");
  }
}

TEST(ReduceFission, SoftmaxOfEmptyTensor) {
  for (int64_t opset : {11, 13}) {
    TensorType t{DType::F32, {2, 0, 3}};
    Tensor y = interp::run(import_model(single_node("Softmax", {t}, 1, {}, opset)), {Tensor(t)})[0];
    EXPECT_EQ(y.type(), t);
  }
}

// Korch's rule: max-reduce, exp, sum-reduce, divide — two reductions, two elementwise maps.
TEST(ReduceFission, SoftmaxIsKorchFission) {
  ir::Graph g = import_model(single_node("Softmax", {{DType::F32, {4, 8}}}, 1, {}, 13));
  std::vector<std::string> ops;
  for (const auto& n : g.nodes())
    ops.push_back(std::string(ir::prim_op_name(n.op)) +
                  (n.op == ir::PrimOp::Reduce ? " " + std::string(ir::reduce_op_name(n.reduce)) : ""));
  EXPECT_EQ(ops, (std::vector<std::string>{"reduce max", "elementwise", "reduce sum", "elementwise"}));
}

// ---- Errors ----

std::string error_of(const OnnxModel& m) {
  return testlib::error_of([&] { import_model(m); });
}

bool is_unsupported(const OnnxModel& m) {
  try {
    import_model(m);
  } catch (const UnsupportedError&) {
    return true;
  } catch (const UserError&) {
  }
  return false;
}

TEST(ReduceFissionErrors, AxisOutOfRange) {
  OnnxModel m = reduce_model("ReduceMax", {DType::F32, {2, 3, 4}}, {3}, true, 13);
  EXPECT_NE(error_of(m).find("axis 3 is out of range for rank 3"), std::string::npos) << error_of(m);
  OnnxModel s = reduce_model("ReduceSum", {DType::F32, {2, 3}}, {-3}, true, 13);
  EXPECT_NE(error_of(s).find("axis -3 is out of range for rank 2"), std::string::npos) << error_of(s);
}

TEST(ReduceFissionErrors, RepeatedAxis) {
  OnnxModel m = reduce_model("ReduceMean", {DType::F32, {2, 3, 4}}, {1, -2}, true, 11);
  EXPECT_NE(error_of(m).find("axis -2 appears twice in axes"), std::string::npos) << error_of(m);
}

TEST(ReduceFissionErrors, RuntimeAxesAreUnsupported) {
  OnnxModel m = single_node("ReduceSum", {{DType::F32, {2, 3}}, {DType::I64, {1}}}, 1, {}, 13);
  EXPECT_TRUE(is_unsupported(m));
  EXPECT_NE(error_of(m).find("not supported: axes computed at run time (input 1 'axes' must be a constant)"),
            std::string::npos)
      << error_of(m);
}

TEST(ReduceFissionErrors, SoftmaxAxisOutOfRange) {
  OnnxModel m = single_node("Softmax", {{DType::F32, {2, 3}}}, 1, {{"axis", int64_t{2}}}, 13);
  EXPECT_NE(error_of(m).find("(Softmax, opset 13): axis 2 is out of range for rank 2"), std::string::npos)
      << error_of(m);
  OnnxModel l = single_node("LogSoftmax", {{DType::F32, {2, 3}}}, 1, {{"axis", int64_t{-3}}}, 11);
  EXPECT_NE(error_of(l).find("axis -3 is out of range for rank 2"), std::string::npos) << error_of(l);
}

}  // namespace
}  // namespace orchid
