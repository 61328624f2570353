// The random graph generator: driver, sources, elementwise / broadcast / view primitives and
// the choice of graph outputs. Reductions, layouts, linear and opaque primitives are in
// random_graph_ops.cpp; scalar bodies in random_expr.cpp.
#include "testlib/random_graph.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "support/error.h"
#include "testlib/random_graph_internal.h"

namespace orchid::testlib {

namespace detail {

using ir::DType;
using ir::Dims;
using ir::Expr;
using ir::ExprOp;
using ir::TensorType;
using ir::ValueId;

namespace {

// Dims to draw from: 1 (broadcasting), small primes and sizes that divide nothing, powers of two.
constexpr int64_t kDims[] = {1, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 16, 17, 23, 31, 32, 37, 64};

// Names that need quoting in the text form (printer and parser round trips).
const char* const kOddNames[] = {"a b",    "x/0",  "q\"uote", "back\\slash", "tab\tname", "new\nline",
                                 "-1",     "0",    "..",      "\xc3\xbc-utf8", "%pct",     "#hash",
                                 "{brace}", "[b]", "=eq",     "semi;colon"};

Facts input_facts(DType t) {
  switch (ir::dtype_class(t)) {
    case ir::DTypeClass::Float: return {-1, 1, true};
    case ir::DTypeClass::Signed: return {-8, 7, true};
    case ir::DTypeClass::Unsigned: return {0, 7, true};
    case ir::DTypeClass::Bool: return {0, 1, true};
  }
  return {};
}

}  // namespace

GraphGen::GraphGen(uint64_t seed, const RandomGraphOptions& opts) : rng_(seed), o_(opts) {
  bool odd = rng_.coin(0.1);
  g_.name = (odd ? "random graph " : "random_") + std::to_string(seed);
}

// ---------------------------------------------------------------- dtypes, shapes, sources

bool GraphGen::dtype_in(DType t, DTypeSet set) const {
  if (o_.float_only && !ir::is_float(t)) return false;
  switch (set) {
    case DTypeSet::Any: return true;
    case DTypeSet::Numeric: return !ir::is_bool(t);
    case DTypeSet::Float: return ir::is_float(t);
  }
  return false;
}

DType GraphGen::random_dtype(DTypeSet set) {
  static const DType kFloats[] = {DType::F32, DType::F32, DType::F32, DType::F32, DType::F16,
                                  DType::F16, DType::BF16, DType::BF16, DType::F64};
  static const DType kOthers[] = {DType::I8,  DType::I16, DType::I32, DType::I32,  DType::I64,
                                  DType::U8,  DType::U16, DType::U32, DType::U64,  DType::Bool,
                                  DType::Bool};
  if (!o_.float_only && set != DTypeSet::Float && rng_.coin(0.45)) {
    for (;;) {
      DType t = kOthers[rng_.range(0, static_cast<int64_t>(std::size(kOthers)))];
      if (dtype_in(t, set)) return t;
    }
  }
  return kFloats[rng_.range(0, static_cast<int64_t>(std::size(kFloats)))];
}

int64_t GraphGen::random_dim(int64_t limit) {
  std::vector<int64_t> ok;
  for (int64_t d : kDims)
    if (d <= limit) ok.push_back(d);
  if (ok.empty()) return 1;
  return ok[static_cast<size_t>(rng_.range(0, static_cast<int64_t>(ok.size())))];
}

Dims GraphGen::random_shape(int rank, int64_t max_elems) {
  Dims s;
  int64_t n = 1;
  for (int k = 0; k < rank; ++k) {
    s.push_back(random_dim(std::max<int64_t>(1, max_elems / n)));
    n *= s.back();
  }
  return s;
}

std::string GraphGen::value_name(const std::string& stem) {
  if (rng_.coin(0.03)) return kOddNames[rng_.range(0, static_cast<int64_t>(std::size(kOddNames)))];
  return stem + std::to_string(name_counter_++);
}

std::string GraphGen::provenance(const std::string& op) {
  double r = rng_.uniform();
  if (r < 0.15) return "";
  if (r < 0.2) return "Odd \"" + op + "\"\\\t/\n";
  return op + "_" + std::to_string(name_counter_++);
}

TensorType GraphGen::random_type(DTypeSet set, int min_rank, int64_t max_elems) {
  int rank = static_cast<int>(rng_.range(min_rank, std::max(min_rank, o_.max_rank) + 1));
  DType t = random_dtype(set);
  return {t, random_shape(rank, max_elems)};
}

Dims GraphGen::sub_shape(const Dims& out) {
  Dims s(out.end() - rng_.range(0, static_cast<int64_t>(out.size()) + 1), out.end());
  for (int64_t& d : s)
    if (rng_.coin(0.3)) d = 1;
  return s;
}

Operand GraphGen::existing(ValueId v) const { return {v, type(v), std::nullopt, facts(v)}; }

// An element that tests the text form's number syntax: -0, tiny and subnormal floats, the
// limits of integer dtypes (u64 stays below 2^63, where its meaning as an i64 is unambiguous).
// Their facts come from the data, so consumers keep them tame.
ir::Scalar GraphGen::odd_element(DType t) {
  switch (t) {
    case DType::F32: return ir::Scalar::of(t, pick_one(rng_, std::vector<double>{-0.0, 1e-30, -3e-42}));
    case DType::F64: return ir::Scalar::of(t, pick_one(rng_, std::vector<double>{-0.0, 1e-300, 5e-320}));
    case DType::F16: return ir::Scalar::of(t, pick_one(rng_, std::vector<double>{-0.0, 6e-8, -3e-6}));
    case DType::BF16: return ir::Scalar::of(t, pick_one(rng_, std::vector<double>{-0.0, 1e-30, -2e-39}));
    case DType::I8: return ir::Scalar::of_int(t, rng_.coin() ? -128 : 127);
    case DType::I16: return ir::Scalar::of_int(t, rng_.coin() ? -32768 : 32767);
    case DType::I32: return ir::Scalar::of_int(t, rng_.coin() ? INT32_MIN : INT32_MAX);
    case DType::I64: return ir::Scalar::of_int(t, rng_.coin() ? INT64_MIN : INT64_MAX);
    case DType::U8: return ir::Scalar::of_int(t, 255);
    case DType::U16: return ir::Scalar::of_int(t, 65535);
    case DType::U32: return ir::Scalar::of_int(t, UINT32_MAX);
    case DType::U64: return ir::Scalar::of_int(t, INT64_MAX);
    case DType::Bool: return ir::Scalar::of_int(t, 1);
  }
  return {};
}

Operand GraphGen::plan_source(const TensorType& t) {
  Operand o{std::nullopt, t, std::nullopt, input_facts(t.dtype)};
  if (rng_.coin(0.7)) return o;
  ExprGen eg(rng_);
  ir::Tensor data(t);
  bool random = t.numel() <= 256 && rng_.coin(0.5);
  ir::Scalar splat = eg.random_const(t.dtype).e->value;
  for (int64_t i = 0; i < t.numel(); ++i) {
    ir::Scalar s = random ? eg.random_const(t.dtype).e->value : splat;
    bool odd = random && rng_.coin(0.03);
    if (odd) s = odd_element(t.dtype);
    if (ir::is_float(t.dtype)) {
      data.set_f64(i, random && !odd && rng_.coin(0.7) ? rng_.uniform(-1, 1) : s.f);
    } else {
      data.set_i64(i, s.i);
    }
  }
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = data.get_as_double(i);
    o.f.lo = i == 0 ? v : std::min(o.f.lo, v);
    o.f.hi = i == 0 ? v : std::max(o.f.hi, v);
  }
  o.data = std::move(data);
  return o;
}

void GraphGen::note(ValueId v, Facts f, bool index) {
  facts_.resize(static_cast<size_t>(g_.num_values()));
  is_index_.resize(static_cast<size_t>(g_.num_values()));
  facts_[static_cast<size_t>(v.v)] = f;
  is_index_[static_cast<size_t>(v.v)] = index;
}

ValueId GraphGen::realize(const Operand& o) {
  if (o.v) return *o.v;
  ValueId id = o.data ? g_.add_constant(value_name("c"), *o.data) : g_.add_input(value_name("x"), o.t);
  note(id, o.f, false);
  return id;
}

// A graph input of indices, read only by indirect loads (interp::random_inputs draws it inside
// the extent it indexes).
ValueId GraphGen::index_input(const Dims& shape) {
  DType t = rng_.coin() ? DType::I32 : DType::I64;
  ValueId id = g_.add_input(value_name("idx"), {t, shape});
  note(id, {0, 0, true}, true);
  return id;
}

std::optional<ValueId> GraphGen::pick(const Pred& ok) {
  std::vector<ValueId> cands;
  std::vector<double> weights;
  double total = 0;
  for (int32_t v = 0; v < g_.num_values(); ++v) {
    ValueId id(v);
    if (is_index_[static_cast<size_t>(v)] || !ok(id)) continue;
    if (o_.float_only && !ir::is_float(type(id).dtype)) continue;  // index outputs stay internal
    if (static_cast<int>(type(id).shape.size()) > o_.max_rank || type(id).numel() > o_.max_elements)
      continue;
    const ir::Value& val = g_.value(id);
    // Recent node outputs are likelier (chains); older ones still get picked (reuse).
    double w = val.origin == ir::ValueOrigin::Node
                   ? 1 + 4.0 * (val.node.v + 1) / std::max(1, g_.num_nodes())
                   : 0.6;
    cands.push_back(id);
    weights.push_back(w);
    total += w;
  }
  if (cands.empty()) return std::nullopt;
  double u = rng_.uniform() * total;
  for (size_t k = 0; k < cands.size(); ++k) {
    if (u < weights[k]) return cands[k];
    u -= weights[k];
  }
  return cands.back();
}

Operand GraphGen::choose(const Pred& ok, const Make& make, double p_new) {
  if (!rng_.coin(p_new))
    if (auto v = pick(ok)) return existing(*v);
  return plan_source(make());
}

// ---------------------------------------------------------------- nodes

std::vector<ValueId> GraphGen::add(ir::Primitive p, const std::vector<TensorType>& types,
                                   const std::vector<Facts>& facts, const std::string& stem) {
  ORCHID_CHECK(budget_ > 0) << "random graph: node budget exhausted";
  std::vector<std::string> names;
  for (size_t k = 0; k < types.size(); ++k) names.push_back(value_name(stem));
  p.name = provenance(stem);
  ir::NodeId n = g_.add_node(std::move(p), types, names);
  --budget_;
  std::vector<ValueId> outs = g_.node(n).outputs;
  for (size_t k = 0; k < outs.size(); ++k) note(outs[k], facts[k], false);
  return outs;
}

std::vector<Expr> identity_index(size_t rank) {
  std::vector<Expr> idx;
  for (size_t j = 0; j < rank; ++j) idx.push_back(ir::dvar(static_cast<int32_t>(j)));
  return idx;
}

bool broadcasts_to(const Dims& s, const Dims& out) {
  if (s.size() > out.size()) return false;
  size_t off = out.size() - s.size();
  for (size_t j = 0; j < s.size(); ++j)
    if (s[j] != 1 && s[j] != out[off + j]) return false;
  return true;
}

int GraphGen::tame_cost(const Operand& o, double bound) const {
  return !ir::is_bool(o.t.dtype) && o.f.bound() > bound ? 1 : 0;
}

// An elementwise node bringing v into [-bound, bound]: a power-of-two scale for floats (exact),
// a clamp for integers.
ValueId GraphGen::tame(ValueId v, double bound) {
  if (tame_cost(existing(v), bound) == 0) return v;
  const TensorType t = type(v);
  ExprGen eg(rng_);
  TE x = {ir::load(0, t.dtype, identity_index(t.shape.size())), facts(v)};
  TE y = ir::is_float(t.dtype) ? eg.scale(x, bound) : eg.clamp(x, -bound, bound);
  ir::Primitive p;
  p.op = ir::PrimOp::Elementwise;
  p.inputs = {v};
  p.domain = t.shape;
  p.bodies = {y.e};
  return add(std::move(p), {t}, {y.f}, "tame")[0];
}

// float_only graphs keep integer tensors internal: an index output (argmax/argmin, topk) is
// folded into a float value right away, so that it is never a graph output.
ValueId GraphGen::consume_index(ValueId value, ValueId index) {
  const TensorType t = type(value);
  size_t rank = t.shape.size();
  ExprGen eg(rng_);
  eg.add_load(ir::load(0, t.dtype, identity_index(rank)), facts(value));
  eg.add_load(ir::load(1, DType::I64, identity_index(rank)), facts(index));
  TE a = *eg.gen_using(t.dtype, 2, false, 0);
  TE b = *eg.load_as(1, t.dtype, false);
  ir::Primitive p;
  p.op = ir::PrimOp::Elementwise;
  p.inputs = {value, index};
  p.domain = t.shape;
  p.bodies = {ir::binary(ExprOp::Add, a.e, b.e)};
  return add(std::move(p), {t}, {{a.f.lo + b.f.lo, a.f.hi + b.f.hi, false}}, "ew")[0];
}

bool GraphGen::gen_elementwise() {
  if (budget_ < 1) return false;
  Dims out;
  std::vector<Operand> ins;
  if (rng_.coin(0.05)) {  // no inputs at all: an iota-like body over the loop variables
    out = random_type(DTypeSet::Any, 0, o_.max_elements).shape;
  } else {
    ins.push_back(choose([](ValueId) { return true; },
                         [&] { return random_type(DTypeSet::Any, 0, o_.max_elements); }));
    out = ins[0].t.shape;
    if (rng_.coin(0.15) && static_cast<int>(out.size()) < o_.max_rank)
      out.insert(out.begin(), random_dim(o_.max_elements / ir::numel(out)));
    for (int64_t& d : out)
      if (d == 1 && rng_.coin(0.1)) d = random_dim(o_.max_elements / ir::numel(out));
    int extra = static_cast<int>(rng_.range(0, 3));
    for (int k = 0; k < extra; ++k) {
      auto taken = [&](ValueId v) {
        return std::any_of(ins.begin(), ins.end(), [&](const Operand& o) { return o.is(v); });
      };
      Operand o = choose([&](ValueId v) { return broadcasts_to(type(v).shape, out) && !taken(v); },
                         [&] { return TensorType{random_dtype(DTypeSet::Any), sub_shape(out)}; },
                         0.35);
      ins.push_back(std::move(o));
    }
  }
  ExprGen eg(rng_);
  for (size_t k = 0; k < ins.size(); ++k) {
    const TensorType& t = ins[k].t;
    size_t off = out.size() - t.shape.size();
    std::vector<Expr> idx;
    for (size_t j = 0; j < t.shape.size(); ++j) {
      bool var = t.shape[j] != 1 || (out[off + j] == 1 && rng_.coin(0.5));
      idx.push_back(var ? ir::dvar(static_cast<int32_t>(off + j)) : ir::const_i64(0));
    }
    eg.add_load(ir::load(static_cast<int32_t>(k), t.dtype, std::move(idx)), ins[k].f);
  }
  for (size_t j = 0; j < out.size(); ++j) eg.add_var(ir::dvar(static_cast<int32_t>(j)), out[j]);
  int nbodies = rng_.coin(0.12) ? 2 : 1;
  ir::Primitive p;
  std::vector<TensorType> types;
  std::vector<Facts> fs;
  for (int b = 0; b < nbodies; ++b) {
    DType dt = !ins.empty() && rng_.coin(0.5) ? ins[0].t.dtype : random_dtype(DTypeSet::Any);
    TE body = eg.gen(dt, static_cast<int>(rng_.range(1, 5)), false);
    p.bodies.push_back(body.e);
    types.push_back({dt, out});
    fs.push_back(body.f);
  }
  // Keep only the inputs the bodies read, renumbering the load slots.
  std::vector<bool> used = used_slots(p.bodies, ins.size());
  std::vector<int> map(ins.size(), -1);
  for (size_t k = 0; k < ins.size(); ++k)
    if (used[k]) {
      map[k] = static_cast<int>(p.inputs.size());
      p.inputs.push_back(realize(ins[k]));
    }
  for (Expr& b : p.bodies) b = remap_slots(b, map);
  p.op = ir::PrimOp::Elementwise;
  p.domain = out;
  add(std::move(p), types, fs, "ew");
  return true;
}

bool GraphGen::gen_broadcast() {
  if (budget_ < 1) return false;
  Operand x = choose([](ValueId) { return true; },
                     [&] { return random_type(DTypeSet::Any, 0, o_.max_elements / 4); });
  const TensorType t = x.t;
  // Output positions of the input dims (order kept), with unit dims possibly expanded and
  // new dims inserted anywhere.
  Dims out;
  std::vector<size_t> pos;
  for (int64_t d : t.shape) {
    pos.push_back(out.size());
    out.push_back(d);
  }
  int64_t n = ir::numel(out);
  for (int64_t& d : out)
    if (d == 1 && rng_.coin(0.6)) {
      d = random_dim(o_.max_elements / n);
      n *= d;
    }
  int inserts = static_cast<int>(rng_.range(0, o_.max_rank - static_cast<int>(t.shape.size()) + 1));
  for (int k = 0; k < inserts; ++k) {
    auto at = static_cast<size_t>(rng_.range(0, static_cast<int64_t>(out.size()) + 1));
    int64_t d = random_dim(o_.max_elements / n);
    n *= d;
    out.insert(out.begin() + static_cast<std::ptrdiff_t>(at), d);
    for (size_t& q : pos)
      if (q >= at) ++q;
  }
  if (out == t.shape) return false;
  std::vector<Expr> idx;
  for (size_t j = 0; j < t.shape.size(); ++j) {
    bool var = t.shape[j] != 1 || (out[pos[j]] == 1 && rng_.coin(0.5));
    idx.push_back(var ? ir::dvar(static_cast<int32_t>(pos[j])) : ir::const_i64(0));
  }
  ir::Primitive p;
  p.op = ir::PrimOp::Broadcast;
  p.inputs = {realize(x)};
  p.domain = out;
  p.bodies = {ir::load(0, t.dtype, std::move(idx))};
  add(std::move(p), {{t.dtype, out}}, {x.f}, "bc");
  return true;
}

bool GraphGen::gen_view() {
  if (budget_ < 1) return false;
  Operand x = choose([](ValueId) { return true; },
                     [&] { return random_type(DTypeSet::Any, 1, o_.max_elements); });
  std::vector<int64_t> primes;
  int64_t n = x.t.numel();
  for (int64_t q = 2; q * q <= n; ++q)
    while (n % q == 0) {
      primes.push_back(q);
      n /= q;
    }
  if (n > 1) primes.push_back(n);
  int rank = static_cast<int>(rng_.range(primes.empty() ? 0 : 1, std::max(1, o_.max_rank) + 1));
  Dims out(static_cast<size_t>(rank), 1);
  for (int64_t q : primes) out[static_cast<size_t>(rng_.range(0, rank))] *= q;
  ir::Primitive p;
  p.op = ir::PrimOp::View;
  p.inputs = {realize(x)};
  add(std::move(p), {{x.t.dtype, out}}, {x.f}, "view");
  return true;
}

// Every value nobody reads is a graph output; a few others are too (intermediate outputs).
void GraphGen::choose_outputs() {
  auto users = g_.users();
  std::vector<ValueId> outs;
  for (const ir::Primitive& p : g_.nodes())
    for (ValueId v : p.outputs) {
      bool sink = users[static_cast<size_t>(v.v)].empty();
      bool float_ok = !o_.float_only || ir::is_float(type(v).dtype);
      ORCHID_CHECK(!sink || float_ok) << "float_only graph with a non-float sink";
      if (sink || (float_ok && rng_.coin(0.1))) outs.push_back(v);
    }
  if (outs.size() > 1 && rng_.coin(0.3))
    for (size_t k = outs.size() - 1; k > 0; --k)
      std::swap(outs[k], outs[static_cast<size_t>(rng_.range(0, static_cast<int64_t>(k) + 1))]);
  g_.set_outputs(std::move(outs));
}

ir::Graph GraphGen::run() {
  struct Choice {
    double weight;
    bool (GraphGen::*fn)();
  };
  std::vector<Choice> table = {{24, &GraphGen::gen_elementwise}, {12, &GraphGen::gen_reduce},
                               {4, &GraphGen::gen_pool},         {6, &GraphGen::gen_broadcast},
                               {16, &GraphGen::gen_layout},      {6, &GraphGen::gen_view}};
  if (o_.allow_linear) {
    table.push_back({6, &GraphGen::gen_matmul});
    table.push_back({5, &GraphGen::gen_conv});
  }
  if (o_.allow_opaque) {
    table.push_back({3, &GraphGen::gen_cumsum});
    table.push_back({3, &GraphGen::gen_topk});
  }
  double total = 0;
  for (const Choice& c : table) total += c.weight;
  int lo = std::max(1, o_.min_nodes);
  budget_ = static_cast<int>(rng_.range(lo, std::max(lo, o_.max_nodes) + 1));
  int failures = 0;
  while (budget_ > 0) {
    double u = rng_.uniform() * total;
    size_t k = 0;
    while (k + 1 < table.size() && u >= table[k].weight) u -= table[k++].weight;
    if (!(this->*table[k].fn)() && ++failures > 100) gen_elementwise();
  }
  choose_outputs();
  return std::move(g_);
}

}  // namespace detail

ir::Graph random_graph(uint64_t seed, const RandomGraphOptions& opts) {
  return detail::GraphGen(seed, opts).run();
}

}  // namespace orchid::testlib
