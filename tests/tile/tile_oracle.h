// The oracle for tile propagation: an exact scalar evaluator of index expressions at one
// point (the interpreter's integer semantics, docs/ir.md) and brute-force enumeration of
// every element a tile actually reads, respecting predicates and select branches.
//
// Tensor values come from the graph's constants and, when given, from an interpreter run
// (interp::run_all) for every other value. A value that is not known — a tensor without data,
// or anything computed from floats inside a body — makes what depends on it unknown; an
// unknown condition counts as possibly true and possibly false (Kleene logic: `and` with a
// known false operand is false, a select whose branches agree is known, ...), so both sides
// of it are walked, as tile propagation must assume too. An index that depends on the values
// of a non-constant tensor (an indirect load the compiler cannot see) is marked *indirect*:
// tile propagation must read that dim whole.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/printer.h"
#include "ir/tensor.h"
#include "tile/interval.h"
#include "tile/region.h"

namespace orchid::tile {

// GoogleTest prints these in failure messages.
inline void PrintTo(const Interval& a, std::ostream* os) { *os << interval_str(a); }
inline void PrintTo(const Region& r, std::ostream* os) { *os << region_str(r); }
inline void PrintTo(const VarBox& b, std::ostream* os) {
  *os << "{";
  for (size_t k = 0; k < b.domain.size(); ++k) *os << " i" << k << " " << interval_str(b.domain[k]);
  for (size_t k = 0; k < b.reduce.size(); ++k) *os << " r" << k << " " << interval_str(b.reduce[k]);
  *os << (b.infeasible ? " infeasible }" : " }");
}

}  // namespace orchid::tile

namespace orchid::tile::oracle {

using ir::DType;
using ir::Expr;
using ir::ExprOp;
using Point = std::vector<int64_t>;
using Index = std::vector<std::optional<int64_t>>;

inline int64_t wrap_add(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
inline int64_t wrap_sub(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }
inline int64_t wrap_mul(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }

inline int64_t floordiv_i(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (a == INT64_MIN && b == -1) return INT64_MIN;
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

class PointEval {
 public:
  // shapes: of each load slot; known: the tensor of each slot whose values are known, else
  // nullptr; dependent: whether a slot's values are only known at run time (not a constant).
  PointEval(std::vector<ir::Dims> shapes, std::vector<const ir::Tensor*> known, std::vector<bool> dependent)
      : shapes_(std::move(shapes)), known_(std::move(known)), dependent_(std::move(dependent)) {}

  // Constants are known; other values too when `values` (every value of g, by id) is given.
  static PointEval of(const ir::Graph& g, const ir::Primitive& p, const std::vector<ir::Tensor>* values = nullptr) {
    std::vector<ir::Dims> shapes;
    std::vector<const ir::Tensor*> known;
    std::vector<bool> dependent;
    for (ir::ValueId v : p.inputs) {
      bool constant = g.value(v).origin == ir::ValueOrigin::Constant;
      shapes.push_back(g.type(v).shape);
      known.push_back(constant ? &g.constant(v) : values ? &values->at(static_cast<size_t>(v.v)) : nullptr);
      dependent.push_back(!constant);
    }
    return PointEval(std::move(shapes), std::move(known), std::move(dependent));
  }

  // The value of integer or bool e at (i, r); nullopt when unknown. *indirect is set when the
  // value depends on a non-constant tensor.
  std::optional<int64_t> eval(const Expr& e, const Point& i, const Point& r, bool* indirect = nullptr) const {
    if (ir::is_float(e.dtype())) return std::nullopt;
    auto ev = [&](const Expr& x) { return eval(x, i, r, indirect); };
    switch (ir::expr_op_category(e.op())) {
      case ir::ExprCategory::Leaf:
        if (e.op() == ExprOp::Var) return (e->var_kind == ir::VarKind::Domain ? i : r).at(static_cast<size_t>(e->index));
        return e->value.i;
      case ir::ExprCategory::Load: return load_int(e, i, r, indirect);
      case ir::ExprCategory::Unary: {
        auto a = ev(e.arg(0));
        if (!a) return std::nullopt;
        switch (e.op()) {
          case ExprOp::Neg: return wrap_sub(0, *a);
          case ExprOp::Abs: return *a < 0 ? wrap_sub(0, *a) : *a;
          case ExprOp::Sign: return e.dtype() == DType::U64 ? int64_t{*a != 0} : (*a > 0) - (*a < 0);
          case ExprOp::Not: return e.dtype() == DType::Bool ? int64_t{*a == 0} : ~*a;
          default: return std::nullopt;
        }
      }
      case ir::ExprCategory::Binary: return eval_binary(e, i, r, indirect);
      case ir::ExprCategory::Compare: {
        if (ir::is_float(e.arg(0).dtype())) return compare_floats(e, i, r, indirect);
        auto a = ev(e.arg(0)), b = ev(e.arg(1));
        if (!a || !b) return std::nullopt;
        bool u = e.arg(0).dtype() == DType::U64;
        auto lt = [&](int64_t x, int64_t y) { return u ? static_cast<uint64_t>(x) < static_cast<uint64_t>(y) : x < y; };
        switch (e.op()) {
          case ExprOp::Lt: return lt(*a, *b);
          case ExprOp::Le: return !lt(*b, *a);
          case ExprOp::Gt: return lt(*b, *a);
          case ExprOp::Ge: return !lt(*a, *b);
          case ExprOp::Eq: return *a == *b;
          case ExprOp::Ne: return *a != *b;
          default: return std::nullopt;
        }
      }
      case ir::ExprCategory::Select: {
        auto c = ev(e.arg(0));
        if (c) return ev(e.arg(*c ? 1 : 2));
        auto a = ev(e.arg(1)), b = ev(e.arg(2));  // unknown condition: known if both agree
        return a && b && *a == *b ? a : std::nullopt;
      }
      case ir::ExprCategory::Cast: {
        if (ir::is_float(e.arg(0).dtype())) {
          auto f = evalf(e.arg(0), i, r, indirect);
          if (!f) return std::nullopt;
          return ir::float_to_integral(*f, e.dtype());  // to bool: f != 0 (NaN: true)
        }
        auto a = ev(e.arg(0));
        if (!a) return std::nullopt;
        return ir::wrap_to_dtype(*a, e.dtype());
      }
    }
    return std::nullopt;
  }

  // The value of float e at (i, r) as the interpreter computes it in F64 precision (every
  // float in f64, never rounded to its dtype); nullopt when unknown.
  std::optional<double> evalf(const Expr& e, const Point& i, const Point& r, bool* indirect = nullptr) const {
    auto ev = [&](const Expr& x) { return evalf(x, i, r, indirect); };
    switch (ir::expr_op_category(e.op())) {
      case ir::ExprCategory::Leaf: return e->value.f;
      case ir::ExprCategory::Load: return load_float(e, i, r, indirect);
      case ir::ExprCategory::Unary: {
        auto a = ev(e.arg(0));
        if (!a) return std::nullopt;
        return unary_float(e.op(), *a);
      }
      case ir::ExprCategory::Binary: {
        auto a = ev(e.arg(0)), b = ev(e.arg(1));
        if (!a || !b) return std::nullopt;
        return binary_float(e.op(), *a, *b);
      }
      case ir::ExprCategory::Select: {
        auto c = eval(e.arg(0), i, r, indirect);
        if (c) return ev(e.arg(*c ? 1 : 2));
        auto a = ev(e.arg(1)), b = ev(e.arg(2));
        return a && b && *a == *b ? a : std::nullopt;
      }
      case ir::ExprCategory::Cast: {
        const Expr& x = e.arg(0);
        if (ir::is_float(x.dtype())) return ev(x);  // F64 precision: not rounded
        auto a = eval(x, i, r, indirect);
        if (!a) return std::nullopt;
        return x.dtype() == DType::U64 ? static_cast<double>(static_cast<uint64_t>(*a)) : static_cast<double>(*a);
      }
      case ir::ExprCategory::Compare: break;
    }
    return std::nullopt;
  }

  // Calls on_read(slot, index, indirect) for every element `e` reads at the point (i, r);
  // indirect[d]: index d depends on a non-constant tensor.
  template <class F>
  void reads(const Expr& e, const Point& i, const Point& r, F&& on_read) const {
    switch (ir::expr_op_category(e.op())) {
      case ir::ExprCategory::Load: {
        size_t n = e->args.size() - (e->predicated ? 1 : 0);
        if (e->predicated) {
          reads(e->args.back(), i, r, on_read);
          auto c = eval(e->args.back(), i, r);
          if (c && !*c) return;  // predicated off: no read, indices not evaluated
        }
        Index idx;
        std::vector<bool> indirect(n, false);
        for (size_t k = 0; k < n; ++k) {
          reads(e.arg(k), i, r, on_read);
          bool dep = false;
          idx.push_back(eval(e.arg(k), i, r, &dep));
          indirect[k] = dep;
        }
        on_read(static_cast<size_t>(e->index), idx, indirect);
        return;
      }
      case ir::ExprCategory::Select: {
        reads(e.arg(0), i, r, on_read);
        auto c = eval(e.arg(0), i, r);
        if (!c || *c) reads(e.arg(1), i, r, on_read);
        if (!c || !*c) reads(e.arg(2), i, r, on_read);
        return;
      }
      default:
        for (const Expr& a : e->args) reads(a, i, r, on_read);
    }
  }

 private:
  static double unary_float(ExprOp op, double a) {
    switch (op) {
      case ExprOp::Neg: return -a;
      case ExprOp::Abs: return std::fabs(a);
      case ExprOp::Exp: return std::exp(a);
      case ExprOp::Log: return std::log(a);
      case ExprOp::Sqrt: return std::sqrt(a);
      case ExprOp::Rsqrt: return 1 / std::sqrt(a);
      case ExprOp::Recip: return 1 / a;
      case ExprOp::Tanh: return std::tanh(a);
      case ExprOp::Erf: return std::erf(a);
      case ExprOp::Sigmoid: return 1 / (1 + std::exp(-a));
      case ExprOp::Sin: return std::sin(a);
      case ExprOp::Cos: return std::cos(a);
      case ExprOp::Floor: return std::floor(a);
      case ExprOp::Ceil: return std::ceil(a);
      case ExprOp::Round: return std::nearbyint(a);  // half to even in the default mode
      case ExprOp::Sign: return std::isnan(a) || a == 0 ? a : (a > 0 ? 1.0 : -1.0);
      default: return std::nan("");
    }
  }

  static double binary_float(ExprOp op, double a, double b) {
    switch (op) {
      case ExprOp::Add: return a + b;
      case ExprOp::Sub: return a - b;
      case ExprOp::Mul: return a * b;
      case ExprOp::Div: return a / b;
      case ExprOp::FloorDiv: return std::floor(a / b);
      case ExprOp::Mod: {
        double m = std::fmod(a, b);
        if (m != 0 && ((m < 0) != (b < 0))) m += b;
        return m == 0 ? std::copysign(0.0, b) : m;
      }
      case ExprOp::Pow: return std::pow(a, b);
      case ExprOp::Max: return std::isnan(a) || std::isnan(b) ? std::nan("") : (a < b ? b : a);
      case ExprOp::Min: return std::isnan(a) || std::isnan(b) ? std::nan("") : (b < a ? b : a);
      default: return std::nan("");
    }
  }

  std::optional<int64_t> compare_floats(const Expr& e, const Point& i, const Point& r, bool* indirect) const {
    auto a = evalf(e.arg(0), i, r, indirect), b = evalf(e.arg(1), i, r, indirect);
    if (!a || !b) return std::nullopt;
    switch (e.op()) {
      case ExprOp::Lt: return *a < *b;
      case ExprOp::Le: return *a <= *b;
      case ExprOp::Gt: return *a > *b;
      case ExprOp::Ge: return *a >= *b;
      case ExprOp::Eq: return *a == *b;
      case ExprOp::Ne: return *a != *b;
      default: return std::nullopt;
    }
  }

  // A load's element, or its fill where the predicate fails.
  std::optional<double> load_float(const Expr& e, const Point& i, const Point& r, bool* indirect) const {
    auto flat = load_flat(e, i, r, indirect);
    if (!flat) return std::nullopt;
    if (*flat < 0) return e->value.f;
    return known_[static_cast<size_t>(e->index)]->get_f64(*flat);
  }

  std::optional<int64_t> load_int(const Expr& e, const Point& i, const Point& r, bool* indirect) const {
    auto flat = load_flat(e, i, r, indirect);
    if (!flat) return std::nullopt;
    if (*flat < 0) return e->value.i;
    return known_[static_cast<size_t>(e->index)]->get_i64(*flat);
  }

  // The flat offset a load reads; -1 where its predicate fails; nullopt when unknown.
  std::optional<int64_t> load_flat(const Expr& e, const Point& i, const Point& r, bool* indirect) const {
    auto slot = static_cast<size_t>(e->index);
    if (e->predicated) {
      auto c = eval(e->args.back(), i, r, indirect);
      if (!c) return std::nullopt;
      if (!*c) return -1;
    }
    if (dependent_.at(slot) && indirect) *indirect = true;
    if (known_.at(slot) == nullptr) return std::nullopt;
    const ir::Dims& shape = shapes_[slot];
    int64_t flat = 0;
    for (size_t d = 0; d < shape.size(); ++d) {
      auto x = eval(e.arg(d), i, r, indirect);
      if (!x || *x < 0 || *x >= shape[d]) return std::nullopt;
      flat = flat * shape[d] + *x;
    }
    return flat;
  }

  std::optional<int64_t> eval_binary(const Expr& e, const Point& i, const Point& r, bool* indirect) const {
    auto a = eval(e.arg(0), i, r, indirect), b = eval(e.arg(1), i, r, indirect);
    bool logical = e.dtype() == DType::Bool;  // Kleene: a known false (true) decides and (or)
    if (logical && e.op() == ExprOp::And && ((a && !*a) || (b && !*b))) return 0;
    if (logical && e.op() == ExprOp::Or && ((a && *a) || (b && *b))) return 1;
    if (!a || !b) return std::nullopt;
    bool u = e.dtype() == DType::U64;
    auto ua = static_cast<uint64_t>(*a), ub = static_cast<uint64_t>(*b);
    switch (e.op()) {
      case ExprOp::Add: return wrap_add(*a, *b);
      case ExprOp::Sub: return wrap_sub(*a, *b);
      case ExprOp::Mul: return wrap_mul(*a, *b);
      case ExprOp::Div:
        if (*b == 0) return 0;
        if (u) return static_cast<int64_t>(ua / ub);
        if (*a == INT64_MIN && *b == -1) return INT64_MIN;
        return *a / *b;
      case ExprOp::FloorDiv:
        if (u) return *b == 0 ? 0 : static_cast<int64_t>(ua / ub);
        return floordiv_i(*a, *b);
      case ExprOp::Mod:
        if (*b == 0) return 0;
        if (u) return static_cast<int64_t>(ua % ub);
        return wrap_sub(*a, wrap_mul(floordiv_i(*a, *b), *b));
      case ExprOp::Max: return (u ? ua < ub : *a < *b) ? *b : *a;
      case ExprOp::Min: return (u ? ub < ua : *b < *a) ? *b : *a;
      case ExprOp::And: return *a & *b;
      case ExprOp::Or: return *a | *b;
      case ExprOp::Xor: return *a ^ *b;
      default: return std::nullopt;
    }
  }

  std::vector<ir::Dims> shapes_;
  std::vector<const ir::Tensor*> known_;
  std::vector<bool> dependent_;
};

// Calls fn(point) for every point of the box lo..hi (half-open), row-major.
template <class F>
void for_each_point(const ir::Dims& lo, const ir::Dims& hi, F&& fn) {
  for (size_t d = 0; d < lo.size(); ++d)
    if (hi[d] <= lo[d]) return;
  Point at = lo;
  while (true) {
    fn(at);
    size_t d = at.size();
    while (d > 0) {
      --d;
      if (++at[d] < hi[d]) break;
      at[d] = lo[d];
      if (d == 0) return;
    }
    if (at.empty()) return;
  }
}

// What a tile of one primitive reads of one slot, found by enumeration: the bounding box of
// the known indices, and the dims some read indexed indirectly (through a non-constant
// tensor) or with an unknown value.
struct ReadBox {
  bool any = false;
  bool out_of_bounds = false;  // a known index outside the input (a broken test graph)
  std::vector<int64_t> lo, hi;  // inclusive, over the known indices of each dim
  std::vector<bool> unknown;    // some read's index here is indirect or unknown
};

// values: every value of g by id (interp::run_all), or nullptr to know constants only.
inline std::vector<ReadBox> brute_force_reads(const ir::Graph& g, const ir::Primitive& p, const Region& tile,
                                              const std::optional<Region>& reduce = std::nullopt,
                                              const std::vector<ir::Tensor>* values = nullptr) {
  std::vector<ReadBox> out(p.inputs.size());
  for (size_t k = 0; k < p.inputs.size(); ++k) {
    size_t rank = g.type(p.inputs[k]).shape.size();
    out[k].lo.assign(rank, INT64_MAX);
    out[k].hi.assign(rank, INT64_MIN);
    out[k].unknown.assign(rank, false);
  }
  if (p.kind() == ir::PrimKind::Opaque) {
    if (tile.empty()) return out;
    for (size_t k = 0; k < p.inputs.size(); ++k) {
      const ir::Dims& s = g.type(p.inputs[k]).shape;
      if (ir::numel(s) == 0) continue;
      out[k].any = true;
      for (size_t d = 0; d < s.size(); ++d) {
        out[k].lo[d] = 0;
        out[k].hi[d] = s[d] - 1;
      }
    }
    return out;
  }
  PointEval pe = PointEval::of(g, p, values);
  Region red = reduce ? *reduce : Region::whole(p.reduce_domain);
  auto on_read = [&](size_t slot, const Index& idx, const std::vector<bool>& indirect) {
    ReadBox& rb = out[slot];
    const ir::Dims& s = g.type(p.inputs[slot]).shape;
    rb.any = true;
    for (size_t d = 0; d < idx.size(); ++d) {
      if (indirect[d]) rb.unknown[d] = true;
      if (!idx[d]) {
        rb.unknown[d] = true;
        continue;
      }
      if (*idx[d] < 0 || *idx[d] >= s[d]) rb.out_of_bounds = true;
      rb.lo[d] = std::min(rb.lo[d], *idx[d]);
      rb.hi[d] = std::max(rb.hi[d], *idx[d]);
    }
  };
  for_each_point(tile.lo, tile.hi, [&](const Point& i) {
    for_each_point(red.lo, red.hi, [&](const Point& r) {
      for (const Expr& b : p.bodies) pe.reads(b, i, r, on_read);
    });
  });
  return out;
}

// Soundness: every element read lies in the region, which spans every indirect or unknown dim.
inline bool covers(const std::optional<Region>& region, const ReadBox& rb, const ir::Dims& shape) {
  if (!rb.any) return true;
  if (!region) return false;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (rb.unknown[d] && (region->lo[d] > 0 || region->hi[d] < shape[d])) return false;
    if (rb.lo[d] <= rb.hi[d] && (rb.lo[d] < region->lo[d] || rb.hi[d] >= region->hi[d])) return false;
  }
  return true;
}

// Exactness: the region is the bounding box of what is read (whole along indirect dims).
inline bool exact(const std::optional<Region>& region, const ReadBox& rb, const ir::Dims& shape) {
  if (!rb.any) return !region.has_value();
  if (!region) return false;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t lo = rb.unknown[d] ? 0 : rb.lo[d], hi = rb.unknown[d] ? shape[d] - 1 : rb.hi[d];
    if (region->lo[d] != lo || region->hi[d] != hi + 1) return false;
  }
  return true;
}

inline std::string read_box_str(const ReadBox& rb) {
  if (!rb.any) return "(nothing)";
  std::string s = "[";
  for (size_t d = 0; d < rb.lo.size(); ++d) {
    if (d) s += ", ";
    s += rb.unknown[d] ? std::string("?") : std::to_string(rb.lo[d]) + ":" + std::to_string(rb.hi[d] + 1);
  }
  return s + "]";
}

}  // namespace orchid::tile::oracle
