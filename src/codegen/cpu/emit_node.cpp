// Loop nests of computed primitives: elementwise-shaped ones (no reduction) vectorized along
// their innermost dim (rows of kernel outputs streamed, in chunks, when the schedule says so);
// reductions either per output element (every combiner; over lanes in emit_lanes.cpp) or a row
// at a time (sum, prod, max, min: the innermost output dim is vectorized and the reduction
// loops run outside it, accumulating into a row of scratch — the i-k-j order of a matmul).
#include <cmath>
#include <functional>
#include <optional>
#include <set>

#include "codegen/cpu/emit_reduce.h"
#include "support/error.h"

namespace orchid::codegen::cpu::detail {

using ir::DType;
using ir::ReduceOp;

std::string var(const char* prefix, size_t d) { return prefix + std::to_string(d); }

void open_loop(const std::string& v, const std::string& lo, const std::string& hi, Writer& w) {
  w.open("for (int64_t " + v + " = " + lo + "; " + v + " < " + hi + "; ++" + v + ") {");
}

void open_domain(const NodeLowering& nl, size_t from, size_t to, Writer& w) {
  for (size_t d = from; d < to; ++d) open_loop(var("v", d), region_lo(nl.node, d), region_hi(nl.node, d), w);
}

void open_reduce(const ir::Primitive& p, Writer& w, const std::string& innermost_pragma) {
  for (size_t d = 0; d < p.reduce_domain.size(); ++d) {
    if (d + 1 == p.reduce_domain.size() && !innermost_pragma.empty()) w.line(innermost_pragma);
    open_loop(var("r", d), "0", std::to_string(p.reduce_domain[d]) + "LL", w);
  }
}

void open_reduce_outer(const ir::Primitive& p, size_t count, Writer& w) {
  for (size_t d = 0; d < count; ++d) open_loop(var("r", d), "0", std::to_string(p.reduce_domain[d]) + "LL", w);
}

void close_n(size_t n, Writer& w) {
  for (size_t i = 0; i < n; ++i) w.close();
}

ExprEmitter::Scope scope_of(const ir::Primitive& p) {
  ExprEmitter::Scope s{&p, {}, {}};
  for (size_t d = 0; d < p.domain.size(); ++d) s.dvars.push_back(var("v", d));
  for (size_t d = 0; d < p.reduce_domain.size(); ++d) s.rvars.push_back(var("r", d));
  bool reducing = !p.reduce_domain.empty();
  s.inner = static_cast<int32_t>(reducing ? p.reduce_domain.size() : p.domain.size()) - 1;
  s.inner_kind = reducing ? ir::VarKind::Reduce : ir::VarKind::Domain;
  return s;
}

std::string store(const ir::Graph& g, ExprEmitter& ex, ir::ValueId v, const ExprEmitter::Scope& s,
                  const std::string& value) {
  return ex.element(v, s.dvars) + " = " + to_storage(g.type(v).dtype, value) + ";";
}

std::string combine(ReduceOp r, DType t, const std::string& acc, const std::string& x, bool lane) {
  std::string ct = compute_type(t);
  bool f32 = ct == "float", f64 = ct == "double";
  std::string sfx = lane ? "_acc(" : "(";
  switch (r) {
    case ReduceOp::Sum: return acc + " + " + x;
    case ReduceOp::Prod: return acc + " * " + x;
    case ReduceOp::Max:
      if (f32 || f64) return std::string(f32 ? "orc_fmaxf" : "orc_fmax") + sfx + acc + ", " + x + ")";
      if (ct == "bool") return "(bool)(" + acc + " | " + x + ")";
      return std::string(ct == "uint64_t" ? "orc_maxu64(" : "orc_max64(") + acc + ", " + x + ")";
    case ReduceOp::Min:
      if (f32 || f64) return std::string(f32 ? "orc_fminf" : "orc_fmin") + sfx + acc + ", " + x + ")";
      if (ct == "bool") return "(bool)(" + acc + " & " + x + ")";
      return std::string(ct == "uint64_t" ? "orc_minu64(" : "orc_min64(") + acc + ", " + x + ")";
    default: break;
  }
  ORCHID_CHECK(false) << "combine: not a simple combiner";
  return acc;
}

std::string identity(ReduceOp r, DType t) {
  bool fl = ir::is_float(t);
  switch (r) {
    case ReduceOp::Sum: return literal(ir::Scalar::of(t, 0));
    case ReduceOp::Prod: return literal(ir::Scalar::of(t, 1));
    case ReduceOp::Max:
    case ReduceOp::ArgMax:
      return fl ? literal(ir::Scalar::of(t, -INFINITY)) : literal(ir::Scalar::of_int(t, ir::dtype_lowest(t)));
    case ReduceOp::Min:
    case ReduceOp::ArgMin:
      return fl ? literal(ir::Scalar::of(t, INFINITY)) : literal(ir::Scalar::of_int(t, ir::dtype_highest(t)));
    default: break;
  }
  ORCHID_CHECK(false) << "identity of " << ir::reduce_op_name(r);
  return "0";
}

bool simple(ReduceOp r) {
  return r == ReduceOp::Sum || r == ReduceOp::Prod || r == ReduceOp::Max || r == ReduceOp::Min;
}

namespace {

// Whether a primitive after `n` in the kernel's order loads v.
bool read_later(const ir::Graph& g, const KernelLowering& kl, ir::NodeId n, ir::ValueId v) {
  bool after = false, read = false;
  for (const NodeLowering& o : kl.nodes) {
    if (after) {
      const ir::Primitive& q = g.node(o.node);
      for (const ir::Expr& b : q.bodies)
        ir::visit_post(b, [&](const ir::Expr& e) { read |= e.op() == ir::ExprOp::Load && q.inputs[e->index] == v; });
    }
    after |= o.node == n;
  }
  return read;
}

}  // namespace

void emit_prefetches(const ir::Graph& g, const KernelLowering& kl, const ir::Primitive& p, ExprEmitter& ex,
                     const ExprEmitter::Scope& s, const ir::Expr& x, const std::string& start, int64_t len,
                     Writer& w) {
  if (kl.schedule.prefetch <= 0) return;
  ir::NodeId self = g.value(p.outputs[0]).node;
  auto is_x = [&](const ir::Expr& e) {
    return e.op() == ir::ExprOp::Var && e->var_kind == x->var_kind && e->index == x->index;
  };
  auto free_of_x = [&](const ir::Expr& e) {
    bool free = true;
    ir::visit_post(e, [&](const ir::Expr& y) { free &= !is_x(y) && y.op() != ir::ExprOp::Load; });
    return free;
  };
  std::set<std::string> done;
  for (const ir::Expr& b : p.bodies)
    ir::visit_post(b, [&](const ir::Expr& e) {
      if (e.op() != ir::ExprOp::Load || e->predicated) return;
      ir::ValueId v = p.inputs[e->index];
      size_t rank = g.type(v).shape.size();
      if (std::find(kl.inputs.begin(), kl.inputs.end(), v) == kl.inputs.end() || rank == 0 ||
          !is_x(e.arg(rank - 1)) || read_later(g, kl, self, v))
        return;
      int64_t size = ir::dtype_bytes(g.type(v).dtype);
      if (g.type(v).numel() * size < 64 * static_cast<int64_t>(kl.schedule.prefetch)) return;
      for (size_t d = 0; d + 1 < rank; ++d)
        if (!free_of_x(e.arg(d))) return;
      ExprEmitter::Scope ahead = s;
      std::string at = "(" + start + " + pf + " + std::to_string(kl.schedule.prefetch / size) + "LL)";
      (x->var_kind == ir::VarKind::Domain ? ahead.dvars : ahead.rvars)[x->index] = at;
      std::vector<std::string> idx;
      for (size_t d = 0; d < rank; ++d) idx.push_back(ex.expr(e.arg(d), ahead));
      std::string addr = "&" + ex.element(v, idx);
      if (!done.insert(addr).second) return;
      w.line("for (int64_t pf = 0; pf < " + std::to_string(len) + "LL; pf += " +
             std::to_string(std::max<int64_t>(1, 64 / size)) + "LL) __builtin_prefetch(" + addr + ");");
    });
}

namespace {
std::string exp_of(DType t) { return compute_type(t) == "float" ? "orc_expf" : "__builtin_exp"; }
}  // namespace

ElementCode element_code(const ir::Graph& g, const ir::Primitive& p, ExprEmitter& ex,
                         const ExprEmitter::Scope& s) {
  ElementCode c;
  DType t = g.type(p.outputs[0]).dtype;
  std::string ct = compute_type(t);
  if (simple(p.reduce)) {
    for (size_t k = 0; k < p.bodies.size(); ++k) {
      DType tk = g.type(p.outputs[k]).dtype;
      std::string a = "acc" + std::to_string(k);
      c.decls.push_back(compute_type(tk) + " " + a + " = " + identity(p.reduce, tk) + ";");
      c.update.push_back(a + " = " + combine(p.reduce, tk, a, ex.expr(p.bodies[k], s)) + ";");
      c.stores.push_back(store(g, ex, p.outputs[k], s, a));
    }
    return c;
  }
  switch (p.reduce) {
    case ReduceOp::ArgMax:
    case ReduceOp::ArgMin: {
      const char* better = p.reduce == ReduceOp::ArgMax ? " > " : " < ";
      c.decls = {ct + " best = " + identity(p.reduce, t) + ";", "int64_t bi = -1;", "bool have = false;"};
      c.update = {"const " + ct + " x = " + ex.expr(p.bodies[0], s) + ";",
                  "if (x == x && (!have || x" + std::string(better) + "best)) { best = x; bi = " +
                      ex.expr(p.bodies[1], s) + "; have = true; }"};
      c.stores = {store(g, ex, p.outputs[0], s, "best"), store(g, ex, p.outputs[1], s, "bi")};
      return c;
    }
    case ReduceOp::Welford:
      c.decls = {"int64_t n = 0;", ct + " mean = 0, m2 = 0;"};
      c.update = {"const " + ct + " x = " + ex.expr(p.bodies[0], s) + ";", "n += 1;",
                  "const " + ct + " d = x - mean;", "mean += d / (" + ct + ")n;", "m2 += d * (x - mean);"};
      c.stores = {store(g, ex, p.outputs[0], s, "n ? mean : (" + ct + ")__builtin_nan(\"\")"),
                  store(g, ex, p.outputs[1], s, "n ? m2 / (" + ct + ")n : (" + ct + ")__builtin_nan(\"\")")};
      return c;
    case ReduceOp::MaxSum: {
      std::string e = exp_of(t), inf = ct == "float" ? "__builtin_inff()" : "__builtin_inf()";
      c.decls = {ct + " m = -" + inf + ", sum = 0;"};
      c.update = {"const " + ct + " x = " + ex.expr(p.bodies[0], s) + ";",
                  "if (x != x) { m = x; sum = x; } else if (x == -" + inf + ") { } else if (x > m) { sum = sum * " + e +
                      "(m - x) + " + e + "(x - x); m = x; } else { sum += " + e + "(x - m); }"};
      c.stores = {store(g, ex, p.outputs[0], s, "m"), store(g, ex, p.outputs[1], s, "sum")};
      return c;
    }
    default: break;
  }
  ORCHID_CHECK(false) << "reduction " << ir::reduce_op_name(p.reduce);
  return c;
}

// Elements per chunk of a row written with streaming stores.
constexpr int64_t kStreamChunk = 256;

bool streamed(const KernelLowering& kl, const NodeLowering& nl, const ir::Primitive& p) {
  if (!kl.schedule.stream || p.domain.empty()) return false;
  for (ir::ValueId v : p.outputs)
    if (!nl.homes.at(v).global) return false;
  return true;
}

void emit_streamed_chunks(const Schedule& sched, const std::string& v, const std::string& lo, const std::string& hi,
                          const std::vector<StreamedOutput>& outs, Writer& w, const std::function<void()>& prefetch) {
  const std::string chunk = std::to_string(kStreamChunk) + "LL";
  auto size = [](const StreamedOutput& o) { return "sizeof(" + storage_type(o.dtype) + ")"; };
  w.open("for (int64_t cb = " + lo + "; cb < " + hi + ";) {");
  w.line("const int64_t ce = orc_min64(" + hi + ", cb + orc_stream_chunk(&" + outs[0].at_chunk + ", " + size(outs[0]) +
         ", " + chunk + "));");
  if (prefetch) prefetch();
  for (size_t k = 0; k < outs.size(); ++k)
    w.line(storage_type(outs[k].dtype) + " buf" + std::to_string(k) + "[" + chunk + "] __attribute__((aligned(64)));");
  w.simd_pragmas(sched);
  open_loop(v, "cb", "ce", w);
  for (size_t k = 0; k < outs.size(); ++k)
    w.line("buf" + std::to_string(k) + "[" + v + " - cb] = " + to_storage(outs[k].dtype, outs[k].value) + ";");
  w.close();
  for (size_t k = 0; k < outs.size(); ++k)
    w.line("orc_stream(&" + outs[k].at_chunk + ", buf" + std::to_string(k) + ", (ce - cb) * " + size(outs[k]) + ");");
  w.line("cb = ce;");
  w.close();
}

namespace {

// The innermost loop of a streamed primitive: chunks of a row computed into buffers on the
// stack (vectorized as usual), each then streamed to its place in the output.
void emit_streamed_row(const ir::Graph& g, const KernelLowering& kl, const NodeLowering& nl,
                       ExprEmitter& ex, const ExprEmitter::Scope& s, Writer& w) {
  const ir::Primitive& p = g.node(nl.node);
  size_t last = p.domain.size() - 1;
  std::string v = var("v", last);
  std::vector<std::string> at = s.dvars;
  at[last] = "cb";
  std::vector<StreamedOutput> outs;
  for (size_t k = 0; k < p.bodies.size(); ++k)
    outs.push_back({g.type(p.outputs[k]).dtype, ex.element(p.outputs[k], at), ex.expr(p.bodies[k], s)});
  for (const std::string& h : ex.take_hoisted()) w.line(h);
  emit_streamed_chunks(kl.schedule, v, region_lo(nl.node, last), region_hi(nl.node, last), outs, w, [&] {
    emit_prefetches(g, kl, p, ex, s, ir::dvar(static_cast<int32_t>(last)), "cb", kStreamChunk, w);
  });
}

// An f32 block of a transposed layout primitive that is whole (B x B) is written by 8 x 8
// register transposes (prelude: orc_transpose_8x8) from the buffer into the output rows, whose
// stride is the distance between two consecutive elements along k; then `continue`s past the
// element loops that write partial blocks.
void emit_full_block_f32(const ir::Primitive& p, ExprEmitter& ex, const ExprEmitter::Scope& s, size_t k, Writer& w) {
  static_assert(kTransposeBlock % 8 == 0, "whole blocks are written 8 x 8");
  size_t l = p.domain.size() - 1;
  std::string b = std::to_string(kTransposeBlock) + "LL";
  auto at = [&](const std::string& vk) {
    std::vector<std::string> idx = s.dvars;
    idx[k] = vk;
    idx[l] = "bl";
    return "&" + ex.element(p.outputs[0], idx);
  };
  w.open("if (ek - bk == " + b + " && el - bl == " + b + ") {");
  w.line("float* const d = " + at("bk") + ";");
  w.line("const int64_t ld = " + at("(bk + 1)") + " - d;");
  for (int64_t i = 0; i < kTransposeBlock; i += 8)
    for (int64_t j = 0; j < kTransposeBlock; j += 8)
      w.line("orc_transpose_8x8(buf + " + std::to_string(j * kTransposeBlock + i) + ", " + b + ", d + " +
             std::to_string(i) + " * ld + " + std::to_string(j) + ", ld);");
  w.line("continue;");
  w.close();
}

// A transposing layout primitive (lower.h, transposing_dim: it reads along dim k, its rows run
// along the last dim l) in blocks of B x B: each block is read with k innermost into a buffer
// on the stack, a cache line of the input at a time, then written with l innermost, a line of
// the output at a time (f32 blocks that are whole: by register transposes).
void emit_transposed(const ir::Graph& g, const NodeLowering& nl, ExprEmitter& ex, Writer& w) {
  const ir::Primitive& p = g.node(nl.node);
  size_t n = p.domain.size(), k = static_cast<size_t>(nl.transpose_dim), l = n - 1;
  ExprEmitter::Scope s = scope_of(p);
  s.inner = static_cast<int32_t>(k);
  for (size_t d = 0; d < l; ++d)
    if (d != k) open_loop(var("v", d), region_lo(nl.node, d), region_hi(nl.node, d), w);
  std::string vk = var("v", k), vl = var("v", l), b = std::to_string(kTransposeBlock) + "LL";
  std::string at = "buf[(" + vl + " - bl) * " + b + " + (" + vk + " - bk)]";
  DType t = g.type(p.outputs[0]).dtype;
  w.open("for (int64_t bk = " + region_lo(nl.node, k) + "; bk < " + region_hi(nl.node, k) + "; bk += " + b + ") {");
  w.open("for (int64_t bl = " + region_lo(nl.node, l) + "; bl < " + region_hi(nl.node, l) + "; bl += " + b + ") {");
  w.line("const int64_t ek = orc_min64(" + region_hi(nl.node, k) + ", bk + " + b + "), el = orc_min64(" +
         region_hi(nl.node, l) + ", bl + " + b + ");");
  w.line(compute_type(t) + " buf[" + std::to_string(kTransposeBlock * kTransposeBlock) + "];");
  open_loop(vl, "bl", "el", w);
  w.line("#pragma omp simd");
  open_loop(vk, "bk", "ek", w);
  w.line(at + " = " + ex.expr(p.bodies[0], s) + ";");
  close_n(2, w);
  if (t == DType::F32) emit_full_block_f32(p, ex, s, k, w);
  open_loop(vk, "bk", "ek", w);
  open_loop(vl, "bl", "el", w);  // not vectorized: gathers from the buffer cost more than they save
  w.line(ex.element(p.outputs[0], s.dvars) + " = " + to_storage(t, at) + ";");
  close_n(4, w);
  close_n(n - 2, w);
}

void emit_elementwise(const ir::Graph& g, const KernelLowering& kl, const NodeLowering& nl,
                      ExprEmitter& ex, Writer& w) {
  const ir::Primitive& p = g.node(nl.node);
  size_t n = p.domain.size();
  ExprEmitter::Scope s = scope_of(p);
  s.hoist = n > 0;
  if (nl.transpose_dim >= 0) return emit_transposed(g, nl, ex, w);
  if (streamed(kl, nl, p)) {
    open_domain(nl, 0, n - 1, w);
    emit_streamed_row(g, kl, nl, ex, s, w);
    close_n(n - 1, w);
    return;
  }
  if (n == 0) {
    w.open("{");
    for (size_t k = 0; k < p.bodies.size(); ++k) w.line(store(g, ex, p.outputs[k], s, ex.expr(p.bodies[k], s)));
    w.close();
    return;
  }
  open_domain(nl, 0, n - 1, w);
  // The innermost loop, piece by piece where its index arithmetic changes along it.
  std::vector<LoopPiece> pieces = loop_pieces(g, kl, p);
  std::string v = var("v", n - 1), lo = region_lo(nl.node, n - 1), hi = region_hi(nl.node, n - 1);
  for (const LoopPiece& piece : pieces) {
    s.box = &piece.box;
    std::vector<std::string> body;
    for (size_t k = 0; k < p.bodies.size(); ++k) body.push_back(store(g, ex, p.outputs[k], s, ex.expr(p.bodies[k], s)));
    for (const std::string& h : ex.take_hoisted()) w.line(h);
    w.simd_pragmas(kl.schedule, "", piece.hi - piece.lo);
    if (pieces.size() == 1)
      open_loop(v, lo, hi, w);
    else
      open_loop(v, "orc_max64(" + lo + ", " + std::to_string(piece.lo) + "LL)",
                "orc_min64(" + hi + ", " + std::to_string(piece.hi) + "LL)", w);
    for (const std::string& b : body) w.line(b);
    w.close();
  }
  close_n(n - 1, w);
}

void emit_per_element(const ir::Graph& g, const KernelLowering& kl, const NodeLowering& nl,
                      ExprEmitter& ex, Writer& w) {
  const ir::Primitive& p = g.node(nl.node);
  size_t n = p.domain.size();
  open_domain(nl, 0, n, w);
  w.open("{");
  ExprEmitter::Scope s = scope_of(p);
  ElementCode c = element_code(g, p, ex, s);
  for (const std::string& d : c.decls) w.line(d);
  std::string pragma;
  if ((p.reduce == ReduceOp::Sum || p.reduce == ReduceOp::Prod) && kl.schedule.vector_width > 1) {
    pragma = std::string("#pragma omp simd reduction(") + (p.reduce == ReduceOp::Sum ? "+" : "*") + ":";
    for (size_t k = 0; k < p.bodies.size(); ++k) pragma += (k ? ",acc" : "acc") + std::to_string(k);
    pragma += ")";
  }
  open_reduce(p, w, pragma);
  for (const std::string& u : c.update) w.line(u);
  close_n(p.reduce_domain.size(), w);
  for (const std::string& st : c.stores) w.line(st);
  w.close();
  close_n(n, w);
}

// The conjunction of the predicates of p's loads, where p has some and each is true over an
// interval of domain variable d (lower.h, true_over_interval); none otherwise.
std::optional<ir::Expr> row_predicate(const ir::Primitive& p, int32_t d) {
  std::optional<ir::Expr> all;
  bool interval = true;
  for (const ir::Expr& b : p.bodies)
    ir::visit_post(b, [&](const ir::Expr& e) {
      if (e.op() != ir::ExprOp::Load || !e->predicated) return;
      const ir::Expr& pred = e->args.back();
      interval &= true_over_interval(pred, d);
      all = all ? ir::binary(ir::ExprOp::And, *all, pred) : pred;
    });
  return interval ? all : std::nullopt;
}

// e with its loads' predicates dropped (each load then reads where it points).
ir::Expr without_predicates(const ir::Expr& e) {
  return ir::map_post(e, [](const ir::Expr& x) {
    if (x.op() != ir::ExprOp::Load || !x->predicated) return x;
    std::vector<ir::Expr> idx(x->args.begin(), x->args.end() - 1);
    return ir::load(x->index, x.dtype(), std::move(idx));
  });
}

void emit_rows(const ir::Graph& g, const KernelLowering& kl, const NodeLowering& nl, ExprEmitter& ex,
               Writer& w) {
  const ir::Primitive& p = g.node(nl.node);
  size_t n = p.domain.size();
  std::string last = var("v", n - 1), lo = region_lo(nl.node, n - 1), hi = region_hi(nl.node, n - 1);
  open_domain(nl, 0, n - 1, w);
  w.open("{");
  ExprEmitter::Scope s = scope_of(p);
  s.inner = static_cast<int32_t>(n - 1);  // the row loop is the innermost
  s.inner_kind = ir::VarKind::Domain;
  std::vector<std::string> acc;
  for (size_t k = 0; k < p.bodies.size(); ++k) {
    std::string ct = compute_type(g.type(p.outputs[k]).dtype), a = "row" + std::to_string(k);
    w.line(ct + "* __restrict__ " + a + " = (" + ct + "*)((char*)scratch + " +
           std::to_string(nl.acc_offset + static_cast<int64_t>(k) * nl.acc_row * 8) + ");");
    acc.push_back(a + "[" + last + " - " + lo + "]");
  }
  auto row_loop = [&](const std::function<std::string(size_t)>& stmt, const std::string& from, const std::string& to) {
    w.simd_pragmas(kl.schedule, "", p.domain[n - 1]);
    open_loop(last, from, to, w);
    for (size_t k = 0; k < p.bodies.size(); ++k) w.line(stmt(k));
    w.close();
  };
  row_loop([&](size_t k) { return acc[k] + " = " + identity(p.reduce, g.type(p.outputs[k]).dtype) + ";"; }, lo, hi);
  open_reduce(p, w);
  auto terms = [&](const std::vector<ir::Expr>& bodies) {
    return [&, bodies](size_t k) {
      return acc[k] + " = " + combine(p.reduce, g.type(p.outputs[k]).dtype, acc[k], ex.expr(bodies[k], s)) + ";";
    };
  };
  std::optional<ir::Expr> pred = row_predicate(p, static_cast<int32_t>(n - 1));
  if (!pred) {
    row_loop(terms(p.bodies), lo, hi);
  } else {
    // The loads' predicates hold over one interval [row_a, row_b) of the row, found from its
    // ends; there the loads run unpredicated (a strided load vectorizes, a masked one gathers).
    ExprEmitter::Scope at = s;
    at.dvars[n - 1] = "row_a";
    std::string holds_a = ex.expr(*pred, at);
    at.dvars[n - 1] = "(row_b - 1)";
    std::string holds_b = ex.expr(*pred, at);
    w.line("int64_t row_a = " + lo + ", row_b = " + hi + ";");
    w.line("while (row_a < row_b && !(" + holds_a + ")) ++row_a;");
    w.line("while (row_b > row_a && !(" + holds_b + ")) --row_b;");
    row_loop(terms(p.bodies), lo, "row_a");
    std::vector<ir::Expr> plain;
    for (const ir::Expr& b : p.bodies) plain.push_back(without_predicates(b));
    row_loop(terms(plain), "row_a", "row_b");
    row_loop(terms(p.bodies), "row_b", hi);
  }
  close_n(p.reduce_domain.size(), w);
  row_loop([&](size_t k) { return store(g, ex, p.outputs[k], s, acc[k]); }, lo, hi);
  w.close();
  close_n(n - 1, w);
}

}  // namespace

// A loop takes one pragma: a vectorized loop unrolls by processing vector_width x unroll lanes
// per iteration (a simdlen wider than the registers is unrolled into several of them). Over a
// loop of known extent the lanes are halved (not below vector_width) while the elements left
// after the last whole iteration hold a whole vector or more: the compiler runs them one at a
// time (a row of 56 in iterations of 32 would leave 24 scalar elements, in 16s only 8).
void Writer::simd_pragmas(const Schedule& s, const std::string& clauses, int64_t extent) {
  int64_t lanes = s.vector_width * s.unroll;
  while (extent > 0 && lanes > s.vector_width && (lanes > extent || extent % lanes >= s.vector_width)) lanes /= 2;
  if (s.vector_width > 1)
    line("#pragma omp simd simdlen(" + std::to_string(lanes) + ")" + clauses);
  else if (s.unroll > 1)
    line("#pragma GCC unroll " + std::to_string(s.unroll));
}

void Writer::text_block(const std::string& text) {
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    line(text.substr(at, end - at));
    at = end + 1;
  }
}

void Writer::table(const std::string& name, const std::vector<int64_t>& values, const std::string& qualifiers) {
  std::string row = qualifiers + " int64_t " + name + "[] = {";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i % 16 == 0) {
      line(row);
      row = "  ";
    }
    row += std::to_string(values[i]) + "LL, ";
  }
  line(row);
  line("};");
}

void emit_node(const ir::Graph& g, const KernelLowering& kl, const NodeLowering& nl, ExprEmitter& ex,
               Writer& w) {
  const ir::Primitive& p = g.node(nl.node);
  if (nl.fused) return;  // computed with the primitive whose rows it reduces
  if (nl.in_gemm_store) return;  // computed by the micro-kernel whose sums it reads
  w.line("// primitive " + std::to_string(nl.node.v) + ": " + std::string(ir::prim_op_name(p.op)));
  if (nl.fused_reduction >= 0) return emit_fused(g, kl, nl, ex, w);
  if (p.reduce == ReduceOp::None) return emit_elementwise(g, kl, nl, ex, w);
  if (nl.gemm) return emit_gemm(g, kl, nl, ex, w);
  if (nl.accumulate_rows) return emit_rows(g, kl, nl, ex, w);
  if (over_lanes(p, nl, kl.schedule)) return emit_lanes(g, kl, nl, ex, w);
  emit_per_element(g, kl, nl, ex, w);
}

}  // namespace orchid::codegen::cpu::detail
