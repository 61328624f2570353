// The interpreter on random graphs (tests/testlib/random_graph.h): Own precision agrees with
// F64 within each output's error budget (the roundoff of the least precise float dtype on its
// path times the roundings along it; the generator keeps numerics tame and feeds discontinuous
// operators only exact values, so integer results agree exactly), and run_all agrees with run.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include "interp/interp.h"
#include "interp/random_inputs.h"
#include "ir/printer.h"
#include "support/error.h"
#include "testlib/random_graph.h"

namespace orchid::testlib {
namespace {

using namespace orchid::ir;  // NOLINT
using interp::Options;
using interp::Precision;

// Own-precision results are compared with the F64 reference in units of an error budget:
//   |own - ref| <= kSlack * u * budget * (|ref| + S)
// where u is the unit roundoff of the least precise float dtype on the output's path (a f64
// output computed from f16 values is as accurate as f16), budget counts the roundings along
// the path (each float operator of a body, the length of each accumulation — sums, products,
// softmax pairs, Welford, cumsum — and one per linear primitive), and S = max(1, largest |ref|
// in the tensor): the generator keeps values O(1) and the terms of a sum bounded by about 64
// in all, so S stands for the magnitude of what the rounding errors are relative to.
constexpr double kSlack = 2;

double unit_roundoff(DType t) {
  switch (t) {
    case DType::F64: return 0x1p-53;
    case DType::F32: return 0x1p-24;
    case DType::F16: return 0x1p-11;
    case DType::BF16: return 0x1p-8;
    case DType::I8: case DType::I16: case DType::I32: case DType::I64: case DType::U8:
    case DType::U16: case DType::U32: case DType::U64: case DType::Bool:
      break;
  }
  return 0;
}

struct Budget {
  double u = 0;       // unit roundoff of the least precise float dtype on the path
  double count = 0;   // roundings along the path
};

// Roundings an accumulation of the node adds (0 when it has none).
double accumulation_length(const Primitive& p) {
  switch (p.reduce) {
    case ReduceOp::Sum: case ReduceOp::Prod: case ReduceOp::Welford: case ReduceOp::MaxSum:
      return p.op == PrimOp::Reduce ? static_cast<double>(numel(p.reduce_domain)) : 1;
    case ReduceOp::None: case ReduceOp::Max: case ReduceOp::Min: case ReduceOp::ArgMax:
    case ReduceOp::ArgMin:
      break;
  }
  if (const auto* o = std::get_if<OpaqueAttrs>(&p.attrs); o && o->routine == OpaqueRoutine::CumSum)
    return static_cast<double>(p.domain[static_cast<size_t>(o->param("axis"))]);
  return 0;
}

// The error budget of every value (inputs and constants are the same in both precisions).
std::vector<Budget> error_budgets(const Graph& g) {
  std::vector<Budget> b(static_cast<size_t>(g.num_values()));
  for (const Primitive& p : g.nodes()) {
    Budget n;
    for (ValueId in : p.inputs) {
      n.u = std::max(n.u, b[static_cast<size_t>(in.v)].u);
      n.count = std::max(n.count, b[static_cast<size_t>(in.v)].count);
    }
    for (ValueId out : p.outputs) n.u = std::max(n.u, unit_roundoff(g.type(out).dtype));
    for (const Expr& body : p.bodies)
      visit_post(body, [&](const Expr& e) {
        n.u = std::max(n.u, unit_roundoff(e.dtype()));
        if (is_float(e.dtype()) && e.op() != ExprOp::Load && e.op() != ExprOp::Const) n.count += 1;
      });
    n.count += 1 + accumulation_length(p);
    for (ValueId out : p.outputs) b[static_cast<size_t>(out.v)] = n;
  }
  return b;
}

// The largest normalised error |own - ref| / (|ref| + S) of a float tensor (0 for integers,
// which must match exactly, else infinity), or infinity where NaN or infinities differ.
double normalised_error(const Tensor& own, const Tensor& ref) {
  double scale = 1;
  for (int64_t i = 0; i < ref.numel(); ++i)
    if (std::isfinite(ref.get_as_double(i))) scale = std::max(scale, std::fabs(ref.get_as_double(i)));
  double worst = 0;
  for (int64_t i = 0; i < ref.numel(); ++i) {
    if (!is_float(own.dtype())) {
      if (own.get_i64(i) != ref.get_i64(i)) return INFINITY;
      continue;
    }
    double a = own.get_f64(i), b = ref.get_f64(i);
    if (std::isnan(a) || std::isnan(b) || std::isinf(a) || std::isinf(b)) {
      if (!(std::isnan(a) && std::isnan(b)) && a != b) return INFINITY;
      continue;
    }
    worst = std::max(worst, std::fabs(a - b) / (std::fabs(b) + scale));
  }
  return worst;
}

std::string first_difference(const Tensor& own, const Tensor& ref) {
  std::ostringstream out;
  for (int64_t i = 0; i < ref.numel(); ++i) {
    double a = own.get_as_double(i), b = ref.get_as_double(i);
    if (a != b && !(std::isnan(a) && std::isnan(b))) {
      out << "element " << i << ": own " << a << ", f64 " << b;
      return out.str();
    }
  }
  return "no difference";
}

// Runs g in both precisions and checks every output; keeps the worst error (in units of the
// error budget) per output dtype.
void check_precisions(const Graph& g, uint64_t seed, std::map<DType, double>& worst) {
  std::vector<Tensor> inputs = interp::random_inputs(g, seed);
  std::vector<Tensor> ref, own;
  try {
    ref = interp::run(g, inputs, Options{Precision::F64, true});
    own = interp::run(g, inputs, Options{Precision::Own, false});
  } catch (const std::exception& e) {
    ADD_FAILURE() << "seed " << seed << ": " << e.what() << "\n" << print_graph(g);
    return;
  }
  ASSERT_EQ(ref.size(), g.outputs().size());
  ASSERT_EQ(own.size(), g.outputs().size());
  std::vector<Budget> budgets = error_budgets(g);
  for (size_t k = 0; k < own.size(); ++k) {
    const Value& v = g.value(g.outputs()[k]);
    ASSERT_EQ(own[k].type(), v.type) << "seed " << seed << " output %" << v.name;
    ASSERT_EQ(ref[k].shape(), v.type.shape) << "seed " << seed << " output %" << v.name;
    double err = normalised_error(own[k], ref[k]);
    const Budget& b = budgets[static_cast<size_t>(g.outputs()[k].v)];
    double units = err == 0 ? 0 : b.u == 0 ? INFINITY : err / (b.u * b.count);
    worst[v.type.dtype] = std::max(worst[v.type.dtype], units);
    EXPECT_LE(units, kSlack) << "seed " << seed << ": output %" << v.name << " ("
                             << type_str(v.type) << ", roundoff " << b.u << " x " << b.count
                             << ") differs between Own and F64 precision by " << err
                             << " (normalised), " << first_difference(own[k], ref[k]) << "\n"
                             << print_graph(g);
  }
}

void print_worst(const std::map<DType, double>& worst) {
  std::cout << "worst Own-vs-F64 error in units of the error budget, per output dtype:";
  for (const auto& [t, e] : worst) std::cout << " " << dtype_name(t) << "=" << e;
  std::cout << "\n";
}

TEST(RandomGraphInterp, OwnPrecisionAgreesWithF64OnFloatGraphs) {
  RandomGraphOptions opts;
  opts.float_only = true;
  std::map<DType, double> worst;
  for (uint64_t seed = 0; seed < 200; ++seed) check_precisions(random_graph(seed, opts), seed, worst);
  print_worst(worst);
}

// Graphs of every dtype: integer and bool results must match exactly (they only ever depend on
// exact values), floats within the same tolerances.
TEST(RandomGraphInterp, OwnPrecisionAgreesWithF64OnAllDTypes) {
  std::map<DType, double> worst;
  for (uint64_t seed = 0; seed < 200; ++seed) check_precisions(random_graph(seed), seed, worst);
  print_worst(worst);
}

// Bitwise equality, NaN matching NaN.
bool identical(const Tensor& a, const Tensor& b) {
  if (a.type() != b.type()) return false;
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = a.get_as_double(i), y = b.get_as_double(i);
    bool nan = std::isnan(x) && std::isnan(y);
    if (!nan && (is_float(a.dtype()) ? std::signbit(x) != std::signbit(y) || x != y
                                     : a.get_i64(i) != b.get_i64(i)))
      return false;
  }
  return true;
}

// The same values, whatever the tensor types (run_all may hold floats as f64).
bool same_values(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return false;
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = a.get_as_double(i), y = b.get_as_double(i);
    if (x != y && !(std::isnan(x) && std::isnan(y))) return false;
  }
  return true;
}

TEST(RandomGraphInterp, RunAllAgreesWithRun) {
  const Options kOptions[] = {{Precision::F64, false}, {Precision::F64, true}, {Precision::Own, false}};
  for (uint64_t seed = 0; seed < 100; ++seed) {
    Graph g = random_graph(seed);
    std::vector<Tensor> inputs = interp::random_inputs(g, seed);
    for (const Options& opts : kOptions) {
      std::string what = "seed " + std::to_string(seed) + (opts.precision == Precision::F64 ? " f64" : " own") +
                         (opts.f64_outputs ? " f64_outputs" : "");
      std::vector<Tensor> outs, all;
      try {
        outs = interp::run(g, inputs, opts);
        all = interp::run_all(g, inputs, opts);
      } catch (const std::exception& e) {
        ADD_FAILURE() << what << ": " << e.what() << "\n" << print_graph(g);
        continue;
      }
      ASSERT_EQ(all.size(), static_cast<size_t>(g.num_values())) << what;
      for (size_t k = 0; k < outs.size(); ++k)
        EXPECT_TRUE(identical(all[static_cast<size_t>(g.outputs()[k].v)], outs[k]))
            << what << ": run_all and run differ on output %" << g.value(g.outputs()[k]).name
            << "\n" << print_graph(g);
      for (size_t k = 0; k < inputs.size(); ++k)
        EXPECT_TRUE(same_values(all[static_cast<size_t>(g.inputs()[k].v)], inputs[k]))
            << what << ": run_all changes input %" << g.value(g.inputs()[k]).name;
      for (int32_t v = 0; v < g.num_values(); ++v) {
        const Value& val = g.value(ValueId(v));
        const Tensor& t = all[static_cast<size_t>(v)];
        EXPECT_EQ(t.shape(), val.type.shape) << what << ": %" << val.name;
        EXPECT_TRUE(val.origin != ValueOrigin::Constant || same_values(t, g.constant(ValueId(v))))
            << what << ": constant %" << val.name;
      }
    }
  }
}

// random_inputs keeps indirect indices inside the extents they index: every gather runs.
TEST(RandomGraphInterp, RandomInputsAreDeterministic) {
  for (uint64_t seed = 0; seed < 50; ++seed) {
    Graph g = random_graph(seed);
    std::vector<Tensor> a = interp::random_inputs(g, seed), b = interp::random_inputs(g, seed);
    ASSERT_EQ(a.size(), g.inputs().size());
    for (size_t k = 0; k < a.size(); ++k) {
      EXPECT_EQ(a[k].type(), g.type(g.inputs()[k])) << "seed " << seed;
      EXPECT_TRUE(identical(a[k], b[k])) << "seed " << seed;
    }
  }
}

}  // namespace
}  // namespace orchid::testlib
