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

namespace {

// (dims, strides) without the dims of 1.
void drop_ones(const Dims& shape, const Dims& strides, Dims& s, Dims& st) {
  for (size_t k = 0; k < shape.size(); ++k)
    if (shape[k] != 1) {
      s.push_back(shape[k]);
      st.push_back(strides[k]);
    }
}

}  // namespace

std::optional<Dims> reshaped_strides(const Dims& from, const Dims& from_strides, const Dims& to) {
  if (numel(from) != numel(to) || numel(from) == 0) return std::nullopt;
  Dims fs, fst;
  drop_ones(from, from_strides, fs, fst);
  Dims ts, tst;
  for (int64_t d : to)
    if (d != 1) ts.push_back(d);
  // Groups of consecutive dims of equal products: each `from` group must be contiguous, and
  // its `to` dims then step through it in row-major order from its last stride.
  size_t i = 0, j = 0;
  while (i < fs.size() && j < ts.size()) {
    size_t i1 = i + 1, j1 = j + 1;
    int64_t a = fs[i], b = ts[j];
    while (a != b) {
      if (a < b) a *= fs[i1++];
      else b *= ts[j1++];
    }
    for (size_t k = i; k + 1 < i1; ++k)
      if (fst[k] != fst[k + 1] * fs[k + 1]) return std::nullopt;
    int64_t stride = fst[i1 - 1];
    for (size_t k = j1; k-- > j;) {
      tst.push_back(stride);
      stride *= ts[k];
    }
    std::reverse(tst.end() - static_cast<std::ptrdiff_t>(j1 - j), tst.end());
    i = i1;
    j = j1;
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
