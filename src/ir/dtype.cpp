#include "ir/dtype.h"

#include <limits>

#include "support/error.h"

namespace orchid::ir {

namespace {
struct DTypeInfo {
  std::string_view name;
  int64_t bytes;
  DTypeClass cls;
};
constexpr DTypeInfo kInfo[] = {
#define ORCHID_DTYPE(e, text, bytes, cls) {text, bytes, DTypeClass::cls},
#include "ir/dtype.def"
#undef ORCHID_DTYPE
};
const DTypeInfo& info(DType t) {
  auto i = static_cast<size_t>(t);
  ORCHID_CHECK(i < std::size(kInfo)) << "dtype " << i;
  return kInfo[i];
}
}  // namespace

std::string_view dtype_name(DType t) { return info(t).name; }
int64_t dtype_bytes(DType t) { return info(t).bytes; }
DTypeClass dtype_class(DType t) { return info(t).cls; }

int64_t dtype_lowest(DType t) {
  int64_t bits = 8 * dtype_bytes(t);
  switch (dtype_class(t)) {
    case DTypeClass::Signed: return std::numeric_limits<int64_t>::min() >> (64 - bits);
    case DTypeClass::Unsigned:
    case DTypeClass::Bool: return 0;
    case DTypeClass::Float: break;
  }
  ORCHID_CHECK(false) << "dtype_lowest of " << dtype_name(t);
  return 0;
}

int64_t dtype_highest(DType t) {
  int64_t bits = 8 * dtype_bytes(t);
  switch (dtype_class(t)) {
    case DTypeClass::Signed: return std::numeric_limits<int64_t>::max() >> (64 - bits);
    case DTypeClass::Unsigned: return static_cast<int64_t>(~uint64_t{0} >> (64 - bits));
    case DTypeClass::Bool: return 1;
    case DTypeClass::Float: break;
  }
  ORCHID_CHECK(false) << "dtype_highest of " << dtype_name(t);
  return 0;
}

std::optional<DType> parse_dtype(std::string_view text) {
  for (size_t i = 0; i < std::size(kInfo); ++i)
    if (kInfo[i].name == text) return static_cast<DType>(i);
  return std::nullopt;
}

int64_t numel(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::optional<int64_t> checked_numel(const Dims& dims, DType dtype) {
  // The dims other than 0 must multiply within int64 too: an empty tensor's strides are
  // still computed from them.
  int64_t nonzero = 1;
  bool empty = false;
  for (int64_t d : dims) {
    if (d < 0) return std::nullopt;
    if (d == 0) empty = true;
    else if (__builtin_mul_overflow(nonzero, d, &nonzero)) return std::nullopt;
  }
  int64_t bytes = 0;
  if (__builtin_mul_overflow(nonzero, dtype_bytes(dtype), &bytes)) return std::nullopt;
  return empty ? 0 : nonzero;
}

Dims row_major_strides(const Dims& dims) {
  Dims s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

std::string dims_str(const Dims& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) out += ",";
    out += std::to_string(dims[i]);
  }
  return out + "]";
}

std::string type_str(const TensorType& t) {
  return std::string(dtype_name(t.dtype)) + dims_str(t.shape);
}

}  // namespace orchid::ir
