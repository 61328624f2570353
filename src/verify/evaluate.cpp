#include "verify/evaluate.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "interp/int_ops.h"
#include "ir/tensor.h"
#include "support/error.h"
#include "support/hash.h"
#include "support/random.h"

namespace orchid::verify {

using ir::DType;
using ir::Expr;
using ir::ExprOp;

namespace {

uint64_t mix(uint64_t h, uint64_t v) { return splitmix64(h ^ splitmix64(v)); }
uint64_t mix(uint64_t h, FElem a) { return mix(mix(h, a.p), a.q); }

FElem random_elem(uint64_t h) {
  uint64_t a = splitmix64(h);
  return {a % kP, splitmix64(a) % kQ};
}

uint64_t tag(const Draw& d, std::string_view what) { return mix(d.salt, fnv1a64(what)); }

FElem special(const Draw& d, double v) {
  return random_elem(tag(d, std::isnan(v) ? "nan" : v > 0 ? "+inf" : "-inf"));
}

FElem scalar_elem(double v, const Draw& d) { return std::isfinite(v) ? f_exact(v) : special(d, v); }

bool elem_less(FElem a, FElem b) { return a.p != b.p ? a.p < b.p : a.q < b.q; }

// A function of the set of `vals` (a single value is its own image).
FElem set_fn(uint64_t t, std::vector<FElem> vals) {
  std::sort(vals.begin(), vals.end(), elem_less);
  vals.erase(std::unique(vals.begin(), vals.end()), vals.end());
  if (vals.size() == 1) return vals[0];
  for (FElem v : vals) t = mix(t, v);
  return random_elem(t);
}

bool is_u64(DType t) { return t == DType::U64; }

// ---------------------------------------------------------------- one primitive

struct S {
  FElem f;
  int64_t i = 0;
};

class NodeEval {
 public:
  NodeEval(const ir::Graph& g, const Analysis& an, int32_t node, std::vector<FTensor>& values,
           const Draw& d, int64_t& work)
      : g_(g), p_(g.node(ir::NodeId{node})), opaque_exps_(an.opaque_exps[static_cast<size_t>(node)]),
        opaque_maxsum_(an.opaque_maxsum[static_cast<size_t>(node)]), values_(values), d_(d),
        work_(work), name_(g.value(p_.outputs.front()).name), nan_(special(d, NAN)),
        inf_(special(d, INFINITY)), minus_inf_(special(d, -INFINITY)) {
    for (ir::ValueId v : p_.inputs) {
      const FTensor& t = values[static_cast<size_t>(v.v)];
      ins_.push_back(&t);
      std::vector<int64_t> st(t.type.shape.size(), 1);
      for (size_t k = st.size(); k-- > 1;) st[k - 1] = st[k] * t.type.shape[k];
      strides_.push_back(std::move(st));
    }
  }

  void run();

 private:
  void run_matmul();
  S eval(const Expr& e);
  S load(const Expr& e);
  S float_unary(const Expr& e, FElem a);
  S float_binary(const Expr& e, FElem a, FElem b);
  bool float_compare(ir::CmpOp c, FElem a, FElem b);
  S cast(const Expr& e, S a);
  FElem opaque_fn(std::string_view what, FElem a, FElem b = {}) {
    return random_elem(mix(mix(tag(d_, what), a), b));
  }
  FElem div(FElem a, FElem b) {
    if (!f_invertible(b)) throw ZeroDivisor(name_);
    return f_div(a, b);
  }
  FElem constant(const Expr& e);
  void combine(int64_t out_index, const std::vector<std::vector<S>>& terms);
  void combine_float(int64_t o, size_t k, const std::vector<S>& t);
  void combine_int(int64_t o, size_t k, const std::vector<S>& t, DType dt);
  void store(size_t k, int64_t o, S v);

  const ir::Graph& g_;
  const ir::Primitive& p_;
  const std::unordered_set<const ir::ExprNode*>& opaque_exps_;
  bool opaque_maxsum_;
  std::vector<FTensor>& values_;
  const Draw& d_;
  int64_t& work_;
  std::string name_;
  FElem nan_, inf_, minus_inf_;  // the draw's non-finite constants
  std::vector<const FTensor*> ins_;
  std::vector<std::vector<int64_t>> strides_;
  std::vector<int64_t> ivars_, rvars_;
  std::unordered_map<const ir::ExprNode*, FElem> constants_;
};

FElem NodeEval::constant(const Expr& e) {
  auto it = constants_.find(e.get());
  if (it != constants_.end()) return it->second;
  FElem v = scalar_elem(e->value.f, d_);
  constants_.emplace(e.get(), v);
  return v;
}

S NodeEval::load(const Expr& e) {
  if (e->predicated && eval(e->args.back()).i == 0) {
    if (ir::is_float(e.dtype())) return {scalar_elem(e->value.f, d_), 0};
    return {{}, e->value.i};
  }
  auto slot = static_cast<size_t>(e->index);
  const FTensor& in = *ins_.at(slot);
  int64_t flat = 0;
  for (size_t k = 0; k < in.type.shape.size(); ++k) {
    int64_t x = eval(e.arg(k)).i;
    if (x < 0 || x >= in.type.shape[k])
      throw Undecidable("%" + name_ + ": index " + std::to_string(x) + " out of bounds of dim " +
                        std::to_string(k) + " of its input " + std::to_string(slot) +
                        " (integer inputs are sampled: one computed from them leaves the tensor)");
    flat += x * strides_[slot][k];
  }
  if (ir::is_float(in.type.dtype)) return {in.f[static_cast<size_t>(flat)], 0};
  return {{}, in.i[static_cast<size_t>(flat)]};
}

S NodeEval::float_unary(const Expr& e, FElem a) {
  bool opaque = opaque_exps_.count(e.get()) != 0;
  switch (e.op()) {
    case ExprOp::Neg: return {f_neg(a)};
    case ExprOp::Recip: return {div(f_int(1), a)};
    case ExprOp::Exp:
      if (!opaque) return {f_exp(a, d_.omega)};
      break;
    case ExprOp::Sigmoid:  // 1 / (1 + e^-x)
      if (!opaque) return {div(f_int(1), f_add(f_int(1), f_exp(f_neg(a), d_.omega)))};
      break;
    case ExprOp::Tanh:  // (e^2x − 1) / (e^2x + 1)
      if (!opaque) {
        FElem e2 = f_exp(f_add(a, a), d_.omega);
        return {div(f_sub(e2, f_int(1)), f_add(e2, f_int(1)))};
      }
      break;
    default: break;
  }
  return {opaque_fn(ir::expr_op_name(e.op()), a)};
}

S NodeEval::float_binary(const Expr& e, FElem a, FElem b) {
  switch (e.op()) {
    case ExprOp::Add: return {f_add(a, b)};
    case ExprOp::Sub: return {f_sub(a, b)};
    case ExprOp::Mul: return {f_mul(a, b)};
    case ExprOp::Div: return {div(a, b)};
    case ExprOp::Max:
    case ExprOp::Min: return {set_fn(tag(d_, ir::expr_op_name(e.op())), {a, b})};
    case ExprOp::Pow:
      if (std::optional<int64_t> n = small_power(e.arg(1))) {
        FElem r = f_int(1);
        for (int64_t k = 0; k < std::abs(*n); ++k) r = f_mul(r, a);
        return {*n < 0 ? div(f_int(1), r) : r};
      }
      break;
    default: break;
  }
  return {opaque_fn(ir::expr_op_name(e.op()), a, b)};
}

// eq/ne are exact; the order comparisons are one random relation "a < b".
bool NodeEval::float_compare(ir::CmpOp c, FElem a, FElem b) {
  auto lt = [&](FElem x, FElem y) { return !(x == y) && (mix(mix(tag(d_, "lt"), x), y) & 1); };
  switch (c) {
    case ir::CmpOp::Eq: return a == b;
    case ir::CmpOp::Ne: return !(a == b);
    case ir::CmpOp::Lt: return lt(a, b);
    case ir::CmpOp::Le: return !lt(b, a);
    case ir::CmpOp::Gt: return lt(b, a);
    case ir::CmpOp::Ge: return !lt(a, b);
  }
  return false;
}

S NodeEval::cast(const Expr& e, S a) {
  DType from = e.arg(0).dtype();
  DType to = e.dtype();
  if (ir::is_float(from) && ir::is_float(to)) return a;
  if (ir::is_float(to)) {
    if (is_u64(from) && a.i < 0) return {f_exact(static_cast<double>(static_cast<uint64_t>(a.i)))};
    return {f_int(a.i)};
  }
  if (!ir::is_float(from)) return {{}, ir::wrap_to_dtype(a.i, to)};
  if (ir::is_bool(to)) return {{}, a.f.p != 0};
  // Integers made from floats (truncation) follow no algebra a field can mirror, and what
  // is computed from them can hide any difference: refused.
  throw Undecidable("%" + name_ + ": a cast from " + std::string(ir::dtype_name(from)) + " to " +
                    std::string(ir::dtype_name(to)) + " has no finite-field semantics");
}

S NodeEval::eval(const Expr& e) {
  if (--work_ < 0) throw Undecidable("%" + name_ + ": the evaluation exceeds its work budget");
  bool fl = ir::is_float(e.dtype());
  switch (ir::expr_op_category(e.op())) {
    case ir::ExprCategory::Leaf:
      if (e.op() == ExprOp::Var)
        return {{}, (e->var_kind == ir::VarKind::Domain ? ivars_ : rvars_)[static_cast<size_t>(e->index)]};
      return fl ? S{constant(e), 0} : S{{}, e->value.i};
    case ir::ExprCategory::Load: return load(e);
    case ir::ExprCategory::Unary: {
      S a = eval(e.arg(0));
      if (e.op() == ExprOp::IsNan) return {{}, a.f == nan_};
      if (e.op() == ExprOp::IsInf) return {{}, a.f == inf_ || a.f == minus_inf_};
      return fl ? float_unary(e, a.f) : S{{}, interp::int_unary(e.op(), a.i, e.dtype())};
    }
    case ir::ExprCategory::Binary: {
      S a = eval(e.arg(0));
      S b = eval(e.arg(1));
      return fl ? float_binary(e, a.f, b.f) : S{{}, interp::int_binary(e.op(), a.i, b.i, e.dtype())};
    }
    case ir::ExprCategory::Compare: {
      S a = eval(e.arg(0));
      S b = eval(e.arg(1));
      ir::CmpOp c = *ir::compare_kind(e.op());
      DType t = e.arg(0).dtype();
      if (ir::is_float(t)) return {{}, float_compare(c, a.f, b.f)};
      return {{}, interp::int_compare(c, a.i, b.i, t)};
    }
    case ir::ExprCategory::Select: return eval(e.arg(0)).i != 0 ? eval(e.arg(1)) : eval(e.arg(2));
    case ir::ExprCategory::Cast: return cast(e, eval(e.arg(0)));
  }
  ORCHID_CHECK(false) << "expression category";
  return {};
}

void NodeEval::store(size_t k, int64_t o, S v) {
  FTensor& out = values_[static_cast<size_t>(p_.outputs[k].v)];
  if (ir::is_float(out.type.dtype)) {
    out.f[static_cast<size_t>(o)] = v.f;
  } else {
    out.i[static_cast<size_t>(o)] = ir::wrap_to_dtype(v.i, out.type.dtype);
  }
}

void NodeEval::combine_float(int64_t o, size_t k, const std::vector<S>& t) {
  std::vector<FElem> v;
  for (const S& s : t) v.push_back(s.f);
  auto n = static_cast<int64_t>(v.size());
  FElem acc;
  switch (p_.reduce) {
    case ir::ReduceOp::Sum:
      acc = f_int(0);
      for (FElem x : v) acc = f_add(acc, x);
      return store(k, o, {acc});
    case ir::ReduceOp::Prod:
      acc = f_int(1);
      for (FElem x : v) acc = f_mul(acc, x);
      return store(k, o, {acc});
    case ir::ReduceOp::Max:
    case ir::ReduceOp::Min:
      if (v.empty()) return store(k, o, {special(d_, p_.reduce == ir::ReduceOp::Max ? -INFINITY : INFINITY)});
      return store(k, o, {set_fn(tag(d_, ir::reduce_op_name(p_.reduce)), v)});
    case ir::ReduceOp::Welford: {
      if (v.empty()) return store(0, o, {special(d_, NAN)}), store(1, o, {special(d_, NAN)});
      FElem s = f_int(0), s2 = f_int(0);
      for (FElem x : v) s = f_add(s, x), s2 = f_add(s2, f_mul(x, x));
      FElem mean = f_div(s, f_int(n));
      store(0, o, {mean});
      return store(1, o, {f_sub(f_div(s2, f_int(n)), f_mul(mean, mean))});
    }
    case ir::ReduceOp::MaxSum: {
      if (v.empty()) return store(0, o, {special(d_, -INFINITY)}), store(1, o, {f_int(0)});
      FElem m = set_fn(tag(d_, "max"), v);
      store(0, o, {m});
      if (opaque_maxsum_) {
        std::sort(v.begin(), v.end(), elem_less);
        uint64_t h = tag(d_, "maxsum");
        for (FElem x : v) h = mix(h, x);
        return store(1, o, {random_elem(h)});
      }
      acc = f_int(0);
      for (FElem x : v) acc = f_add(acc, f_exp(f_sub(x, m), d_.omega));
      return store(1, o, {acc});
    }
    case ir::ReduceOp::None:
    case ir::ReduceOp::ArgMax:
    case ir::ReduceOp::ArgMin: break;
  }
  ORCHID_CHECK(false) << "float combiner " << ir::reduce_op_name(p_.reduce);
  return;
}

void NodeEval::combine_int(int64_t o, size_t k, const std::vector<S>& t, DType dt) {
  ExprOp op = p_.reduce == ir::ReduceOp::Sum    ? ExprOp::Add
              : p_.reduce == ir::ReduceOp::Prod ? ExprOp::Mul
              : p_.reduce == ir::ReduceOp::Max  ? ExprOp::Max
                                                : ExprOp::Min;
  int64_t acc = op == ExprOp::Add ? 0 : op == ExprOp::Mul ? 1 : op == ExprOp::Max ? ir::dtype_lowest(dt)
                                                                                   : ir::dtype_highest(dt);
  for (const S& s : t) acc = interp::int_binary(op, acc, s.i, dt);
  store(k, o, {{}, acc});
}

// argmax / argmin: a random position of the set of values (the value: that set's max / min),
// or exactly for integer values.
void arg_reduce(const ir::Primitive& p, const Draw& d, const std::vector<S>& vals,
                const std::vector<S>& idx, DType dt, S* value, S* index) {
  bool is_max = p.reduce == ir::ReduceOp::ArgMax;
  *index = {{}, -1};
  if (!ir::is_float(dt)) {
    *value = {{}, is_max ? ir::dtype_lowest(dt) : ir::dtype_highest(dt)};
    for (size_t r = 0; r < vals.size(); ++r) {
      bool better = is_max ? interp::int_less(value->i, vals[r].i, is_u64(dt))
                           : interp::int_less(vals[r].i, value->i, is_u64(dt));
      if (better || index->i < 0) *value = vals[r], *index = idx[r];
    }
    return;
  }
  if (vals.empty()) {
    *value = {special(d, is_max ? -INFINITY : INFINITY)};
    return;
  }
  std::vector<FElem> set;
  for (const S& s : vals) set.push_back(s.f);
  *value = {set_fn(tag(d, is_max ? "max" : "min"), set)};
  std::sort(set.begin(), set.end(), elem_less);
  set.erase(std::unique(set.begin(), set.end()), set.end());
  uint64_t h = tag(d, ir::reduce_op_name(p.reduce));
  for (FElem v : set) h = mix(h, v);
  FElem chosen = set[splitmix64(h) % set.size()];
  for (size_t r = 0; r < vals.size(); ++r)
    if (vals[r].f == chosen) {
      *index = idx[r];
      return;
    }
}

void NodeEval::combine(int64_t o, const std::vector<std::vector<S>>& terms) {
  if (p_.reduce == ir::ReduceOp::ArgMax || p_.reduce == ir::ReduceOp::ArgMin) {
    S value, index;
    arg_reduce(p_, d_, terms[0], terms[1], p_.bodies[0].dtype(), &value, &index);
    store(0, o, value);
    return store(1, o, index);
  }
  if (p_.reduce == ir::ReduceOp::Welford || p_.reduce == ir::ReduceOp::MaxSum)
    return combine_float(o, 0, terms[0]);
  for (size_t k = 0; k < terms.size(); ++k) {
    if (p_.reduce == ir::ReduceOp::None) {
      store(k, o, terms[k][0]);
    } else if (ir::is_float(p_.bodies[k].dtype())) {
      combine_float(o, k, terms[k]);
    } else {
      combine_int(o, k, terms[k], g_.type(p_.outputs[k]).dtype);
    }
  }
}

// Advances the row-major odometer `v` over `dims`.
void next(std::vector<int64_t>& v, const ir::Dims& dims) {
  for (size_t k = v.size(); k-- > 0;) {
    if (++v[k] < dims[k]) return;
    v[k] = 0;
  }
}

int64_t numel(const ir::Dims& dims) {
  int64_t n = 1;
  for (int64_t x : dims) n *= x;
  return n;
}

// A float matmul directly (what its derived expression computes, without walking it): one
// unit of work per multiply-add.
void NodeEval::run_matmul() {
  const auto& attrs = std::get<ir::MatMulAttrs>(p_.attrs);
  const FTensor& a = *ins_[0];
  const FTensor& b = *ins_[1];
  FTensor& out = values_[static_cast<size_t>(p_.outputs[0].v)];
  const ir::Dims& os = out.type.shape;
  size_t r = os.size(), ra = a.type.shape.size(), rb = b.type.shape.size();
  int64_t m = os[r - 2], n = os[r - 1];
  int64_t k = attrs.trans_a ? a.type.shape[ra - 2] : a.type.shape[ra - 1];
  // Element strides of A along m and k, of B along k and n.
  const std::vector<int64_t>& sa = strides_[0];
  const std::vector<int64_t>& sb = strides_[1];
  int64_t am = attrs.trans_a ? sa[ra - 1] : sa[ra - 2], ak = attrs.trans_a ? sa[ra - 2] : sa[ra - 1];
  int64_t bk = attrs.trans_b ? sb[rb - 1] : sb[rb - 2], bn = attrs.trans_b ? sb[rb - 2] : sb[rb - 1];
  ir::Dims batch(os.begin(), os.end() - 2);
  std::vector<int64_t> bi(batch.size(), 0);
  int64_t batches = numel(batch);
  for (int64_t t = 0; t < batches; ++t, next(bi, batch)) {
    // Batch dims align right; a dim of 1 is broadcast.
    int64_t a0 = 0, b0 = 0;
    for (size_t d = 0; d < batch.size(); ++d) {
      size_t da = d + ra - r, db = d + rb - r;
      if (d + ra >= r && a.type.shape[da] != 1) a0 += bi[d] * sa[da];
      if (d + rb >= r && b.type.shape[db] != 1) b0 += bi[d] * sb[db];
    }
    work_ -= m * n * k;
    if (work_ < 0) throw Undecidable("%" + name_ + ": the evaluation exceeds its work budget");
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        FElem acc = f_int(0);
        for (int64_t c = 0; c < k; ++c)
          acc = f_add(acc, f_mul(a.f[static_cast<size_t>(a0 + i * am + c * ak)], b.f[static_cast<size_t>(b0 + c * bk + j * bn)]));
        out.f[static_cast<size_t>(t * m * n + i * n + j)] = acc;
      }
  }
}

void NodeEval::run() {
  if (p_.kind() == ir::PrimKind::Opaque)
    throw Undecidable("%" + name_ + ": opaque routine " +
                      std::string(ir::opaque_routine_name(std::get<ir::OpaqueAttrs>(p_.attrs).routine)) +
                      " has no finite-field semantics");
  for (ir::ValueId v : p_.outputs) {
    FTensor& t = values_[static_cast<size_t>(v.v)];
    t.type = g_.type(v);
    (ir::is_float(t.type.dtype) ? t.f.resize(static_cast<size_t>(t.type.numel()))
                                : t.i.resize(static_cast<size_t>(t.type.numel())));
  }
  if (evaluated_directly(g_, p_)) return run_matmul();
  int64_t outs = numel(p_.domain);
  int64_t reds = p_.reduce == ir::ReduceOp::None ? 1 : numel(p_.reduce_domain);
  ivars_.assign(p_.domain.size(), 0);
  std::vector<std::vector<S>> terms(p_.bodies.size());
  for (int64_t o = 0; o < outs; ++o, next(ivars_, p_.domain)) {
    rvars_.assign(p_.reduce_domain.size(), 0);
    for (auto& t : terms) t.clear();
    for (int64_t r = 0; r < reds; ++r, next(rvars_, p_.reduce_domain))
      for (size_t k = 0; k < p_.bodies.size(); ++k) terms[k].push_back(eval(p_.bodies[k]));
    combine(o, terms);
  }
}

}  // namespace

bool evaluated_directly(const ir::Graph& g, const ir::Primitive& p) {
  return p.op == ir::PrimOp::MatMul && ir::is_float(g.type(p.outputs[0]).dtype);
}

FTensor field_constant(const ir::Tensor& t, const Draw& draw) {
  FTensor f{t.type(), {}, {}};
  for (int64_t k = 0; k < t.numel(); ++k) {
    if (ir::is_float(t.dtype())) {
      f.f.push_back(scalar_elem(t.get_f64(k), draw));
    } else {
      f.i.push_back(t.get_i64(k));
    }
  }
  return f;
}

std::vector<FTensor> evaluate(const ir::Graph& g, const Analysis& an,
                              const std::vector<FTensor>& inputs, const Draw& draw, int64_t& work) {
  ORCHID_CHECK(inputs.size() == g.inputs().size()) << "evaluate: input count";
  std::vector<FTensor> values(static_cast<size_t>(g.num_values()));
  for (size_t k = 0; k < inputs.size(); ++k) values[static_cast<size_t>(g.inputs()[k].v)] = inputs[k];
  for (int32_t v = 0; v < g.num_values(); ++v)
    if (g.values()[static_cast<size_t>(v)].origin == ir::ValueOrigin::Constant)
      values[static_cast<size_t>(v)] = field_constant(g.constant(ir::ValueId{v}), draw);
  for (int32_t n = 0; n < g.num_nodes(); ++n) NodeEval(g, an, n, values, draw, work).run();
  return values;
}

}  // namespace orchid::verify
