// Recurrent layers (ONNX RNN, GRU, LSTM), unrolled over the sequence, which static shapes
// fix: per direction, one matmul X·Wᵀ for every step at once, then per step a matmul of the
// previous hidden state by Rᵀ and one elementwise primitive per state update, the gates read
// at their column offsets. The orchestrator fuses each step's elementwise work; nothing is
// opaque. Gate orders are ONNX's: GRU [z, r, h], LSTM [i, o, f, c], peepholes [i, o, f].
//
//   RNN   Hₜ = f(Xₜ·Wᵀ + Hₜ₋₁·Rᵀ + Wb + Rb)
//   GRU   z = f(..z), r = f(..r), h = g(Xₜ·Whᵀ + (r ⊙ Hₜ₋₁)·Rhᵀ + Rbh + Wbh)
//         (linear_before_reset: g(Xₜ·Whᵀ + r ⊙ (Hₜ₋₁·Rhᵀ + Rbh) + Wbh)); Hₜ = (1 − z) ⊙ h + z ⊙ Hₜ₋₁
//   LSTM  i = f(..i + Pi ⊙ Cₜ₋₁), f = f(..f + Pf ⊙ Cₜ₋₁) (input_forget: 1 − i), c = g(..c),
//         Cₜ = f ⊙ Cₜ₋₁ + i ⊙ c, o = f(..o + Po ⊙ Cₜ), Hₜ = o ⊙ h(Cₜ)
// `clip` bounds every activation's input (h(Cₜ)'s too). sequence_lens must be constant and every entry
// the sequence length (shorter sequences are refused with the reason).
#include <algorithm>
#include <optional>
#include <string>

#include "fission/builders.h"
#include "fission/rules.h"
#include "support/error.h"

namespace orchid::fission {

namespace {

using ir::DType;
using ir::Dims;
using ir::ExprOp;

enum class Cell { Rnn, Gru, Lstm };

struct Activation {
  std::string name;
  double alpha = 0, beta = 0;
};

struct Spec {
  int64_t gates = 1, hidden = 0, seq = 0, batch = 0, input = 0, dirs = 1;
  bool batchwise = false;  // layout = 1: X [batch, seq, input]
  bool reverse_only = false;
  std::optional<double> clip;
  std::vector<Activation> acts;  // per direction: RNN f; GRU f, g; LSTM f, g, h
  DType dtype = DType::F32;
};

bool uses_alpha(const std::string& n) {
  return n == "LeakyRelu" || n == "ThresholdedRelu" || n == "ScaledTanh" || n == "HardSigmoid" || n == "Elu" || n == "Affine";
}
bool uses_beta(const std::string& n) { return n == "ScaledTanh" || n == "HardSigmoid" || n == "Affine"; }

// ONNX's defaults where the attribute lists run out.
Activation with_defaults(std::string n) {
  if (n == "LeakyRelu") return {n, 0.01, 0};
  if (n == "ThresholdedRelu" || n == "Elu") return {n, 1.0, 0};
  if (n == "HardSigmoid") return {n, 0.2, 0.5};
  if (n == "ScaledTanh" || n == "Affine") return {n, 1.0, 1.0};
  return {n, 0, 0};
}

std::vector<Activation> read_activations(const RuleContext& ctx, Cell cell, int64_t dirs) {
  std::vector<std::string> dflt = cell == Cell::Rnn   ? std::vector<std::string>{"Tanh"}
                                  : cell == Cell::Gru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                      : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  std::vector<std::string> names;
  if (ctx.has_attr("activations")) {
    const frontend::Attribute& a = ctx.node().attrs.at("activations");
    const auto* list = std::get_if<std::vector<std::string>>(&a);
    ORCHID_USER_CHECK(list) << ctx.where() << "activations must be a list of strings";
    names = *list;
  } else {
    for (int64_t d = 0; d < dirs; ++d) names.insert(names.end(), dflt.begin(), dflt.end());
  }
  ORCHID_USER_CHECK(names.size() == dflt.size() * static_cast<size_t>(dirs))
      << ctx.where() << names.size() << " activations for " << dirs << " direction(s); " << dflt.size() << " each expected";
  std::vector<double> alphas = ctx.attr_floats("activation_alpha", {}), betas = ctx.attr_floats("activation_beta", {});
  size_t ai = 0, bi = 0;
  std::vector<Activation> out;
  for (const std::string& n : names) {
    Activation a = with_defaults(n);
    if (uses_alpha(n) && ai < alphas.size()) a.alpha = alphas[ai++];
    if (uses_beta(n) && bi < betas.size()) a.beta = betas[bi++];
    out.push_back(a);
  }
  return out;
}

Expr activate(const RuleContext& ctx, const Activation& a, Expr x, DType t) {
  auto c = [t](double v) { return ir::const_f(t, v); };
  const std::string& n = a.name;
  if (n == "Sigmoid") return ir::unary(ExprOp::Sigmoid, x);
  if (n == "Tanh") return ir::unary(ExprOp::Tanh, x);
  if (n == "Relu") return ir::binary(ExprOp::Max, x, c(0));
  if (n == "Affine") return x * c(a.alpha) + c(a.beta);
  if (n == "LeakyRelu") return ir::select(ir::binary(ExprOp::Lt, x, c(0)), x * c(a.alpha), x);
  if (n == "ThresholdedRelu") return ir::select(ir::binary(ExprOp::Gt, x, c(a.alpha)), x, c(0));
  if (n == "ScaledTanh") return c(a.alpha) * ir::unary(ExprOp::Tanh, x * c(a.beta));
  if (n == "HardSigmoid") return ir::binary(ExprOp::Min, ir::binary(ExprOp::Max, x * c(a.alpha) + c(a.beta), c(0)), c(1));
  if (n == "Elu") return ir::select(ir::binary(ExprOp::Lt, x, c(0)), c(a.alpha) * (ir::unary(ExprOp::Exp, x) - c(1)), x);
  if (n == "Softsign") return x / (c(1) + ir::unary(ExprOp::Abs, x));
  if (n == "Softplus") return ir::unary(ExprOp::Log, c(1) + ir::unary(ExprOp::Exp, x));
  ORCHID_USER_ERROR() << ctx.where() << "unknown activation '" << n << "'";
  return x;
}

Spec read_spec(RuleContext& ctx, Cell cell) {
  Spec s;
  s.gates = cell == Cell::Rnn ? 1 : cell == Cell::Gru ? 3 : 4;
  s.dtype = ctx.dtype(0);
  for (size_t k : {size_t(1), size_t(2)}) require_same_dtype(ctx, 0, k);
  std::string dir = ctx.attr_string("direction", "forward");
  ORCHID_USER_CHECK(dir == "forward" || dir == "reverse" || dir == "bidirectional")
      << ctx.where() << "direction must be forward, reverse or bidirectional, given '" << dir << "'";
  s.dirs = dir == "bidirectional" ? 2 : 1;
  s.reverse_only = dir == "reverse";
  s.batchwise = ctx.attr_int("layout", 0) != 0;
  Dims xs = ctx.shape(0);
  ORCHID_USER_CHECK(xs.size() == 3) << ctx.where() << "X " << ir::dims_str(xs) << " should have rank 3";
  s.seq = s.batchwise ? xs[1] : xs[0];
  s.batch = s.batchwise ? xs[0] : xs[1];
  s.input = xs[2];
  s.hidden = ctx.required_attr_int("hidden_size");
  int64_t gh = s.gates * s.hidden;
  ORCHID_USER_CHECK(ctx.shape(1) == (Dims{s.dirs, gh, s.input}) && ctx.shape(2) == (Dims{s.dirs, gh, s.hidden}))
      << ctx.where() << "W " << ir::dims_str(ctx.shape(1)) << " and R " << ir::dims_str(ctx.shape(2)) << " should be ["
      << s.dirs << "," << gh << "," << s.input << "] and [" << s.dirs << "," << gh << "," << s.hidden << "]";
  if (ctx.has_attr("clip")) s.clip = ctx.attr_float("clip", 0);
  s.acts = read_activations(ctx, cell, s.dirs);
  if (ctx.has_input(4)) {
    for (int64_t len : ctx.const_ints(4))
      if (len != s.seq)
        ctx.unsupported("sequence_lens entry " + std::to_string(len) + " shorter than the sequence (" +
                        std::to_string(s.seq) + "): only whole sequences are supported");
  }
  ORCHID_USER_CHECK(s.seq >= 1) << ctx.where() << "an empty sequence";
  return s;
}

// Direction d's slice of a [dirs, n..] input, as [n..].
ValueId direction(RuleContext& ctx, ValueId v, int64_t d, const std::string& suffix) {
  Dims s = ctx.graph().type(v).shape;
  Dims rest(s.begin() + 1, s.end());
  if (s[0] == 1) return view(ctx, v, rest, suffix);
  return remap(ctx, v, rest, [d](const std::vector<Expr>& i) {
    std::vector<Expr> idx{ir::const_i64(d)};
    idx.insert(idx.end(), i.begin(), i.end());
    return idx;
  }, suffix);
}

// An initial state input ([dirs, batch, H], layout 1: [batch, dirs, H]) for direction d, or none.
std::optional<ValueId> initial_state(RuleContext& ctx, const Spec& s, size_t k, int64_t d, const std::string& suffix) {
  if (!ctx.has_input(k)) return std::nullopt;
  require_same_dtype(ctx, 0, k);
  Dims want = s.batchwise ? Dims{s.batch, s.dirs, s.hidden} : Dims{s.dirs, s.batch, s.hidden};
  ORCHID_USER_CHECK(ctx.shape(k) == want)
      << ctx.where() << "input " << k << " " << ir::dims_str(ctx.shape(k)) << " should be " << ir::dims_str(want);
  if (!s.batchwise) return direction(ctx, ctx.input(k), d, suffix);
  return remap(ctx, ctx.input(k), {s.batch, s.hidden},
               [d](const std::vector<Expr>& i) { return std::vector<Expr>{i[0], ir::const_i64(d), i[1]}; }, suffix);
}

// What one direction's steps read, built once for all its steps: X·Wᵀ for all steps
// [rows, G·H] (row of step t, batch b: t·batch + b, layout 1: b·seq + t); R's rows the gates
// multiply by Hₜ₋₁ (GRU without linear_before_reset: z and r only) and, for that GRU, the
// candidate's Rh; per gate the biases Wb, Rb and their sum [H]; the peepholes [3·H].
struct Direction {
  ValueId xw, r_gates;
  std::optional<ValueId> r_h, peep;
  std::vector<ValueId> wb, rb, wrb;  // empty without B
  const Activation* act = nullptr;   // this direction's activations
};

// One elementwise primitive over [batch, H] whose body reads the tensors it asks for:
// state(v, c0) reads v[b, c0 + j], xw(v, t, c0) the X·Wᵀ row of step t and batch b at column
// c0 + j, vec(v, c0) a vector's v[c0 + j]. Reads at an offset go through a slice (a layout
// primitive), which the orchestrator fuses into the step.
class StepPrim {
 public:
  StepPrim(RuleContext& ctx, const Spec& s) : ctx_(ctx), s_(s), b_(ctx.graph()) {}
  Expr state(ValueId v, int64_t c0 = 0) {
    if (c0 == 0 && ctx_.graph().type(v).shape == Dims{s_.batch, s_.hidden}) return b_.bload(v, domain());
    return b_.bload(remap(ctx_, v, domain(), [c0](const std::vector<Expr>& i) {
      return std::vector<Expr>{i[0], shifted(i[1], c0)};
    }, "slice"), domain());
  }
  Expr xw(ValueId v, int64_t t, int64_t c0) {
    const Spec& s = s_;
    return b_.bload(remap(ctx_, v, domain(), [&](const std::vector<Expr>& i) {
      Expr row = s.batchwise ? i[0] * s.seq + t : (t == 0 ? i[0] : i[0] + t * s.batch);
      return std::vector<Expr>{row, shifted(i[1], c0)};
    }, "slice"), domain());
  }
  Expr vec(ValueId v, int64_t c0) {
    if (c0 == 0 && ctx_.graph().type(v).shape == Dims{s_.hidden}) return b_.bload(v, domain());
    return b_.bload(remap(ctx_, v, {s_.hidden}, [c0](const std::vector<Expr>& i) {
      return std::vector<Expr>{shifted(i[0], c0)};
    }, "slice"), domain());
  }
  ValueId emit(Expr body, const std::string& suffix) {
    ir::Primitive p = b_.make(ir::PrimOp::Elementwise);
    p.domain = domain();
    p.bodies = {body};
    return ctx_.emit1(std::move(p), {s_.dtype, domain()}, suffix);
  }

 private:
  Dims domain() const { return {s_.batch, s_.hidden}; }
  static Expr shifted(Expr i, int64_t c0) { return c0 == 0 ? i : i + c0; }
  RuleContext& ctx_;
  const Spec& s_;
  PrimBuilder b_;
};

// Gate g's input before its activation: X·Wᵀ + H·Rᵀ (when there is a state) + (Wb + Rb).
Expr gate_input(StepPrim& p, const Spec& s, const Direction& dir, int64_t t, std::optional<ValueId> hr, int64_t g) {
  int64_t H = s.hidden;
  Expr x = p.xw(dir.xw, t, g * H);
  if (hr) x = x + p.state(*hr, g * H);
  if (!dir.wrb.empty()) x = x + p.vec(dir.wrb[static_cast<size_t>(g)], 0);
  return x;
}

Expr clipped(const Spec& s, Expr x) {
  if (!s.clip) return x;
  return ir::binary(ExprOp::Min, ir::binary(ExprOp::Max, x, ir::const_f(s.dtype, -*s.clip)), ir::const_f(s.dtype, *s.clip));
}

Expr act(RuleContext& ctx, const Spec& s, const Direction& dir, int k, Expr x) {
  return activate(ctx, dir.act[k], clipped(s, x), s.dtype);
}

struct State {
  std::optional<ValueId> h, c;
};

State rnn_step(RuleContext& ctx, const Spec& s, const Direction& dir, int64_t t, const State& prev, const std::string& n) {
  std::optional<ValueId> hr;
  if (prev.h) hr = matmul(ctx, *prev.h, dir.r_gates, ir::MatMulAttrs{false, true}, n + "hr");
  StepPrim p(ctx, s);
  return {p.emit(act(ctx, s, dir, 0, gate_input(p, s, dir, t, hr, 0)), n + "h"), std::nullopt};
}

State gru_step(RuleContext& ctx, const Spec& s, const Direction& dir, int64_t t, const State& prev, const std::string& n,
               bool linear_before_reset) {
  int64_t H = s.hidden;
  DType T = s.dtype;
  std::optional<ValueId> hr;  // [batch, 2H]: z, r; with linear_before_reset [batch, 3H]: z, r, h
  if (prev.h) hr = matmul(ctx, *prev.h, dir.r_gates, ir::MatMulAttrs{false, true}, n + "hr");
  StepPrim pz(ctx, s);
  ValueId z = pz.emit(act(ctx, s, dir, 0, gate_input(pz, s, dir, t, hr, 0)), n + "z");
  StepPrim pr(ctx, s);
  ValueId r = pr.emit(act(ctx, s, dir, 0, gate_input(pr, s, dir, t, hr, 1)), n + "r");
  // The candidate: g(X·Whᵀ + Wbh + rec), rec = (r ⊙ Hₜ₋₁)·Rhᵀ + Rbh, or with
  // linear_before_reset r ⊙ (Hₜ₋₁·Rhᵀ + Rbh); an absent Hₜ₋₁ reads as 0.
  StepPrim ph(ctx, s);
  Expr x = ph.xw(dir.xw, t, 2 * H);
  if (!dir.wb.empty()) x = x + ph.vec(dir.wb[2], 0);
  auto plus = [](Expr a, Expr b) { return a.defined() ? a + b : b; };
  Expr rec;  // undefined while it is 0
  if (linear_before_reset) {
    Expr inner;
    if (prev.h) inner = ph.state(*hr, 2 * H);
    if (!dir.rb.empty()) inner = plus(inner, ph.vec(dir.rb[2], 0));
    if (inner.defined()) rec = ph.state(r) * inner;
  } else {
    if (prev.h) {
      ValueId rh = ew_map(ctx, {r, *prev.h}, T, [](const std::vector<Expr>& v) { return v[0] * v[1]; }, n + "rh");
      rec = ph.state(matmul(ctx, rh, *dir.r_h, ir::MatMulAttrs{false, true}, n + "rhR"));
    }
    if (!dir.rb.empty()) rec = plus(rec, ph.vec(dir.rb[2], 0));
  }
  ValueId h = ph.emit(act(ctx, s, dir, 1, rec.defined() ? x + rec : x), n + "cand");
  StepPrim pn(ctx, s);
  Expr zv = pn.state(z), next = (ir::const_f(T, 1) - zv) * pn.state(h);
  if (prev.h) next = next + zv * pn.state(*prev.h);
  return {pn.emit(next, n + "h"), std::nullopt};
}

State lstm_step(RuleContext& ctx, const Spec& s, const Direction& dir, int64_t t, const State& prev, const std::string& n,
                bool input_forget) {
  int64_t H = s.hidden;
  DType T = s.dtype;
  std::optional<ValueId> hr;
  if (prev.h) hr = matmul(ctx, *prev.h, dir.r_gates, ir::MatMulAttrs{false, true}, n + "hr");  // [batch, 4H]: i, o, f, c
  auto peep = [&](StepPrim& p, int k, ValueId c) { return p.vec(*dir.peep, k * H) * p.state(c); };
  StepPrim pi(ctx, s);
  Expr xi = gate_input(pi, s, dir, t, hr, 0);
  if (dir.peep && prev.c) xi = xi + peep(pi, 0, *prev.c);
  ValueId i = pi.emit(act(ctx, s, dir, 0, xi), n + "i");
  ValueId f;
  StepPrim pf(ctx, s);
  if (input_forget) {
    f = pf.emit(ir::const_f(T, 1) - pf.state(i), n + "f");
  } else {
    Expr xf = gate_input(pf, s, dir, t, hr, 2);
    if (dir.peep && prev.c) xf = xf + peep(pf, 2, *prev.c);
    f = pf.emit(act(ctx, s, dir, 0, xf), n + "f");
  }
  StepPrim pc(ctx, s);
  Expr cnew = pc.state(i) * act(ctx, s, dir, 1, gate_input(pc, s, dir, t, hr, 3));
  if (prev.c) cnew = pc.state(f) * pc.state(*prev.c) + cnew;
  ValueId c = pc.emit(cnew, n + "c");
  StepPrim po(ctx, s);
  Expr xo = gate_input(po, s, dir, t, hr, 1);
  if (dir.peep) xo = xo + peep(po, 1, c);
  ValueId o = po.emit(act(ctx, s, dir, 0, xo), n + "o");
  StepPrim ph(ctx, s);
  ValueId h = ph.emit(ph.state(o) * act(ctx, s, dir, 2, ph.state(c)), n + "h");
  return {h, c};
}

// Rows [first, first + count) of a matrix.
ValueId rows(RuleContext& ctx, ValueId m, int64_t first, int64_t count, const std::string& suffix) {
  int64_t cols = ctx.graph().type(m).shape[1];
  return remap(ctx, m, {count, cols}, [first](const std::vector<Expr>& i) {
    return std::vector<Expr>{first == 0 ? i[0] : i[0] + first, i[1]};
  }, suffix);
}

// Per gate g, from the direction's B [2·G·H] = [Wb | Rb]: Wb's and Rb's slices and their sum.
void gate_biases(RuleContext& ctx, const Spec& s, ValueId b, const std::string& dn, Direction& dir) {
  int64_t H = s.hidden, gh = s.gates * s.hidden;
  auto slice = [&](int64_t c0, const std::string& name) {
    return remap(ctx, b, {H}, [c0](const std::vector<Expr>& i) { return std::vector<Expr>{i[0] + c0}; }, name);
  };
  for (int64_t g = 0; g < s.gates; ++g) {
    std::string gn = dn + "g" + std::to_string(g) + "/";
    dir.wb.push_back(slice(g * H, gn + "Wb"));
    dir.rb.push_back(slice(gh + g * H, gn + "Rb"));
    dir.wrb.push_back(ew_map(ctx, {dir.wb.back(), dir.rb.back()}, s.dtype,
                             [](const std::vector<Expr>& v) { return v[0] + v[1]; }, gn + "bias"));
  }
}

std::vector<ValueId> recurrent(RuleContext& ctx, Cell cell) {
  Spec s = read_spec(ctx, cell);
  int64_t gh = s.gates * s.hidden;
  if (ctx.has_input(3)) {
    require_same_dtype(ctx, 0, 3);
    ORCHID_USER_CHECK(ctx.shape(3) == (Dims{s.dirs, 2 * gh}))
        << ctx.where() << "B " << ir::dims_str(ctx.shape(3)) << " should be [" << s.dirs << "," << 2 * gh << "]";
  }
  bool peepholes = cell == Cell::Lstm && ctx.has_input(7);
  if (peepholes) {
    require_same_dtype(ctx, 0, 7);
    ORCHID_USER_CHECK(ctx.shape(7) == (Dims{s.dirs, 3 * s.hidden}))
        << ctx.where() << "P " << ir::dims_str(ctx.shape(7)) << " should be [" << s.dirs << "," << 3 * s.hidden << "]";
  }
  bool lbr = cell == Cell::Gru && ctx.attr_int("linear_before_reset", 0) != 0;
  bool input_forget = cell == Cell::Lstm && ctx.attr_int("input_forget", 0) != 0;
  ValueId x2 = view(ctx, ctx.input(0), {s.seq * s.batch, s.input}, "x");
  size_t per_dir = s.acts.size() / static_cast<size_t>(s.dirs);
  std::vector<std::vector<ValueId>> hs(static_cast<size_t>(s.dirs));  // per direction, per step (in time order)
  std::vector<State> last(static_cast<size_t>(s.dirs));
  for (int64_t d = 0; d < s.dirs; ++d) {
    std::string dn = "d" + std::to_string(d) + "/";
    Direction dir;
    dir.xw = matmul(ctx, x2, direction(ctx, ctx.input(1), d, dn + "W"), ir::MatMulAttrs{false, true}, dn + "xw");
    ValueId r = direction(ctx, ctx.input(2), d, dn + "R");
    dir.r_gates = cell == Cell::Gru && !lbr ? rows(ctx, r, 0, 2 * s.hidden, dn + "Rzr") : r;
    if (cell == Cell::Gru && !lbr) dir.r_h = rows(ctx, r, 2 * s.hidden, s.hidden, dn + "Rh");
    if (ctx.has_input(3)) gate_biases(ctx, s, direction(ctx, ctx.input(3), d, dn + "B"), dn, dir);
    if (peepholes) dir.peep = direction(ctx, ctx.input(7), d, dn + "P");
    dir.act = &s.acts[static_cast<size_t>(d) * per_dir];
    State st{initial_state(ctx, s, 5, d, dn + "h0"), cell == Cell::Lstm ? initial_state(ctx, s, 6, d, dn + "c0") : std::nullopt};
    bool backward = s.reverse_only || d == 1;
    std::vector<ValueId> steps(static_cast<size_t>(s.seq));
    for (int64_t k = 0; k < s.seq; ++k) {
      int64_t t = backward ? s.seq - 1 - k : k;
      std::string n = dn + "t" + std::to_string(t) + "/";
      st = cell == Cell::Rnn ? rnn_step(ctx, s, dir, t, st, n)
           : cell == Cell::Gru ? gru_step(ctx, s, dir, t, st, n, lbr)
                               : lstm_step(ctx, s, dir, t, st, n, input_forget);
      steps[static_cast<size_t>(t)] = *st.h;
    }
    hs[static_cast<size_t>(d)] = steps;
    last[static_cast<size_t>(d)] = st;
  }
  // Y [seq, dirs, batch, H] (layout 1: [batch, seq, dirs, H]); Y_h, Y_c [dirs, batch, H]
  // (layout 1: [batch, dirs, H]).
  std::vector<ValueId> all, hn, cn;
  for (int64_t t = 0; t < s.seq; ++t)
    for (int64_t d = 0; d < s.dirs; ++d) all.push_back(hs[static_cast<size_t>(d)][static_cast<size_t>(t)]);
  for (const State& st : last) {
    hn.push_back(*st.h);
    if (st.c) cn.push_back(*st.c);
  }
  const auto& outs = ctx.node().outputs;
  auto wanted = [&](size_t k) { return k < outs.size() && !outs[k].empty(); };
  ValueId y_h = stack(ctx, hn, 0, "h_n");
  if (s.batchwise) y_h = transpose(ctx, y_h, {1, 0, 2}, "h_n/t");
  std::vector<ValueId> result{y_h, y_h};
  if (wanted(0)) {
    ValueId y = view(ctx, stack(ctx, all, 0, "y"), {s.seq, s.dirs, s.batch, s.hidden}, "y/v");
    result[0] = s.batchwise ? transpose(ctx, y, {2, 0, 1, 3}, "y/t") : y;
  }
  if (cell == Cell::Lstm) {
    ValueId y_c = y_h;
    if (wanted(2)) {
      y_c = stack(ctx, cn, 0, "c_n");
      if (s.batchwise) y_c = transpose(ctx, y_c, {1, 0, 2}, "c_n/t");
    }
    result.push_back(y_c);
  }
  return result;
}

}  // namespace

std::vector<ValueId> rule_RNN(RuleContext& ctx) { return recurrent(ctx, Cell::Rnn); }
std::vector<ValueId> rule_GRU(RuleContext& ctx) { return recurrent(ctx, Cell::Gru); }
std::vector<ValueId> rule_LSTM(RuleContext& ctx) { return recurrent(ctx, Cell::Lstm); }

}  // namespace orchid::fission
