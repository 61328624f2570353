#include "ir/movement.h"

#include <algorithm>

namespace orchid::ir {

std::optional<std::vector<int32_t>> permutation_of(const Graph& g, NodeId n) {
  const Primitive& p = g.node(n);
  size_t r = p.domain.size();
  if (p.op != PrimOp::Layout || p.bodies.size() != 1 || p.outputs.size() != 1 || p.inputs.size() != 1)
    return std::nullopt;
  const Expr& load = p.bodies[0];
  if (load.op() != ExprOp::Load || load->predicated || load->index != 0 || load.num_args() != r) return std::nullopt;
  const Dims& xs = g.type(p.inputs[0]).shape;
  if (xs.size() != r) return std::nullopt;
  std::vector<int32_t> q;
  std::vector<bool> seen(r, false);
  for (size_t k = 0; k < r; ++k) {
    const Expr& i = load.arg(k);
    if (i.op() != ExprOp::Var || i->var_kind != VarKind::Domain) return std::nullopt;
    auto d = static_cast<size_t>(i->index);
    if (d >= r || seen[d] || p.domain[d] != xs[k]) return std::nullopt;
    seen[d] = true;
    q.push_back(i->index);
  }
  return q;
}

bool is_movement(const Graph& g, NodeId n) {
  return g.node(n).op == PrimOp::View || permutation_of(g, n).has_value();
}

Dims permuted_strides(const Dims& x_strides, const std::vector<int32_t>& q) {
  Dims out(q.size(), 0);
  for (size_t k = 0; k < q.size(); ++k) out[static_cast<size_t>(q[k])] = x_strides[k];
  return out;
}

std::optional<Dims> read_strides(const Graph& g, NodeId n, const Dims& in_strides) {
  const Primitive& p = g.node(n);
  if (auto q = permutation_of(g, n)) return permuted_strides(in_strides, *q);
  if (p.op != PrimOp::View) return std::nullopt;
  return reshaped_strides(g.type(p.inputs[0]).shape, in_strides, p.domain);
}

std::optional<Dims> write_strides(const Graph& g, NodeId n, const Dims& out_strides) {
  const Primitive& p = g.node(n);
  if (auto q = permutation_of(g, n)) {
    Dims back(q->size());
    for (size_t k = 0; k < q->size(); ++k) back[k] = out_strides[static_cast<size_t>((*q)[k])];
    return back;
  }
  if (p.op != PrimOp::View) return std::nullopt;
  return reshaped_strides(p.domain, out_strides, g.type(p.inputs[0]).shape);
}

std::vector<ReshapeGroup> reshape_groups(const Dims& from, const Dims& to) {
  if (numel(from) != numel(to) || numel(from) == 0) return {};
  auto non_unit = [](const Dims& s) {
    std::vector<size_t> out;
    for (size_t k = 0; k < s.size(); ++k)
      if (s[k] != 1) out.push_back(k);
    return out;
  };
  std::vector<size_t> f = non_unit(from), t = non_unit(to);
  std::vector<ReshapeGroup> out;
  size_t i = 0, j = 0;
  while (i < f.size() && j < t.size()) {
    ReshapeGroup& grp = out.emplace_back();
    grp.from.push_back(f[i]);
    grp.to.push_back(t[j]);
    int64_t a = from[f[i++]], b = to[t[j++]];
    while (a != b) {  // equal counts: the smaller side has a dim left
      if (a < b) {
        a *= from[f[i]];
        grp.from.push_back(f[i++]);
      } else {
        b *= to[t[j]];
        grp.to.push_back(t[j++]);
      }
    }
  }
  return out;
}

std::optional<Dims> broadcast_before_reshape(const Dims& dims, const Dims& from, const Dims& to) {
  if (dims.size() != to.size() || numel(from) != numel(to) || numel(from) == 0) return std::nullopt;
  for (size_t k = 0; k < to.size(); ++k)
    if (dims[k] != 1 && dims[k] != to[k]) return std::nullopt;
  Dims out(from.size(), 1);
  for (const ReshapeGroup& grp : reshape_groups(from, to)) {
    bool all = true, none = true;
    for (size_t k : grp.to) {
      all = all && dims[k] == to[k];
      none = none && dims[k] == 1;
    }
    if (!all && !none) return std::nullopt;
    if (all)
      for (size_t k : grp.from) out[k] = from[k];
  }
  return out;
}

std::optional<Dims> reshaped_strides(const Dims& from, const Dims& from_strides, const Dims& to) {
  if (numel(from) != numel(to) || numel(from) == 0) return std::nullopt;
  // Each `from` group must be contiguous, and its `to` dims then step through it in row-major
  // order from its last stride.
  Dims ts, tst;  // `to`'s dims of more than one element, and their strides
  for (const ReshapeGroup& grp : reshape_groups(from, to)) {
    for (size_t k = 0; k + 1 < grp.from.size(); ++k)
      if (from_strides[grp.from[k]] != from_strides[grp.from[k + 1]] * from[grp.from[k + 1]]) return std::nullopt;
    int64_t stride = from_strides[grp.from.back()];
    size_t at = tst.size();
    tst.resize(at + grp.to.size());
    for (size_t k = grp.to.size(); k-- > 0;) {
      tst[at + k] = stride;
      stride *= to[grp.to[k]];
    }
    for (size_t d : grp.to) ts.push_back(to[d]);
  }
  // Back to `to`'s rank. Any stride reads a dim of 1 the same; the one chosen keeps the
  // layout recognisable (oneDNN matches layouts by their strides): leading dims of 1 are
  // outermost (the whole extent), others step over the dims after them.
  int64_t extent = 1;
  for (size_t k = 0; k < ts.size(); ++k) extent = std::max(extent, tst[k] * ts[k]);
  Dims out(to.size(), 1);
  size_t next = tst.size();
  int64_t after = 1;
  for (size_t k = to.size(); k-- > 0;) {
    if (to[k] != 1) {
      out[k] = tst[--next];
      after = out[k] * to[k];
    } else {
      out[k] = next == 0 ? extent : after;
    }
  }
  return out;
}

}  // namespace orchid::ir
