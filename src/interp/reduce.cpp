#include "interp/reduce.h"

#include <cmath>
#include <limits>
#include <span>

#include "interp/lane_ops.h"
#include "support/error.h"

namespace orchid::interp::detail {

using ir::DType;
using ir::ReduceOp;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

// Runs f(state lane, body lane) for body lanes [0, n): state lane j, or 0 when Serial.
template <bool Serial, class F>
inline void each(int64_t n, F f) {
  for (int64_t j = 0; j < n; ++j) f(Serial ? 0 : j, j);
}

}  // namespace

Accumulator::Accumulator(ReduceOp op, std::vector<DType> body_dtypes, std::vector<DType> out_dtypes,
                         Precision p, int64_t lanes, bool empty_domain)
    : op_(op), body_dtypes_(std::move(body_dtypes)), out_dtypes_(std::move(out_dtypes)),
      precision_(p), empty_(empty_domain) {
  ORCHID_CHECK(op != ReduceOp::None && !body_dtypes_.empty() && !out_dtypes_.empty())
      << "accumulator of " << ir::reduce_op_name(op);
  ORCHID_CHECK(out_dtypes_.size() >= body_dtypes_.size())
      << "accumulator of " << body_dtypes_.size() << " bodies and " << out_dtypes_.size() << " outputs";
  // Body k's state is output k's (welford and maxsum: one body, both outputs of its dtype).
  for (DType t : std::span(out_dtypes_).first(body_dtypes_.size()))
    acc_dtypes_.push_back(ir::is_float(t) ? accumulator_dtype(t, p) : DType::F64);
  size_t slots = std::max<size_t>(body_dtypes_.size(), 2);
  f_.resize(slots);
  i_.resize(slots);
  for (size_t k = 0; k < slots; ++k) {
    f_[k].assign(static_cast<size_t>(lanes), 0.0);
    i_[k].assign(static_cast<size_t>(lanes), 0);
  }
  count_.assign(static_cast<size_t>(lanes), 0);
}

void Accumulator::reset(int64_t n) {
  auto fill = [n](auto& v, auto x) { std::fill(v.begin(), v.begin() + n, x); };
  fill(count_, int64_t{0});
  for (size_t k = 0; k < f_.size(); ++k) {
    bool u64 = k < body_dtypes_.size() && body_dtypes_[k] == DType::U64;
    switch (op_) {
      case ReduceOp::Sum: fill(f_[k], 0.0); fill(i_[k], int64_t{0}); break;
      case ReduceOp::Prod: fill(f_[k], 1.0); fill(i_[k], int64_t{1}); break;
      case ReduceOp::Max: fill(f_[k], -kInf); fill(i_[k], u64 ? 0 : kI64Min); break;
      case ReduceOp::Min: fill(f_[k], kInf); fill(i_[k], u64 ? -1 : kI64Max); break;
      case ReduceOp::ArgMax: case ReduceOp::ArgMin: fill(i_[k], int64_t{-1}); break;
      case ReduceOp::Welford: fill(f_[k], 0.0); break;
      case ReduceOp::MaxSum: fill(f_[k], k == 0 ? -kInf : 0.0); break;
      case ReduceOp::None: break;
    }
  }
}

void Accumulator::update(const std::vector<LaneRef>& bodies, int64_t n, bool serial) {
  ORCHID_CHECK(bodies.size() == body_dtypes_.size()) << "accumulator given " << bodies.size()
                                                     << " bodies";
  if (serial) {
    update_lanes<true>(bodies, n);
  } else {
    update_lanes<false>(bodies, n);
  }
}

template <bool Serial>
void Accumulator::update_lanes(const std::vector<LaneRef>& bodies, int64_t n) {
  switch (op_) {
    case ReduceOp::Sum:
    case ReduceOp::Prod: return update_sum_prod<Serial>(bodies, n);
    case ReduceOp::Max:
    case ReduceOp::Min: return update_max_min<Serial>(bodies, n);
    case ReduceOp::ArgMax:
    case ReduceOp::ArgMin: return update_arg<Serial>(bodies[0], bodies[1], n);
    case ReduceOp::Welford: return update_welford<Serial>(bodies[0], n);
    case ReduceOp::MaxSum: return update_maxsum<Serial>(bodies[0], n);
    case ReduceOp::None: break;
  }
  ORCHID_CHECK(false) << "no accumulator for " << ir::reduce_op_name(op_);
}

template <bool Serial>
void Accumulator::update_sum_prod(const std::vector<LaneRef>& bodies, int64_t n) {
  bool sum = op_ == ReduceOp::Sum;
  for (size_t k = 0; k < bodies.size(); ++k) {
    if (ir::is_float(body_dtypes_[k])) {
      double* a = f_[k].data();
      const double* v = bodies[k].f;
      bool exact = acc_dtypes_[k] == DType::F64;
      if (exact && sum) {
        each<Serial>(n, [&](int64_t s, int64_t j) { a[s] += v[j]; });
      } else if (exact) {
        each<Serial>(n, [&](int64_t s, int64_t j) { a[s] *= v[j]; });
      } else {
        each<Serial>(n, [&](int64_t s, int64_t j) { a[s] = round(sum ? a[s] + v[j] : a[s] * v[j], k); });
      }
    } else {
      int64_t* a = i_[k].data();
      const int64_t* v = bodies[k].i;
      each<Serial>(n, [&](int64_t s, int64_t j) {
        a[s] = sum ? wrap_add(a[s], v[j]) : wrap_mul(a[s], v[j]);
      });
    }
  }
}

template <bool Serial>
void Accumulator::update_max_min(const std::vector<LaneRef>& bodies, int64_t n) {
  bool max = op_ == ReduceOp::Max;
  for (size_t k = 0; k < bodies.size(); ++k) {
    if (ir::is_float(body_dtypes_[k])) {
      double* a = f_[k].data();
      const double* v = bodies[k].f;
      each<Serial>(n, [&](int64_t s, int64_t j) {
        a[s] = max ? nan_max(a[s], v[j]) : nan_min(a[s], v[j]);
      });
    } else {
      int64_t* a = i_[k].data();
      const int64_t* v = bodies[k].i;
      bool u64 = body_dtypes_[k] == DType::U64;
      each<Serial>(n, [&](int64_t s, int64_t j) {
        if (max ? int_less(a[s], v[j], u64) : int_less(v[j], a[s], u64)) a[s] = v[j];
      });
    }
  }
}

// The first non-NaN term becomes the best; later terms replace it only when strictly better
// (so ties keep the first), and a NaN never does.
template <bool Serial>
void Accumulator::update_arg(const LaneRef& value, const LaneRef& index, int64_t n) {
  bool max = op_ == ReduceOp::ArgMax;
  int64_t* has = count_.data();
  int64_t* idx = i_[1].data();
  if (ir::is_float(body_dtypes_[0])) {
    double* best = f_[0].data();
    const double* v = value.f;
    each<Serial>(n, [&](int64_t s, int64_t j) {
      if (v[j] != v[j]) return;
      if (!has[s] || (max ? v[j] > best[s] : v[j] < best[s])) {
        best[s] = v[j], idx[s] = index.i[j], has[s] = 1;
      }
    });
  } else {
    int64_t* best = i_[0].data();
    const int64_t* v = value.i;
    bool u64 = body_dtypes_[0] == DType::U64;
    each<Serial>(n, [&](int64_t s, int64_t j) {
      if (!has[s] || (max ? int_less(best[s], v[j], u64) : int_less(v[j], best[s], u64))) {
        best[s] = v[j], idx[s] = index.i[j], has[s] = 1;
      }
    });
  }
}

template <bool Serial>
void Accumulator::update_welford(const LaneRef& x, int64_t n) {
  double* mean = f_[0].data();
  double* m2 = f_[1].data();
  int64_t* count = count_.data();
  each<Serial>(n, [&](int64_t s, int64_t j) {
    double v = x.f[j];
    double c = static_cast<double>(++count[s]);
    double d = round(v - mean[s]);
    mean[s] = round(mean[s] + round(d / c));
    m2[s] = round(m2[s] + round(d * round(v - mean[s])));
  });
}

// Online softmax: m is the running max, s the sum of exp(term - m), rescaled when m grows.
template <bool Serial>
void Accumulator::update_maxsum(const LaneRef& x, int64_t n) {
  double* m = f_[0].data();
  double* sum = f_[1].data();
  each<Serial>(n, [&](int64_t s, int64_t j) {
    double v = x.f[j];
    if (v != v) {
      m[s] = sum[s] = v;
    } else if (v == -kInf) {
      return;  // adds exp(-inf) = 0
    } else if (v > m[s]) {
      double scale = round(std::exp(round(m[s] - v)));
      sum[s] = round(round(sum[s] * scale) + round(std::exp(round(v - v))));
      m[s] = v;
    } else {
      sum[s] = round(sum[s] + round(std::exp(round(v - m[s]))));
    }
  });
}

namespace {
// Copies float lanes to out at `at`, rounded to the output dtype in Own precision.
void put_f(Buffer* out, int64_t at, const double* v, int64_t n, Precision p) {
  double* d = out->f.data() + at;
  std::copy(v, v + n, d);
  round_lanes(d, n, rounding_dtype(out->type.dtype, p));
}
void put_i(Buffer* out, int64_t at, const int64_t* v, int64_t n) {
  int64_t* d = out->i.data() + at;
  std::copy(v, v + n, d);
  wrap_lanes(d, n, out->type.dtype);
}
void fill_f(Buffer* out, int64_t at, double v, int64_t n) {
  std::fill(out->f.begin() + at, out->f.begin() + at + n, v);
}
void fill_i(Buffer* out, int64_t at, int64_t v, int64_t n) {
  std::fill(out->i.begin() + at, out->i.begin() + at + n, ir::wrap_to_dtype(v, out->type.dtype));
}
}  // namespace

void Accumulator::store(const std::vector<Buffer*>& outs, int64_t at, int64_t n) const {
  if (empty_) return store_empty(outs, at, n);
  switch (op_) {
    case ReduceOp::Sum: case ReduceOp::Prod: case ReduceOp::Max: case ReduceOp::Min:
      for (size_t k = 0; k < outs.size(); ++k) {
        if (outs[k]->is_float()) {
          put_f(outs[k], at, f_[k].data(), n, precision_);
        } else {
          put_i(outs[k], at, i_[k].data(), n);
        }
      }
      return;
    case ReduceOp::ArgMax: case ReduceOp::ArgMin:
      store_empty(outs, at, n);  // the value of points without a best
      for (int64_t j = 0; j < n; ++j) {
        if (!count_[static_cast<size_t>(j)]) continue;
        if (outs[0]->is_float()) {
          put_f(outs[0], at + j, &f_[0][static_cast<size_t>(j)], 1, precision_);
        } else {
          put_i(outs[0], at + j, &i_[0][static_cast<size_t>(j)], 1);
        }
        put_i(outs[1], at + j, &i_[1][static_cast<size_t>(j)], 1);
      }
      return;
    case ReduceOp::Welford: {
      std::vector<double> var(static_cast<size_t>(n));
      for (size_t j = 0; j < var.size(); ++j)
        var[j] = round(f_[1][j] / static_cast<double>(count_[j]));
      put_f(outs[0], at, f_[0].data(), n, precision_);
      put_f(outs[1], at, var.data(), n, precision_);
      return;
    }
    case ReduceOp::MaxSum:
      put_f(outs[0], at, f_[0].data(), n, precision_);
      put_f(outs[1], at, f_[1].data(), n, precision_);
      return;
    case ReduceOp::None: break;
  }
  ORCHID_CHECK(false) << "no accumulator for " << ir::reduce_op_name(op_);
}

void Accumulator::store_empty(const std::vector<Buffer*>& outs, int64_t at, int64_t n) const {
  bool high = op_ == ReduceOp::Min || op_ == ReduceOp::ArgMin;
  switch (op_) {
    case ReduceOp::Sum: case ReduceOp::Prod: case ReduceOp::Max: case ReduceOp::Min:
    case ReduceOp::ArgMax: case ReduceOp::ArgMin:
      for (size_t k = 0; k < outs.size(); ++k) {
        Buffer* out = outs[k];
        DType t = out->type.dtype;
        bool arg_index = k == 1 && (op_ == ReduceOp::ArgMax || op_ == ReduceOp::ArgMin);
        bool extreme = op_ != ReduceOp::Sum && op_ != ReduceOp::Prod;
        if (out->is_float()) {
          fill_f(out, at, extreme ? (high ? kInf : -kInf) : (op_ == ReduceOp::Sum ? 0.0 : 1.0), n);
        } else {
          fill_i(out, at, arg_index ? -1
                          : extreme ? (high ? ir::dtype_highest(t) : ir::dtype_lowest(t))
                                    : (op_ == ReduceOp::Sum ? 0 : 1), n);
        }
      }
      return;
    case ReduceOp::Welford: fill_f(outs[0], at, kNaN, n); fill_f(outs[1], at, kNaN, n); return;
    case ReduceOp::MaxSum: fill_f(outs[0], at, -kInf, n); fill_f(outs[1], at, 0.0, n); return;
    case ReduceOp::None: break;
  }
  ORCHID_CHECK(false) << "no accumulator for " << ir::reduce_op_name(op_);
}

}  // namespace orchid::interp::detail
