// Internal to the interpreter: how it holds values, and the scalar conversions every path
// shares (docs/ir.md, "Values and types").
//
// A Buffer holds a tensor in the interpreter's arithmetic: floats as doubles (in Own precision
// already rounded to their dtype), integers and bool as int64 (a u64 above 2^63 as its bit
// pattern). Exactly one of `f` and `i` is used, by the dtype's class.
#pragma once

#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "interp/interp.h"
#include "ir/graph.h"
#include "ir/tensor.h"

namespace orchid::interp::detail {

// An allocator that leaves elements uninitialised where std::allocator would zero them:
// every evaluator writes each element of its outputs, so zeroing them first is wasted work.
template <class T>
struct UninitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitAllocator<U>;
  };
  UninitAllocator() = default;
  template <class U>
  UninitAllocator(const UninitAllocator<U>&) {}  // NOLINT: converting, as std::allocator
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
template <class T>
using Lanes = std::vector<T, UninitAllocator<T>>;

struct Buffer {
  ir::TensorType type;
  Lanes<double> f;   // float dtypes
  Lanes<int64_t> i;  // integers and bool

  bool is_float() const { return ir::is_float(type.dtype); }
  int64_t numel() const { return type.numel(); }
};

// A buffer of the given type whose elements are still to be written.
Buffer make_buffer(const ir::TensorType& type);
Buffer buffer_from_tensor(const ir::Tensor& t);
// Converts to a tensor of the buffer's dtype (floats rounded to it, integers wrapped), or for
// floats with `f64_floats` to an f64 tensor of the unrounded values.
ir::Tensor tensor_from_buffer(const Buffer& b, bool f64_floats);

// Rounds n doubles to float dtype t in place (f64: unchanged). double -> f16/bf16 rounds
// through f32, as ir::round_to_dtype.
void round_lanes(double* v, int64_t n, ir::DType t);
// Wraps n integers to integral dtype t in place (bool: v != 0).
void wrap_lanes(int64_t* v, int64_t n, ir::DType t);

// The dtype whose rounding Own precision applies to a float result of dtype t; F64 (no
// rounding) in F64 precision.
inline ir::DType rounding_dtype(ir::DType t, Precision p) {
  return p == Precision::Own ? t : ir::DType::F64;
}
// The accumulator dtype of a float reduction (sum, prod, welford, maxsum, cumsum) whose
// output is t: t itself, except f16/bf16, which accumulate in f32; F64 in F64 precision.
ir::DType accumulator_dtype(ir::DType t, Precision p);

// cast<to> of a float: truncates toward zero, then wraps to the width (NaN, ±inf -> 0);
// to bool: v != 0.

// An integral value of dtype `from` as a double (u64 read unsigned), rounded once to float
// dtype `to` in Own precision (to f32 directly; f16/bf16 through f32).
double integral_to_float(int64_t v, ir::DType from, ir::DType to, Precision p);

// Where an error is raised, named as the verifier names nodes (docs/ir.md):
// "node 3 (%y = reduce, from "Softmax_1")" — the first output, the op, the provenance.
std::string node_label(const ir::Graph& g, ir::NodeId id);

}  // namespace orchid::interp::detail
