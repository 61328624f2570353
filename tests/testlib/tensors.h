// Tensor helpers for tests: seeded random tensors, element-wise comparison with tolerances,
// and a naive row-major index helper for writing reference implementations.
#pragma once

#include <cstdint>
#include <string>

#include "interp/compare.h"
#include "ir/tensor.h"
#include "support/random.h"

namespace orchid::testlib {

// Floats uniform in [lo, hi); integers uniform in [lo, hi) (truncated); bool fair coins.
ir::Tensor random_tensor(const ir::TensorType& type, Rng& rng, double lo = -1, double hi = 1);

// interp::compare_tensors with test defaults (rtol 1e-5, atol 1e-6).
inline std::string compare_tensors(const ir::Tensor& got, const ir::Tensor& want, double rtol = 1e-5,
                                   double atol = 1e-6) {
  return interp::compare_tensors(got, want, rtol, atol);
}

// The row-major flat offset of a multi-index.
int64_t flat_offset(const ir::Dims& shape, const ir::Dims& index);
// Advances a multi-index in row-major order; false after the last one.
bool next_index(const ir::Dims& shape, ir::Dims& index);

}  // namespace orchid::testlib
