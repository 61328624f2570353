// Random layout primitives: transposes with slices (steps, reversals), constant / edge /
// reflect pads, concatenations, gathers with index inputs, splits, tiles and masks.
#include <algorithm>

#include "testlib/random_graph_internal.h"

namespace orchid::testlib::detail {

using ir::DType;
using ir::Dims;
using ir::Expr;
using ir::ExprOp;
using ir::TensorType;
using ir::ValueId;

// ---------------------------------------------------------------- layouts

bool GraphGen::gen_layout() {
  if (budget_ < 1) return false;
  Operand x = choose([&](ValueId v) { return type(v).rank() >= 1; },
                     [&] { return random_type(DTypeSet::Any, 1, o_.max_elements / 4); });
  double weights[] = {5, 3, 3, o_.allow_indirect ? 3.0 : 0.0, 1.5, 1.5, 1.5};
  double u = rng_.uniform() * (5 + 3 + 3 + weights[3] + 4.5);
  int k = 0;
  while (k < 6 && u >= weights[k]) u -= weights[k++];
  switch (k) {
    case 0: return gen_transpose_slice(x);
    case 1: return gen_pad(x);
    case 2: return gen_concat(x);
    case 3: return gen_gather(x);
    case 4: return gen_split(x);
    case 5: return gen_tile(x);
    default: return gen_mask(x);
  }
}

// A permutation of the dims, each dim read whole, sliced with a step, reversed, or sliced
// with a negative step.
bool GraphGen::gen_transpose_slice(const Operand& x) {
  const Dims& xs = x.t.shape;
  size_t R = xs.size();
  std::vector<size_t> perm(R);
  for (size_t j = 0; j < R; ++j) perm[j] = j;
  if (R >= 2 && rng_.coin(0.7))
    for (size_t j = R - 1; j > 0; --j)
      std::swap(perm[j], perm[static_cast<size_t>(rng_.range(0, static_cast<int64_t>(j) + 1))]);
  Dims out(R);
  std::vector<Expr> idx(R);
  for (size_t j = 0; j < R; ++j) {
    size_t a = perm[j];
    int64_t d = xs[a];
    Expr i = ir::dvar(static_cast<int32_t>(j));
    int64_t step = rng_.range(1, 4);
    int64_t start = rng_.coin() ? 0 : rng_.range(0, d);
    // The longest slice from start, or a shorter one.
    auto count = [&](int64_t longest) { return rng_.coin() ? longest : rng_.range(1, longest + 1); };
    switch (rng_.range(0, 5)) {
      case 0:
      case 1:
        idx[a] = i;
        out[j] = d;
        break;
      case 2:
        out[j] = count((d - 1 - start) / step + 1);
        idx[a] = affine(i, step, start);
        break;
      case 3:
        out[j] = d;
        idx[a] = ir::binary(ExprOp::Sub, ir::const_i64(d - 1), i);
        break;
      default:
        start = d - 1 - start;
        out[j] = count(start / step + 1);
        idx[a] = rng_.coin() ? ir::binary(ExprOp::Sub, ir::const_i64(start), affine(i, step, 0))
                             : affine(i, -step, start);
    }
  }
  ir::Primitive p;
  p.op = ir::PrimOp::Layout;
  p.inputs = {realize(x)};
  p.domain = out;
  p.bodies = {ir::load(0, x.t.dtype, std::move(idx))};
  add(std::move(p), {{x.t.dtype, out}}, {x.f}, "lay");
  return true;
}

// Constant pads (predicated loads), edge pads (clamped indices) and reflect pads (indices
// folded with min/max or with selects), on one or two dims.
bool GraphGen::gen_pad(const Operand& x) {
  const Dims& xs = x.t.shape;
  size_t R = xs.size();
  size_t naxes = R >= 2 && rng_.coin(0.3) ? 2 : 1;
  size_t first = static_cast<size_t>(rng_.range(0, static_cast<int64_t>(R - naxes + 1)));
  Dims out = xs;
  std::vector<Expr> idx = identity_index(R), conds;
  for (size_t a = first; a < first + naxes; ++a) {
    int64_t d = xs[a], pb = rng_.range(0, 4), pe = rng_.range(0, 4);
    int mode = static_cast<int>(rng_.range(0, 3));  // 0 constant, 1 edge, 2 reflect
    if (mode == 2 && d == 1) mode = 1;
    if (mode == 2) {
      pb = std::min(pb, d - 1);
      pe = std::min(pe, d - 1);
    }
    if (pb == 0 && pe == 0) pb = 1;
    out[a] = d + pb + pe;
    Expr i = ir::dvar(static_cast<int32_t>(a));
    Expr j = affine(i, 1, -pb);
    if (mode == 0) {
      idx[a] = j;
      if (pb > 0) conds.push_back(cmp(ExprOp::Ge, i, pb));
      if (pe > 0) conds.push_back(cmp(ExprOp::Lt, i, pb + d));
    } else if (mode == 1) {
      idx[a] = ir::binary(ExprOp::Min, ir::binary(ExprOp::Max, j, ir::const_i64(0)),
                          ir::const_i64(d - 1));
    } else if (rng_.coin()) {  // (d-1) - |(d-1) - |j||
      Expr neg_j = ir::binary(ExprOp::Sub, ir::const_i64(0), j);
      Expr b = ir::binary(ExprOp::Sub, ir::const_i64(d - 1), ir::binary(ExprOp::Max, j, neg_j));
      Expr neg_b = ir::binary(ExprOp::Sub, ir::const_i64(0), b);
      idx[a] = ir::binary(ExprOp::Sub, ir::const_i64(d - 1), ir::binary(ExprOp::Max, b, neg_b));
    } else {
      Expr low = ir::binary(ExprOp::Sub, ir::const_i64(0), j);
      Expr high = ir::binary(ExprOp::Sub, ir::const_i64(2 * (d - 1)), j);
      idx[a] = ir::select(cmp(ExprOp::Lt, j, 0), low,
                          ir::select(cmp(ExprOp::Gt, j, d - 1), high, j));
    }
  }
  if (ir::numel(out) > o_.max_elements) return false;
  ExprGen eg(rng_);
  TE fill = rng_.coin() ? eg.konst(x.t.dtype, 0) : eg.random_const(x.t.dtype);
  Expr body = conds.empty() ? ir::load(0, x.t.dtype, idx)
                            : ir::load_pred(0, x.t.dtype, idx, all_of(conds), fill.e->value);
  ir::Primitive p;
  p.op = ir::PrimOp::Layout;
  p.inputs = {realize(x)};
  p.domain = out;
  p.bodies = {body};
  add(std::move(p), {{x.t.dtype, out}}, {conds.empty() ? x.f : join(x.f, fill.f)}, "pad");
  return true;
}

// Concatenation along one axis: selects between loads at shifted indices (a value may be
// concatenated with itself through one input).
bool GraphGen::gen_concat(const Operand& x) {
  const Dims& xs = x.t.shape;
  size_t R = xs.size();
  auto a = static_cast<size_t>(rng_.range(0, static_cast<int64_t>(R)));
  std::vector<Operand> ins = {x};
  std::vector<int> part_slot = {0};
  if (rng_.coin(0.2)) {
    part_slot.push_back(0);
  } else {
    int more = static_cast<int>(rng_.range(1, 3));
    for (int k = 0; k < more; ++k) {
      auto ok = [&](ValueId v) {
        const TensorType& t = type(v);
        if (t.dtype != x.t.dtype || t.shape.size() != R) return false;
        if (std::any_of(ins.begin(), ins.end(), [&](const Operand& o) { return o.is(v); }))
          return false;
        for (size_t j = 0; j < R; ++j)
          if (j != a && t.shape[j] != xs[j]) return false;
        return true;
      };
      int64_t slice = x.t.numel() / xs[a];  // elements per index of axis a
      int64_t room = std::max<int64_t>(1, o_.max_elements / slice - xs[a]);
      ins.push_back(choose(
          ok, [&] { return TensorType{x.t.dtype, with_dim(xs, a, random_dim(room))}; }, 0.3));
      part_slot.push_back(static_cast<int>(k + 1));
    }
  }
  std::vector<int64_t> offsets;
  int64_t total = 0;
  for (int slot : part_slot) {
    offsets.push_back(total);
    total += ins[static_cast<size_t>(slot)].t.shape[a];
  }
  Dims out = with_dim(xs, a, total);
  if (ir::numel(out) > o_.max_elements) return false;
  auto part = [&](size_t k) {
    std::vector<Expr> idx = identity_index(R);
    idx[a] = affine(idx[a], 1, -offsets[k]);
    const Operand& o = ins[static_cast<size_t>(part_slot[k])];
    return ir::load(part_slot[k], o.t.dtype, std::move(idx));
  };
  Expr body = part(part_slot.size() - 1);
  for (size_t k = part_slot.size() - 1; k-- > 0;)
    body = ir::select(cmp(ExprOp::Lt, ir::dvar(static_cast<int32_t>(a)), offsets[k + 1]), part(k), body);
  Facts f = x.f;
  ir::Primitive p;
  for (const Operand& o : ins) {
    f = join(f, o.f);
    p.inputs.push_back(realize(o));
  }
  p.op = ir::PrimOp::Layout;
  p.domain = out;
  p.bodies = {body};
  add(std::move(p), {{x.t.dtype, out}}, {f}, "cat");
  return true;
}

// Gather along one axis with a graph input of indices: take (out = x[:a] + idx + x[a+1:]) or
// take-along-axis (idx has x's shape but for dim a).
bool GraphGen::gen_gather(const Operand& x) {
  if (!o_.allow_indirect) return false;
  const Dims& xs = x.t.shape;
  size_t R = xs.size();
  auto a = static_cast<size_t>(rng_.range(0, static_cast<int64_t>(R)));
  bool along = rng_.coin(0.3);
  Dims ishape;
  if (along) {
    ishape = with_dim(xs, a, rng_.range(1, 6));
  } else {
    int64_t rest = x.t.numel() / xs[a];
    ishape = random_shape(static_cast<int>(rng_.range(0, 3)), std::max<int64_t>(1, o_.max_elements / rest / 2));
  }
  Dims out = ishape;
  if (!along) {
    out = Dims(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(a));
    out.insert(out.end(), ishape.begin(), ishape.end());
    out.insert(out.end(), xs.begin() + static_cast<std::ptrdiff_t>(a) + 1, xs.end());
  }
  if (ir::numel(out) > o_.max_elements || static_cast<int>(out.size()) > o_.max_rank) return false;
  // Reuse an index input of that shape now and then (random_inputs keeps it inside the
  // smallest extent it indexes).
  std::optional<ValueId> reuse;
  for (ValueId in : g_.inputs())
    if (is_index_[static_cast<size_t>(in.v)] && type(in).shape == ishape && rng_.coin(0.5)) reuse = in;
  ValueId xv = realize(x);
  ValueId iv = reuse ? *reuse : index_input(ishape);
  DType it = type(iv).dtype;
  std::vector<Expr> iidx;
  size_t irank = ishape.size();
  for (size_t m = 0; m < irank; ++m)
    iidx.push_back(ir::dvar(static_cast<int32_t>(along ? m : a + m)));
  Expr index = ir::load(1, it, std::move(iidx));
  if (it != DType::I64) index = ir::cast(DType::I64, index);
  std::vector<Expr> xidx;
  for (size_t j = 0; j < R; ++j) {
    if (j == a) xidx.push_back(index);
    else if (along || j < a) xidx.push_back(ir::dvar(static_cast<int32_t>(j)));
    else xidx.push_back(ir::dvar(static_cast<int32_t>(j + irank - 1)));
  }
  ir::Primitive p;
  p.op = ir::PrimOp::Layout;
  p.inputs = {xv, iv};
  p.domain = out;
  p.bodies = {ir::load(0, x.t.dtype, std::move(xidx))};
  add(std::move(p), {{x.t.dtype, out}}, {x.f}, "gather");
  return true;
}

// Two or three equal slices of one axis as the outputs of one layout.
bool GraphGen::gen_split(const Operand& x) {
  const Dims& xs = x.t.shape;
  std::vector<size_t> axes;
  for (size_t j = 0; j < xs.size(); ++j)
    if (xs[j] >= 2) axes.push_back(j);
  if (axes.empty()) return false;
  size_t a = pick_one(rng_, axes);
  int64_t d = xs[a], h = rng_.range(1, d / 2 + 1);
  int n = d >= 3 * h && rng_.coin(0.3) ? 3 : 2;
  bool contiguous = rng_.coin(0.6);
  ir::Primitive p;
  std::vector<TensorType> types;
  for (int k = 0; k < n; ++k) {
    int64_t off = contiguous ? k * h : rng_.range(0, d - h + 1);
    std::vector<Expr> idx = identity_index(xs.size());
    idx[a] = affine(idx[a], 1, off);
    p.bodies.push_back(ir::load(0, x.t.dtype, std::move(idx)));
    types.push_back({x.t.dtype, with_dim(xs, a, h)});
  }
  p.op = ir::PrimOp::Layout;
  p.inputs = {realize(x)};
  p.domain = types[0].shape;
  add(std::move(p), types, std::vector<Facts>(static_cast<size_t>(n), x.f), "split");
  return true;
}

// Tiling (index mod d) or repeating each element (index floordiv r) along one axis.
bool GraphGen::gen_tile(const Operand& x) {
  const Dims& xs = x.t.shape;
  auto a = static_cast<size_t>(rng_.range(0, static_cast<int64_t>(xs.size())));
  int64_t r = rng_.range(2, 4);
  Dims out = with_dim(xs, a, xs[a] * r);
  if (ir::numel(out) > o_.max_elements) return false;
  std::vector<Expr> idx = identity_index(xs.size());
  idx[a] = rng_.coin() ? ir::mod(idx[a], xs[a]) : ir::floordiv(idx[a], r);
  ir::Primitive p;
  p.op = ir::PrimOp::Layout;
  p.inputs = {realize(x)};
  p.domain = out;
  p.bodies = {ir::load(0, x.t.dtype, std::move(idx))};
  add(std::move(p), {{x.t.dtype, out}}, {x.f}, "tile");
  return true;
}

// Masking by the position (triangular masks and the like): select(cond, load, constant).
bool GraphGen::gen_mask(const Operand& x) {
  const Dims& xs = x.t.shape;
  size_t R = xs.size();
  auto a = static_cast<size_t>(rng_.range(0, static_cast<int64_t>(R)));
  Expr ia = ir::dvar(static_cast<int32_t>(a));
  ExprOp op = pick_one(rng_, std::vector<ExprOp>{ExprOp::Lt, ExprOp::Le, ExprOp::Gt, ExprOp::Ge,
                                                 ExprOp::Eq, ExprOp::Ne});
  Expr cond;
  if (R >= 2 && rng_.coin(0.7)) {
    auto b = static_cast<size_t>(rng_.range(0, static_cast<int64_t>(R) - 1));
    if (b >= a) ++b;
    cond = ir::binary(op, ia, affine(ir::dvar(static_cast<int32_t>(b)), 1, rng_.range(-2, 3)));
  } else {
    cond = cmp(op, ia, rng_.range(0, xs[a]));
  }
  double r = rng_.uniform();
  if (r < 0.2) cond = ir::unary(ExprOp::Not, cond);
  else if (r < 0.35) cond = ir::binary(ExprOp::Or, cond, cmp(ExprOp::Eq, ia, 0));
  ExprGen eg(rng_);
  TE fill = rng_.coin() ? eg.konst(x.t.dtype, 0) : eg.random_const(x.t.dtype);
  Expr v = ir::load(0, x.t.dtype, identity_index(R));
  Expr body = rng_.coin() ? ir::select(cond, v, fill.e) : ir::select(cond, fill.e, v);
  ir::Primitive p;
  p.op = ir::PrimOp::Layout;
  p.inputs = {realize(x)};
  p.domain = xs;
  p.bodies = {body};
  add(std::move(p), {x.t}, {join(x.f, fill.f)}, "mask");
  return true;
}

}  // namespace orchid::testlib::detail
