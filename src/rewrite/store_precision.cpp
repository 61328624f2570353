// Reduced-precision storage of f32 values (store_precision.h).
#include "rewrite/store_precision.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "ir/dce.h"
#include "ir/verifier.h"
#include "rewrite/fold_constants.h"
#include "rewrite/patterns.h"
#include "support/error.h"

namespace orchid::rewrite {

namespace {

using ir::DType;
using ir::Expr;
using ir::ExprOp;
using ir::Graph;
using ir::NodeId;
using ir::Primitive;
using ir::TensorType;
using ir::ValueId;

// The input slots of float loads under a cast to an integer dtype in e (indices, positions).
void slots_cast_to_int(const Expr& e, bool under_cast, std::vector<int32_t>& slots) {
  if (e.op() == ExprOp::Load && under_cast && ir::is_float(e.dtype())) slots.push_back(e->index);
  bool cast_to_int = e.op() == ExprOp::Cast && ir::is_int(e.dtype());
  for (const Expr& a : e->args) slots_cast_to_int(a, under_cast || cast_to_int, slots);
}

// Views, layouts and broadcasts: they move data and compute nothing.
bool moves_data(const Primitive& p) {
  return p.op == ir::PrimOp::View || p.op == ir::PrimOp::Layout || p.op == ir::PrimOp::Broadcast;
}

// The values that stay f32 whatever computes them: graph outputs, what opaque routines read,
// what a consumer casts to an integer, and what views, layouts and broadcasts of those move
// (moving data never rounds, so the data they move must not have been rounded before).
std::vector<bool> kept_f32(const Graph& g) {
  std::vector<bool> keep(static_cast<size_t>(g.num_values()), false);
  for (ValueId v : g.outputs()) keep[static_cast<size_t>(v.v)] = true;
  for (const Primitive& p : g.nodes()) {
    if (p.kind() == ir::PrimKind::Opaque) {
      for (ValueId v : p.inputs) keep[static_cast<size_t>(v.v)] = true;
      continue;
    }
    std::vector<int32_t> slots;
    for (const Expr& b : p.bodies) slots_cast_to_int(b, false, slots);
    for (int32_t s : slots) keep[static_cast<size_t>(p.inputs[static_cast<size_t>(s)].v)] = true;
  }
  for (int32_t n = g.num_nodes(); n-- > 0;) {
    const Primitive& p = g.node(NodeId(n));
    bool kept =
        std::any_of(p.outputs.begin(), p.outputs.end(), [&](ValueId o) { return keep[static_cast<size_t>(o.v)]; });
    if (kept && moves_data(p))
      for (ValueId v : p.inputs) keep[static_cast<size_t>(v.v)] = true;
  }
  return keep;
}

// The largest finite value of a 16-bit float dtype.
double largest_finite(DType t) { return t == DType::F16 ? 65504.0 : 0x1.fep127; }

// v stored in t: rounded, a finite value beyond t's range saturated to its largest finite
// value rather than made infinite (-3.4e38 standing for -inf, -1e9 masks in f16).
double saturated(double v, DType t) {
  double top = largest_finite(t);
  return std::isfinite(v) ? std::clamp(v, -top, top) : v;
}

// Whether e holds a finite constant beyond t's range: its result stays f32 rather than
// becoming infinite where the constant dominates (a mask of -1e9 in f16).
bool holds_out_of_range(const Expr& e, DType t) {
  bool out = false;
  ir::visit_post(e, [&](const Expr& x) {
    out |= x.op() == ExprOp::Const && ir::is_float(x.dtype()) && std::isfinite(x->value.f) &&
           std::abs(x->value.f) > largest_finite(t);
  });
  return out;
}

// The predicated load `load` with another fill.
Expr refilled(const Expr& load, ir::Scalar fill) {
  auto n = std::make_shared<ir::ExprNode>(*load);
  n->value = fill;
  return Expr(std::move(n));
}

// A movement body (loads, constants, selects) with its f32 values in d.
Expr moved_as(const Expr& body, DType d) {
  if (d == DType::F32) return body;
  return ir::map_post(body, [&](const Expr& e) {
    if (e.dtype() != DType::F32) return e;
    if (e.op() == ExprOp::Load)
      return e->predicated ? refilled(ir::retyped_load(e, d), ir::Scalar::of(d, saturated(e->value.f, d)))
                           : ir::retyped_load(e, d);
    if (e.op() == ExprOp::Const) return ir::constant(ir::Scalar::of(d, saturated(e->value.f, d)));
    if (e.op() == ExprOp::Select) return ir::select(e.arg(0), e.arg(1), e.arg(2));
    return e;
  });
}

// A load of an f32 value now stored in `now`, read as f32: cast(f32, load). A predicated
// load's fill is no stored data: it stays the f32 constant it was, outside the cast.
Expr widened(const Expr& load, DType now) {
  if (!load->predicated) return ir::cast(load.dtype(), ir::retyped_load(load, now));
  Expr zero_filled = refilled(ir::retyped_load(load, now), ir::Scalar::of_int(now, 0));
  return ir::select(load.arg(load.num_args() - 1), ir::cast(load.dtype(), zero_filled), ir::constant(load->value));
}

// cast(to, e), without a round trip: cast(to, cast(f32, x)) of an x of dtype `to` is x.
Expr rounded(const Expr& e, DType to) {
  if (e.op() == ExprOp::Cast && e.arg(0).dtype() == to) return e.arg(0);
  return ir::cast(to, e);
}

class Converter {
 public:
  Converter(const Graph& g, DType to)
      : g_(g), to_(to), keep_(kept_f32(g)), stored_(static_cast<size_t>(g.num_values())) {
    h_.name = g.name;
  }

  Graph run() {
    for (ValueId v : g_.inputs()) stored_[idx(v)] = h_.add_input(g_.value(v).name, g_.type(v));
    for (int32_t v = 0; v < g_.num_values(); ++v)
      if (g_.value(ValueId(v)).origin == ir::ValueOrigin::Constant) add_constant(ValueId(v));
    for (int32_t n = 0; n < g_.num_nodes(); ++n) add_node(g_.node(NodeId(n)));
    std::vector<ValueId> outputs;
    for (ValueId v : g_.outputs()) {
      ValueId now = as(v, g_.type(v).dtype);
      h_.rename_value(now, g_.value(v).name);  // outputs keep their names
      outputs.push_back(now);
    }
    h_.set_outputs(outputs);
    return std::move(h_);
  }

 private:
  static size_t idx(ValueId v) { return static_cast<size_t>(v.v); }
  bool reduced(ValueId old) const { return g_.type(old).dtype == DType::F32 && !keep_[idx(old)]; }
  DType stored_dtype(ValueId old) const { return h_.type(stored_[idx(old)]).dtype; }

  void add_constant(ValueId v) {
    const ir::Tensor& data = g_.constant(v);
    if (!reduced(v)) {
      stored_[idx(v)] = h_.add_constant(g_.value(v).name, data);
      return;
    }
    ir::Tensor r(TensorType{to_, data.shape()});
    for (int64_t i = 0; i < data.numel(); ++i) r.set_f64(i, saturated(data.get_f64(i), to_));
    stored_[idx(v)] = h_.add_constant(g_.value(v).name, std::move(r));
  }

  // The value `old` in dtype t: as stored, or cast (once) from it.
  ValueId as(ValueId old, DType t) {
    ValueId s = stored_[idx(old)];
    const TensorType& st = h_.type(s);
    if (st.dtype == t) return s;
    auto key = std::make_pair(s.v, t);
    if (auto it = casts_.find(key); it != casts_.end()) return it->second;
    Primitive p;
    p.op = ir::PrimOp::Elementwise;
    p.inputs = {s};
    p.domain = st.shape;
    p.bodies = {ir::cast(t, ir::load(0, st.dtype, domain_vars(st.shape.size())))};
    p.name = g_.value(old).name;
    NodeId n = h_.add_node(std::move(p), {TensorType{t, st.shape}},
                           {g_.value(old).name + "." + std::string(ir::dtype_name(t))});
    ValueId out = h_.node(n).outputs[0];
    casts_.emplace(key, out);
    return out;
  }

  void add_node(const Primitive& p) {
    if (p.op == ir::PrimOp::View) return add_view(p);
    if (p.kind() == ir::PrimKind::Linear) return add_linear(p);
    if (p.kind() == ir::PrimKind::Opaque) return add_as_is(p);
    if (p.op == ir::PrimOp::Layout || p.op == ir::PrimOp::Broadcast) return add_movement(p);
    add_generic(p);
  }

  void finish(Primitive p, const std::vector<ValueId>& old_outputs, const std::vector<TensorType>& types) {
    std::vector<std::string> names;
    for (ValueId o : old_outputs) names.push_back(g_.value(o).name);
    NodeId n = h_.add_node(std::move(p), types, names);
    for (size_t k = 0; k < old_outputs.size(); ++k) stored_[idx(old_outputs[k])] = h_.node(n).outputs[k];
  }

  std::vector<TensorType> old_types(const Primitive& p) const {
    std::vector<TensorType> t;
    for (ValueId o : p.outputs) t.push_back(g_.type(o));
    return t;
  }

  // Opaque routines read and write the dtypes they did.
  void add_as_is(const Primitive& p) {
    Primitive q = p;
    for (ValueId& v : q.inputs) v = as(v, g_.type(v).dtype);
    finish(std::move(q), p.outputs, old_types(p));
  }

  // A view keeps its input's storage.
  void add_view(const Primitive& p) {
    Primitive q = p;
    q.inputs = {stored_[idx(p.inputs[0])]};
    std::vector<TensorType> t = old_types(p);
    t[0].dtype = stored_dtype(p.inputs[0]);
    finish(std::move(q), p.outputs, t);
  }

  // An f32 matmul or conv reads its operands in `to` and writes `to`.
  void add_linear(const Primitive& p) {
    Primitive q = p;
    std::vector<TensorType> t = old_types(p);
    bool reduce = t[0].dtype == DType::F32;
    for (ValueId& v : q.inputs) v = as(v, reduce ? to_ : g_.type(v).dtype);
    if (reduce) t[0].dtype = to_;
    finish(std::move(q), p.outputs, t);
  }

  // Layout and broadcast bodies only load and select: their f32 inputs are read in one dtype,
  // `to` where one of them is stored so (and the results may be), which they write.
  void add_movement(const Primitive& p) {
    bool keep = false, any_reduced = false;
    for (ValueId o : p.outputs) keep |= g_.type(o).dtype == DType::F32 && !reduced(o);
    for (ValueId v : p.inputs) any_reduced |= g_.type(v).dtype == DType::F32 && stored_dtype(v) == to_;
    DType d = any_reduced && !keep ? to_ : DType::F32;
    Primitive q = p;
    for (ValueId& v : q.inputs) v = as(v, g_.type(v).dtype == DType::F32 ? d : g_.type(v).dtype);
    for (Expr& b : q.bodies) b = moved_as(b, d);
    std::vector<TensorType> t = old_types(p);
    for (TensorType& o : t)
      if (o.dtype == DType::F32) o.dtype = d;
    finish(std::move(q), p.outputs, t);
  }

  // The dtype output k of a generic primitive is stored in: `to` for an f32 result of
  // elementwise arithmetic on a float input.
  DType output_dtype(const Primitive& p, size_t k) const {
    ValueId o = p.outputs[k];
    if (!reduced(o) || p.reduce != ir::ReduceOp::None || p.bodies.size() != p.outputs.size()) return g_.type(o).dtype;
    if (holds_out_of_range(p.bodies[k], to_)) return DType::F32;
    bool reads_float = false;
    ir::visit_post(p.bodies[k], [&](const Expr& e) {
      reads_float |= e.op() == ExprOp::Load && ir::is_float(g_.type(p.inputs[static_cast<size_t>(e->index)]).dtype);
    });
    return reads_float ? to_ : DType::F32;
  }

  void add_generic(const Primitive& p) {
    Primitive q = p;
    for (ValueId& v : q.inputs) v = stored_[idx(v)];
    for (Expr& b : q.bodies)
      b = ir::map_post(b, [&](const Expr& e) {
        if (e.op() != ExprOp::Load) return e;
        DType now = h_.type(q.inputs[static_cast<size_t>(e->index)]).dtype;
        return now == e.dtype() ? e : widened(e, now);
      });
    std::vector<TensorType> t = old_types(p);
    for (size_t k = 0; k < t.size(); ++k) {
      DType d = output_dtype(p, k);
      if (d != t[k].dtype) q.bodies[k] = rounded(q.bodies[k], d);
      t[k].dtype = d;
    }
    finish(std::move(q), p.outputs, t);
  }

  const Graph& g_;
  DType to_;
  std::vector<bool> keep_;
  std::vector<ValueId> stored_;  // old value -> the new value that stores it
  std::map<std::pair<int32_t, DType>, ValueId> casts_;
  Graph h_;
};

}  // namespace

ir::Graph store_floats_as(const ir::Graph& g, ir::DType to) {
  ORCHID_CHECK(to == DType::F16 || to == DType::BF16) << "store_floats_as to " << ir::dtype_name(to);
  Graph h = Converter(g, to).run();
  ir::verify_or_throw(h, "after storing f32 values as " + std::string(ir::dtype_name(to)));
  fold_constants(h);
  return ir::eliminate_dead(h);
}

}  // namespace orchid::rewrite
