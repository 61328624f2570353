// A CUDA plan's "cublaslt" step: a matmul step graph (onednn_pattern.h's "linear primitive
// + post-ops", the same recognition the CPU's oneDNN steps use) described as one cuBLASLt
// call. This part is pure (no GPU, no library): the driver asks it whether a kernel can be
// such a step, and the runtime (lt_step.h) builds the call from it.
//
// cuBLASLt is column-major; Orchid's tensors are row-major. The row-major product
// C[b, M, N] = A'[b, M, K] · B'[b, K, N] (A', B': the operands after the matmul's trans flags
// and any leaf view) is computed as its transpose, column-major: D = Cᵀ is N × M, so
// cuBLASLt's m = N, n = M, its A is B'ᵀ (N × K) and its B is A'ᵀ (K × M). Each operand is a
// column-major matrix of `rows` × `cols` with leading dimension `ld`, used as it is or
// transposed (`trans`), whichever its strides allow: one of its two matrix dims must have unit
// stride. Batch dims (numpy-broadcast, right-aligned) collapse into one batch count with one
// stride per operand (0: the same matrix for every batch), or the graph is refused.
//
// Accepted: f32, f16 or bf16 (f32 accumulation either way), a matmul (not conv), its operands
// step inputs (not constants of the step graph), the result written dense (no permuting view
// after it); a bias (one value per output channel N) becomes cuBLASLt's bias epilogue; then,
// in this order and each optional, a scale by a constant where there is no bias (cuBLASLt's
// alpha), a residual of the output's full shape (its C with beta = 1) and a relu (its relu
// epilogue). Every other post-op is refused.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ir/graph.h"

namespace orchid::runtime::cuda {

// A column-major matrix operand of one batch; `arg` is the step argument that holds it
// (inputs, then the output).
struct LtMatrix {
  int32_t arg = -1;
  bool trans = false;  // the call reads it transposed
  int64_t rows = 0, cols = 0, ld = 0;
  int64_t batch_stride = 0;  // elements between consecutive batches

  bool operator==(const LtMatrix&) const = default;
};

struct LtMatmul {
  int64_t m = 0, n = 0, k = 0;  // cuBLASLt's: D is m × n (m: the output's channels N)
  int64_t batch = 1;
  LtMatrix a, b, d;             // cuBLASLt's A (m × k after its op), B (k × n), D
  std::optional<LtMatrix> c;    // a residual added (beta = 1), laid out as d
  int32_t bias = -1;            // the step argument of a bias (one value per row of D), or -1
  float alpha = 1;              // the product's scale (not the bias's)
  bool relu = false;
  ir::DType dtype = ir::DType::F32;  // of every matrix and the bias; products accumulate in f32

  bool operator==(const LtMatmul&) const = default;
};

// The call for step graph g, or (matmul empty) why there is none: "cublaslt: ...".
struct LtMatch {
  std::optional<LtMatmul> matmul;
  std::string reason;
};
LtMatch match_lt_matmul(const ir::Graph& g);

// "cublaslt f32 batch 8 m 64 n 128 k 32, A^T, bias, relu": for schedules in plans and reports.
std::string describe(const LtMatmul& mm);

}  // namespace orchid::runtime::cuda
