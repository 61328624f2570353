// Transposes into matmuls (a clean-up every orchestration runs).
//
// Attention computes Q · Kᵀ with an explicit Transpose of K, which fission writes as a layout
// primitive swapping the last two dims. A matmul operand produced by such a primitive
//   t[.., i(r-2), i(r-1)] = x[.., i(r-1), i(r-2)]   (one unpredicated load; other dims in order)
// is read from x instead, with the operand's trans flag flipped: oneDNN reads it through
// strides and the GEMM packing in its own order, and the transpose is never written to
// memory. So is an operand that views such a t with its batch dims reshaped (PyTorch's
// matmul decomposition): it reads x so reshaped. The layout primitive stays only for other
// readers (dead code goes otherwise). Returns whether anything changed; the result is
// verified.
#pragma once

#include <optional>

#include "ir/graph.h"

namespace orchid::rewrite {

bool fold_transposes_into_matmuls(ir::Graph& g);

// The value that t transposes (t's producer swaps the last two dims and does nothing else), or
// none.
std::optional<ir::ValueId> transposed_source(const ir::Graph& g, ir::ValueId t);

}  // namespace orchid::rewrite
