// A dense tensor: a TensorType plus its bytes in row-major order, little-endian, element
// type as declared (bool is one byte 0/1; f16/bf16 are their 16-bit patterns).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ir/dtype.h"

namespace orchid::ir {

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(TensorType type);  // zero-filled
  Tensor(TensorType type, std::vector<std::byte> bytes);

  const TensorType& type() const { return type_; }
  DType dtype() const { return type_.dtype; }
  const Dims& shape() const { return type_.shape; }
  int64_t numel() const { return type_.numel(); }
  const std::vector<std::byte>& bytes() const { return bytes_; }
  std::byte* data() { return bytes_.data(); }
  const std::byte* data() const { return bytes_.data(); }

  // Element access through the widest type of the dtype's class: floats as double, integers
  // and bool as int64 (u64 as its two's-complement bit pattern). Setting converts: floats
  // round to nearest even; integers wrap to the width; bool stores v != 0.
  double get_f64(int64_t i) const;
  int64_t get_i64(int64_t i) const;
  void set_f64(int64_t i, double v);
  void set_i64(int64_t i, int64_t v);
  // Any dtype read as double (integers converted).
  double get_as_double(int64_t i) const;

  bool operator==(const Tensor&) const = default;

 private:
  TensorType type_;
  std::vector<std::byte> bytes_;
};

// Conversions of one scalar, shared with the interpreter so that every path rounds alike.
double round_to_dtype(double v, DType t);    // float dtypes: round to t; f64: identity
int64_t wrap_to_dtype(int64_t v, DType t);   // integer dtypes: wrap to width; bool: v != 0
// A float converted to an integer dtype: truncated toward zero, wrapped modulo 2^64, then to
// the width (NaN and infinities give 0); to bool: v != 0.
int64_t float_to_integral(double v, DType to);

}  // namespace orchid::ir
