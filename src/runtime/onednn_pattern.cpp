// Structural recognition of "linear primitive + post-ops" graphs (onednn_pattern.h). Post-op
// bodies are matched by a table of small matchers, tried in order; the first that accepts a
// body gives its post-op.
#include "runtime/onednn_pattern.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numbers>
#include <sstream>
#include <tuple>

#include "ir/movement.h"
#include "ir/printer.h"
#include "support/error.h"

namespace orchid::runtime::onednn {

namespace {

using ir::Expr;
using ir::ExprOp;

// ---- Bodies ----

// What a post-op body may read: the previous result at slot `prev`, other slots' leaves.
struct BodyContext {
  int32_t prev = -1;
  ir::Dims domain;
  std::vector<std::optional<Operand>> slots;  // the leaf behind each slot (not for prev)
};

// X: an unpredicated load of the previous result at [i0, i1, ..].
bool is_x(const Expr& e, const BodyContext& c) {
  if (e.op() != ExprOp::Load || e->predicated || e->index != c.prev) return false;
  if (e.num_args() != c.domain.size()) return false;
  for (size_t j = 0; j < e.num_args(); ++j) {
    const Expr& ix = e.arg(j);
    if (ix.op() != ExprOp::Var || ix->var_kind != ir::VarKind::Domain || ix->index != static_cast<int32_t>(j))
      return false;
  }
  return true;
}

// T: an unpredicated numpy-broadcast read of a leaf (index j of a rank-q operand in a rank-n
// domain is i(n-q+j), or 0 where the operand's dim is 1); gives the post-op's operand dims.
std::optional<BinaryPostOp> as_tensor(const Expr& e, const BodyContext& c) {
  if (e.op() != ExprOp::Load || e->predicated || e->index == c.prev) return std::nullopt;
  const auto& leaf = c.slots.at(static_cast<size_t>(e->index));
  if (!leaf || leaf->shape.size() > c.domain.size() || e.num_args() != leaf->shape.size()) return std::nullopt;
  size_t offset = c.domain.size() - leaf->shape.size();
  BinaryPostOp op{BinaryAlg::Add, *leaf, ir::Dims(offset, 1)};
  for (size_t j = 0; j < e.num_args(); ++j) {
    const Expr& ix = e.arg(j);
    int64_t dim = leaf->shape[j];
    bool aligned = ix.op() == ExprOp::Var && ix->var_kind == ir::VarKind::Domain &&
                   ix->index == static_cast<int32_t>(offset + j) && dim == c.domain[offset + j];
    bool broadcast = ix.op() == ExprOp::Const && ix->value.i == 0 && dim == 1;
    if (!aligned && !broadcast) return std::nullopt;
    op.dims.push_back(dim);
  }
  return op;
}

// c: an f32 constant that is not NaN.
std::optional<float> as_const(const Expr& e) {
  if (e.op() != ExprOp::Const || e.dtype() != ir::DType::F32 || std::isnan(e->value.f)) return std::nullopt;
  return static_cast<float>(e->value.f);
}

std::optional<BinaryAlg> binary_alg(ExprOp op) {
  if (op == ExprOp::Add) return BinaryAlg::Add;
  if (op == ExprOp::Sub) return BinaryAlg::Sub;
  if (op == ExprOp::Mul) return BinaryAlg::Mul;
  if (op == ExprOp::Div) return BinaryAlg::Div;
  if (op == ExprOp::Max) return BinaryAlg::Max;
  if (op == ExprOp::Min) return BinaryAlg::Min;
  return std::nullopt;
}

bool commutative(BinaryAlg a) { return a != BinaryAlg::Sub && a != BinaryAlg::Div; }

EltwisePostOp eltwise(EltwiseAlg alg, float alpha = 0, float beta = 0) { return {alg, alpha, beta}; }

// X op T, or T op X for a commutative op.
std::optional<PostOp> match_binary(const Expr& e, const BodyContext& c) {
  auto alg = binary_alg(e.op());
  if (!alg || e.num_args() != 2) return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    if (side == 1 && !commutative(*alg)) break;
    if (!is_x(e.arg(side), c)) continue;
    if (auto t = as_tensor(e.arg(1 - side), c)) {
      t->alg = *alg;
      return PostOp(*t);
    }
  }
  return std::nullopt;
}

// (inner, c) when e is op(inner, c) or op(c, inner) with op commutative.
std::optional<std::pair<Expr, float>> split_const(const Expr& e, ExprOp op) {
  if (e.op() != op) return std::nullopt;
  if (auto c = as_const(e.arg(1))) return std::make_pair(e.arg(0), *c);
  if (auto c = as_const(e.arg(0))) return std::make_pair(e.arg(1), *c);
  return std::nullopt;
}

// max(X, 0) → relu; max(X, lo), min(X, hi) and their nestings (lo ≤ hi) → clip.
std::optional<PostOp> match_relu_clip(const Expr& e, const BodyContext& c) {
  constexpr float kMax = std::numeric_limits<float>::infinity();
  if (auto lo = split_const(e, ExprOp::Max)) {
    if (is_x(lo->first, c)) return lo->second == 0 ? eltwise(EltwiseAlg::Relu) : eltwise(EltwiseAlg::Clip, lo->second, kMax);
    auto hi = split_const(lo->first, ExprOp::Min);
    if (hi && is_x(hi->first, c) && lo->second <= hi->second)
      return eltwise(EltwiseAlg::Clip, lo->second, hi->second);
  }
  if (auto hi = split_const(e, ExprOp::Min)) {
    if (is_x(hi->first, c)) return eltwise(EltwiseAlg::Clip, -kMax, hi->second);
    auto lo = split_const(hi->first, ExprOp::Max);
    if (lo && is_x(lo->first, c) && lo->second <= hi->second)
      return eltwise(EltwiseAlg::Clip, lo->second, hi->second);
  }
  return std::nullopt;
}

// select(lt(X, 0), mul(X, a), X) → relu with negative slope a (ONNX LeakyRelu's fission).
std::optional<PostOp> match_leaky_relu(const Expr& e, const BodyContext& c) {
  if (e.op() != ExprOp::Select || !is_x(e.arg(2), c)) return std::nullopt;
  const Expr& cond = e.arg(0);
  if (cond.op() != ExprOp::Lt || !is_x(cond.arg(0), c) || as_const(cond.arg(1)) != 0.0f) return std::nullopt;
  auto slope = split_const(e.arg(1), ExprOp::Mul);
  if (!slope || !is_x(slope->first, c)) return std::nullopt;
  return eltwise(EltwiseAlg::Relu, slope->second);
}

// X + c, c + X, X - c, c - X, X * c, c * X, X / c, -X → alpha·X + beta.
std::optional<PostOp> match_linear(const Expr& e, const BodyContext& c) {
  if (e.op() == ExprOp::Neg && is_x(e.arg(0), c)) return eltwise(EltwiseAlg::Linear, -1, 0);
  if (e.num_args() != 2 || !binary_alg(e.op())) return std::nullopt;
  bool x_left = is_x(e.arg(0), c), x_right = is_x(e.arg(1), c);
  auto k = as_const(e.arg(x_left ? 1 : 0));
  if (!k || x_left == x_right) return std::nullopt;
  if (e.op() == ExprOp::Add) return eltwise(EltwiseAlg::Linear, 1, *k);
  if (e.op() == ExprOp::Mul) return eltwise(EltwiseAlg::Linear, *k, 0);
  if (e.op() == ExprOp::Sub) return x_left ? eltwise(EltwiseAlg::Linear, 1, -*k) : eltwise(EltwiseAlg::Linear, -1, *k);
  if (e.op() == ExprOp::Div && x_left && *k != 0 && std::isfinite(1 / *k))
    return eltwise(EltwiseAlg::Linear, 1 / *k, 0);
  return std::nullopt;
}

// f(X) for the unary operators oneDNN has as eltwise algorithms.
std::optional<PostOp> match_unary(const Expr& e, const BodyContext& c) {
  if (e.num_args() != 1 || !is_x(e.arg(0), c)) return std::nullopt;
  if (e.op() == ExprOp::Sigmoid) return eltwise(EltwiseAlg::Logistic);
  if (e.op() == ExprOp::Tanh) return eltwise(EltwiseAlg::Tanh);
  if (e.op() == ExprOp::Exp) return eltwise(EltwiseAlg::Exp);
  if (e.op() == ExprOp::Log) return eltwise(EltwiseAlg::Log);
  if (e.op() == ExprOp::Abs) return eltwise(EltwiseAlg::Abs);
  if (e.op() == ExprOp::Sqrt) return eltwise(EltwiseAlg::Sqrt);
  return std::nullopt;
}

// X * sigmoid(X) (SiLU / swish).
std::optional<PostOp> match_swish(const Expr& e, const BodyContext& c) {
  if (e.op() != ExprOp::Mul) return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    const Expr& s = e.arg(1 - side);
    if (is_x(e.arg(side), c) && s.op() == ExprOp::Sigmoid && is_x(s.arg(0), c))
      return eltwise(EltwiseAlg::Swish, 1);
  }
  return std::nullopt;
}

// X·max(0, min(1, X·a + b)) with a = 1/6 and b = 1/2 (ONNX HardSwish's fission; the clip's
// two bounds in either nesting): oneDNN's hardswish, whose constants are those.
std::optional<PostOp> match_hardswish(const Expr& e, const BodyContext& c) {
  if (e.op() != ExprOp::Mul) return std::nullopt;
  auto unit_clip_of = [](const Expr& h) -> std::optional<Expr> {
    for (auto [outer, inner, bound] : {std::tuple{ExprOp::Max, ExprOp::Min, 0.0f}, std::tuple{ExprOp::Min, ExprOp::Max, 1.0f}}) {
      auto o = split_const(h, outer);
      if (!o || o->second != bound) continue;
      auto i = split_const(o->first, inner);
      if (i && i->second == 1.0f - bound) return i->first;
    }
    return std::nullopt;
  };
  for (int side = 0; side < 2; ++side) {
    if (!is_x(e.arg(side), c)) continue;
    std::optional<Expr> lin = unit_clip_of(e.arg(1 - side));
    auto shift = lin ? split_const(*lin, ExprOp::Add) : std::nullopt;
    auto scale = shift ? split_const(shift->first, ExprOp::Mul) : std::nullopt;
    if (scale && is_x(scale->first, c) && scale->second == 1.0f / 6 && shift->second == 0.5f)
      return eltwise(EltwiseAlg::Hardswish);
  }
  return std::nullopt;
}

// The factors of a product (mul and division by constants flattened), the constants
// multiplied into `scale`.
void product_factors(const Expr& e, std::vector<Expr>& out, double& scale) {
  if (e.op() == ExprOp::Mul) {
    product_factors(e.arg(0), out, scale);
    product_factors(e.arg(1), out, scale);
  } else if (auto c = as_const(e)) {
    scale *= *c;
  } else if (auto d = e.op() == ExprOp::Div ? as_const(e.arg(1)) : std::nullopt; d && *d != 0) {
    product_factors(e.arg(0), out, scale);
    scale /= *d;
  } else {
    out.push_back(e);
  }
}

// Equal up to the rounding of an f32 constant.
bool near(double a, double b) { return std::abs(a - b) <= 1e-6 * std::abs(b); }

// X·(1 + erf(X/√2))/2, its factors in any order and grouping (ONNX Gelu, and the Div, Erf,
// Add, Mul, Mul that exporters write, composed): oneDNN's gelu_erf.
std::optional<PostOp> match_gelu_erf(const Expr& e, const BodyContext& c) {
  std::vector<Expr> factors;
  double half = 1;
  product_factors(e, factors, half);
  if (factors.size() != 2 || !near(half, 0.5)) return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    auto one = split_const(factors[1 - side], ExprOp::Add);
    if (!is_x(factors[side], c) || !one || one->second != 1 || one->first.op() != ExprOp::Erf) continue;
    std::vector<Expr> inner;
    double scale = 1;
    product_factors(one->first.arg(0), inner, scale);
    if (inner.size() == 1 && is_x(inner[0], c) && near(scale, 1 / std::numbers::sqrt2))
      return eltwise(EltwiseAlg::GeluErf);
  }
  return std::nullopt;
}

using Matcher = std::optional<PostOp> (*)(const Expr&, const BodyContext&);
constexpr Matcher kMatchers[] = {match_binary, match_relu_clip, match_leaky_relu, match_linear,
                                 match_unary,  match_swish,     match_hardswish,  match_gelu_erf};

// ---- The graph walk ----

struct Walk {
  const ir::Graph& g;
  bool half = false;  // f16 and bf16 steps too (GPU libraries), not only f32
  std::vector<std::optional<Operand>> leaves;  // by value id: data of an input or constant
  std::optional<LinearPattern> pattern;
  std::vector<ir::ValueId> chain;  // linear output, post-op results, views of them
  std::vector<ir::NodeId> moves;   // the views and permutations among the links, in order
  bool permuted = false;           // one of them permutes: no further binary post-op
  std::map<size_t, size_t> reads;  // links (by chain index) that a composed post-op reads more than once
  int32_t next = 0;                // the next node to walk (a composed post-op takes several)
  std::vector<std::vector<ir::NodeId>> users;  // by value id (Graph::users)
};

std::string node_str(const ir::Graph& g, ir::NodeId n) {
  const ir::Primitive& p = g.node(n);
  std::string out = p.outputs.empty() ? "?" : ir::print_value_name(g.value(p.outputs[0]).name);
  return "node " + std::to_string(n.v) + " (" + out + " = " + std::string(ir::prim_op_name(p.op)) + ")";
}

std::vector<std::optional<Operand>> input_leaves(const ir::Graph& g) {
  std::vector<std::optional<Operand>> leaves(static_cast<size_t>(g.num_values()));
  for (size_t k = 0; k < g.inputs().size(); ++k) {
    ir::ValueId v = g.inputs()[k];
    leaves[static_cast<size_t>(v.v)] = Operand{static_cast<int32_t>(k), {}, g.type(v).shape, {}};
  }
  for (int32_t v = 0; v < g.num_values(); ++v)
    if (g.value(ir::ValueId(v)).origin == ir::ValueOrigin::Constant)
      leaves[static_cast<size_t>(v)] = Operand{-1, ir::ValueId(v), g.type(ir::ValueId(v)).shape, {}};
  return leaves;
}

const std::optional<Operand>& leaf(const Walk& w, ir::ValueId v) { return w.leaves[static_cast<size_t>(v.v)]; }

bool has_empty_dim(const ir::Dims& d) {
  for (int64_t x : d)
    if (x == 0) return true;
  return false;
}

std::string linear_shape_problem(const ir::Primitive& p, const ir::Graph& g) {
  const ir::Dims& xs = g.type(p.inputs[0]).shape;
  if (has_empty_dim(xs) || has_empty_dim(g.type(p.inputs[1]).shape) || has_empty_dim(p.domain))
    return "empty tensor";
  if (p.op == ir::PrimOp::MatMul) return p.domain.size() > 12 ? "matmul of rank > 12" : "";
  if (xs.size() < 3 || xs.size() > 5) return "conv of rank " + std::to_string(xs.size()) + " (oneDNN: 3 to 5)";
  const auto& attrs = std::get<ir::ConvAttrs>(p.attrs);
  for (size_t d = 0; d < attrs.pads_begin.size(); ++d)
    if (attrs.pads_begin[d] < 0 || attrs.pads_end[d] < 0) return "conv with negative padding";
  return "";
}

std::string start_linear(Walk& w, ir::NodeId n) {
  const ir::Primitive& p = w.g.node(n);
  std::string op(ir::prim_op_name(p.op));
  if (w.pattern) return "a second linear primitive, " + node_str(w.g, n);
  ir::DType dtype = w.g.type(p.outputs[0]).dtype;
  bool half = w.half && (dtype == ir::DType::F16 || dtype == ir::DType::BF16);
  if (dtype != ir::DType::F32 && !half) dtype = ir::DType::F32;
  for (ir::ValueId v : {p.inputs[0], p.inputs[1], p.outputs[0]})
    if (w.g.type(v).dtype != dtype)
      return op + " with " + std::string(ir::dtype_name(w.g.type(v).dtype)) + " " +
             (v == p.outputs[0] ? "output" : "inputs") +
             (w.half ? " (steps are f32, f16 or bf16, operands and result alike)" : " (oneDNN steps are f32)");
  for (size_t k = 0; k < 2; ++k)
    if (!leaf(w, p.inputs[k]))
      return "operand " + std::to_string(k) + " of " + node_str(w.g, n) + " is computed inside the step";
  if (std::string why = linear_shape_problem(p, w.g); !why.empty()) return why + ", " + node_str(w.g, n);
  w.pattern = LinearPattern{p.op,     p.attrs, *leaf(w, p.inputs[0]), *leaf(w, p.inputs[1]), std::nullopt,
                            p.domain, {},      {},                    dtype};
  w.chain.push_back(p.outputs[0]);
  return "";
}

// The slot contexts of an elementwise link, or a reason.
std::string body_context(const Walk& w, ir::NodeId n, BodyContext& c) {
  const ir::Primitive& p = w.g.node(n);
  c.domain = p.domain;
  c.slots.resize(p.inputs.size());
  for (size_t k = 0; k < p.inputs.size(); ++k) {
    ir::ValueId v = p.inputs[k];
    if (v == w.chain.back()) {
      c.prev = static_cast<int32_t>(k);
      continue;
    }
    if (!leaf(w, v)) return node_str(w.g, n) + " reads " + ir::print_value_name(w.g.value(v).name) +
                            ", which is neither the previous result nor a step input";
    if (w.g.type(v).dtype != w.pattern->dtype)
      return node_str(w.g, n) + " reads a tensor that is not " + std::string(ir::dtype_name(w.pattern->dtype));
    c.slots[k] = leaf(w, v);
  }
  if (c.prev < 0) return node_str(w.g, n) + " does not read the previous result";
  return "";
}

// A post-op body of a 16-bit step as the f32 arithmetic it rounds: cast(dtype, E) with E
// computed in f32 from cast(f32, load) of the step's values gives E with those loads read as
// f32; none where the body is of another form. An f32 body is itself.
std::optional<Expr> computed_in_f32(const Expr& body, ir::DType dtype) {
  if (dtype == ir::DType::F32) return body;
  if (body.op() != ExprOp::Cast || body.dtype() != dtype || body.arg(0).dtype() != ir::DType::F32) return std::nullopt;
  Expr e = ir::map_post(body.arg(0), [&](const Expr& x) {
    bool widened = x.op() == ExprOp::Cast && x.dtype() == ir::DType::F32 && x.arg(0).op() == ExprOp::Load &&
                   x.arg(0).dtype() == dtype;
    return widened ? ir::retyped_load(x.arg(0), ir::DType::F32) : x;
  });
  bool other = false;  // a float load left that is not f32
  ir::visit_post(e, [&](const Expr& x) {
    other |= x.op() == ExprOp::Load && ir::is_float(x.dtype()) && x.dtype() != ir::DType::F32;
  });
  if (other) return std::nullopt;
  return e;
}

// Appends a matched post-op: a binary one's operand carried back through the views before it,
// none after a permutation (elementwise functions of the result alone commute with one).
std::string push_post_op(Walk& w, ir::NodeId n, PostOp op) {
  const ir::Dims& shape = w.g.type(w.chain.back()).shape;
  if (auto* b = std::get_if<BinaryPostOp>(&op)) {
    if (w.permuted) return node_str(w.g, n) + " reads an operand after a permutation of the result";
    if (shape != w.pattern->out) {
      std::optional<ir::Dims> dims = ir::broadcast_before_reshape(b->dims, w.pattern->out, shape);
      if (!dims)
        return node_str(w.g, n) + " reads an operand whose broadcast over " + ir::dims_str(shape) +
               " is none over the linear result " + ir::dims_str(w.pattern->out);
      b->dims = *dims;
      b->operand.shape = *dims;  // the same dense bytes
    }
  }
  w.pattern->post_ops.push_back(op);
  return "";
}

// The most nodes a composed post-op spans.
constexpr int32_t kMaxComposed = 5;

// The bodies of nodes first, first + 1, .. (at most kMaxComposed) over the previous result X
// (slot 0), in f32, for as long as each is an f32 elementwise primitive over X's shape that
// reads X, constants and the results of the nodes before it at the identity index: body k is
// node first + k's with those results' bodies in place of their loads. x_reads[k]: how many
// of the nodes first.. first + k read X.
struct ComposedBodies {
  std::vector<Expr> bodies;
  std::vector<size_t> x_reads;
};
ComposedBodies composed_bodies(const Walk& w, int32_t first) {
  ComposedBodies out;
  const ir::Graph& g = w.g;
  const ir::Dims& shape = g.type(w.chain.back()).shape;
  if (w.pattern->dtype != ir::DType::F32) return out;
  std::vector<Expr> x_index;
  for (size_t k = 0; k < shape.size(); ++k) x_index.push_back(ir::dvar(static_cast<int32_t>(k)));
  const Expr x = ir::load(0, ir::DType::F32, x_index);
  std::map<int32_t, Expr> results;  // by value id
  for (int32_t j = first; j < first + kMaxComposed && j < g.num_nodes(); ++j) {
    const ir::Primitive& p = g.node(ir::NodeId(j));
    if (p.op != ir::PrimOp::Elementwise || p.outputs.size() != 1 || p.bodies.size() != 1 || p.domain != shape ||
        g.type(p.outputs[0]).dtype != ir::DType::F32)
      break;
    bool ok = true, reads_x = false;
    Expr body = ir::map_post(p.bodies[0], [&](const Expr& e) {
      if (e.op() != ExprOp::Load) return e;
      ir::ValueId v = p.inputs[static_cast<size_t>(e->index)];
      auto it = results.find(v.v);
      ok = ok && ir::is_identity_load(e, e->index, shape.size()) && (v == w.chain.back() || it != results.end());
      if (!ok) return e;
      reads_x = reads_x || v == w.chain.back();
      return v == w.chain.back() ? x : it->second;
    });
    if (!ok) break;
    results.emplace(p.outputs[0].v, body);
    out.bodies.push_back(body);
    out.x_reads.push_back((out.x_reads.empty() ? 0 : out.x_reads.back()) + (reads_x ? 1 : 0));
  }
  return out;
}

// Whether the results of nodes first.. first + count - 2 are read by later nodes of the group
// first.. first + count - 1 only (and are no graph outputs).
bool read_inside(const Walk& w, int32_t first, int32_t count) {
  const std::vector<ir::ValueId>& outputs = w.g.outputs();
  for (int32_t j = first; j + 1 < first + count; ++j) {
    ir::ValueId v = w.g.node(ir::NodeId(j)).outputs[0];
    if (std::find(outputs.begin(), outputs.end(), v) != outputs.end()) return false;
    for (ir::NodeId u : w.users[static_cast<size_t>(v.v)])
      if (u.v <= j || u.v >= first + count) return false;
  }
  return true;
}

// A post-op that several nodes from n on compute together (GELU as its exporters write it,
// swish as sigmoid then mul), tried before n alone: the largest group whose composed body
// a matcher takes. Returns the number of nodes taken (0: none).
int32_t add_composed_post_op(Walk& w, ir::NodeId n) {
  ComposedBodies c = composed_bodies(w, n.v);
  BodyContext context{0, w.g.type(w.chain.back()).shape, {std::nullopt}};
  for (auto count = static_cast<int32_t>(c.bodies.size()); count >= 2; --count) {
    if (!read_inside(w, n.v, count)) continue;
    for (Matcher m : kMatchers)
      if (auto op = m(c.bodies[static_cast<size_t>(count - 1)], context); op && push_post_op(w, n, *op).empty()) {
        size_t x_reads = c.x_reads[static_cast<size_t>(count - 1)];
        if (x_reads != 1) w.reads[w.chain.size() - 1] = x_reads;
        w.chain.push_back(w.g.node(ir::NodeId(n.v + count - 1)).outputs[0]);
        return count;
      }
  }
  return 0;
}

std::string add_post_op(Walk& w, ir::NodeId n) {
  const ir::Primitive& p = w.g.node(n);
  if (!w.pattern) return node_str(w.g, n) + " comes before the linear primitive";
  if (int32_t taken = add_composed_post_op(w, n); taken > 0) {
    w.next = n.v + taken;
    return "";
  }
  const ir::DType dtype = w.pattern->dtype;
  if (p.outputs.size() != 1 || p.bodies.size() != 1 || w.g.type(p.outputs[0]).dtype != dtype)
    return node_str(w.g, n) + " is not one " + std::string(ir::dtype_name(dtype)) + " output";
  const ir::Dims& shape = w.g.type(w.chain.back()).shape;  // the linear output, or a reshape of it
  if (p.domain != shape) return node_str(w.g, n) + " has domain " + ir::dims_str(p.domain);
  BodyContext c;
  if (std::string why = body_context(w, n, c); !why.empty()) return why;
  std::optional<Expr> body = computed_in_f32(p.bodies[0], dtype);
  if (!body) return node_str(w.g, n) + " does not compute in f32 from " + std::string(ir::dtype_name(dtype)) + " values";
  for (Matcher m : kMatchers) {
    if (auto op = m(*body, c)) {
      if (std::string why = push_post_op(w, n, *op); !why.empty()) return why;
      w.chain.push_back(p.outputs[0]);
      return "";
    }
  }
  return node_str(w.g, n) + " is not a supported post-op (body " + ir::print_expr(p.bodies[0]) + ")";
}

// A view or permutation of a leaf: the same data read in the node's shape, through strides
// when they are not row-major.
std::string add_leaf_view(Walk& w, ir::NodeId n) {
  const ir::Primitive& p = w.g.node(n);
  Operand o = *leaf(w, p.inputs[0]);
  std::optional<ir::Dims> strides = ir::read_strides(w.g, n, strides_of(o));
  if (!strides) return node_str(w.g, n) + " reshapes a permuted operand beyond what strides express";
  o.shape = p.domain;
  o.strides = *strides == ir::row_major_strides(o.shape) ? ir::Dims{} : *strides;
  w.leaves[static_cast<size_t>(p.outputs[0].v)] = o;
  return "";
}

std::string step_node(Walk& w, ir::NodeId n) {
  const ir::Primitive& p = w.g.node(n);
  bool movement = ir::is_movement(w.g, n);
  if (movement && leaf(w, p.inputs[0])) return add_leaf_view(w, n);
  if (p.op == ir::PrimOp::MatMul || p.op == ir::PrimOp::Conv) return start_linear(w, n);
  if (p.op == ir::PrimOp::Elementwise) return add_post_op(w, n);
  if (movement && w.pattern && p.inputs[0] == w.chain.back()) {
    w.chain.push_back(p.outputs[0]);
    w.moves.push_back(n);
    w.permuted = w.permuted || p.op != ir::PrimOp::View;
    return "";
  }
  return node_str(w.g, n) + " is not a linear primitive, a post-op, a view or a permutation";
}

// The strides the linear result is written at: the output's row-major strides taken back
// through the views and permutations of the chain.
std::string output_strides(Walk& w) {
  ir::Dims strides = ir::row_major_strides(w.g.type(w.chain.back()).shape);
  for (auto it = w.moves.rbegin(); it != w.moves.rend(); ++it) {
    std::optional<ir::Dims> st = ir::write_strides(w.g, *it, strides);
    if (!st) return node_str(w.g, *it) + " reshapes the permuted result beyond what strides express";
    strides = *st;
  }
  if (strides != ir::row_major_strides(w.pattern->out)) w.pattern->out_strides = strides;
  return "";
}

// Strides other than row-major only where the step reads through them: a matmul's operands,
// a conv's src.
std::string strided_role_problem(const LinearPattern& p) {
  if (p.op == ir::PrimOp::Conv && !p.b.strides.empty()) return "conv weights read through a permutation";
  if (p.bias && !p.bias->strides.empty()) return "a bias read through a permutation";
  for (const PostOp& op : p.post_ops) {
    const Operand* o = nullptr;
    if (const auto* b = std::get_if<BinaryPostOp>(&op)) o = &b->operand;
    if (const auto* s = std::get_if<SumPostOp>(&op)) o = &s->operand;
    if (o != nullptr && !o->strides.empty()) return "a post-op operand read through a permutation";
  }
  return "";
}

// Every link but the last is read once, by the next link (or as often as the composed
// post-op after it reads it: Walk::reads), and is no graph output; the last is the one graph
// output and read by no node.
std::string check_chain_uses(const Walk& w) {
  if (!w.pattern) return "no matmul or conv primitive";
  if (w.g.outputs().size() != 1 || w.g.outputs()[0] != w.chain.back())
    return "the graph's outputs are not exactly the result of the linear chain";
  for (size_t k = 0; k < w.chain.size(); ++k) {
    size_t uses = w.users[static_cast<size_t>(w.chain[k].v)].size();
    auto reads = w.reads.find(k);
    size_t expected = k + 1 == w.chain.size() ? 0 : reads == w.reads.end() ? 1 : reads->second;
    if (uses != expected) return ir::print_value_name(w.g.value(w.chain[k]).name) + " is read outside the chain";
  }
  return "";
}

std::string walk(Walk& w) {
  while (w.next < w.g.num_nodes()) {
    ir::NodeId n(w.next++);
    if (std::string why = step_node(w, n); !why.empty()) return why;
  }
  if (std::string why = check_chain_uses(w); !why.empty()) return why;
  return output_strides(w);
}

// Adjacent linear post-ops compose: a2·(a1·x + b1) + b2 = (a1·a2)·x + (a2·b1 + b2).
void merge_linear_post_ops(std::vector<PostOp>& ops) {
  std::vector<PostOp> out;
  for (const PostOp& op : ops) {
    const auto* e = std::get_if<EltwisePostOp>(&op);
    auto* last = out.empty() ? nullptr : std::get_if<EltwisePostOp>(&out.back());
    if (e && last && e->alg == EltwiseAlg::Linear && last->alg == EltwiseAlg::Linear) {
      last->beta = e->alpha * last->beta + e->beta;
      last->alpha *= e->alpha;
    } else {
      out.push_back(op);
    }
  }
  ops = std::move(out);
}

// oneDNN 2.6's JIT post-op injectors (brgemm matmul at least) keep one eltwise injector per
// algorithm: a second eltwise post-op of the same algorithm runs with the first one's alpha
// and beta. Such chains are refused unless the parameters agree.
std::string repeated_eltwise_problem(const std::vector<PostOp>& ops) {
  for (size_t j = 0; j < ops.size(); ++j)
    for (size_t k = 0; k < j; ++k) {
      const auto* a = std::get_if<EltwisePostOp>(&ops[k]);
      const auto* b = std::get_if<EltwisePostOp>(&ops[j]);
      if (a && b && a->alg == b->alg && (a->alpha != b->alpha || a->beta != b->beta))
        return "post-ops " + describe(*a) + " and " + describe(*b) +
               " repeat an eltwise algorithm with other parameters (oneDNN 2.6 applies the first's to both)";
    }
  return "";
}

// An add of one value per output channel: dims all 1 but the channel dim, which is C.
bool is_channel_add(const PostOp& op, const LinearPattern& p) {
  const auto* b = std::get_if<BinaryPostOp>(&op);
  if (!b || b->alg != BinaryAlg::Add) return false;
  size_t channel = channel_dim(p);
  for (size_t d = 0; d < b->dims.size(); ++d)
    if (b->dims[d] != (d == channel ? p.out[d] : 1)) return false;
  return true;
}

bool is_full_add(const PostOp& op, const LinearPattern& p) {
  const auto* b = std::get_if<BinaryPostOp>(&op);
  return b && b->alg == BinaryAlg::Add && b->dims == p.out;
}

// The first post-op as the bias when it adds a channel vector; then the first post-op left
// as a sum when it adds a full tensor (onednn_pattern.h).
void fold_bias_and_sum(LinearPattern& p) {
  std::vector<PostOp>& ops = p.post_ops;
  if (!ops.empty() && is_channel_add(ops[0], p)) {
    p.bias = std::get<BinaryPostOp>(ops[0]).operand;
    ops.erase(ops.begin());
  }
  if (!ops.empty() && is_full_add(ops[0], p)) {
    // The residual's bytes in the output's shape: it may be stored with fewer leading 1s, or
    // in the shape of a view of the result that the add came after.
    Operand residual = std::get<BinaryPostOp>(ops[0]).operand;
    residual.shape = p.out;
    ops[0] = SumPostOp{residual};
  }
}

const char* alg_name(BinaryAlg a) {
  switch (a) {
    case BinaryAlg::Add: return "add";
    case BinaryAlg::Sub: return "sub";
    case BinaryAlg::Mul: return "mul";
    case BinaryAlg::Div: return "div";
    case BinaryAlg::Max: return "max";
    case BinaryAlg::Min: return "min";
  }
  return "?";
}

const char* alg_name(EltwiseAlg a) {
  switch (a) {
    case EltwiseAlg::Relu: return "relu";
    case EltwiseAlg::Clip: return "clip";
    case EltwiseAlg::Linear: return "linear";
    case EltwiseAlg::Logistic: return "logistic";
    case EltwiseAlg::Tanh: return "tanh";
    case EltwiseAlg::Exp: return "exp";
    case EltwiseAlg::Log: return "log";
    case EltwiseAlg::Abs: return "abs";
    case EltwiseAlg::Sqrt: return "sqrt";
    case EltwiseAlg::Swish: return "swish";
    case EltwiseAlg::Hardswish: return "hardswish";
    case EltwiseAlg::GeluErf: return "gelu_erf";
  }
  return "?";
}

}  // namespace

ir::Dims strides_of(const Operand& o) { return o.strides.empty() ? ir::row_major_strides(o.shape) : o.strides; }

PatternMatch match_linear_pattern(const ir::Graph& g, StepDtypes dtypes) {
  Walk w{g, dtypes == StepDtypes::F32AndHalf, input_leaves(g), std::nullopt, {}, {}, false, {}, 0, g.users()};
  if (std::string why = walk(w); !why.empty()) return {std::nullopt, "onednn: " + why};
  merge_linear_post_ops(w.pattern->post_ops);
  if (std::string why = repeated_eltwise_problem(w.pattern->post_ops); !why.empty())
    return {std::nullopt, "onednn: " + why};
  fold_bias_and_sum(*w.pattern);
  if (std::string why = strided_role_problem(*w.pattern); !why.empty()) return {std::nullopt, "onednn: " + why};
  return {w.pattern, ""};
}

size_t channel_dim(const LinearPattern& p) { return p.op == ir::PrimOp::Conv ? 1 : p.out.size() - 1; }

std::string describe(const PostOp& op) {
  std::ostringstream os;
  if (const auto* b = std::get_if<BinaryPostOp>(&op)) {
    os << "binary " << alg_name(b->alg) << " " << ir::dims_str(b->dims);
  } else if (std::holds_alternative<SumPostOp>(op)) {
    os << "sum";
  } else {
    const auto& e = std::get<EltwisePostOp>(op);
    os << alg_name(e.alg);
    if (e.alpha != 0 || e.beta != 0) os << "(" << e.alpha << ", " << e.beta << ")";
  }
  return os.str();
}

}  // namespace orchid::runtime::onednn
