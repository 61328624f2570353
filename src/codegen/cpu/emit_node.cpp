// Loop nests of computed primitives: elementwise-shaped ones (no reduction) vectorized along
// their innermost dim; reductions either per output element (every combiner) or a row at a
// time (sum, prod, max, min: the innermost output dim is vectorized and the reduction loops
// run outside it, accumulating into a row of scratch — the i-k-j order of a matmul).
#include "codegen/cpu/emit_reduce.h"
#include <cmath>
#include <functional>

#include "support/error.h"

namespace orchid::codegen::cpu::detail {

using ir::DType;
using ir::ReduceOp;

namespace {

std::string var(const char* prefix, size_t d) { return prefix + std::to_string(d); }

void open_loop(const std::string& v, const std::string& lo, const std::string& hi, Writer& w) {
  w.open("for (int64_t " + v + " = " + lo + "; " + v + " < " + hi + "; ++" + v + ") {");
}

void open_domain(const NodeLowering& nl, size_t from, size_t to, Writer& w) {
  for (size_t d = from; d < to; ++d) open_loop(var("v", d), region_lo(nl.node, d), region_hi(nl.node, d), w);
}

void open_reduce(const ir::Primitive& p, Writer& w, const std::string& innermost_pragma = "") {
  for (size_t d = 0; d < p.reduce_domain.size(); ++d) {
    if (d + 1 == p.reduce_domain.size() && !innermost_pragma.empty()) w.line(innermost_pragma);
    open_loop(var("r", d), "0", std::to_string(p.reduce_domain[d]) + "LL", w);
  }
}

void close_n(size_t n, Writer& w) {
  for (size_t i = 0; i < n; ++i) w.close();
}

ExprEmitter::Scope scope_of(const ir::Primitive& p) {
  ExprEmitter::Scope s{&p, {}, {}};
  for (size_t d = 0; d < p.domain.size(); ++d) s.dvars.push_back(var("v", d));
  for (size_t d = 0; d < p.reduce_domain.size(); ++d) s.rvars.push_back(var("r", d));
  return s;
}

std::string store(const ir::Graph& g, ExprEmitter& ex, ir::ValueId v, const ExprEmitter::Scope& s,
                  const std::string& value) {
  return ex.element(v, s.dvars) + " = " + to_storage(g.type(v).dtype, value) + ";";
}

// ---- Combiners of sum, prod, max, min. ----
std::string combine(ReduceOp r, DType t, const std::string& acc, const std::string& x) {
  std::string ct = compute_type(t);
  bool f32 = ct == "float", f64 = ct == "double";
  switch (r) {
    case ReduceOp::Sum: return acc + " + " + x;
    case ReduceOp::Prod: return acc + " * " + x;
    case ReduceOp::Max:
      if (f32 || f64) return std::string(f32 ? "orc_fmaxf(" : "orc_fmax(") + acc + ", " + x + ")";
      if (ct == "bool") return "(bool)(" + acc + " | " + x + ")";
      return std::string(ct == "uint64_t" ? "orc_maxu64(" : "orc_max64(") + acc + ", " + x + ")";
    case ReduceOp::Min:
      if (f32 || f64) return std::string(f32 ? "orc_fminf(" : "orc_fmin(") + acc + ", " + x + ")";
      if (ct == "bool") return "(bool)(" + acc + " & " + x + ")";
      return std::string(ct == "uint64_t" ? "orc_minu64(" : "orc_min64(") + acc + ", " + x + ")";
    default: break;
  }
  ORCHID_CHECK(false) << "combine: not a simple combiner";
  return acc;
}

// The identity of a combiner (or the result over an empty domain), in t's compute type.
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

std::string exp_of(DType t) { return compute_type(t) == "float" ? "orc_expf" : "__builtin_exp"; }

void emit_elementwise(const ir::Graph& g, const KernelLowering& kl, const NodeLowering& nl,
                      ExprEmitter& ex, Writer& w) {
  const ir::Primitive& p = g.node(nl.node);
  size_t n = p.domain.size();
  open_domain(nl, 0, n == 0 ? 0 : n - 1, w);
  if (n > 0) {
    w.simd_pragmas(kl.schedule);
    open_domain(nl, n - 1, n, w);
  } else {
    w.open("{");
  }
  ExprEmitter::Scope s = scope_of(p);
  for (size_t k = 0; k < p.bodies.size(); ++k) w.line(store(g, ex, p.outputs[k], s, ex.expr(p.bodies[k], s)));
  close_n(n == 0 ? 1 : n, w);
}

// Accumulators of one output element, their update per term, and the stores.
struct ElementCode {
  std::vector<std::string> decls, update, stores;
};

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

void emit_rows(const ir::Graph& g, const KernelLowering& kl, const NodeLowering& nl, ExprEmitter& ex,
               Writer& w) {
  const ir::Primitive& p = g.node(nl.node);
  size_t n = p.domain.size();
  std::string last = var("v", n - 1), lo = region_lo(nl.node, n - 1), hi = region_hi(nl.node, n - 1);
  open_domain(nl, 0, n - 1, w);
  w.open("{");
  ExprEmitter::Scope s = scope_of(p);
  std::vector<std::string> acc;
  for (size_t k = 0; k < p.bodies.size(); ++k) {
    std::string ct = compute_type(g.type(p.outputs[k]).dtype), a = "row" + std::to_string(k);
    w.line(ct + "* __restrict__ " + a + " = (" + ct + "*)((char*)scratch + " +
           std::to_string(nl.acc_offset + static_cast<int64_t>(k) * nl.acc_row * 8) + ");");
    acc.push_back(a + "[" + last + " - " + lo + "]");
  }
  auto row_loop = [&](const std::function<std::string(size_t)>& stmt) {
    w.simd_pragmas(kl.schedule);
    open_loop(last, lo, hi, w);
    for (size_t k = 0; k < p.bodies.size(); ++k) w.line(stmt(k));
    w.close();
  };
  row_loop([&](size_t k) { return acc[k] + " = " + identity(p.reduce, g.type(p.outputs[k]).dtype) + ";"; });
  open_reduce(p, w);
  row_loop([&](size_t k) {
    return acc[k] + " = " + combine(p.reduce, g.type(p.outputs[k]).dtype, acc[k], ex.expr(p.bodies[k], s)) + ";";
  });
  close_n(p.reduce_domain.size(), w);
  row_loop([&](size_t k) { return store(g, ex, p.outputs[k], s, acc[k]); });
  w.close();
  close_n(n - 1, w);
}

}  // namespace

// A loop takes one pragma: a vectorized loop unrolls by processing vector_width x unroll lanes
// per iteration (a simdlen wider than the registers is unrolled into several of them).
void Writer::simd_pragmas(const Schedule& s, const std::string& clauses) {
  if (s.vector_width > 1)
    line("#pragma omp simd simdlen(" + std::to_string(s.vector_width * s.unroll) + ")" + clauses);
  else if (s.unroll > 1)
    line("#pragma GCC unroll " + std::to_string(s.unroll));
}

void Writer::table(const std::string& name, const std::vector<int64_t>& values) {
  std::string row = "static const int64_t " + name + "[] = {";
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
  w.line("// primitive " + std::to_string(nl.node.v) + ": " + std::string(ir::prim_op_name(p.op)));
  if (p.reduce == ReduceOp::None) return emit_elementwise(g, kl, nl, ex, w);
  if (nl.accumulate_rows) return emit_rows(g, kl, nl, ex, w);
  emit_per_element(g, kl, nl, ex, w);
}

}  // namespace orchid::codegen::cpu::detail
