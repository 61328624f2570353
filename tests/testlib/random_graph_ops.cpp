// Random reductions (axis reductions of every combiner, pooling windows), linear primitives
// and opaque routines. Layouts are in random_layout.cpp.
#include <algorithm>
#include <cmath>
#include <limits>

#include "support/error.h"
#include "testlib/random_graph_internal.h"

namespace orchid::testlib::detail {

using ir::DType;
using ir::Dims;
using ir::Expr;
using ir::ExprOp;
using ir::ReduceOp;
using ir::TensorType;
using ir::ValueId;

namespace {

constexpr double kTwo62 = 4611686018427387904.0;
constexpr int64_t kMaxMacs = int64_t{1} << 18;  // multiply-adds per linear primitive

// The facts of an integer or float result that may wrap (integers) at the store.
Facts stored(Facts f, DType t) {
  if (ir::is_float(t)) return {f.lo, f.hi, false};
  return fits(f, t) ? Facts{f.lo, f.hi, true} : dtype_range(t);
}

bool float_exact_or_integral(const Operand& o) { return o.f.exact || !ir::is_float(o.t.dtype); }

}  // namespace

// ---------------------------------------------------------------- reductions

bool GraphGen::gen_reduce() {
  if (budget_ < 1) return false;
  Operand x = choose([&](ValueId v) { return type(v).rank() >= 1; },
                     [&] { return random_type(DTypeSet::Any, 1, o_.max_elements); });
  const Dims& xs = x.t.shape;
  size_t R = xs.size();
  std::vector<bool> red(R, rng_.coin(0.2));
  for (size_t a = 0; a < R; ++a) red[a] = red[a] || rng_.coin(0.35);
  if (std::none_of(red.begin(), red.end(), [](bool b) { return b; }))
    red[static_cast<size_t>(rng_.range(0, static_cast<int64_t>(R)))] = true;
  bool keep = rng_.coin(0.4);  // reduced dims stay as 1s, or are dropped
  Dims domain, rdom;
  std::vector<Expr> xidx(R);
  for (size_t a = 0; a < R; ++a) {
    if (red[a]) {
      xidx[a] = ir::rvar(static_cast<int32_t>(rdom.size()));
      rdom.push_back(xs[a]);
      if (keep) domain.push_back(1);
    } else {
      xidx[a] = ir::dvar(static_cast<int32_t>(domain.size()));
      domain.push_back(xs[a]);
    }
  }
  std::vector<ReduceOp> ops = {ReduceOp::Sum, ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min,
                               ReduceOp::Welford, ReduceOp::MaxSum};
  if (ir::numel(rdom) <= 8) ops.push_back(ReduceOp::Prod);
  if (float_exact_or_integral(x) && !ir::is_bool(x.t.dtype) && (!o_.float_only || budget_ >= 2)) {
    ops.push_back(ReduceOp::ArgMax);
    ops.push_back(ReduceOp::ArgMin);
  }
  ReduceOp op = pick_one(rng_, ops);
  // Bodies read x (slot 0) and maybe a value broadcast against x's shape (slot 1).
  std::vector<Operand> ins = {x};
  ExprGen eg(rng_);
  eg.add_load(ir::load(0, x.t.dtype, xidx), x.f);
  if (rng_.coin(0.3)) {
    Operand y = choose([&](ValueId v) { return !x.is(v) && broadcasts_to(type(v).shape, xs); },
                       [&] { return TensorType{random_dtype(DTypeSet::Any), sub_shape(xs)}; }, 0.3);
    std::vector<Expr> yidx;
    size_t off = R - y.t.shape.size();
    for (size_t j = 0; j < y.t.shape.size(); ++j)
      yidx.push_back(y.t.shape[j] == 1 ? ir::const_i64(0) : xidx[off + j]);
    eg.add_load(ir::load(1, y.t.dtype, std::move(yidx)), y.f);
    ins.push_back(std::move(y));
  }
  for (size_t j = 0; j < domain.size(); ++j)
    if (domain[j] > 1) eg.add_var(ir::dvar(static_cast<int32_t>(j)), domain[j]);
  for (size_t j = 0; j < rdom.size(); ++j) eg.add_var(ir::rvar(static_cast<int32_t>(j)), rdom[j]);
  ir::Primitive p;
  p.op = ir::PrimOp::Reduce;
  p.reduce = op;
  p.domain = domain;
  p.reduce_domain = rdom;
  std::vector<TensorType> types;
  std::vector<Facts> fs;
  if (!reduce_bodies(eg, x, p, types, fs)) return false;
  std::vector<bool> used = used_slots(p.bodies, ins.size());
  std::vector<int> map(ins.size(), -1);
  for (size_t k = 0; k < ins.size(); ++k)
    if (used[k]) {
      map[k] = static_cast<int>(p.inputs.size());
      p.inputs.push_back(realize(ins[k]));
    }
  for (Expr& b : p.bodies) b = remap_slots(b, map);
  std::vector<ValueId> outs = add(std::move(p), types, fs, "red");
  if (o_.float_only && (op == ReduceOp::ArgMax || op == ReduceOp::ArgMin))
    consume_index(outs[0], outs[1]);
  return true;
}

// The bodies of reduction p (its combiner, domain and reduction domain set) over the leaves of
// eg (load leaf 0 reads x), with the types and facts of its outputs.
bool GraphGen::reduce_bodies(ExprGen& eg, const Operand& x, ir::Primitive& p,
                             std::vector<TensorType>& types, std::vector<Facts>& fs) {
  bool x_float_inexact = ir::is_float(x.t.dtype) && !x.f.exact;
  // x's dtype when allowed, else a random one; floats when x is an inexact float (an integer
  // body would have to cast it, which only exact values may be).
  auto body_dtype = [&](DTypeSet set) {
    if (rng_.coin(0.5) && dtype_in(x.t.dtype, set)) return x.t.dtype;
    return random_dtype(x_float_inexact ? DTypeSet::Float : set);
  };
  int depth = static_cast<int>(rng_.range(1, 4));
  auto n = static_cast<double>(ir::numel(p.reduce_domain));
  switch (p.reduce) {
    case ReduceOp::Sum:
    case ReduceOp::Prod:
    case ReduceOp::Max:
    case ReduceOp::Min: {
      int nb = rng_.coin(0.7) ? 1 : (rng_.coin(0.6) ? 2 : 3);
      bool minmax = p.reduce == ReduceOp::Max || p.reduce == ReduceOp::Min;
      for (int b = 0; b < nb; ++b) {
        DType dt = body_dtype(minmax ? DTypeSet::Any : DTypeSet::Numeric);
        std::optional<TE> body = b == 0 ? eg.gen_using(dt, depth, false, 0)
                                        : std::optional<TE>(eg.gen(dt, depth, false));
        if (!body) return false;
        TE t = *body;
        Facts f = t.f;
        if (p.reduce == ReduceOp::Sum) {  // sums stay below 64 (floats) or inside i64
          if (ir::is_float(dt)) t = eg.scale(t, 64 / n);
          else if (n * t.f.bound() > kTwo62) t = eg.clamp(t, -1048576, 1048576);
          f = stored({n * t.f.lo, n * t.f.hi}, dt);
        } else if (p.reduce == ReduceOp::Prod) {  // at most 8 factors below 2 (floats)
          if (ir::is_float(dt)) t = eg.scale(t, 2);
          else if (std::pow(t.f.bound(), n) > kTwo62) t = eg.clamp(t, -8, 8);
          double m = std::pow(t.f.bound(), n);
          f = stored(t.f.lo >= 0 ? Facts{std::pow(t.f.lo, n), m} : Facts{-m, m}, dt);
        }
        p.bodies.push_back(t.e);
        types.push_back({dt, p.domain});
        fs.push_back(f);
      }
      return true;
    }
    case ReduceOp::ArgMax:
    case ReduceOp::ArgMin: {  // an exact value (ties and order must not depend on precision)
      DType dt = body_dtype(DTypeSet::Numeric);
      std::optional<TE> value = eg.gen_using(dt, depth, true, 0);
      if (!value) return false;
      Expr flat = ir::rvar(0);  // the row-major position in the reduction domain
      for (size_t j = 1; j < p.reduce_domain.size(); ++j)
        flat = affine(flat, p.reduce_domain[j], 0) + ir::rvar(static_cast<int32_t>(j));
      p.bodies = {value->e, flat};
      types = {{dt, p.domain}, {DType::I64, p.domain}};
      fs = {value->f, {0, n - 1, true}};
      return true;
    }
    case ReduceOp::Welford:
    case ReduceOp::MaxSum: {
      DType dt = body_dtype(DTypeSet::Float);
      if (!ir::is_float(dt)) dt = random_dtype(DTypeSet::Float);
      std::optional<TE> body = eg.gen_using(dt, depth, false, 0);
      if (!body) return false;
      const Facts& f = body->f;
      p.bodies = {body->e};
      types = {{dt, p.domain}, {dt, p.domain}};
      double half = (f.hi - f.lo) / 2;
      fs = p.reduce == ReduceOp::Welford
               ? std::vector<Facts>{{f.lo, f.hi, false}, {0, half * half, false}}
               : std::vector<Facts>{{f.lo, f.hi, false}, {0, n, false}};
      return true;
    }
    case ReduceOp::None: break;
  }
  return false;
}

// Pooling windows: out[.., p, ..] = reduce_r x[.., p*stride + r*dilation - pad, ..], padded
// by predicated loads (with -inf / +inf / 0 fills).
bool GraphGen::gen_pool() {
  if (budget_ < 1) return false;
  Operand x = choose(
      [&](ValueId v) { return type(v).rank() >= 1 && dtype_in(type(v).dtype, DTypeSet::Numeric); },
      [&] { return random_type(DTypeSet::Numeric, 1, o_.max_elements); });
  const Dims& xs = x.t.shape;
  size_t R = xs.size();
  DType dt = x.t.dtype;
  size_t naxes = R >= 2 && rng_.coin(0.4) ? 2 : 1;
  ReduceOp op = pick_one(rng_, std::vector<ReduceOp>{ReduceOp::Max, ReduceOp::Max, ReduceOp::Min,
                                                     ReduceOp::Sum});
  if (op == ReduceOp::Sum && !ir::is_float(dt) && x.f.bound() > 1e12) op = ReduceOp::Max;  // i64
  Dims domain = xs, rdom;
  std::vector<Expr> idx = identity_index(R), conds;
  for (size_t k = 0; k < naxes; ++k) {
    size_t a = R - naxes + k;
    int64_t d = xs[a], kk = rng_.range(1, 5), s = rng_.range(1, 4);
    int64_t dil = rng_.coin(0.25) ? 2 : 1;
    int64_t pb = rng_.coin() ? rng_.range(0, kk) : 0;
    int64_t pe = rng_.coin() ? rng_.range(0, kk) : 0;
    if ((pb > 0 || pe > 0) && op != ReduceOp::Sum) dil = 1;  // every window meets x
    while (dil * (kk - 1) + 1 > d + pb + pe) {
      --kk;
      pb = std::min(pb, kk - 1);
      pe = std::min(pe, kk - 1);
    }
    int64_t out_d = (d + pb + pe - dil * (kk - 1) - 1) / s + 1;
    Expr pos = affine(ir::dvar(static_cast<int32_t>(a)), s, 0);
    pos = pos + affine(ir::rvar(static_cast<int32_t>(k)), dil, 0);
    if (pb > 0) pos = pos - pb;
    if (pb > 0) conds.push_back(cmp(ExprOp::Ge, pos, 0));
    if ((out_d - 1) * s + (kk - 1) * dil - pb >= d) conds.push_back(cmp(ExprOp::Lt, pos, d));
    idx[a] = pos;
    domain[a] = out_d;
    rdom.push_back(kk);
  }
  if (ir::numel(domain) > o_.max_elements) return false;  // padding can grow a dim
  Facts r = dtype_range(dt);
  double inf = std::numeric_limits<double>::infinity();
  double fill = op == ReduceOp::Sum ? 0 : op == ReduceOp::Max ? (ir::is_float(dt) ? -inf : r.lo)
                                                              : (ir::is_float(dt) ? inf : r.hi);
  ir::Scalar s = ir::is_float(dt) ? ir::Scalar::of(dt, fill)
                                  : ir::Scalar::of_int(dt, static_cast<int64_t>(fill));
  Expr body = conds.empty() ? ir::load(0, dt, idx) : ir::load_pred(0, dt, idx, all_of(conds), s);
  auto taps = static_cast<double>(ir::numel(rdom));
  Facts f = x.f;
  if (op == ReduceOp::Sum) {
    bool avg = ir::is_float(dt) && rng_.coin(0.5);
    if (avg) body = ir::binary(ExprOp::Mul, body, ir::const_f(dt, 1 / taps));
    double m = avg ? 1 : taps;
    f = stored({m * std::min(f.lo, 0.0), m * std::max(f.hi, 0.0)}, dt);
  }
  ir::Primitive p;
  p.op = ir::PrimOp::Reduce;
  p.reduce = op;
  p.inputs = {realize(x)};
  p.domain = domain;
  p.reduce_domain = rdom;
  p.bodies = {body};
  add(std::move(p), {{dt, domain}}, {f}, "pool");
  return true;
}

// ---------------------------------------------------------------- linear

bool GraphGen::gen_matmul() {
  if (budget_ < 1 || o_.max_rank < 2) return false;
  DType dt = rng_.coin(0.8) ? random_dtype(DTypeSet::Float) : random_dtype(DTypeSet::Numeric);
  auto batch_rank = [&] { return static_cast<int>(rng_.range(0, std::min(2, o_.max_rank - 2) + 1)); };
  Operand a = choose(
      [&](ValueId v) { return type(v).rank() >= 2 && dtype_in(type(v).dtype, DTypeSet::Numeric); },
      [&] {
        Dims s = random_shape(batch_rank(), 4);
        for (int k = 0; k < 2; ++k)
          s.push_back(random_dim(std::min<int64_t>(64, o_.max_elements / ir::numel(s))));
        return TensorType{dt, s};
      }, 0.3);
  dt = a.t.dtype;
  ir::MatMulAttrs attrs{rng_.coin(0.3), rng_.coin(0.3)};
  const Dims& as = a.t.shape;
  size_t ra = as.size();
  int64_t K = attrs.trans_a ? as[ra - 2] : as[ra - 1];
  Dims abatch(as.begin(), as.end() - 2);
  auto batch_ok = [&](const Dims& b) {
    for (size_t j = 1; j <= std::min(b.size(), abatch.size()); ++j) {
      int64_t x = abatch[abatch.size() - j], y = b[b.size() - j];
      if (x != y && x != 1 && y != 1) return false;
    }
    return true;
  };
  Operand b = choose(
      [&](ValueId v) {
        const Dims& s = type(v).shape;
        if (a.is(v) || type(v).dtype != dt || s.size() < 2) return false;
        return (attrs.trans_b ? s[s.size() - 1] : s[s.size() - 2]) == K &&
               batch_ok(Dims(s.begin(), s.end() - 2));
      },
      [&] {
        Dims bb(static_cast<size_t>(batch_rank()));
        for (size_t j = 1; j <= bb.size(); ++j) {
          int64_t& d = bb[bb.size() - j];
          if (j > abatch.size()) d = rng_.coin() ? 1 : random_dim(3);
          else if (abatch[abatch.size() - j] == 1) d = rng_.coin() ? 1 : random_dim(3);
          else d = rng_.coin(0.3) ? 1 : abatch[abatch.size() - j];
        }
        int64_t N = random_dim(64);
        bb.push_back(attrs.trans_b ? N : K);
        bb.push_back(attrs.trans_b ? K : N);
        return TensorType{dt, bb};
      }, 0.6);
  TensorType out = ir::matmul_result_type(a.t, b.t, attrs);
  if (out.numel() > o_.max_elements || a.t.numel() > o_.max_elements ||
      b.t.numel() > o_.max_elements ||
      out.numel() * K > kMaxMacs || out.rank() > o_.max_rank)
    return false;
  // Operand bounds keep every partial sum below 2048 (f16 overflows at 65504).
  double lim = ir::is_float(dt) ? std::min(4.0, std::sqrt(2048.0 / static_cast<double>(K))) : 8;
  if (budget_ < 1 + tame_cost(a, lim) + tame_cost(b, lim)) return false;
  ValueId av = tame(realize(a), lim), bv = tame(realize(b), lim);
  double bound = static_cast<double>(K) * facts(av).bound() * facts(bv).bound();
  ir::Primitive p;
  p.op = ir::PrimOp::MatMul;
  p.inputs = {av, bv};
  p.attrs = attrs;
  add(std::move(p), {out}, {stored({-bound, bound}, dt)}, "mm");
  return true;
}

bool GraphGen::gen_conv() {
  if (budget_ < 1 || o_.max_rank < 3) return false;
  size_t S = o_.max_rank >= 4 && rng_.coin() ? 2 : 1;
  DType dt = rng_.coin(0.85) ? random_dtype(DTypeSet::Float) : random_dtype(DTypeSet::Numeric);
  Operand x = choose(
      [&](ValueId v) {
        return type(v).shape.size() == S + 2 && dtype_in(type(v).dtype, DTypeSet::Numeric);
      },
      [&] {
        Dims s = {rng_.range(1, 3), pick_one(rng_, std::vector<int64_t>{1, 2, 3, 4, 6, 8})};
        for (size_t d = 0; d < S; ++d)
          s.push_back(random_dim(std::min<int64_t>(S == 1 ? 32 : 12, o_.max_elements / ir::numel(s))));
        return TensorType{dt, s};
      }, 0.4);
  dt = x.t.dtype;
  int64_t C = x.t.shape[1];
  std::vector<int64_t> divisors;
  for (int64_t g = 1; g <= C; ++g)
    if (C % g == 0) divisors.push_back(g);
  ir::ConvAttrs attrs;
  attrs.groups = rng_.coin() ? 1 : pick_one(rng_, divisors);
  int64_t cg = C / attrs.groups;
  Dims ws = {attrs.groups * rng_.range(1, 4), cg};
  for (size_t d = 0; d < S; ++d) {
    int64_t sd = x.t.shape[2 + d], k = rng_.range(1, 5), dil = rng_.coin(0.3) ? 2 : 1;
    int64_t pb = rng_.range(0, 3), pe = rng_.coin() ? pb : rng_.range(0, 3);
    while (dil * (k - 1) + 1 > sd + pb + pe) {
      if (k > 1) --k;
      else dil = 1;
    }
    attrs.strides.push_back(rng_.range(1, 4));
    attrs.dilations.push_back(dil);
    attrs.pads_begin.push_back(pb);
    attrs.pads_end.push_back(pe);
    ws.push_back(k);
  }
  TensorType wt = {dt, ws};
  TensorType out = ir::conv_result_type(x.t, wt, attrs);
  int64_t taps = cg;
  for (size_t d = 0; d < S; ++d) taps *= ws[2 + d];
  if (out.numel() > o_.max_elements || wt.numel() > o_.max_elements ||
      x.t.numel() > o_.max_elements ||
      out.numel() * taps > kMaxMacs)
    return false;
  double lim = ir::is_float(dt) ? std::min(4.0, std::sqrt(2048.0 / static_cast<double>(taps))) : 8;
  if (budget_ < 1 + tame_cost(x, lim)) return false;
  ValueId xv = tame(realize(x), lim);
  Operand w = plan_source(wt);
  ValueId wv = tame_cost(w, lim) && budget_ >= 2 ? tame(realize(w), lim) : realize(w);
  double bound = static_cast<double>(taps) * facts(xv).bound() * facts(wv).bound();
  ir::Primitive p;
  p.op = ir::PrimOp::Conv;
  p.inputs = {xv, wv};
  p.attrs = attrs;
  add(std::move(p), {out}, {stored({-bound, bound}, dt)}, "conv");
  return true;
}

// ---------------------------------------------------------------- opaque

bool GraphGen::gen_cumsum() {
  if (budget_ < 1) return false;
  Operand x = choose(
      [&](ValueId v) { return type(v).rank() >= 1 && dtype_in(type(v).dtype, DTypeSet::Numeric); },
      [&] { return random_type(DTypeSet::Numeric, 1, o_.max_elements); });
  auto axis = rng_.range(0, x.t.rank());
  auto d = static_cast<double>(x.t.shape[static_cast<size_t>(axis)]);
  // Keep the running sums tame (floats) and inside the interpreter's i64 (integers).
  double lim = ir::is_float(x.t.dtype) ? std::max(1.0, 1000 / d) : kTwo62 / d;
  if (budget_ < 1 + tame_cost(x, lim)) return false;
  ValueId xv = tame(realize(x), lim);
  const Facts& f = facts(xv);
  ir::OpaqueAttrs attrs{ir::OpaqueRoutine::CumSum,
                        {{"axis", axis}, {"exclusive", rng_.coin() ? 1 : 0}, {"reverse", rng_.coin() ? 1 : 0}}};
  ir::Primitive p;
  p.op = ir::PrimOp::Opaque;
  p.inputs = {xv};
  p.domain = x.t.shape;
  p.attrs = attrs;
  add(std::move(p), {x.t}, {stored({d * std::min(f.lo, 0.0), d * std::max(f.hi, 0.0)}, x.t.dtype)},
      "cumsum");
  return true;
}

bool GraphGen::gen_topk() {
  if (budget_ < (o_.float_only ? 2 : 1)) return false;
  // Indices must not depend on the precision: exact (or integer) inputs only.
  Operand x = choose(
      [&](ValueId v) {
        return type(v).rank() >= 1 && dtype_in(type(v).dtype, DTypeSet::Numeric) &&
               float_exact_or_integral(existing(v));
      },
      [&] { return random_type(DTypeSet::Numeric, 1, o_.max_elements); });
  auto axis = rng_.range(0, x.t.rank());
  int64_t d = x.t.shape[static_cast<size_t>(axis)];
  int64_t k = rng_.range(1, d + 1);
  ir::OpaqueAttrs attrs{ir::OpaqueRoutine::TopK,
                        {{"axis", axis}, {"k", k}, {"largest", rng_.coin() ? 1 : 0},
                         {"sorted", rng_.coin(0.8) ? 1 : 0}}};
  Dims out = with_dim(x.t.shape, static_cast<size_t>(axis), k);
  ir::Primitive p;
  p.op = ir::PrimOp::Opaque;
  p.inputs = {realize(x)};
  p.domain = out;
  p.attrs = attrs;
  std::vector<ValueId> outs = add(std::move(p), {{x.t.dtype, out}, {DType::I64, out}},
                                  {x.f, {0, static_cast<double>(d - 1), true}}, "topk");
  if (o_.float_only) consume_index(outs[0], outs[1]);
  return true;
}

}  // namespace orchid::testlib::detail
