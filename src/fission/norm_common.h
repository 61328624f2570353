// Helpers shared by the normalization rules (rules_norm.cpp, rules_norm2.cpp). Header-only,
// like linear_common.h.
#pragma once

#include <utility>

#include "ir/expr.h"

namespace orchid::fission {

// e read as dtype t: e itself where it already has it, else a cast.
inline ir::Expr as(ir::DType t, ir::Expr e) { return e.dtype() == t ? e : ir::cast(t, std::move(e)); }

// The float dtype a normalization of a t tensor is computed in: f32 for 16-bit floats (f16,
// bf16), t itself for wider ones.
inline ir::DType compute_dtype(ir::DType t) { return ir::dtype_bytes(t) < 4 ? ir::DType::F32 : t; }

}  // namespace orchid::fission
