// Library routines behind opaque primitives (opaque.def, docs/ir.md "Opaque routines").
#include <algorithm>
#include <cmath>
#include <numeric>

#include "interp/kernels.h"
#include "interp/lane_ops.h"
#include "support/error.h"

namespace orchid::interp::detail {

namespace {

// A tensor seen as [outer, len, inner] around one axis.
struct Lines {
  int64_t outer = 1, len = 1, inner = 1;
  Lines(const ir::Dims& shape, int64_t axis) {
    for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
      int64_t e = shape[static_cast<size_t>(d)];
      if (d < axis) outer *= e;
      if (d == axis) len = e;
      if (d > axis) inner *= e;
    }
  }
  // Flat offset of element t of line (o, i).
  int64_t at(int64_t o, int64_t t, int64_t i, int64_t line_len) const {
    return (o * line_len + t) * inner + i;
  }
};

int64_t param(const NodeEval& ne, const char* name, int64_t lo, int64_t hi) {
  int64_t v = std::get<ir::OpaqueAttrs>(ne.prim().attrs).param(name);
  ORCHID_USER_CHECK(v >= lo && v <= hi)
      << ne.label() << ": parameter " << name << "=" << v << " outside [" << lo << ", " << hi << "]";
  return v;
}

// ONNX CumSum. Float sums accumulate like a reduction's (accumulator_dtype) and each output
// is rounded once to the dtype in Own precision; integers are exact in i64, wrapped at the end.
void cumsum(NodeEval& ne) {
  const Buffer& x = *ne.in[0];
  Buffer& y = ne.out[0];
  int64_t axis = param(ne, "axis", 0, x.type.rank() - 1);
  bool exclusive = param(ne, "exclusive", 0, 1), reverse = param(ne, "reverse", 0, 1);
  ir::DType acc_t = accumulator_dtype(x.type.dtype, ne.precision);
  Lines l(x.type.shape, axis);
  for (int64_t o = 0; o < l.outer; ++o) {
    for (int64_t i = 0; i < l.inner; ++i) {
      double fs = 0;
      int64_t is = 0;
      for (int64_t s = 0; s < l.len; ++s) {
        int64_t at = l.at(o, reverse ? l.len - 1 - s : s, i, l.len);
        if (x.is_float()) {
          if (exclusive) y.f[at] = fs;
          fs = ir::round_to_dtype(fs + x.f[at], acc_t);
          if (!exclusive) y.f[at] = fs;
        } else {
          if (exclusive) y.i[at] = is;
          is = wrap_add(is, x.i[at]);
          if (!exclusive) y.i[at] = is;
        }
      }
    }
  }
  if (y.is_float()) {
    round_lanes(y.f.data(), y.numel(), rounding_dtype(y.type.dtype, ne.precision));
  } else {
    wrap_lanes(y.i.data(), y.numel(), y.type.dtype);
  }
}

// Whether element a goes before element b: larger (or smaller) first, NaN counting as larger
// than every number; std::stable_sort keeps equal elements in index order.
struct TopKOrder {
  const Buffer& x;
  bool largest;
  bool u64;
  bool operator()(int64_t a, int64_t b) const {
    if (x.is_float()) {
      double u = x.f[a], v = x.f[b];
      if (largest) return std::isnan(u) ? !std::isnan(v) : (!std::isnan(v) && u > v);
      return std::isnan(u) ? false : (std::isnan(v) || u < v);
    }
    return largest ? int_less(x.i[b], x.i[a], u64) : int_less(x.i[a], x.i[b], u64);
  }
};

// ONNX TopK; the interpreter always sorts.
void topk(NodeEval& ne) {
  const Buffer& x = *ne.in[0];
  int64_t axis = param(ne, "axis", 0, x.type.rank() - 1);
  int64_t len = x.type.shape[static_cast<size_t>(axis)];
  int64_t k = param(ne, "k", 1, len);
  bool largest = param(ne, "largest", 0, 1);
  param(ne, "sorted", 0, 1);
  Buffer& values = ne.out[0];
  Buffer& indices = ne.out[1];
  ORCHID_CHECK(values.type.dtype == x.type.dtype && indices.type.dtype == ir::DType::I64)
      << ne.label() << ": topk outputs of the wrong dtypes";
  Lines l(x.type.shape, axis);
  TopKOrder order{x, largest, x.type.dtype == ir::DType::U64};
  std::vector<int64_t> line(static_cast<size_t>(len));
  for (int64_t o = 0; o < l.outer; ++o) {
    for (int64_t i = 0; i < l.inner; ++i) {
      for (int64_t t = 0; t < len; ++t) line[static_cast<size_t>(t)] = l.at(o, t, i, len);
      std::stable_sort(line.begin(), line.end(), order);
      for (int64_t t = 0; t < k; ++t) {
        int64_t src = line[static_cast<size_t>(t)], dst = l.at(o, t, i, k);
        if (x.is_float()) {
          values.f[dst] = x.f[src];
        } else {
          values.i[dst] = x.i[src];
        }
        indices.i[dst] = (src / l.inner) % len;
      }
    }
  }
}

// ---- scatter_elements, scatter_nd: out = data, then each update written (or added, or
// multiplied) in row-major order of the updates. ----

enum Reduction : int64_t { kNone = 0, kAdd = 1, kMul = 2 };

// Where index v (an element of integer dtype t) lands along dim `dim` of size n: negative
// values count from the end; a value outside [-n, n) is a run-time error.
int64_t scatter_index(const NodeEval& ne, int64_t v, ir::DType t, int64_t dim, int64_t n) {
  bool u64 = t == ir::DType::U64;
  int64_t at = !u64 && v < 0 ? v + n : v;
  if (at >= 0 && at < n && !(u64 && v < 0)) return at;
  std::string shown = u64 ? std::to_string(static_cast<uint64_t>(v)) : std::to_string(v);
  std::string routine(ir::opaque_routine_name(std::get<ir::OpaqueAttrs>(ne.prim().attrs).routine));
  ORCHID_USER_ERROR() << ne.label() << ": " << routine << " index " << shown
                      << " is out of range for dimension " << dim << " of size " << n;
  return 0;
}

// y[dst] = u[src], or y[dst] + u[src], or y[dst] * u[src] (bool: or, and); floats rounded to
// `round_t`, integers wrapped later.
void combine(Buffer& y, int64_t dst, const Buffer& u, int64_t src, int64_t red, ir::DType round_t) {
  if (y.is_float()) {
    double a = y.f[dst], b = u.f[src];
    y.f[dst] = red == kNone ? b : ir::round_to_dtype(red == kAdd ? a + b : a * b, round_t);
    return;
  }
  int64_t a = y.i[dst], b = u.i[src];
  if (red == kNone) {
    y.i[dst] = b;
  } else if (ir::is_bool(y.type.dtype)) {
    y.i[dst] = red == kAdd ? (a | b) : (a & b);
  } else {
    y.i[dst] = red == kAdd ? wrap_add(a, b) : wrap_mul(a, b);
  }
}

// The output starts as a copy of data; returns the reduction.
int64_t start_scatter(NodeEval& ne) {
  const Buffer& x = *ne.in[0];
  Buffer& y = ne.out[0];
  y.f = x.f;
  y.i = x.i;
  return param(ne, "reduction", kNone, kMul);
}

void finish_scatter(Buffer& y) {
  if (!y.is_float()) wrap_lanes(y.i.data(), y.numel(), y.type.dtype);
}

// ONNX ScatterElements: update j goes to j with its `axis` coordinate replaced by indices[j].
void scatter_elements(NodeEval& ne) {
  const Buffer &x = *ne.in[0], &ind = *ne.in[1], &upd = *ne.in[2];
  Buffer& y = ne.out[0];
  int64_t red = start_scatter(ne);
  auto axis = static_cast<size_t>(param(ne, "axis", 0, x.type.rank() - 1));
  ir::DType round_t = rounding_dtype(y.type.dtype, ne.precision);
  const ir::Dims& us = upd.type.shape;
  ir::Dims st = ir::row_major_strides(x.type.shape), pos(us.size(), 0);
  for (int64_t j = 0; j < upd.numel(); ++j) {
    int64_t dst = 0;
    for (size_t d = 0; d < us.size(); ++d) {
      int64_t at = d == axis ? scatter_index(ne, ind.i[j], ind.type.dtype, static_cast<int64_t>(d),
                                             x.type.shape[d])
                             : pos[d];
      dst += at * st[d];
    }
    combine(y, dst, upd, j, red, round_t);
    for (size_t d = us.size(); d-- > 0;) {  // the next position in row-major order
      if (++pos[d] < us[d]) break;
      pos[d] = 0;
    }
  }
  finish_scatter(y);
}

// ONNX ScatterND: index tuple t (the last dim of indices, k long) names a slice of data
// (its trailing rank - k dims), which takes updates' slice t.
void scatter_nd(NodeEval& ne) {
  const Buffer &x = *ne.in[0], &ind = *ne.in[1], &upd = *ne.in[2];
  Buffer& y = ne.out[0];
  int64_t red = start_scatter(ne);
  ir::DType round_t = rounding_dtype(y.type.dtype, ne.precision);
  const ir::Dims& xs = x.type.shape;
  auto k = static_cast<size_t>(ind.type.shape.back());
  ir::Dims st = ir::row_major_strides(xs);
  int64_t slice = k == 0 ? x.numel() : st[k - 1];
  int64_t tuples = k == 0 ? 0 : ind.numel() / static_cast<int64_t>(k);
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t base = 0;
    for (size_t j = 0; j < k; ++j)
      base += scatter_index(ne, ind.i[t * static_cast<int64_t>(k) + static_cast<int64_t>(j)],
                            ind.type.dtype, static_cast<int64_t>(j), xs[j]) * st[j];
    for (int64_t s = 0; s < slice; ++s) combine(y, base + s, upd, t * slice + s, red, round_t);
  }
  finish_scatter(y);
}

// ONNX Det: per matrix, Gaussian elimination with partial pivoting in f64; the product of
// the pivots (sign flipped per row swap), rounded once to the dtype in Own precision.
void det(NodeEval& ne) {
  const Buffer& x = *ne.in[0];
  Buffer& y = ne.out[0];
  const ir::Dims& s = x.type.shape;
  int64_t m = s.back(), count = y.numel();
  ir::DType round_t = rounding_dtype(y.type.dtype, ne.precision);
  std::vector<double> a(static_cast<size_t>(m * m));
  for (int64_t k = 0; k < count; ++k) {
    std::copy(x.f.begin() + k * m * m, x.f.begin() + (k + 1) * m * m, a.begin());
    double d = 1;
    for (int64_t col = 0; col < m && d != 0; ++col) {
      int64_t pivot = col;
      for (int64_t r = col + 1; r < m; ++r)
        if (std::fabs(a[static_cast<size_t>(r * m + col)]) > std::fabs(a[static_cast<size_t>(pivot * m + col)])) pivot = r;
      if (pivot != col) {
        for (int64_t j = 0; j < m; ++j) std::swap(a[static_cast<size_t>(col * m + j)], a[static_cast<size_t>(pivot * m + j)]);
        d = -d;
      }
      double p = a[static_cast<size_t>(col * m + col)];
      d *= p;
      if (p == 0) break;
      for (int64_t r = col + 1; r < m; ++r) {
        double f = a[static_cast<size_t>(r * m + col)] / p;
        for (int64_t j = col; j < m; ++j) a[static_cast<size_t>(r * m + j)] -= f * a[static_cast<size_t>(col * m + j)];
      }
    }
    y.f[k] = ir::round_to_dtype(d, round_t);
  }
}

}  // namespace

void eval_opaque(NodeEval& ne) {
  const auto& attrs = std::get<ir::OpaqueAttrs>(ne.prim().attrs);
  switch (attrs.routine) {
    case ir::OpaqueRoutine::CumSum:
      ORCHID_CHECK(ne.in.size() == 1 && ne.out.size() == 1 && ne.out[0].type == ne.in[0]->type)
          << ne.label() << ": cumsum takes one input and gives one output of its type";
      return cumsum(ne);
    case ir::OpaqueRoutine::TopK:
      ORCHID_CHECK(ne.in.size() == 1 && ne.out.size() == 2)
          << ne.label() << ": topk takes one input and has two outputs";
      return topk(ne);
    case ir::OpaqueRoutine::ScatterElements:
    case ir::OpaqueRoutine::ScatterND:
      ORCHID_CHECK(ne.in.size() == 3 && ne.out.size() == 1 && ne.out[0].type == ne.in[0]->type &&
                   ne.in[2]->type.dtype == ne.in[0]->type.dtype && !ne.in[1]->is_float())
          << ne.label() << ": a scatter takes (data, indices, updates) and gives data's type";
      if (attrs.routine == ir::OpaqueRoutine::ScatterND) return scatter_nd(ne);
      return scatter_elements(ne);
    case ir::OpaqueRoutine::Det:
      ORCHID_CHECK(ne.in.size() == 1 && ne.out.size() == 1 && ne.in[0]->is_float())
          << ne.label() << ": det takes one float input and gives one output";
      return det(ne);
  }
  ORCHID_CHECK(false) << "unknown opaque routine";
}

}  // namespace orchid::interp::detail
