// Finding the chains of fold_conv_affine and composing their maps; the rewrite itself is in
// fold_conv_affine_rebuild.cpp.
#include "rewrite/fold_conv_affine.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "interp/interp.h"
#include "rewrite/fold_conv_affine_internal.h"
#include "support/error.h"
#include "support/random.h"

namespace orchid::rewrite {

namespace detail {

ConstValues::ConstValues(const ir::Graph& g) : g_(g), known_(static_cast<size_t>(g.num_values()), false) {
  for (int32_t v = 0; v < g.num_values(); ++v)
    known_[static_cast<size_t>(v)] = g.value(ir::ValueId(v)).origin == ir::ValueOrigin::Constant;
  for (int32_t n = 0; n < g.num_nodes(); ++n) {
    const ir::Primitive& p = g.node(ir::NodeId(n));
    bool known = p.kind() != ir::PrimKind::Opaque;
    for (ir::ValueId i : p.inputs) known &= is_const(i);
    for (ir::ValueId o : p.outputs) known_[static_cast<size_t>(o.v)] = known;
  }
}

// Runs the nodes v depends on, alone, on a scratch graph.
const ir::Tensor& ConstValues::data(ir::ValueId v) {
  ORCHID_CHECK(is_const(v)) << "value " << g_.value(v).name << " depends on a graph input";
  if (g_.value(v).origin == ir::ValueOrigin::Constant) return g_.constant(v);
  if (auto it = cache_.find(v.v); it != cache_.end()) return it->second;
  std::vector<bool> needed(static_cast<size_t>(g_.num_nodes()), false);
  needed[static_cast<size_t>(g_.value(v).node.v)] = true;
  for (int32_t n = g_.value(v).node.v; n >= 0; --n) {
    if (!needed[static_cast<size_t>(n)]) continue;
    for (ir::ValueId i : g_.node(ir::NodeId(n)).inputs)
      if (g_.value(i).origin == ir::ValueOrigin::Node) needed[static_cast<size_t>(g_.value(i).node.v)] = true;
  }
  ir::Graph scratch;
  std::map<int32_t, ir::ValueId> map;
  for (int32_t n = 0; n <= g_.value(v).node.v; ++n) {
    if (!needed[static_cast<size_t>(n)]) continue;
    ir::Primitive p = g_.node(ir::NodeId(n));
    std::vector<ir::TensorType> types;
    std::vector<std::string> names;
    for (ir::ValueId o : p.outputs) types.push_back(g_.type(o)), names.push_back(g_.value(o).name);
    for (ir::ValueId& i : p.inputs) {
      if (!map.count(i.v)) map[i.v] = scratch.add_constant(g_.value(i).name, g_.constant(i));
      i = map[i.v];
    }
    std::vector<ir::ValueId> old = p.outputs;
    ir::NodeId id = scratch.add_node(std::move(p), types, names);
    for (size_t k = 0; k < old.size(); ++k) map[old[k].v] = scratch.node(id).outputs[k];
  }
  scratch.set_outputs({map.at(v.v)});
  return cache_[v.v] = interp::run(scratch, {})[0];
}

}  // namespace detail

namespace {

using detail::ConstValues;
using detail::Fold;

using ir::DType;
using ir::Expr;
using ir::ExprOp;
using ir::Graph;
using ir::NodeId;
using ir::Primitive;
using ir::ValueId;

constexpr double kAffineTolerance = 1e-12;

bool is_domain_var(const Expr& e, int32_t index) {
  return e.op() == ExprOp::Var && e->var_kind == ir::VarKind::Domain && e->index == index;
}

// Whether a load of the previous value z reads it at the identity index.
bool identity_load(const Expr& load) {
  if (load->predicated) return false;
  for (size_t j = 0; j < load.num_args(); ++j)
    if (!is_domain_var(load.arg(j), static_cast<int32_t>(j))) return false;
  return true;
}

// Whether index expression idx of a link over `domain` is always 0: the constant 0, or a
// domain variable other than the channel's over a dim of extent 1.
bool always_zero(const Expr& idx, const ir::Dims& domain) {
  if (idx.op() == ExprOp::Const) return idx->value.as_double() == 0;
  return idx.op() == ExprOp::Var && idx->var_kind == ir::VarKind::Domain && idx->index != 1 &&
         domain[static_cast<size_t>(idx->index)] == 1;
}

// Whether a load of a constant-valued input reads it per channel: each index i1 or always 0.
bool channel_load(const Expr& load, const ir::Dims& domain) {
  if (load->predicated) return false;
  for (const Expr& idx : load->args)
    if (!is_domain_var(idx, 1) && !always_zero(idx, domain)) return false;
  return true;
}

// Whether e depends on load slot `z`; nullopt when e breaks the rules of a link (a bad load,
// a loop variable outside loads, or z flowing through an operation other than add, sub, mul,
// neg, div as dividend or a float cast).
std::optional<bool> depends_affinely(const Expr& e, int32_t z, const ir::Dims& domain) {
  switch (e.op()) {
    case ExprOp::Load:
      if (e->index == z) return identity_load(e) ? std::optional<bool>(true) : std::nullopt;
      return channel_load(e, domain) ? std::optional<bool>(false) : std::nullopt;
    case ExprOp::Var: return std::nullopt;
    case ExprOp::Const: return false;
    default: break;
  }
  std::vector<bool> dep;
  for (const Expr& a : e->args) {
    std::optional<bool> d = depends_affinely(a, z, domain);
    if (!d) return std::nullopt;
    dep.push_back(*d);
  }
  bool any = std::find(dep.begin(), dep.end(), true) != dep.end();
  if (!any) return false;
  switch (e.op()) {
    case ExprOp::Add:
    case ExprOp::Sub:
    case ExprOp::Mul:
    case ExprOp::Neg: return true;
    case ExprOp::Div: return dep[0] && !dep[1] ? std::optional<bool>(true) : std::nullopt;
    case ExprOp::Cast:
      return ir::is_float(e.dtype()) && ir::is_float(e.arg(0).dtype()) ? std::optional<bool>(true) : std::nullopt;
    default: return std::nullopt;
  }
}

// The input slot through which link candidate p reads z, when p has the form of a link.
std::optional<int32_t> link_slot(const Graph& g, const ConstValues& consts, const Primitive& p, ValueId z) {
  const ir::TensorType& zt = g.type(z);
  if (p.op != ir::PrimOp::Elementwise || p.bodies.size() != 1 || p.outputs.size() != 1) return std::nullopt;
  if (p.domain != zt.shape || g.type(p.outputs[0]) != zt) return std::nullopt;
  std::optional<int32_t> slot;
  for (size_t k = 0; k < p.inputs.size(); ++k) {
    if (p.inputs[k] == z) {
      if (slot) return std::nullopt;
      slot = static_cast<int32_t>(k);
    } else if (!consts.is_const(p.inputs[k])) {
      return std::nullopt;
    }
  }
  if (!slot) return std::nullopt;
  std::optional<bool> dep = depends_affinely(p.bodies[0], *slot, p.domain);
  if (!dep || !*dep) return std::nullopt;
  return slot;
}

// Probe points: 0 and 1 (which give a and b), fixed values and seeded random multiples of
// 1/64 in [-8, 8), all exact in f32.
std::vector<double> probe_points() {
  std::vector<double> t = {0, 1, -2, 0.5, 3, -6.125, 7.75};
  Rng rng(0x0f01dc0);
  for (int k = 0; k < 5; ++k) t.push_back(static_cast<double>(rng.range(-512, 512)) / 64.0);
  return t;
}

// Link p evaluated by the interpreter in f64 at every probe point on every channel: out[t·K + c].
std::vector<double> run_probe(const Graph& g, ConstValues& consts, const Primitive& p, int32_t slot,
                              const std::vector<double>& points) {
  const ir::TensorType& zt = g.type(p.inputs[static_cast<size_t>(slot)]);
  ir::Dims shape(zt.shape.size(), 1);
  shape[0] = static_cast<int64_t>(points.size());
  shape[1] = zt.shape[1];
  Graph probe;
  Primitive q = p;
  q.outputs.clear();
  q.domain = shape;
  // Indices of constant loads that are always 0 become the constant 0: the probe's dim 0
  // holds the probe points, so a batch variable there would no longer be.
  q.bodies[0] = ir::map_post(p.bodies[0], [&](const Expr& e) {
    if (e.op() != ExprOp::Load || e->index == slot) return e;
    std::vector<Expr> idx;
    for (const Expr& i : e->args) idx.push_back(is_domain_var(i, 1) ? i : ir::const_i64(0));
    return ir::load(e->index, e.dtype(), std::move(idx));
  });
  for (size_t k = 0; k < q.inputs.size(); ++k) {
    ValueId v = q.inputs[k];
    q.inputs[k] = static_cast<int32_t>(k) == slot ? probe.add_input("z", {zt.dtype, shape})
                                                   : probe.add_constant("c" + std::to_string(k), consts.data(v));
  }
  ir::NodeId n = probe.add_node(std::move(q), {{zt.dtype, shape}}, {"out"});
  probe.set_outputs({probe.node(n).outputs[0]});
  ir::Tensor z({zt.dtype, shape});
  for (int64_t i = 0; i < z.numel(); ++i) z.set_f64(i, points[static_cast<size_t>(i / shape[1])]);
  ir::Tensor out = interp::run(probe, {z}, {interp::Precision::F64, true})[0];
  std::vector<double> values(static_cast<size_t>(out.numel()));
  for (int64_t i = 0; i < out.numel(); ++i) values[static_cast<size_t>(i)] = out.get_f64(i);
  return values;
}

// (a[c], b[c]) of link p, when it is affine on every channel.
std::optional<std::pair<std::vector<double>, std::vector<double>>> link_map(const Graph& g, ConstValues& consts,
                                                                            const Primitive& p, int32_t slot) {
  std::vector<double> points = probe_points();
  std::vector<double> f = run_probe(g, consts, p, slot, points);
  size_t channels = f.size() / points.size();
  std::vector<double> a(channels), b(channels);
  for (size_t c = 0; c < channels; ++c) {
    b[c] = f[c];
    a[c] = f[channels + c] - f[c];
    if (!std::isfinite(a[c]) || !std::isfinite(b[c])) return std::nullopt;
    for (size_t t = 2; t < points.size(); ++t) {
      double got = f[t * channels + c], want = a[c] * points[t] + b[c];
      double scale = std::max({std::abs(got), std::abs(a[c] * points[t]), std::abs(b[c])});
      if (!(std::abs(got - want) <= kAffineTolerance * scale)) return std::nullopt;
    }
    if (std::abs(a[c] - 1) <= kAffineTolerance) a[c] = 1;
  }
  return std::make_pair(std::move(a), std::move(b));
}

// The node that alone reads v, when v is not a graph output and has exactly one consumer.
std::optional<int32_t> sole_consumer(const std::vector<std::vector<NodeId>>& users, const std::vector<bool>& is_output,
                                     ValueId v) {
  const auto& u = users[static_cast<size_t>(v.v)];
  if (is_output[static_cast<size_t>(v.v)] || u.empty()) return std::nullopt;
  for (NodeId n : u)
    if (n != u[0]) return std::nullopt;
  return u[0].v;
}

// The longest chain of links after conv node c, composed; nullopt when there is nothing to fold.
std::optional<Fold> find_fold(const Graph& g, ConstValues& consts, int32_t c,
                              const std::vector<std::vector<NodeId>>& users, const std::vector<bool>& is_output) {
  const Primitive& conv = g.node(NodeId(c));
  ValueId z = conv.outputs[0];
  DType t = g.type(z).dtype;
  if ((t != DType::F32 && t != DType::F64) || g.type(z).rank() < 2) return std::nullopt;
  if (!consts.is_const(conv.inputs[1])) return std::nullopt;
  size_t channels = static_cast<size_t>(g.type(z).shape[1]);
  Fold fold{c, {}, std::vector<double>(channels, 1.0), std::vector<double>(channels, 0.0)};
  bool unit_slope = true;
  for (std::optional<int32_t> e = sole_consumer(users, is_output, z); e; e = sole_consumer(users, is_output, z)) {
    const Primitive& p = g.node(NodeId(*e));
    std::optional<int32_t> slot = link_slot(g, consts, p, z);
    if (!slot) break;
    auto map = link_map(g, consts, p, *slot);
    if (!map) break;
    for (size_t k = 0; k < channels; ++k) {
      fold.scale[k] *= map->first[k];
      fold.shift[k] = map->first[k] * fold.shift[k] + map->second[k];
      unit_slope &= map->first[k] == 1;
    }
    fold.links.push_back(*e);
    z = p.outputs[0];
  }
  if (fold.links.empty() || (fold.links.size() == 1 && unit_slope)) return std::nullopt;
  return fold;
}

}  // namespace

bool fold_conv_affine(Graph& g) {
  std::vector<std::vector<NodeId>> users = g.users();
  std::vector<bool> is_output(static_cast<size_t>(g.num_values()), false);
  for (ValueId o : g.outputs()) is_output[static_cast<size_t>(o.v)] = true;
  ConstValues consts(g);
  std::vector<Fold> folds;
  for (int32_t n = 0; n < g.num_nodes(); ++n) {
    if (g.node(NodeId(n)).op != ir::PrimOp::Conv) continue;
    if (std::optional<Fold> f = find_fold(g, consts, n, users, is_output)) folds.push_back(std::move(*f));
  }
  if (folds.empty()) return false;
  g = detail::rebuild_with_folds(g, consts, folds);
  return true;
}

}  // namespace orchid::rewrite
