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

}  // namespace

void eval_opaque(NodeEval& ne) {
  const auto& attrs = std::get<ir::OpaqueAttrs>(ne.prim().attrs);
  ORCHID_CHECK(ne.in.size() == 1) << ne.label() << ": takes one input, given " << ne.in.size();
  switch (attrs.routine) {
    case ir::OpaqueRoutine::CumSum:
      ORCHID_CHECK(ne.out.size() == 1 && ne.out[0].type == ne.in[0]->type)
          << ne.label() << ": cumsum output must be of its input's type";
      return cumsum(ne);
    case ir::OpaqueRoutine::TopK:
      ORCHID_CHECK(ne.out.size() == 2) << ne.label() << ": topk has two outputs";
      return topk(ne);
  }
  ORCHID_CHECK(false) << "unknown opaque routine";
}

}  // namespace orchid::interp::detail
