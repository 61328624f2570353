// Text pasted at the top of every generated source, after the kernel ABI and vmath.inc.
#pragma once

#include <string>
#include <string_view>

namespace orchid::codegen::cpu {

std::string prelude_source();

// The scalar helpers of docs/ir.md's semantics that host and CUDA code share (integer
// division and modulo, NaN-propagating max/min, floored float modulo, float -> integer casts,
// shifts), written once in C for both: the including text defines ORC_INLINE and the
// fixed-width integer types, and the math functions' GCC builtin names.
std::string_view scalar_helpers_source();

}  // namespace orchid::codegen::cpu
