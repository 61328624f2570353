// Internal to the interpreter: the f64 matrix product behind matmul and conv.
#pragma once

#include <cstdint>

namespace orchid::interp::detail {

// A strided matrix: element (r, c) at p[r * rs + c * cs] (transposes are strides).
struct MatRef {
  const double* p = nullptr;
  int64_t rs = 0;
  int64_t cs = 0;
};

// C[M x N] (row stride ldc) = A[M x K] · B[K x N] in f64. Every entry is the sum of its K
// products added one after another in the order k = 0, 1, ..., K-1 (products and sums
// rounded separately, never fused), i.e. exactly the naive triple loop: cache- and
// register-blocking reorder only independent entries.
void gemm(int64_t M, int64_t N, int64_t K, MatRef A, MatRef B, double* C, int64_t ldc);

}  // namespace orchid::interp::detail
