// Internals of the random graph generator (random_graph.h), shared by its sources:
// random_expr.cpp (scalar bodies), random_graph.cpp (driver, operands, elementwise, broadcast,
// view, outputs), random_graph_ops.cpp (reductions, pooling, linear, opaque) and
// random_layout.cpp (layouts).
//
// Tameness. The generator tracks, for every scalar expression and every tensor, an interval
// that holds all its values (Facts) and whether it is *exact*: bit-identical when the
// interpreter runs in F64 and in Own precision. Exact are inputs and constants, integers and
// bools (they never depend on inexact floats), and what neg, abs, max, min, select, floor,
// ceil, round, sign, power-of-two scaling, floordiv by a power of two, widening float casts and
// casts of small integers to floats make of exact values — and layouts, broadcasts, views,
// max/min reductions, argmax/argmin values and topk of exact tensors. Operators that are
// discontinuous (floor, ceil, round, sign, isnan, isinf, comparisons, float -> integer or bool
// casts, float floordiv/mod, argmax/argmin, topk) only ever see exact operands, so that a
// precision change can never flip them; everything else is continuous. Magnitudes stay small:
// float leaves are scaled into [-4, 4] and subexpressions back below 64 by powers of two
// (exact), log/sqrt/rsqrt/recip/pow/div get arguments >= 1/4, exp arguments <= 4, pow bases
// <= ~6 and exponents within 3, sums are scaled below 64 and linear operands bounded so that
// no partial sum passes 2048 (f16 overflows at 65504 in Own precision, not in F64). Integer
// expressions stay inside their dtype's range (the interpreter computes narrow integers in i64
// and wraps them only at casts and stores; staying in range makes that agree with native
// arithmetic), i64/u64 within 2^62 so that no accumulation overflows.
//
// Determinism: every random choice comes from one orchid::Rng, and no expression draws twice
// in one function call's arguments (their evaluation order is unspecified in C++).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "support/random.h"
#include "testlib/random_graph.h"

namespace orchid::testlib::detail {

// What the generator knows about a scalar expression or about a tensor's elements.
struct Facts {
  double lo = 0;       // every value v satisfies lo <= v <= hi
  double hi = 0;
  bool exact = true;   // the same bits in F64 and in Own precision
  double bound() const;
};
Facts join(const Facts& a, const Facts& b);  // the union of the intervals; exact if both are

// The range values of dtype t are kept in. Floats: a tame +-1e4; i64 and u64 are capped at
// 2^62 so that sums and products in the interpreter's i64 never overflow.
Facts dtype_range(ir::DType t);
bool fits(const Facts& f, ir::DType t);

struct TE {  // a typed expression with its facts
  ir::Expr e;
  Facts f;
  ir::DType dtype() const { return e.dtype(); }
};

// Random scalar expressions over a fixed set of leaves: loads (already indexed by the
// primitive that owns the body) and loop variables.
class ExprGen {
 public:
  explicit ExprGen(Rng& rng) : rng_(rng) {}
  void add_load(ir::Expr load, Facts f);
  void add_var(ir::Expr var, int64_t extent);

  // A random expression of dtype t, at most `depth` operators deep (plus tameness wrappers).
  // With `exact`, the result is exact.
  TE gen(ir::DType t, int depth, bool exact);
  // Like gen, but the result reads load leaf `leaf` (retries, then falls back to that load).
  std::optional<TE> gen_using(ir::DType t, int depth, bool exact, int leaf);
  // The load leaf `leaf` converted to dtype t (nullopt where the rules forbid it).
  std::optional<TE> load_as(int leaf, ir::DType t, bool exact);

  // Conversions and wrappers that keep the facts.
  std::optional<TE> cast_to(TE a, ir::DType t, bool exact);
  TE konst(ir::DType t, double v);
  TE scale(TE a, double bound);               // float: times 2^-k so that |a| <= bound
  TE clamp(TE a, double lo, double hi);       // integers: min/max with constants
  TE positive(TE a);                          // float: a value >= 1/4 made from a
  TE random_const(ir::DType t);

 private:
  TE leaf(ir::DType t, bool exact);
  std::optional<TE> load_leaf(ir::DType t, bool exact);
  std::optional<TE> var_leaf(ir::DType t, bool exact);
  std::optional<TE> gen_float(ir::DType t, int depth, bool exact);
  std::optional<TE> gen_float_math(ir::DType t, int depth, int form);
  std::optional<TE> gen_int(ir::DType t, int depth);
  std::optional<TE> gen_int_division(ir::DType t, int depth, ir::ExprOp op);
  std::optional<TE> gen_bool(int depth);
  std::optional<TE> gen_compare(int depth);
  std::optional<TE> gen_cast_from_other(ir::DType t, int depth, bool exact);
  TE tame_float(TE a);
  ir::DType random_scalar_dtype();

  Rng& rng_;
  std::vector<TE> loads_;
  std::vector<int> uses_;
  std::vector<TE> vars_;
};

// Load slots used by a set of bodies, and the bodies with slots renumbered by `map`.
std::vector<bool> used_slots(const std::vector<ir::Expr>& bodies, size_t num_slots);
ir::Expr remap_slots(const ir::Expr& e, const std::vector<int>& map);

enum class DTypeSet { Any, Numeric, Float };

// An input of a primitive being planned: an existing value, or a source (graph input or
// constant, its data already drawn) that is only added to the graph once the primitive is.
// Planning first keeps a generator that gives up from leaving unused sources behind.
struct Operand {
  std::optional<ir::ValueId> v;     // existing value; none: a source to create
  ir::TensorType t;
  std::optional<ir::Tensor> data;   // for a source: a constant's data (none: a graph input)
  Facts f;
  bool is(ir::ValueId id) const { return v && *v == id; }
};

// Small shared helpers of the primitive generators.
std::vector<ir::Expr> identity_index(size_t rank);  // i0, i1, ...

template <class T>
T pick_one(Rng& rng, const std::vector<T>& xs) {
  return xs[static_cast<size_t>(rng.range(0, static_cast<int64_t>(xs.size())))];
}

inline ir::Expr all_of(const std::vector<ir::Expr>& conds) {
  ir::Expr e = conds[0];
  for (size_t k = 1; k < conds.size(); ++k) e = ir::binary(ir::ExprOp::And, e, conds[k]);
  return e;
}

inline ir::Expr cmp(ir::ExprOp op, ir::Expr a, int64_t c) {
  return ir::binary(op, std::move(a), ir::const_i64(c));
}

// i*step + offset, spelled with the operators index expressions allow.
inline ir::Expr affine(ir::Expr i, int64_t step, int64_t offset) {
  ir::Expr e = step == 1 ? std::move(i) : std::move(i) * step;
  if (offset > 0) return e + offset;
  if (offset < 0) return e - (-offset);
  return e;
}

inline ir::Dims with_dim(ir::Dims s, size_t axis, int64_t d) {
  s[axis] = d;
  return s;
}

bool broadcasts_to(const ir::Dims& s, const ir::Dims& out);  // numpy rules, right-aligned

class GraphGen {
 public:
  GraphGen(uint64_t seed, const RandomGraphOptions& opts);
  ir::Graph run();

 private:
  using Pred = std::function<bool(ir::ValueId)>;
  using Make = std::function<ir::TensorType()>;

  // ---- shapes, dtypes and operands (random_graph.cpp)
  ir::DType random_dtype(DTypeSet set);
  bool dtype_in(ir::DType t, DTypeSet set) const;
  int64_t random_dim(int64_t limit);
  ir::Dims random_shape(int rank, int64_t max_elems);
  ir::Dims sub_shape(const ir::Dims& out);  // a random shape that broadcasts to out
  ir::TensorType random_type(DTypeSet set, int min_rank, int64_t max_elems);
  Operand existing(ir::ValueId v) const;
  Operand plan_source(const ir::TensorType& t);
  ir::Scalar odd_element(ir::DType t);
  ir::ValueId realize(const Operand& o);
  std::optional<ir::ValueId> pick(const Pred& ok);
  Operand choose(const Pred& ok, const Make& make, double p_new = 0.15);
  const ir::TensorType& type(ir::ValueId v) const { return g_.type(v); }
  const Facts& facts(ir::ValueId v) const { return facts_[static_cast<size_t>(v.v)]; }
  int tame_cost(const Operand& o, double bound) const;
  ir::ValueId tame(ir::ValueId v, double bound);
  std::vector<ir::ValueId> add(ir::Primitive p, const std::vector<ir::TensorType>& types,
                               const std::vector<Facts>& facts, const std::string& stem);
  void note(ir::ValueId v, Facts f, bool index);
  std::string value_name(const std::string& stem);
  std::string provenance(const std::string& op);
  ir::ValueId index_input(const ir::Dims& shape);
  ir::ValueId consume_index(ir::ValueId value, ir::ValueId index);

  // ---- node generators; each returns false (adding nothing) when it cannot apply
  bool gen_elementwise();
  bool gen_broadcast();
  bool gen_view();
  bool gen_reduce();          // random_graph_ops.cpp
  bool reduce_bodies(ExprGen& eg, const Operand& x, ir::Primitive& p,
                     std::vector<ir::TensorType>& types, std::vector<Facts>& fs);
  bool gen_pool();
  bool gen_layout();          // random_layout.cpp
  bool gen_transpose_slice(const Operand& x);
  bool gen_pad(const Operand& x);
  bool gen_concat(const Operand& x);
  bool gen_gather(const Operand& x);
  bool gen_split(const Operand& x);
  bool gen_tile(const Operand& x);
  bool gen_mask(const Operand& x);
  bool gen_matmul();          // random_graph_ops.cpp
  bool gen_conv();
  bool gen_cumsum();
  bool gen_topk();
  void choose_outputs();

  Rng rng_;
  RandomGraphOptions o_;
  ir::Graph g_;
  std::vector<Facts> facts_;     // by ValueId
  std::vector<bool> is_index_;   // by ValueId: a graph input reserved for indirect loads
  int budget_ = 0;               // nodes that may still be added
  int name_counter_ = 0;
};

}  // namespace orchid::testlib::detail
