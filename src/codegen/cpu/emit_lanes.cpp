// Reductions over lanes (emit_reduce.h): the innermost run of terms (the last reduction dim,
// or the trailing dims that every load reads as one contiguous range: NodeLowering::reduce_run)
// cut into chunks of P terms (P = reduction_lanes), term l of every chunk combined into
// partial l, and the terms past the whole chunks into the first partials. The P partials
// are independent chains, so the chunk loop vectorizes and is not bound by the latency of one
// chain; they are combined pairwise at the end. Sums and products are reassociated (floats
// differ in rounding only); max and min are order-independent except for which NaN, or which
// zero of equal ones, is returned. A reduction along the rows an elementwise primitive
// computes is folded into that primitive's loop the same way (NodeLowering::fused_reduction).
#include <string>
#include <vector>

#include "codegen/cpu/emit_reduce.h"

namespace orchid::codegen::cpu::detail {

using ir::DType;
using ir::ReduceOp;

namespace {

std::string partial(size_t k, const std::string& lane) { return "acc" + std::to_string(k) + "p[" + lane + "]"; }

// The loop over `count` lanes of a chunk starting at term `start` (C text), each lane's term
// `var`.
void open_lane_loop(const std::string& var, int64_t lanes, const std::string& start, int64_t count, Writer& w) {
  w.line("#pragma omp simd simdlen(" + std::to_string(lanes) + ")");
  w.open("for (int64_t ln = 0; ln < " + std::to_string(count) + "LL; ++ln) {");
  w.line("const int64_t " + var + " = " + start + " + ln;");
}

// The `lanes` partials of output k, each the combiner's identity.
void declare_partials(ReduceOp op, DType t, size_t k, int64_t lanes, Writer& w) {
  std::string P = std::to_string(lanes) + "LL";
  w.line(compute_type(t) + " " + partial(k, P) + ";");
  w.line("for (int64_t ln = 0; ln < " + P + "; ++ln) " + partial(k, "ln") + " = " + identity(op, t) + ";");
}

// The `lanes` partials of output k combined pairwise, halving their number: a tree of depth
// log2(lanes), the result in partial 0.
void combine_partials(ReduceOp op, DType t, size_t k, int64_t lanes, Writer& w) {
  for (int64_t half = lanes / 2; half > 0; half /= 2) {
    w.line("#pragma omp simd");
    w.line("for (int64_t ln = 0; ln < " + std::to_string(half) + "LL; ++ln) " + partial(k, "ln") + " = " +
           combine(op, t, partial(k, "ln"), partial(k, "ln + " + std::to_string(half) + "LL"), true) + ";");
  }
}

// The terms of a reduction over lanes: its outer reduction dims looped over one by one, then
// the run of its last NodeLowering::reduce_run dims (read as one contiguous range) in chunks
// of P lanes, the run's variable being the last dim's.
struct Terms {
  size_t outer = 0;    // reduction dims before the run
  int64_t extent = 0;  // terms in the run
  int64_t lanes = 0;   // P
  std::string var;     // the run's variable

  Terms(const ir::Primitive& p, const NodeLowering& nl, const Schedule& s)
      : outer(p.reduce_domain.size() - static_cast<size_t>(nl.reduce_run)),
        extent(run_extent(p, nl)),
        lanes(reduction_lanes(s, extent)),
        var(detail::var("r", p.reduce_domain.size() - 1)) {}
  int64_t whole() const { return extent - extent % lanes; }  // terms in whole chunks
  std::string P() const { return std::to_string(lanes) + "LL"; }
  // The scope of the run: its variables but the last read as 0, the last running over it all
  // (reduce_run: every load addresses them as one range, so this is the same address).
  void merge(const ir::Primitive& p, ExprEmitter::Scope& s) const {
    for (size_t d = outer; d + 1 < p.reduce_domain.size(); ++d) s.rvars[d] = "0LL";
  }
  // The loop over the whole chunks; its bounds are constants, which lets the compiler keep
  // the partials in registers.
  void open_chunks(Writer& w) const {
    w.open("for (int64_t rb = 0; rb < " + std::to_string(whole()) + "LL; rb += " + P() + ") {");
  }
  // The loop over the terms past the whole chunks, one at a time.
  void open_rest(Writer& w) const {
    w.open("for (int64_t " + var + " = " + std::to_string(whole()) + "LL; " + var + " < " + std::to_string(extent) +
           "LL; ++" + var + ") {");
  }
  // The loop over a chunk's lanes, from `start` (`count` of them; 0: all P).
  void open_lanes(Writer& w, const std::string& start = "rb", int64_t count = 0) const {
    open_lane_loop(var, lanes, start, count > 0 ? count : lanes, w);
  }
};

void emit_lanes_simple(const ir::Graph& g, const KernelLowering& kl, const ir::Primitive& p, const Terms& t,
                       ExprEmitter& ex, const ExprEmitter::Scope& s, Writer& w) {
  for (size_t k = 0; k < p.bodies.size(); ++k) declare_partials(p.reduce, g.type(p.outputs[k]).dtype, k, t.lanes, w);
  open_reduce_outer(p, t.outer, w);
  std::vector<std::string> in_lanes;
  for (size_t k = 0; k < p.bodies.size(); ++k)
    in_lanes.push_back(partial(k, "ln") + " = " +
                       combine(p.reduce, g.type(p.outputs[k]).dtype, partial(k, "ln"), ex.expr(p.bodies[k], s), true) + ";");
  for (const std::string& h : ex.take_hoisted()) w.line(h);
  t.open_chunks(w);
  emit_prefetches(g, kl, p, ex, s, ir::rvar(static_cast<int32_t>(p.reduce_domain.size() - 1)), "rb", t.lanes, w);
  t.open_lanes(w);
  for (const std::string& l : in_lanes) w.line(l);
  w.close();
  w.close();
  // The terms past the last whole chunk go to the first lanes' partials, as one more chunk.
  if (t.whole() < t.extent) {
    t.open_lanes(w, std::to_string(t.whole()) + "LL", t.extent - t.whole());
    for (const std::string& l : in_lanes) w.line(l);
    w.close();
  }
  close_n(t.outer, w);
  for (size_t k = 0; k < p.bodies.size(); ++k) {
    combine_partials(p.reduce, g.type(p.outputs[k]).dtype, k, t.lanes, w);
    w.line(store(g, ex, p.outputs[k], s, partial(k, "0")));
  }
}

// Welford over lanes: every lane of the whole chunks has seen nf terms (one division per
// chunk, not per term); the terms past them are accumulated in order, apart; the lanes and
// that rest are merged (Chan et al.) at the end.
void emit_lanes_welford(const ir::Graph& g, const KernelLowering& kl, const ir::Primitive& p, const Terms& t,
                        ExprEmitter& ex, const ExprEmitter::Scope& s, Writer& w) {
  std::string P = t.P(), ct = compute_type(g.type(p.outputs[0]).dtype);
  w.line("int64_t nf = 0, nt = 0;");
  w.line(ct + " mean_p[" + P + "], m2_p[" + P + "], mean_t = 0, m2_t = 0;");
  w.line("for (int64_t ln = 0; ln < " + P + "; ++ln) { mean_p[ln] = 0; m2_p[ln] = 0; }");
  open_reduce_outer(p, t.outer, w);
  std::string x = ex.expr(p.bodies[0], s);
  for (const std::string& h : ex.take_hoisted()) w.line(h);
  t.open_chunks(w);
  emit_prefetches(g, kl, p, ex, s, ir::rvar(static_cast<int32_t>(p.reduce_domain.size() - 1)), "rb", t.lanes, w);
  w.line("nf += 1;");
  w.line("const " + ct + " inv = (" + ct + ")1 / (" + ct + ")nf;");
  t.open_lanes(w);
  w.line("const " + ct + " x = " + x + ";");
  w.line("const " + ct + " d = x - mean_p[ln];");
  w.line("mean_p[ln] += d * inv;");
  w.line("m2_p[ln] += d * (x - mean_p[ln]);");
  w.close();
  w.close();
  if (t.whole() < t.extent) {
    t.open_rest(w);
    w.line("const " + ct + " x = " + x + ";");
    w.line("nt += 1;");
    w.line("const " + ct + " d = x - mean_t;");
    w.line("mean_t += d / (" + ct + ")nt;");
    w.line("m2_t += d * (x - mean_t);");
    w.close();
  }
  close_n(t.outer, w);
  // Lanes merged pairwise (all of a level's partitions have the same count, so the merge of
  // Chan et al. takes no division), then the rest merged into the result.
  for (int64_t half = t.lanes / 2; half > 0; half /= 2) {
    std::string side = std::to_string(t.lanes / (2 * half));
    w.line("#pragma omp simd");
    w.open("for (int64_t ln = 0; ln < " + std::to_string(half) + "LL; ++ln) {");
    w.line("const " + ct + " delta = mean_p[ln + " + std::to_string(half) + "LL] - mean_p[ln];");
    w.line("mean_p[ln] += delta * (" + ct + ")0.5;");
    w.line("m2_p[ln] += m2_p[ln + " + std::to_string(half) + "LL] + delta * delta * ((" + ct + ")nf * (" + ct + ")" +
           side + " * (" + ct + ")0.5);");
    w.close();
  }
  w.line("int64_t n = nf * " + P + ";");
  w.line(ct + " mean = mean_p[0], m2 = m2_p[0];");
  w.open("if (nt > 0) {");
  w.line("const " + ct + " delta = mean_t - mean, fb = (" + ct + ")nt / (" + ct + ")(n + nt);");
  w.line("mean += delta * fb;");
  w.line("m2 += m2_t + delta * delta * (" + ct + ")n * fb;");
  w.line("n += nt;");
  w.close();
  w.line(store(g, ex, p.outputs[0], s, "n ? mean : (" + ct + ")__builtin_nan(\"\")"));
  w.line(store(g, ex, p.outputs[1], s, "n ? m2 / (" + ct + ")n : (" + ct + ")__builtin_nan(\"\")"));
}

}  // namespace

bool over_lanes(const ir::Primitive& p, const NodeLowering& nl, const Schedule& s) {
  if (p.reduce_domain.empty()) return false;
  if (!simple(p.reduce) && p.reduce != ReduceOp::Welford) return false;
  return reduction_lanes(s, run_extent(p, nl)) > 0;
}

void emit_lanes(const ir::Graph& g, const KernelLowering& kl, const NodeLowering& nl, ExprEmitter& ex,
                Writer& w) {
  const ir::Primitive& p = g.node(nl.node);
  size_t n = p.domain.size();
  open_domain(nl, 0, n, w);
  w.open("{");
  Terms t(p, nl, kl.schedule);
  ExprEmitter::Scope s = scope_of(p);
  s.hoist = true;
  t.merge(p, s);
  if (p.reduce == ReduceOp::Welford)
    emit_lanes_welford(g, kl, p, t, ex, s, w);
  else
    emit_lanes_simple(g, kl, p, t, ex, s, w);
  w.close();
  close_n(n, w);
}

void emit_fused(const ir::Graph& g, const KernelLowering& kl, const NodeLowering& nl, ExprEmitter& ex,
                Writer& w) {
  const ir::Primitive& e = g.node(nl.node);
  const ir::Primitive& r = g.node(kl.nodes[static_cast<size_t>(nl.fused_reduction)].node);
  size_t n = e.domain.size();
  const int64_t lanes = reduction_lanes(kl.schedule, r.reduce_domain.back()), extent = e.domain[n - 1], whole = extent - extent % lanes;
  std::string last = var("v", n - 1);
  ExprEmitter::Scope se = scope_of(e), sr{&r, {}, {last}, 0, ir::VarKind::Reduce, true};
  se.hoist = true;
  for (size_t d = 0; d < r.domain.size(); ++d) sr.dvars.push_back(d + 1 < n ? se.dvars[d] : "0LL");
  ir::ValueId ev = e.outputs[0];
  DType et = g.type(ev).dtype;
  w.line("// and primitive " + std::to_string(kl.nodes[static_cast<size_t>(nl.fused_reduction)].node.v) +
         ": reduce, along its rows");
  open_domain(nl, 0, n - 1, w);
  w.open("{");
  for (size_t k = 0; k < r.bodies.size(); ++k)
    declare_partials(r.reduce, g.type(r.outputs[k]).dtype, k, lanes, w);
  // One element: e's value, stored and folded into partial ln.
  std::vector<std::string> in_lanes{"const " + storage_type(et) + " ev = " + to_storage(et, ex.expr(e.bodies[0], se)) + ";",
                                    ex.element(ev, se.dvars) + " = ev;"};
  ex.bind(ev, to_compute(et, "ev"));
  for (size_t k = 0; k < r.bodies.size(); ++k)
    in_lanes.push_back(partial(k, "ln") + " = " +
                       combine(r.reduce, g.type(r.outputs[k]).dtype, partial(k, "ln"), ex.expr(r.bodies[k], sr), true) + ";");
  ex.unbind(ev);
  for (const std::string& h : ex.take_hoisted()) w.line(h);
  w.open("for (int64_t rb = 0; rb < " + std::to_string(whole) + "LL; rb += " + std::to_string(lanes) + "LL) {");
  emit_prefetches(g, kl, e, ex, se, ir::dvar(static_cast<int32_t>(n - 1)), "rb", lanes, w);
  open_lane_loop(last, lanes, "rb", lanes, w);
  for (const std::string& l : in_lanes) w.line(l);
  w.close();
  w.close();
  // The elements past the last whole chunk, as one more chunk into the first partials.
  if (whole < extent) {
    open_lane_loop(last, lanes, std::to_string(whole) + "LL", extent - whole, w);
    for (const std::string& l : in_lanes) w.line(l);
    w.close();
  }
  for (size_t k = 0; k < r.bodies.size(); ++k) {
    combine_partials(r.reduce, g.type(r.outputs[k]).dtype, k, lanes, w);
    w.line(store(g, ex, r.outputs[k], sr, partial(k, "0")));
  }
  w.close();
  close_n(n - 1, w);
}

}  // namespace orchid::codegen::cpu::detail
