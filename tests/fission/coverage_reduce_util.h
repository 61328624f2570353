// Helpers shared by the coverage_reduce_*_test.cpp differential tests (arg-reductions, scans,
// top-k, normalizations, Lp pooling, Einsum, losses): seeded shapes, running one imported
// node, error messages, and walking the lines of a tensor along one axis.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "interp/interp.h"
#include "support/error.h"
#include "testlib/errors.h"
#include "testlib/onnx_builder.h"
#include "testlib/tensors.h"

namespace orchid::coverage {

using ir::DType;
using ir::Dims;
using ir::Tensor;
using ir::TensorType;
using testlib::import_model;
using testlib::OnnxModel;
using testlib::single_node;
using Attrs = std::vector<std::pair<std::string, frontend::Attribute>>;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

inline Dims random_shape(Rng& rng, int64_t min_rank, int64_t max_rank, int64_t max_dim = 4) {
  Dims s(static_cast<size_t>(rng.range(min_rank, max_rank + 1)));
  for (auto& d : s) d = rng.range(1, max_dim + 1);
  return s;
}

// Random data whose values often tie: integers in [lo, hi) (floats too), with NaN and
// infinities sprinkled into floats when `specials`.
inline Tensor tie_tensor(const TensorType& t, Rng& rng, int64_t lo, int64_t hi, bool specials) {
  Tensor x(t);
  for (int64_t i = 0; i < x.numel(); ++i) {
    auto v = static_cast<double>(rng.range(lo, hi));
    if (ir::is_float(t.dtype) && specials && rng.coin(0.15)) v = rng.coin() ? kNaN : (rng.coin() ? kInf : -kInf);
    if (ir::is_float(t.dtype)) x.set_f64(i, v);
    else x.set_i64(i, static_cast<int64_t>(v));
  }
  return x;
}

inline Tensor i64_tensor(const Dims& shape, const std::vector<int64_t>& v) {
  Tensor t(TensorType{DType::I64, shape});
  for (size_t k = 0; k < v.size(); ++k) t.set_i64(static_cast<int64_t>(k), v[k]);
  return t;
}

inline std::vector<Tensor> run(const OnnxModel& m, const std::vector<Tensor>& inputs) {
  return interp::run(import_model(m), inputs);
}

inline std::string error_of(const OnnxModel& m) {
  return testlib::error_of([&] { import_model(m); });
}

inline bool is_unsupported(const OnnxModel& m) {
  try {
    import_model(m);
  } catch (const UnsupportedError&) {
    return true;
  } catch (const UserError&) {
  }
  return false;
}

#define EXPECT_ERROR(model, text) \
  EXPECT_NE(coverage::error_of(model).find(text), std::string::npos) << coverage::error_of(model)

// A tensor of `shape` seen as lines along `axis`: [outer, len, inner].
struct Lines {
  int64_t outer = 1, len = 1, inner = 1;
  Lines(const Dims& shape, int64_t axis) {
    for (size_t d = 0; d < shape.size(); ++d) {
      auto a = static_cast<size_t>(axis);
      (d < a ? outer : d == a ? len : inner) *= shape[d];
    }
  }
  int64_t count() const { return outer * inner; }
  // Flat offset of element t of line `line` in a tensor whose axis has length `n`.
  int64_t at(int64_t line, int64_t t, int64_t n) const {
    return ((line / inner) * n + t) * inner + line % inner;
  }
  int64_t at(int64_t line, int64_t t) const { return at(line, t, len); }
};

// numpy's argmax / argmin of one line: ties give the first index (the last when `last`); a
// NaN wins over every number.
inline int64_t ref_arg(const Tensor& x, const Lines& l, int64_t line, bool max, bool last) {
  int64_t best = -1;
  for (int64_t s = 0; s < l.len; ++s) {
    int64_t t = last ? l.len - 1 - s : s;
    double v = x.get_as_double(l.at(line, t));
    if (best < 0) {
      best = t;
      continue;
    }
    double b = x.get_as_double(l.at(line, best));
    if (std::isnan(b)) continue;
    if (std::isnan(v) || (max ? v > b : v < b)) best = t;
  }
  return best;
}

}  // namespace orchid::coverage
