#include "ir/tensor.h"

#include <cmath>
#include <cstring>

#include "support/error.h"
#include "support/half.h"

namespace orchid::ir {

Tensor::Tensor(TensorType type) : type_(std::move(type)) {
  bytes_.resize(static_cast<size_t>(type_.bytes()));
}

Tensor::Tensor(TensorType type, std::vector<std::byte> bytes)
    : type_(std::move(type)), bytes_(std::move(bytes)) {
  ORCHID_CHECK(static_cast<int64_t>(bytes_.size()) == type_.bytes())
      << type_str(type_) << " given " << bytes_.size() << " bytes";
}

namespace {
template <class T>
T load(const std::byte* p, int64_t i) {
  T v;
  std::memcpy(&v, p + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return v;
}
template <class T>
void store(std::byte* p, int64_t i, T v) {
  std::memcpy(p + i * static_cast<int64_t>(sizeof(T)), &v, sizeof(T));
}
}  // namespace

double Tensor::get_f64(int64_t i) const {
  const std::byte* p = bytes_.data();
  switch (type_.dtype) {
    case DType::F32: return load<float>(p, i);
    case DType::F64: return load<double>(p, i);
    case DType::F16: return f16_bits_to_f32(load<uint16_t>(p, i));
    case DType::BF16: return bf16_bits_to_f32(load<uint16_t>(p, i));
    case DType::I8: case DType::I16: case DType::I32: case DType::I64:
    case DType::U8: case DType::U16: case DType::U32: case DType::U64: case DType::Bool:
      break;
  }
  ORCHID_CHECK(false) << "get_f64 on " << dtype_name(type_.dtype);
  return 0;
}

int64_t Tensor::get_i64(int64_t i) const {
  const std::byte* p = bytes_.data();
  switch (type_.dtype) {
    case DType::I8: return load<int8_t>(p, i);
    case DType::I16: return load<int16_t>(p, i);
    case DType::I32: return load<int32_t>(p, i);
    case DType::I64: return load<int64_t>(p, i);
    case DType::U8: return load<uint8_t>(p, i);
    case DType::U16: return load<uint16_t>(p, i);
    case DType::U32: return load<uint32_t>(p, i);
    case DType::U64: return static_cast<int64_t>(load<uint64_t>(p, i));
    case DType::Bool: return load<uint8_t>(p, i) != 0;
    case DType::F32: case DType::F16: case DType::BF16: case DType::F64:
      break;
  }
  ORCHID_CHECK(false) << "get_i64 on " << dtype_name(type_.dtype);
  return 0;
}

void Tensor::set_f64(int64_t i, double v) {
  std::byte* p = bytes_.data();
  switch (type_.dtype) {
    case DType::F32: store<float>(p, i, static_cast<float>(v)); return;
    case DType::F64: store<double>(p, i, v); return;
    case DType::F16: store<uint16_t>(p, i, f32_to_f16_bits(static_cast<float>(v))); return;
    case DType::BF16: store<uint16_t>(p, i, f32_to_bf16_bits(static_cast<float>(v))); return;
    case DType::I8: case DType::I16: case DType::I32: case DType::I64:
    case DType::U8: case DType::U16: case DType::U32: case DType::U64: case DType::Bool:
      break;
  }
  ORCHID_CHECK(false) << "set_f64 on " << dtype_name(type_.dtype);
}

void Tensor::set_i64(int64_t i, int64_t v) {
  std::byte* p = bytes_.data();
  switch (type_.dtype) {
    case DType::I8: store<int8_t>(p, i, static_cast<int8_t>(v)); return;
    case DType::I16: store<int16_t>(p, i, static_cast<int16_t>(v)); return;
    case DType::I32: store<int32_t>(p, i, static_cast<int32_t>(v)); return;
    case DType::I64: store<int64_t>(p, i, v); return;
    case DType::U8: store<uint8_t>(p, i, static_cast<uint8_t>(v)); return;
    case DType::U16: store<uint16_t>(p, i, static_cast<uint16_t>(v)); return;
    case DType::U32: store<uint32_t>(p, i, static_cast<uint32_t>(v)); return;
    case DType::U64: store<uint64_t>(p, i, static_cast<uint64_t>(v)); return;
    case DType::Bool: store<uint8_t>(p, i, v != 0); return;
    case DType::F32: case DType::F16: case DType::BF16: case DType::F64:
      break;
  }
  ORCHID_CHECK(false) << "set_i64 on " << dtype_name(type_.dtype);
}

double Tensor::get_as_double(int64_t i) const {
  if (is_float(type_.dtype)) return get_f64(i);
  if (type_.dtype == DType::U64) return static_cast<double>(static_cast<uint64_t>(get_i64(i)));
  return static_cast<double>(get_i64(i));
}

double round_to_dtype(double v, DType t) {
  switch (t) {
    case DType::F64: return v;
    case DType::F32: return static_cast<float>(v);
    case DType::F16: return f16_bits_to_f32(f32_to_f16_bits(static_cast<float>(v)));
    case DType::BF16: return bf16_bits_to_f32(f32_to_bf16_bits(static_cast<float>(v)));
    case DType::I8: case DType::I16: case DType::I32: case DType::I64:
    case DType::U8: case DType::U16: case DType::U32: case DType::U64: case DType::Bool:
      break;
  }
  ORCHID_CHECK(false) << "round_to_dtype on " << dtype_name(t);
  return v;
}

int64_t wrap_to_dtype(int64_t v, DType t) {
  switch (t) {
    case DType::I8: return static_cast<int8_t>(v);
    case DType::I16: return static_cast<int16_t>(v);
    case DType::I32: return static_cast<int32_t>(v);
    case DType::I64: return v;
    case DType::U8: return static_cast<uint8_t>(v);
    case DType::U16: return static_cast<uint16_t>(v);
    case DType::U32: return static_cast<uint32_t>(v);
    case DType::U64: return v;
    case DType::Bool: return v != 0;
    case DType::F32: case DType::F16: case DType::BF16: case DType::F64:
      break;
  }
  ORCHID_CHECK(false) << "wrap_to_dtype on " << dtype_name(t);
  return v;
}

int64_t float_to_integral(double v, DType to) {
  if (to == DType::Bool) return v != 0;
  if (!std::isfinite(v)) return 0;
  // The integer trunc(v) modulo 2^64, computed exactly (every step below is exact).
  constexpr double k2p63 = 9223372036854775808.0, k2p64 = 18446744073709551616.0;
  double r = std::fmod(std::trunc(v), k2p64);
  int64_t bits;
  if (r >= k2p63) {
    bits = static_cast<int64_t>(static_cast<uint64_t>(r));
  } else if (r >= -k2p63) {
    bits = static_cast<int64_t>(r);
  } else {
    bits = static_cast<int64_t>(r + k2p64);
  }
  return wrap_to_dtype(bits, to);
}

}  // namespace orchid::ir
