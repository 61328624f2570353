// Internal to the interpreter: the reduction combiners (reduce.def, docs/ir.md "Reductions")
// over a block of output points.
#pragma once

#include <cstdint>
#include <vector>

#include "interp/buffer.h"
#include "ir/graph.h"

namespace orchid::interp::detail {

// The lanes of one body: f for float bodies, i for integral ones.
struct LaneRef {
  const double* f = nullptr;
  const int64_t* i = nullptr;
};

// The running state of a reduction for up to `lanes` output points. Terms are added in
// iteration order; in Own precision every step rounds to the accumulator dtype of its body
// (accumulator_dtype of that body's output: each body of a multi-body reduction keeps its
// own), and store() rounds once more to the output dtype.
class Accumulator {
 public:
  // `empty_domain`: the reduction domain has no points (every output gets the combiner's
  // empty value).
  Accumulator(ir::ReduceOp op, std::vector<ir::DType> body_dtypes,
              std::vector<ir::DType> out_dtypes, Precision p, int64_t lanes, bool empty_domain);

  // Starts n output points, every one without terms.
  void reset(int64_t n);
  // Adds body lanes [0, n): lane j to output point j, or, when serial, every lane in order to
  // output point 0.
  void update(const std::vector<LaneRef>& bodies, int64_t n, bool serial);
  // Writes output points [0, n) into outs[k] at flat offset `at`.
  void store(const std::vector<Buffer*>& outs, int64_t at, int64_t n) const;

 private:
  template <bool Serial>
  void update_lanes(const std::vector<LaneRef>& bodies, int64_t n);
  template <bool Serial>
  void update_sum_prod(const std::vector<LaneRef>& bodies, int64_t n);
  template <bool Serial>
  void update_max_min(const std::vector<LaneRef>& bodies, int64_t n);
  template <bool Serial>
  void update_arg(const LaneRef& value, const LaneRef& index, int64_t n);
  template <bool Serial>
  void update_welford(const LaneRef& x, int64_t n);
  template <bool Serial>
  void update_maxsum(const LaneRef& x, int64_t n);
  void store_empty(const std::vector<Buffer*>& outs, int64_t at, int64_t n) const;
  // v rounded to the accumulator dtype of body k.
  double round(double v, size_t k = 0) const {
    ir::DType t = acc_dtypes_[k];
    return t == ir::DType::F64 ? v : ir::round_to_dtype(v, t);
  }

  ir::ReduceOp op_;
  std::vector<ir::DType> body_dtypes_;
  std::vector<ir::DType> out_dtypes_;
  Precision precision_;
  // Per body: the rounding of its float steps (F64 for integral bodies and in F64 precision).
  std::vector<ir::DType> acc_dtypes_;
  bool empty_;
  // State slots: per body for sum/prod/max/min; (value, index) for argmax/argmin;
  // (mean, m2) with count for welford; (m, s) for maxsum.
  std::vector<std::vector<double>> f_;
  std::vector<std::vector<int64_t>> i_;
  std::vector<int64_t> count_;  // welford: terms seen; argmax/argmin: 1 once a best exists
};


}  // namespace orchid::interp::detail
