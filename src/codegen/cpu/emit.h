// C++ text of expressions and of kernels (internal to codegen/cpu).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/cpu/lower.h"
#include "ir/graph.h"
#include "tile/interval.h"

namespace orchid::codegen::cpu::detail {

// C types: what a value of a dtype is computed in, and stored as.
std::string compute_type(ir::DType t);
std::string storage_type(ir::DType t);
std::string to_compute(ir::DType t, const std::string& stored);
std::string to_storage(ir::DType t, const std::string& computed);
std::string literal(const ir::Scalar& s);  // in the compute type of s.dtype

// Emits C expressions for the bodies of the kernel's primitives.
class ExprEmitter {
 public:
  // How an inlined producer's element is written where its consumer reads it: a GCC statement
  // expression (C++ for the host compiler), or an immediately called lambda (CUDA C++, which
  // has no statement expressions).
  enum class Dialect { Gnu, Cuda };
  ExprEmitter(const ir::Graph& g, const KernelLowering& kl, Dialect dialect = Dialect::Gnu)
      : g_(g), kl_(kl), dialect_(dialect) {}

  // Loop variables of the primitive being emitted, as C expressions, and which of them the
  // innermost (vectorized) loop runs over. Where `hoist` is set, the caller emits
  // take_hoisted() in front of that loop: an f32 division by a value invariant in it then
  // multiplies by the reciprocal, computed there once (see expr()).
  struct Scope {
    const ir::Primitive* prim = nullptr;
    std::vector<std::string> dvars;
    std::vector<std::string> rvars;
    int32_t inner = -1;
    ir::VarKind inner_kind = ir::VarKind::Domain;
    bool hoist = false;
    // Where set, the ranges of the loop variables wherever this text runs (a piece of the
    // innermost loop, emit_pieces.cpp): index arithmetic decided over them is written
    // decided (see decided()).
    const tile::VarBox* box = nullptr;
  };
  std::string expr(const ir::Expr& e, const Scope& s);
  // Element of value v at the given C index expressions, in v's storage (an lvalue).
  std::string element(ir::ValueId v, const std::vector<std::string>& idx) const;
  // What failed index checks mean, by check number - 1.
  const std::vector<std::string>& checks() const { return checks_; }
  // Loads of v read `value` (a C expression in v's compute type), whatever their indices,
  // until unbound: the element being computed, in a loop that computes v and consumes it.
  void bind(ir::ValueId v, const std::string& value) { bound_[v] = value; }
  void unbind(ir::ValueId v) { bound_.erase(v); }
  // Declarations of the values hoisted out of the innermost loop since the last call.
  std::vector<std::string> take_hoisted() { return std::exchange(hoisted_, {}); }

 private:
  std::string load(const ir::Expr& e, const Scope& s);
  std::string inlined(ir::NodeId producer, const std::vector<std::string>& idx, const tile::VarBox* box);
  std::optional<std::string> decided(const ir::Expr& e, const Scope& s);
  std::string unary(const ir::Expr& e, const std::string& a) const;
  std::string binary(const ir::Expr& e, const std::string& a, const std::string& b) const;
  bool invariant(const ir::Expr& e, const Scope& s) const;
  bool checks_index(const ir::Expr& e, const ir::Primitive& p) const;
  std::string cast(ir::DType from, ir::DType to, const std::string& a) const;

  const ir::Graph& g_;
  const KernelLowering& kl_;
  Dialect dialect_;
  int fresh_ = 0;
  std::vector<std::string> checks_;
  std::map<ir::ValueId, std::string> bound_;
  std::vector<std::string> hoisted_;
};

// Whether e is index arithmetic: integers and bools of variables and constants (no load, no
// float anywhere), whose values tile::eval_interval bounds.
bool pure_index(const ir::Expr& e);
// The box of an inlined producer's variables where `load` (of its value) reads it, its
// variables over `box`: per index, the interval of a pure index expression, else unknown.
tile::VarBox producer_box(const ir::Expr& load, const tile::VarBox& box);
// For an i64 mod by a positive constant m whose operand stays, over `box`, within one period
// [k m, k m + m - 1]: that k m; none otherwise.
std::optional<int64_t> mod_period_start(const ir::Expr& mod, const tile::VarBox& box);

// Names used across the emitted kernel.
std::string arg_name(int arg);
std::string scratch_name(ir::ValueId v);
std::string region_lo(ir::NodeId n, size_t d);
std::string region_hi(ir::NodeId n, size_t d);

}  // namespace orchid::codegen::cpu::detail
