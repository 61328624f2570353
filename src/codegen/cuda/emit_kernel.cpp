// The CUDA kernel function: parameters, the block's scratch (shared or global memory), the
// task header shared with the CPU generator, per computed primitive a loop of the block's
// threads over the elements of its region, and the copies of tiles computed in scratch to the
// outputs.
#include <algorithm>
#include <climits>
#include <functional>
#include <optional>

#include "codegen/cpu/emit.h"
#include "codegen/cpu/emit_reduce.h"
#include "codegen/cpu/lower.h"
#include "codegen/cuda/codegen.h"
#include "codegen/cuda/prelude.h"
#include "orchid/cuda_abi.h"
#include "support/error.h"

namespace orchid::codegen::cuda {

using cpu::KernelLowering;
using cpu::NodeLowering;
using cpu::detail::ExprEmitter;
using cpu::detail::Writer;
using ir::DType;
using ir::ValueId;

namespace {

// The order in which a block's consecutive threads walk a region's dims, slowest first:
// row-major (consecutive threads on consecutive elements of the innermost dim, whose loads and
// stores are then contiguous), except for a transposing layout primitive (lower.h,
// transposing_dim), whose threads walk the dim it reads along fastest: its loads are
// contiguous, and a tile square in the two dims writes whole lines of the output.
std::vector<size_t> walk_order(const NodeLowering& nl, size_t rank) {
  std::vector<size_t> order;
  for (size_t d = 0; d < rank; ++d)
    if (static_cast<int>(d) != nl.transpose_dim) order.push_back(d);
  if (nl.transpose_dim >= 0) order.push_back(static_cast<size_t>(nl.transpose_dim));
  return order;
}

// A region the block's threads walk: the largest extent per dim over the tasks (`box`), the
// variables holding its bounds in the task, and the dims where some task's region is smaller
// (elements past its bound are skipped there).
struct Span {
  ir::Dims box;
  std::vector<std::string> lo, hi;
  std::vector<bool> check;
};

// A computed node's region (lowering: NodeLowering::most and uniform).
Span node_span(const NodeLowering& nl) {
  Span sp;
  sp.box = nl.most;
  for (size_t d = 0; d < nl.most.size(); ++d) {
    sp.lo.push_back(cpu::detail::region_lo(nl.node, d));
    sp.hi.push_back(cpu::detail::region_hi(nl.node, d));
    sp.check.push_back(!nl.uniform[d]);
  }
  return sp;
}

std::vector<size_t> all_dims(size_t rank) {
  std::vector<size_t> order(rank);
  for (size_t d = 0; d < rank; ++d) order[d] = d;
  return order;
}

// v<d> = lo<d> + the index along dim d of element `i` of the box restricted to the dims of
// `order` (walked slowest first; divisions by constants); and the condition under which that
// element lies outside the task's region ("" where it never can).
std::string decode_element(const Span& sp, const std::vector<size_t>& order, const std::string& i,
                           const std::string& int_type, Writer& w) {
  if (!order.empty()) w.line(int_type + " rest = " + i + ";");
  std::string outside;
  for (size_t j = order.size(); j-- > 0;) {
    size_t d = order[j];
    std::string v = "v" + std::to_string(d), e = std::to_string(sp.box[d]);
    w.line("const int64_t " + v + " = " + sp.lo[d] + " + " + (j == 0 ? "rest" : "rest % " + e) + ";");
    if (j > 0) w.line("rest /= " + e + ";");
    if (sp.check[d]) outside = v + " >= " + sp.hi[d] + (outside.empty() ? "" : " || " + outside);
  }
  return outside;
}

// A loop of the block's threads over `count` items (elements of a region, terms of a
// reduction): item `var` = `first` + k * `stride`, for k from 0. Where there are at most
// `unroll` items per thread, the loop runs over k with a count known at compile time and is
// unrolled whole, so that the compiler can issue every load a thread makes before the first
// is used; a longer loop is strided and unrolled `unroll` times. Items past `count` are skipped
// (`continue` skips one item in either form).
void open_strided(const std::string& var, const std::string& type, const std::string& first, int64_t count,
                  int64_t stride, int unroll, Writer& w) {
  const int64_t per = (count + stride - 1) / stride;
  if (unroll > 1 && per <= unroll) {
    w.line("#pragma unroll");
    w.open("for (int k = 0; k < " + std::to_string(per) + "; ++k) {");
    w.line("const " + type + " " + var + " = " + first + " + (" + type + ")k * " + std::to_string(stride) + ";");
    if (count % stride != 0) w.line("if (" + var + " >= " + std::to_string(count) + ") continue;");
    return;
  }
  w.line("#pragma unroll " + std::to_string(std::max(unroll, 1)));
  w.open("for (" + type + " " + var + " = " + first + "; " + var + " < " + std::to_string(count) + "; " + var +
         " += " + std::to_string(stride) + ") {");
}

// The loop of the block's threads over the elements of a region (open_strided), the element
// decoded, those outside the region skipped.
void open_threads(const Span& sp, const std::vector<size_t>& order, const Schedule& s, Writer& w) {
  int64_t volume = ir::numel(sp.box);
  std::string it = volume <= INT_MAX - 1024 ? "int" : "int64_t";  // i + threads must not overflow
  open_strided("i", it, "(" + it + ")threadIdx.x", volume, s.threads, s.unroll, w);
  std::string outside = decode_element(sp, order, "i", it, w);
  if (!outside.empty()) w.line("if (" + outside + ") continue;");
}

// The partial results of a reduction's element (element_code's accumulators) and how one
// thread merges another's into its own: by the combiner for sum, prod, max and min; by Chan's
// formula for Welford's (count, mean, sum of squared deviations); by rescaling to the larger
// maximum for max-sum. Empty for combiners whose partials are not merged (argmax, argmin:
// ties must keep the first term in iteration order).
struct Partials {
  std::vector<std::string> types, names;
  std::function<std::vector<std::string>(const std::vector<std::string>& other)> merge;
};

Partials partials_of(const ir::Graph& g, const ir::Primitive& p) {
  Partials pt;
  DType t = g.type(p.outputs[0]).dtype;
  std::string ct = cpu::detail::compute_type(t);
  if (cpu::detail::simple(p.reduce)) {
    for (size_t k = 0; k < p.bodies.size(); ++k) {
      pt.types.push_back(cpu::detail::compute_type(g.type(p.outputs[k]).dtype));
      pt.names.push_back("acc" + std::to_string(k));
    }
    pt.merge = [&g, &p](const std::vector<std::string>& o) {
      std::vector<std::string> lines;
      for (size_t k = 0; k < o.size(); ++k) {
        std::string acc = "acc" + std::to_string(k);
        lines.push_back(acc + " = " + cpu::detail::combine(p.reduce, g.type(p.outputs[k]).dtype, acc, o[k]) + ";");
      }
      return lines;
    };
  } else if (p.reduce == ir::ReduceOp::Welford) {
    pt.types = {"int64_t", ct, ct};
    pt.names = {"n", "mean", "m2"};
    pt.merge = [ct](const std::vector<std::string>& o) {
      return std::vector<std::string>{
          "if (" + o[0] + " > 0 && n == 0) { n = " + o[0] + "; mean = " + o[1] + "; m2 = " + o[2] + "; }",
          "else if (" + o[0] + " > 0) { const int64_t nt = n + " + o[0] + "; const " + ct + " dm = " + o[1] +
              " - mean; mean += dm * ((" + ct + ")" + o[0] + " / (" + ct + ")nt); m2 += " + o[2] + " + dm * dm * ((" +
              ct + ")n * (" + ct + ")" + o[0] + " / (" + ct + ")nt); n = nt; }"};
    };
  } else if (p.reduce == ir::ReduceOp::MaxSum) {
    pt.types = {ct, ct};
    pt.names = {"m", "sum"};
    std::string e = ct == "float" ? "orc_expf" : "__builtin_exp";
    std::string inf = ct == "float" ? "__builtin_inff()" : "__builtin_inf()";
    pt.merge = [e, inf](const std::vector<std::string>& o) {
      return std::vector<std::string>{"if (" + o[0] + " != " + o[0] + ") { m = " + o[0] + "; sum = " + o[1] + "; }",
                                      "else if (m != m || " + o[0] + " == -" + inf + ") { }",
                                      "else if (" + o[0] + " > m) { sum = sum * " + e + "(m - " + o[0] + ") + " + o[1] +
                                          "; m = " + o[0] + "; }",
                                      "else { sum += " + o[1] + " * " + e + "(" + o[0] + " - m); }"};
    };
  }
  return pt;
}

// Threads that compute one element of a reduction together: the block's threads over the
// region's largest volume, rounded down to a power of two and to no more than the terms
// (rounded up to one); 1 where the reduction is computed by one thread per element (partials
// that are not merged, or too many elements).
int group_size(const ir::Graph& g, const ir::Primitive& p, int64_t volume, int threads) {
  if (partials_of(g, p).names.empty() || volume <= 0) return 1;
  int64_t terms = ir::numel(p.reduce_domain), gsize = 1;
  while (gsize * 2 * volume <= threads && gsize < terms) gsize *= 2;
  return static_cast<int>(gsize);
}

// The reduction variables r0, r1, .. of p's term number `flat` (row-major, r0 outermost).
void emit_reduce_vars(const ir::Primitive& p, const std::string& flat, Writer& w) {
  w.line("int64_t rterm = " + flat + ";");
  for (size_t d = p.reduce_domain.size(); d-- > 0;) {
    std::string e = std::to_string(p.reduce_domain[d]);
    w.line("const int64_t r" + std::to_string(d) + " = " + (d == 0 ? "rterm" : "rterm % " + e) + ";");
    if (d > 0) w.line("rterm /= " + e + ";");
  }
}

// A shuffle of value `x` of C type `ct` from the lane `offset` away (bool through int).
std::string shuffled(const std::string& ct, const std::string& x, const std::string& offset) {
  if (ct == "bool") return "(bool)__shfl_xor_sync(mask, (int)" + x + ", " + offset + ")";
  return "__shfl_xor_sync(mask, " + x + ", " + offset + ")";
}

// A thread's partial moments (Welford's n, mean, m2) of its `per` terms of a group
// reduction (terms lane, lane + gs, ...), all held in registers: their sum, then the mean,
// then the squared deviations from it. Two passes over registers instead of Welford's
// update, which divides once per term; the group's threads then merge as usual (Chan).
void emit_two_pass_moments(const ir::Graph& g, const ir::Primitive& p, int64_t per, const std::string& gs,
                           ExprEmitter& ex, const ExprEmitter::Scope& s, Writer& w) {
  std::string ct = cpu::detail::compute_type(g.type(p.outputs[0]).dtype), count = std::to_string(per);
  w.line(ct + " xs[" + count + "];");
  w.line("#pragma unroll");
  w.open("for (int k = 0; k < " + count + "; ++k) {");
  emit_reduce_vars(p, "(int64_t)lane + (int64_t)k * " + gs, w);
  w.line("xs[k] = " + ex.expr(p.bodies[0], s) + ";");
  w.close();
  w.line(ct + " total = 0;");
  w.line("#pragma unroll");
  w.line("for (int k = 0; k < " + count + "; ++k) total += xs[k];");
  w.line("n = " + count + ";");
  w.line("mean = total / (" + ct + ")" + count + ";");
  w.line("#pragma unroll");
  w.line("for (int k = 0; k < " + count + "; ++k) m2 += (xs[k] - mean) * (xs[k] - mean);");
}

// The merge of a group's partial results into its first thread's: warp shuffles, then, for
// groups wider than a warp, each warp's first thread's partials through shared memory
// (`shared`: an array of 32 per partial).
void emit_group_merge(const Partials& pt, int gsize, const std::vector<std::string>& shared, Writer& w) {
  w.open("for (int o = " + std::to_string(std::min(gsize, 32) / 2) + "; o > 0; o /= 2) {");
  std::vector<std::string> other;
  for (size_t k = 0; k < pt.names.size(); ++k) {
    other.push_back("other" + std::to_string(k));
    w.line("const " + pt.types[k] + " " + other[k] + " = " + shuffled(pt.types[k], pt.names[k], "o") + ";");
  }
  for (const std::string& l : pt.merge(other)) w.line(l);
  w.close();
  if (gsize <= 32) return;
  w.open("if (threadIdx.x % 32 == 0) {");
  for (size_t k = 0; k < pt.names.size(); ++k) w.line(shared[k] + "[threadIdx.x / 32] = " + pt.names[k] + ";");
  w.close();
  w.line("__syncthreads();");
  w.open("if (lane == 0) {");
  w.open("for (int q = 1; q < " + std::to_string(gsize / 32) + "; ++q) {");
  std::vector<std::string> from;
  for (size_t k = 0; k < pt.names.size(); ++k) from.push_back(shared[k] + "[threadIdx.x / 32 + q]");
  for (const std::string& l : pt.merge(from)) w.line(l);
  w.close();
  w.close();
  w.line("__syncthreads();");
}

// A reduction computed by groups of `gsize` threads per output element: each thread combines
// every gsize-th term (consecutive threads on consecutive terms), then the group merges its
// partial results by warp shuffles and, for groups wider than a warp, through shared memory;
// its first thread stores. The loop over elements runs alike in every thread of the block, so
// that the barriers inside it are reached by all.
void emit_group_reduction(const ir::Graph& g, const ir::Primitive& p, const NodeLowering& nl, const Span& sp,
                          int gsize, const Schedule& sched, ExprEmitter& ex, Writer& w) {
  int64_t volume = ir::numel(sp.box), groups = sched.threads / gsize, terms = ir::numel(p.reduce_domain);
  std::string gs = std::to_string(gsize);
  Partials pt = partials_of(g, p);
  w.open("{");
  w.line("const int lane = threadIdx.x % " + gs + ";");
  w.line(std::string("const unsigned mask = ") +
         (gsize >= 32 ? "0xffffffffu;" : "((1u << " + gs + ") - 1u) << (threadIdx.x % 32 / " + gs + " * " + gs + ");"));
  std::vector<std::string> shared;
  for (size_t k = 0; k < pt.names.size(); ++k) {
    shared.push_back("red" + std::to_string(nl.node.v) + "_" + std::to_string(k));
    if (gsize > 32) w.line("__shared__ " + pt.types[k] + " " + shared[k] + "[32];");
  }
  w.open("for (int base = 0; base < " + std::to_string(volume) + "; base += " + std::to_string(groups) + ") {");
  w.line("const int e = base + threadIdx.x / " + gs + ";");
  std::string outside = decode_element(sp, walk_order(nl, sp.box.size()), "e", "int", w);
  w.line("const bool live = e < " + std::to_string(volume) + (outside.empty() ? "" : " && !(" + outside + ")") + ";");
  ExprEmitter::Scope s = cpu::detail::scope_of(p);
  cpu::detail::ElementCode c = cpu::detail::element_code(g, p, ex, s);
  for (const std::string& d : c.decls) w.line(d);
  w.open("if (live) {");
  if (p.reduce == ir::ReduceOp::Welford && sched.unroll > 1 && terms % gsize == 0 && terms / gsize <= sched.unroll) {
    emit_two_pass_moments(g, p, terms / gsize, gs, ex, s, w);
  } else {
    open_strided("j", "int64_t", "(int64_t)lane", terms, gsize, sched.unroll, w);
    emit_reduce_vars(p, "j", w);
    for (const std::string& u : c.update) w.line(u);
    w.close();
  }
  w.close();
  emit_group_merge(pt, gsize, shared, w);
  w.open("if (lane == 0 && live) {");
  for (const std::string& st : c.stores) w.line(st);
  w.close();
  w.close();
  w.close();
}

// Bytes of a value of a C compute type (codegen/cpu/emit.h, compute_type).
int64_t compute_bytes(const std::string& ct) {
  if (ct == "bool") return 1;
  if (ct == "float") return 4;
  return 8;  // double, int64_t, uint64_t
}

// The shared memory a kernel may declare itself (tiles of products and transposes, partial
// results of group reductions), of the 48 KiB a block has without opting in to more: a
// primitive whose shared arrays would go past it is computed without them.
constexpr int64_t kStaticSharedBudget = 32 * 1024;

// The largest tile a transposing layout primitive is staged through in shared memory.
constexpr int64_t kStagedTransposeBytes = 8 * 1024;

// Row-major strides of a box whose last dim is padded by one element: a warp walking any
// other dim then touches 32 different banks.
ir::Dims padded_strides(const ir::Dims& box) {
  ir::Dims st(box.size(), 1);
  for (size_t d = box.size(); d-- > 1;) st[d - 1] = st[d] * (box[d] + (d + 1 == box.size() ? 1 : 0));
  return st;
}

// A transposing layout primitive computed through a tile in shared memory: the block's threads
// compute the elements walking the dim the primitive reads along (contiguous loads) into the
// tile, then store them walking the output's rows (contiguous stores).
void emit_staged_transpose(const ir::Graph& g, const ir::Primitive& p, const NodeLowering& nl, const Span& sp,
                           const Schedule& sched, ExprEmitter& ex, Writer& w) {
  DType t = g.type(p.outputs[0]).dtype;
  ir::Dims st = padded_strides(sp.box);
  std::string tile = "tile" + std::to_string(nl.node.v), at = "0";
  for (size_t d = 0; d < st.size(); ++d) at += " + (v" + std::to_string(d) + " - " + sp.lo[d] + ") * " + std::to_string(st[d]);
  w.open("{");
  w.line("__shared__ " + cpu::detail::compute_type(t) + " " + tile + "[" + std::to_string(st[0] * sp.box[0]) + "];");
  ExprEmitter::Scope s = cpu::detail::scope_of(p);
  open_threads(sp, walk_order(nl, sp.box.size()), sched, w);
  w.line(tile + "[" + at + "] = " + ex.expr(p.bodies[0], s) + ";");
  w.close();
  w.line("__syncthreads();");
  open_threads(sp, all_dims(sp.box.size()), sched, w);
  w.line(cpu::detail::store(g, ex, p.outputs[0], s, tile + "[" + at + "]"));
  w.close();
  w.close();
}

// Whether a node is staged through shared memory (emit_staged_transpose), and how many bytes.
int64_t staged_bytes(const ir::Graph& g, const ir::Primitive& p, const NodeLowering& nl) {
  if (nl.transpose_dim < 0 || p.bodies.size() != 1 || nl.most.size() < 2) return 0;
  ir::Dims st = padded_strides(nl.most);
  int64_t bytes = st[0] * nl.most[0] * compute_bytes(cpu::detail::compute_type(g.type(p.outputs[0]).dtype));
  return bytes <= kStagedTransposeBytes ? bytes : 0;
}

// Terms of a tiled matrix product loaded into shared memory per step.
constexpr int64_t kGemmTerms = 16;

// How a task's region of a linear primitive is computed as a tiled matrix product: mt x nt
// outputs, `groups` strips of `per` rows, one column per thread; the staged blocks of A
// (kGemmTerms x (mt + 1), plus the strips) and B (kGemmTerms x nt) in shared memory.
struct GemmTiling {
  cpu::GemmFactors f;
  int64_t mt = 0, nt = 0, groups = 0, per = 0;
  int64_t a_size() const { return kGemmTerms * (mt + 1) + groups * per; }
  int64_t b_size() const { return kGemmTerms * nt; }
  int64_t bytes() const { return 4 * (a_size() + b_size()); }
};

// Whether a linear primitive is computed as a tiled matrix product (emit_tiled_gemm): it has
// GEMM factors (codegen/cpu/lower.h: an f32 matmul or implicit-GEMM conv), a region of at
// least 8 rows and 4 columns (thinner products run faster as reductions), no more columns
// than the block has threads, at most 64 rows per thread (accumulators in registers) and
// staged blocks of at most 16 KiB.
std::optional<GemmTiling> tiled_gemm(const ir::Graph& g, const ir::Primitive& p, const ir::Dims& box, int threads) {
  std::optional<cpu::GemmFactors> f = cpu::gemm_factors(g, p);
  if (!f) return std::nullopt;
  GemmTiling t{*f, box[f->m], box[f->n]};
  if (t.mt < 8 || t.nt < 4 || t.nt > threads) return std::nullopt;
  t.groups = threads / t.nt;
  t.per = (t.mt + t.groups - 1) / t.groups;
  if (t.per > 64 || t.bytes() > 16 * 1024) return std::nullopt;
  return t;
}

// A linear primitive as a tiled matrix product: for each index of its other dims (batch and
// middle dims) in the task, blocks of kGemmTerms terms of its A factor (rows x terms) and B
// factor (terms x columns) are evaluated into shared memory by the block (consecutive threads
// on consecutive terms of A and columns of B, so that row-major operands load contiguously),
// and each thread accumulates a strip of rows of one column in registers. The factors are
// expressions: transposes, broadcasts, a conv's window and padding, inlined producers.
void emit_tiled_gemm(const ir::Graph& g, const ir::Primitive& p, const NodeLowering& nl, const GemmTiling& t,
                     const Span& sp, const Schedule& sched, ExprEmitter& ex, Writer& w, int64_t* static_shared) {
  const std::vector<std::string>& lo = sp.lo;
  const std::vector<std::string>& hi = sp.hi;
  const cpu::GemmFactors& f = t.f;
  const int64_t mt = t.mt, nt = t.nt, groups = t.groups, per = t.per;
  const int64_t terms = ir::numel(p.reduce_domain), kc = kGemmTerms, lda = mt + 1;
  std::string id = std::to_string(nl.node.v), as = "ga" + id, bs = "gb" + id;
  std::string m = std::to_string(f.m), n = std::to_string(f.n);
  std::vector<size_t> outer;  // the batch and middle dims, one index per pass
  int64_t passes = 1;
  for (size_t d = 0; d < sp.box.size(); ++d)
    if (d != f.m && d != f.n) outer.push_back(d), passes *= sp.box[d];
  int64_t a_size = t.a_size(), b_size = t.b_size();
  *static_shared += t.bytes();
  w.open("{");
  w.line("__shared__ float " + as + "[" + std::to_string(a_size) + "];");
  w.line("__shared__ float " + bs + "[" + std::to_string(b_size) + "];");
  w.line("const int tcol = threadIdx.x % " + std::to_string(nt) + ", tgrp = threadIdx.x / " + std::to_string(nt) + ";");
  w.open("for (int q = 0; q < " + std::to_string(passes) + "; ++q) {");
  std::string skip = decode_element(sp, outer, "q", "int", w);
  if (!skip.empty()) w.line("if (" + skip + ") continue;");
  w.line("float acc[" + std::to_string(per) + "] = {};");
  ExprEmitter::Scope s = cpu::detail::scope_of(p);
  auto factor_scope = [&](size_t var_dim, const std::string& var, size_t unused_dim) {
    ExprEmitter::Scope fs = s;
    fs.dvars[var_dim] = var;
    fs.dvars[unused_dim] = "0";
    return fs;
  };
  w.open("for (int64_t k0 = 0; k0 < " + std::to_string(terms) + "LL; k0 += " + std::to_string(kc) + ") {");
  // A block of one factor into shared memory: element e of `count` is (kk, index) or
  // (index, kk) as `terms_first` says, the index along `dim` from its region's low bound.
  auto load_factor = [&](const ir::Expr& factor, size_t dim, size_t unused, int64_t extent, bool terms_first,
                         const std::string& to) {
    std::string ext = std::to_string(extent), k = std::to_string(kc);
    open_strided("e", "int", "(int)threadIdx.x", extent * kc, sched.threads, sched.unroll, w);
    w.line(terms_first ? "const int kk = e / " + ext + ", at = e % " + ext + ";"
                       : "const int at = e / " + k + ", kk = e % " + k + ";");
    w.line("const int64_t vx = " + lo[dim] + " + at, term = k0 + kk;");
    w.line("float x = 0.0f;");
    w.open("if (vx < " + hi[dim] + " && term < " + std::to_string(terms) + "LL) {");
    emit_reduce_vars(p, "term", w);
    w.line("x = " + ex.expr(factor, factor_scope(dim, "vx", unused)) + ";");
    w.close();
    w.line(to + " = x;");
    w.close();
  };
  load_factor(f.a, f.m, f.n, mt, false, as + "[kk * " + std::to_string(lda) + " + at]");
  load_factor(f.b, f.n, f.m, nt, true, bs + "[e]");
  w.line("__syncthreads();");
  w.open("if (tgrp < " + std::to_string(groups) + ") {");
  w.line("#pragma unroll");
  w.open("for (int kk = 0; kk < " + std::to_string(kc) + "; ++kk) {");
  w.line("const float b = " + bs + "[kk * " + std::to_string(nt) + " + tcol];");
  w.line("#pragma unroll");
  w.line("for (int j = 0; j < " + std::to_string(per) + "; ++j) acc[j] += " + as + "[kk * " + std::to_string(lda) +
         " + tgrp * " + std::to_string(per) + " + j] * b;");
  w.close();
  w.close();
  w.line("__syncthreads();");
  w.close();
  w.open("if (tgrp < " + std::to_string(groups) + ") {");
  w.line("#pragma unroll");
  w.open("for (int j = 0; j < " + std::to_string(per) + "; ++j) {");
  w.line("const int row = tgrp * " + std::to_string(per) + " + j;");
  w.line("const int64_t v" + m + " = " + lo[f.m] + " + row, v" + n + " = " + lo[f.n] + " + tcol;");
  w.line("if (row < " + std::to_string(mt) + " && v" + m + " < " + hi[f.m] + " && v" + n + " < " + hi[f.n] + ") " +
         cpu::detail::store(g, ex, p.outputs[0], s, "acc[j]"));
  w.close();
  w.close();
  w.close();
  w.close();
}

// One computed primitive's code; `static_shared` grows by the shared memory it declares.
void emit_block_loop(const ir::Graph& g, const NodeLowering& nl, const Schedule& sched,
                     ExprEmitter& ex, Writer& w, int64_t* static_shared) {
  const int threads = sched.threads;
  const ir::Primitive& p = g.node(nl.node);
  w.line("// primitive " + std::to_string(nl.node.v) + ": " + std::string(ir::prim_op_name(p.op)));
  Span sp = node_span(nl);
  auto fits = [&](int64_t bytes) { return *static_shared + bytes <= kStaticSharedBudget; };
  std::optional<GemmTiling> tiling = tiled_gemm(g, p, nl.most, threads);
  if (tiling && fits(tiling->bytes())) {
    emit_tiled_gemm(g, p, nl, *tiling, sp, sched, ex, w, static_shared);
    w.line("__syncthreads();");
    return;
  }
  int gsize = p.reduce == ir::ReduceOp::None ? 1 : group_size(g, p, ir::numel(nl.most), threads);
  int64_t partial_bytes = 32 * 8 * static_cast<int64_t>(partials_of(g, p).names.size());
  if (gsize > 32 && !fits(partial_bytes)) gsize = 32;  // merged by shuffles alone
  if (gsize > 1) {
    emit_group_reduction(g, p, nl, sp, gsize, sched, ex, w);
    w.line("__syncthreads();");
    if (gsize > 32) *static_shared += partial_bytes;
    return;
  }
  int64_t staged = p.reduce == ir::ReduceOp::None ? staged_bytes(g, p, nl) : 0;
  if (staged > 0 && fits(staged)) {
    emit_staged_transpose(g, p, nl, sp, sched, ex, w);
    w.line("__syncthreads();");
    *static_shared += staged;
    return;
  }
  open_threads(sp, walk_order(nl, sp.box.size()), sched, w);
  ExprEmitter::Scope s = cpu::detail::scope_of(p);
  if (p.reduce == ir::ReduceOp::None) {
    for (size_t k = 0; k < p.bodies.size(); ++k)
      w.line(cpu::detail::store(g, ex, p.outputs[k], s, ex.expr(p.bodies[k], s)));
  } else {
    cpu::detail::ElementCode c = cpu::detail::element_code(g, p, ex, s);
    for (const std::string& d : c.decls) w.line(d);
    cpu::detail::open_reduce(p, w);
    for (const std::string& u : c.update) w.line(u);
    cpu::detail::close_n(p.reduce_domain.size(), w);
    for (const std::string& st : c.stores) w.line(st);
  }
  w.close();
  w.line("__syncthreads();");
}

// Copies the task's tile (`sub`: the sub-tile's) of an output computed in scratch to the
// output buffer.
void emit_copy_out(const ir::Graph& g, const KernelLowering& kl, const Schedule& sched, ExprEmitter& ex, ValueId v,
                   Writer& w, bool sub) {
  const ir::Dims& shape = g.type(v).shape;
  size_t o = std::find(kl.outputs.begin(), kl.outputs.end(), v) - kl.outputs.begin();
  const cpu::OutputTiling& tl = sub ? kl.inner->tilings[o] : kl.tilings[o];
  w.open(shape.empty() ? (sub ? "if (ti == 0) {" : "if (t == 0) {") : "{");
  cpu::detail::emit_tile_bounds(g, kl, v, w, sub);
  std::string owner = cpu::detail::tile_owner(g, kl, v, sub);
  w.open(owner.empty() ? "{" : "if (" + owner + ") {");
  Span tile;  // the output's tile (emit_tile_bounds: c<j>_lo, c<j>_hi)
  std::vector<std::string> idx;
  for (size_t j = 0; j < shape.size(); ++j) {
    bool tiled = tl.align[j] >= 0;
    tile.box.push_back(tiled ? std::min(tl.tile[j], shape[j]) : shape[j]);
    tile.check.push_back(tiled && shape[j] % tile.box.back() != 0);
    tile.lo.push_back("c" + std::to_string(j) + "_lo");
    tile.hi.push_back("c" + std::to_string(j) + "_hi");
    idx.push_back("v" + std::to_string(j));
  }
  open_threads(tile, all_dims(shape.size()), sched, w);
  w.line(cpu::detail::output_element(g, kl, v, idx) + " = " + ex.element(v, idx) + ";");
  w.close();
  w.close();
  w.close();
}

// Whether a node of the kernel reads value v.
bool read_in_kernel(const ir::Graph& g, const tile::Kernel& k, ValueId v) {
  for (ir::NodeId n : k.nodes)
    for (ValueId in : g.node(n).inputs)
      if (in == v) return true;
  return false;
}

// The kernel's parameters. Inputs are `const __restrict__` (read only: loads may go through
// the read-only cache). An output is `__restrict__` only where no node of the kernel reads
// it: a value one thread stores and others load after a barrier must not be restrict, for
// the compiler may then move the loads above the barrier (the barrier takes no pointer, so
// alias analysis holds it unable to write restrict memory). Scratch (emit_scratch) is never.
void emit_parameters(const ir::Graph& g, const tile::Kernel& k, const KernelLowering& kl, const std::string& symbol,
                     int threads, Writer& w) {
  std::string params;
  for (size_t i = 0; i < kl.inputs.size() + kl.outputs.size(); ++i) {
    bool in = i < kl.inputs.size();
    ValueId v = in ? kl.inputs[i] : kl.outputs[i - kl.inputs.size()];
    bool restrict = in || !read_in_kernel(g, k, v);
    params += std::string(in ? "const " : "") + cpu::detail::storage_type(g.type(v).dtype) +
              (restrict ? "* __restrict__ " : "* ") + cpu::detail::arg_name(static_cast<int>(i)) + ", ";
  }
  w.open("extern \"C\" __global__ void __launch_bounds__(" + std::to_string(threads) + ") " + symbol + "(" + params +
         "int64_t* err, char* global_scratch) {");
}

// The kernel's scratch (lowering: ValueHome::scratch_offset) from byte `shared_from` on lives
// in the block's shared memory, the bytes before it in global memory, one area per block.
void emit_scratch(const ir::Graph& g, const KernelLowering& kl, int64_t shared_from, Writer& w) {
  if (shared_from < kl.scratch_bytes) w.line("extern __shared__ __align__(16) char orc_shared[];");
  if (shared_from > 0)
    w.line("char* const scratch = global_scratch + (int64_t)blockIdx.x * " + std::to_string(shared_from) + "LL;");
  for (const NodeLowering& nl : kl.nodes)
    for (const auto& [v, h] : nl.homes)
      if (!h.global) {
        std::string t = cpu::detail::storage_type(g.type(v).dtype);
        bool shared = h.scratch_offset >= shared_from;
        int64_t at = shared ? h.scratch_offset - shared_from : h.scratch_offset;
        w.line(t + "* const " + cpu::detail::scratch_name(v) + " = (" + t + "*)(" +
               (shared ? "orc_shared" : "scratch") + " + " + std::to_string(at) + ");");
      }
}

// The computed primitives of one level (the task's, or the inner loop's), then the copies of
// that level's outputs computed in scratch; an inner level ends at a barrier, for the next
// sub-tile overwrites the scratch its copies read. The task's copies need none: the inner loop
// reads those values from their scratch, never from the output the copies write.
void emit_level(const ir::Graph& g, const KernelLowering& kl, const Schedule& s, ExprEmitter& ex, Writer& w,
                int64_t* static_shared, bool sub) {
  for (const NodeLowering& nl : kl.nodes)
    if (!nl.inlined && nl.inner == sub) emit_block_loop(g, nl, s, ex, w, static_shared);
  bool copies = false;
  for (const NodeLowering& nl : kl.nodes)
    if (nl.inner == sub)
      for (const auto& [v, h] : nl.homes)
        if (h.copy_out) emit_copy_out(g, kl, s, ex, v, w, sub), copies = true;
  if (sub && copies) w.line("__syncthreads();");
}

// Where the scratch goes (emit_scratch's `shared_from`): all of it in shared memory where it
// fits beside the shared arrays the code declares itself; else, for a two-level kernel, the
// inner loop's part where that fits; else none.
int64_t shared_from(const KernelLowering& kl, int64_t static_shared) {
  if (kl.scratch_bytes + static_shared <= kSharedBytes) return 0;
  if (kl.inner && kl.scratch_bytes - kl.inner_scratch + static_shared <= kSharedBytes) return kl.inner_scratch;
  return kl.scratch_bytes;
}

}  // namespace

CudaKernel generate_kernel(const ir::Graph& g, const tile::Kernel& k, const Schedule& s, const std::string& symbol) {
  ORCHID_CHECK(s.threads >= 32 && s.threads <= 1024 && s.threads % 32 == 0) << "threads per block: " << s.threads;
  ORCHID_CHECK(s.unroll >= 1 && s.unroll <= 64) << "unrolled items per thread: " << s.unroll;
  KernelLowering kl = cpu::lower_kernel(g, k, lowering_schedule(s));
  ORCHID_CHECK(kl.tasks <= INT_MAX) << "more tasks than a grid has blocks: " << kl.tasks;
  CudaKernel ck;
  ck.symbol = symbol;
  ck.blocks = kl.tasks;
  ck.threads = s.threads;
  ck.inputs = kl.inputs;
  ck.outputs = kl.outputs;
  ck.arg_bytes = kl.arg_bytes(g);
  ck.schedule = s;
  Writer w;
  std::string table = symbol + "_tasks", sub_table = symbol + "_subtiles";
  if (kl.table_columns > 0) w.table(table, kl.table, "static __device__ const");
  if (kl.inner && kl.inner->table_columns > 0) w.table(sub_table, kl.inner->table, "static __device__ const");
  emit_parameters(g, k, kl, symbol, s.threads, w);
  if (kl.tasks > 0) {
    // The task's code first: what shared memory it declares decides where the scratch goes.
    // Every thread of the block walks the same sub-tiles (they depend on the task alone), so
    // the barriers inside the inner loop are reached by all.
    ExprEmitter ex(g, kl, ExprEmitter::Dialect::Cuda);
    Writer body;
    int64_t static_shared = 0;
    body.open("{");
    emit_level(g, kl, s, ex, body, &static_shared, false);
    if (kl.inner) {
      int loops = cpu::detail::open_inner_loop(kl, sub_table, body);
      emit_level(g, kl, s, ex, body, &static_shared, true);
      for (int i = 0; i < loops; ++i) body.close();
    }
    body.close();
    int64_t from = shared_from(kl, static_shared);
    ck.shared_bytes = kl.scratch_bytes - from;
    ck.global_scratch_bytes = from;
    emit_scratch(g, kl, from, w);
    w.line("const int64_t t = blockIdx.x;");
    cpu::detail::emit_task_header(kl, table, w);
    w.text_block(body.text());
    ck.checks = ex.checks();
  }
  w.close();
  ck.source = w.text();
  return ck;
}

std::string module_source(const std::vector<CudaKernel>& kernels) {
  std::string out = "// Generated by Orchid (CUDA codegen version " + std::to_string(kCudaCodegenVersion) + ").\n";
  out += prelude_source();
  for (const CudaKernel& k : kernels) out += "\n" + k.source;
  // The launch each kernel was generated for (cuda_abi.h).
  out += "\nextern \"C\" __device__ const long long " + std::string(ORCHID_CUDA_MODULE_DESCRIPTOR) + "[] = {" +
         std::to_string(kernels.size()) + "LL";
  for (const CudaKernel& k : kernels)
    out += ", " + std::to_string(k.inputs.size() + k.outputs.size()) + "LL, " + std::to_string(k.blocks) + "LL, " +
           std::to_string(k.threads) + "LL, " + std::to_string(k.shared_bytes) + "LL, " +
           std::to_string(k.global_scratch_bytes) + "LL";
  for (const CudaKernel& k : kernels)
    for (int64_t b : k.arg_bytes) out += ", " + std::to_string(b) + "LL";
  out += "};\n";
  return out;
}

}  // namespace orchid::codegen::cuda
