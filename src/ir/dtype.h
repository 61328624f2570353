// Element types and static shapes.
//
// Floats are f32, f16, bf16 and f64; integers are signed and unsigned of 8..64 bits; bool is
// one byte holding 0 or 1. Arithmetic semantics (what "computing in f64" and "in the own
// dtype" mean) are defined in docs/ir.md and implemented by the interpreter.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace orchid::ir {

enum class DType : uint8_t {
#define ORCHID_DTYPE(e, text, bytes, cls) e,
#include "ir/dtype.def"
#undef ORCHID_DTYPE
};

enum class DTypeClass : uint8_t { Float, Signed, Unsigned, Bool };

std::string_view dtype_name(DType t);
std::optional<DType> parse_dtype(std::string_view text);
int64_t dtype_bytes(DType t);
DTypeClass dtype_class(DType t);
inline bool is_float(DType t) { return dtype_class(t) == DTypeClass::Float; }
inline bool is_int(DType t) {
  return dtype_class(t) == DTypeClass::Signed || dtype_class(t) == DTypeClass::Unsigned;
}
inline bool is_bool(DType t) { return dtype_class(t) == DTypeClass::Bool; }
// Integers and bool: values the interpreter holds exactly as int64.
inline bool is_integral(DType t) { return !is_float(t); }
// The smallest and largest value of an integral dtype, as the int64 the interpreter holds it
// in (bool: 0 and 1). u64's largest value, 2^64 - 1, has no int64: dtype_highest(U64) is its
// bit pattern, -1 (callers that order values must treat u64 apart). Floats: an internal error.
int64_t dtype_lowest(DType t);
int64_t dtype_highest(DType t);
// Number of dtypes, for tables and exhaustive tests.
constexpr int kNumDTypes = 0
#define ORCHID_DTYPE(e, text, bytes, cls) +1
#include "ir/dtype.def"
#undef ORCHID_DTYPE
    ;

// A static shape: dims are >= 0 (a zero dim makes an empty tensor); rank 0 is a scalar.
using Dims = std::vector<int64_t>;
int64_t numel(const Dims& dims);
// The element count, or nullopt when a dim is negative or the count (or its byte size in
// `dtype`) does not fit in int64 — the count of the dims other than 0, so that an empty
// tensor's strides fit too. For shapes that come from user data.
std::optional<int64_t> checked_numel(const Dims& dims, DType dtype = DType::U8);
// Row-major strides in elements.
Dims row_major_strides(const Dims& dims);
// "[2,3,4]" — the form used by the text IR and in messages.
std::string dims_str(const Dims& dims);

struct TensorType {
  DType dtype = DType::F32;
  Dims shape;
  bool operator==(const TensorType&) const = default;
  int64_t numel() const { return ir::numel(shape); }
  int64_t bytes() const { return numel() * dtype_bytes(dtype); }
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
};
// "f32[2,3,4]".
std::string type_str(const TensorType& t);

}  // namespace orchid::ir
