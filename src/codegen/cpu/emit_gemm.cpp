// An f32 matmul or conv by the packed GEMM micro-kernel (gemm.inc; NodeLowering::gemm). Per
// task and batch index, for each block of kc terms: the A region [m0, m1) x block is packed
// into panels of kc x 6, and for each middle index (a conv's output row) the B region block x
// [n0, n1) into panels of kc x 16, 32 columns at a time just before they are used (all at
// once in a tile of few rows), each element evaluated from its factor of the body (so a
// transpose, a broadcast, a conv's window and zero border or an inlined producer is applied
// while packing — the prologue; constant weights stored as panels already are read where
// they are), then orc_gemm_panels accumulates that middle index's tile in scratch. A conv's
// B over a stride-1 window is instead read where it lies (NodeLowering::gemm_q): a table of
// pointers to its rows of 16 columns, only rows at an edge or border packed into the B
// panels, and orc_gemm_rows reads through it. A conv's
// terms (input channel, kernel offsets) are one flattened k. The tiles are the primitive's
// home or are finally stored there, where the kernel's elementwise primitives after it (the
// epilogue) read them like any computed value; on the last block of terms, the sums go to
// the output itself (output_tile_eligible), or to an elementwise primitive that the
// micro-kernel computes from its registers (NodeLowering::gemm_epilogue, emit_epilogue).
#include <algorithm>

#include "codegen/cpu/emit_reduce.h"
#include "support/error.h"

namespace orchid::codegen::cpu::detail {

namespace {

// One operand's packing: `factor` evaluated with domain variable `lane_dim` running across a
// panel of `width` lanes and the term k along it (the reduction variables decoded from k).
struct Pack {
  ir::Expr factor;
  size_t lane_dim = 0;
  int64_t width = 0;
  std::string panel;   // the C pointer to the panels
  std::string lo, hi;  // the region's bounds along lane_dim
};

// Whether the factor reads memory contiguously along k: some load's last index is the last
// reduction variable (`last`), the fastest to change as k runs.
bool contiguous_along_k(const ir::Expr& factor, int32_t last_term) {
  bool along = false;
  ir::visit_post(factor, [&](const ir::Expr& e) {
    if (e.op() != ir::ExprOp::Load) return;
    size_t rank = e.num_args() - (e->predicated ? 1 : 0);
    if (rank == 0) return;
    const ir::Expr& last = e.arg(rank - 1);
    along |= last.op() == ir::ExprOp::Var && last->var_kind == ir::VarKind::Reduce && last->index == last_term;
  });
  return along;
}

// Panels whose factor reads along k, through the stage (gemm_st, NodeLowering::gemm_stage):
// per panel, each lane's terms (A's rows, B's columns) are evaluated into the stage,
// contiguous along k (vector loops), the lanes past the edge zeroed, and orc_gemm_pack6 (A)
// or orc_gemm_pack16 (B) interleaves them into the panel.
void emit_staged_pack(const Pack& pk, const std::string& factor, Writer& w) {
  std::string width = std::to_string(pk.width) + "LL";
  w.open("for (int64_t gemm_b = 0; gemm_b < gemm_blocks; ++gemm_b) {");
  w.line("const int64_t gemm_rows = orc_min64(" + width + ", gemm_ext - gemm_b * " + width + ");");
  w.open("for (int64_t gemm_l = 0; gemm_l < gemm_rows; ++gemm_l) {");
  w.line("const int64_t gemm_x = " + pk.lo + " + gemm_b * " + width + " + gemm_l;");
  w.line("#pragma omp simd");
  w.open("for (int64_t gemm_k = gemm_k0; gemm_k < gemm_k0 + gemm_kc; ++gemm_k) {");
  w.line("gemm_st[gemm_l * gemm_kc + (gemm_k - gemm_k0)] = " + factor + ";");
  close_n(2, w);
  w.line("for (int64_t i = gemm_rows * gemm_kc; i < " + width + " * gemm_kc; ++i) gemm_st[i] = 0.0f;");
  w.line("orc_gemm_pack" + std::to_string(pk.width) + "(gemm_st, gemm_kc, " + pk.panel + " + gemm_b * gemm_kc * " + width +
         ");");
  w.close();
}

// Fills the panels of one operand for the block of terms [gemm_k0, gemm_k0 + gemm_kc). Where
// the factor reads along k, through the stage (emit_staged_pack). Else the loop across a panel
// is innermost, over all its lanes, those past the edge storing zero without evaluating the
// factor: the loop has a constant trip count, and its loads, affine in the lane, compile to
// whole (masked) vectors.
void emit_pack(const Pack& pk, ExprEmitter& ex, ExprEmitter::Scope s, Writer& w) {
  std::string width = std::to_string(pk.width) + "LL";
  w.open("{");
  w.line("const int64_t gemm_ext = " + pk.hi + " - " + pk.lo + ", gemm_blocks = (gemm_ext + " + width + " - 1) / " +
         width + ";");
  s.dvars[pk.lane_dim] = "gemm_x";
  auto last_term = static_cast<int32_t>(s.rvars.size()) - 1;
  bool k_inner = contiguous_along_k(pk.factor, last_term);
  s.inner = k_inner ? last_term : static_cast<int32_t>(pk.lane_dim);
  s.inner_kind = k_inner ? ir::VarKind::Reduce : ir::VarKind::Domain;
  if (k_inner) {
    ORCHID_CHECK(pk.width == kGemmMr || pk.width == kGemmNr) << "no interleaving for panels of " << pk.width;
    emit_staged_pack(pk, ex.expr(pk.factor, s), w);
    w.close();
    return;
  }
  w.open("for (int64_t gemm_k = gemm_k0; gemm_k < gemm_k0 + gemm_kc; ++gemm_k) {");
  w.open("for (int64_t gemm_b = 0; gemm_b < gemm_blocks; ++gemm_b) {");
  w.line("#pragma omp simd");
  w.open("for (int64_t gemm_l = 0; gemm_l < " + width + "; ++gemm_l) {");
  w.line("const int64_t gemm_i = gemm_b * " + width + " + gemm_l, gemm_x = " + pk.lo + " + gemm_i;");
  w.line(pk.panel + "[gemm_b * gemm_kc * " + width + " + (gemm_k - gemm_k0) * " + width + " + gemm_l] = gemm_i < gemm_ext ? " +
         ex.expr(pk.factor, s) + " : 0.0f;");
  close_n(4, w);
}

// Whether the factor reads the terms as the trailing dims of a kernel argument, in order and
// whole: it is one unpredicated load of an argument whose last indices are r0, r1, .. and whose
// other indices mention no term (a conv's weights [co, ci, k1, ..]). Its flattened term is
// then the offset along those dims: the load's offset is that of r0 = .. = 0 and r_last = k.
bool reads_terms_flat(const ir::Graph& g, const KernelLowering& kl, const ir::Primitive& p, const ir::Expr& factor) {
  if (factor.op() != ir::ExprOp::Load || factor->predicated) return false;
  ir::ValueId v = p.inputs[static_cast<size_t>(factor->index)];
  const ir::Dims& shape = g.type(v).shape;
  size_t terms = p.reduce_domain.size(), rank = factor.num_args();
  if (kl.arg_of(v) < 0 || g.value(v).origin == ir::ValueOrigin::Node || rank < terms) return false;
  for (size_t d = 0; d < rank; ++d) {
    const ir::Expr& i = factor.arg(d);
    if (d + terms < rank) {
      bool mentions_term = false;
      ir::visit_post(i, [&](const ir::Expr& x) {
        mentions_term |= x.op() == ir::ExprOp::Var && x->var_kind == ir::VarKind::Reduce;
      });
      if (mentions_term) return false;
      continue;
    }
    size_t t = d + terms - rank;
    if (i.op() != ir::ExprOp::Var || i->var_kind != ir::VarKind::Reduce || i->index != static_cast<int32_t>(t) ||
        shape[d] != p.reduce_domain[t])
      return false;
  }
  return true;
}

// Fills the table of B's row pointers (NodeLowering::gemm_q) for the block of terms. Where the
// columns are whole blocks of 16 and every term's row is valid over all of them (the factor's
// predicate true at both ends), one pointer per term, to the first column (gemm_flat: block
// q reads 16 q floats further). Else one per block of 16 columns and term: a block wholly
// inside the region and the predicate points into the loaded value; another (at an edge or
// the border) is packed into its place in the panels, lanes past the edge zero, and points
// there.
void emit_b_rows(const ir::Graph& g, const ir::Primitive& p, const GemmFactors& f, ExprEmitter& ex,
                 ExprEmitter::Scope s, const std::string& n0, const std::string& n1, Writer& w) {
  const ir::Expr& load = f.b;
  ir::ValueId v = p.inputs[static_cast<size_t>(load->index)];
  size_t rank = g.type(v).shape.size();
  // The address of the load's element and its predicate (true without one) at column x.
  auto address = [&](const std::string& x) {
    s.dvars[f.n] = x;
    std::vector<std::string> idx;
    for (size_t d = 0; d < rank; ++d) idx.push_back(ex.expr(load.arg(d), s));
    return "&" + ex.element(v, idx);
  };
  auto valid = [&](const std::string& x) {
    s.dvars[f.n] = x;
    return load->predicated ? ex.expr(load.arg(rank), s) : std::string("1");
  };
  std::string k_loop = "for (int64_t gemm_k = gemm_k0; gemm_k < gemm_k0 + gemm_kc; ++gemm_k) {";
  w.line("int gemm_flat = (" + n1 + " - " + n0 + ") % 16 == 0;");
  w.open("{");
  w.line("const int64_t gemm_ext = " + n1 + " - " + n0 + ", gemm_blocks = (gemm_ext + 15) / 16;");
  w.open(k_loop);
  w.line("if (!gemm_flat) break;");
  w.line("gemm_flat = " + valid(n0) + " && " + valid("(" + n1 + " - 1)") + ";");
  w.line("gemm_bq[gemm_k - gemm_k0] = " + address(n0) + ";");
  w.close();
  w.open("if (!gemm_flat) " + k_loop);
  w.open("for (int64_t gemm_b = 0; gemm_b < gemm_blocks; ++gemm_b) {");
  w.line("const int64_t gemm_xa = " + n0 + " + gemm_b * 16, gemm_xb = gemm_xa + 15;");
  w.line("const int64_t gemm_row = gemm_b * gemm_kc + (gemm_k - gemm_k0);");
  std::string inside = "gemm_xb < " + n1 + " && " + valid("gemm_xa") + " && " + valid("gemm_xb");
  w.open("if (" + inside + ") {");
  w.line("gemm_bq[gemm_row] = " + address("gemm_xa") + ";");
  w.close();
  w.open("else {");
  s.dvars[f.n] = "gemm_x";
  s.inner = static_cast<int32_t>(f.n);
  s.inner_kind = ir::VarKind::Domain;
  w.line("#pragma omp simd");
  w.open("for (int64_t gemm_l = 0; gemm_l < 16; ++gemm_l) {");
  w.line("const int64_t gemm_i = gemm_b * 16 + gemm_l, gemm_x = " + n0 + " + gemm_i;");
  w.line("gemm_pb[gemm_row * 16 + gemm_l] = gemm_i < gemm_ext ? " + ex.expr(load, s) + " : 0.0f;");
  w.close();
  w.line("gemm_bq[gemm_row] = gemm_pb + gemm_row * 16;");
  w.close();
  close_n(3, w);
}

// The reduction variables as C expressions of the flattened term gemm_k (row-major over the
// reduction domain).
std::vector<std::string> decoded_terms(const ir::Dims& terms) {
  std::vector<std::string> r(terms.size());
  int64_t below = 1;
  for (size_t d = terms.size(); d-- > 0;) {
    std::string q = below == 1 ? "gemm_k" : "(gemm_k / " + std::to_string(below) + "LL)";
    r[d] = d == 0 ? q : "(" + q + " % " + std::to_string(terms[d]) + "LL)";
    below *= terms[d];
  }
  return r;
}

// Loops over the middle dims (GemmFactors) of the region, with gemm_ct the tile of the
// current middle index (they follow each other in the order of the loops).
void open_middle(const NodeLowering& nl, const GemmFactors& f, Writer& w) {
  w.open("{");
  w.line("int64_t gemm_t = 0;");
  open_domain(nl, f.m + 1, f.n, w);
  w.line("float* __restrict__ gemm_ct = gemm_c + gemm_t++ * " + std::to_string(nl.gemm_tile) + "LL;");
}

void close_middle(const GemmFactors& f, Writer& w) { close_n(f.n - f.m, w); }

// The bounds of a task's tile and the tile's row stride, as C expressions; and where the
// micro-kernel puts the last block of terms' sums (gemm_last): in the tile like the others, in
// the output itself where the task may (output_tile_eligible: gemm_in_output; with streaming
// stores where the kernel streams its outputs and the tile is aligned: gemm_nt), or through
// the epilogue (gemm_epi).
struct TileText {
  std::string m0, m1, n0, n1, ldc;
  bool in_output = false, epilogue = false, stream = false;
};

// A call of the micro-kernel, `head` its arguments up to the sums so far (the tile from
// column x on), for each sink the last block may take (the first whose condition holds),
// else the tile.
void emit_panels_call(const TileText& t, const std::string& head, const std::string& x, Writer& w) {
  ORCHID_CHECK(!(t.in_output && t.epilogue)) << "a matmul stored in its output has no epilogue to compute";
  std::string call = head + "gemm_k0 == 0, gemm_ct" + x + ", " + t.ldc + ", ";
  std::string out = "{gemm_out" + x + ", gemm_ldo, " + t.m1 + " - " + t.m0 + "}";
  std::vector<std::pair<std::string, std::string>> last;  // condition, sink
  if (t.stream) last.emplace_back("gemm_last && gemm_in_output && gemm_nt", "orc_gemm_stream" + out);
  if (t.in_output) last.emplace_back("gemm_last && gemm_in_output", "orc_gemm_tile" + out);
  if (t.epilogue) last.emplace_back("gemm_last", "orc_gemm_epilogue(gemm_epi, 0" + x + ", " + t.m1 + " - " + t.m0 + ")");
  std::string tile = "orc_gemm_tile{gemm_ct" + x + ", " + t.ldc + ", gemm_mp}";
  for (size_t i = 0; i < last.size(); ++i)
    w.line(std::string(i ? "else " : "") + "if (" + last[i].first + ") " + call + last[i].second + ");");
  w.line(std::string(last.empty() ? "" : "else ") + call + tile + ");");
}

// B for the block of terms, by where it lies, and the micro-kernel over it into gemm_ct:
// weights stored as panels read in place, a conv's rows through their pointer table, or
// panels packed now.
void emit_multiply(const ir::Graph& g, const NodeLowering& nl, const GemmFactors& f, ExprEmitter& ex,
                   const ExprEmitter::Scope& s, const TileText& t, Writer& w) {
  const ir::Primitive& p = g.node(nl.node);
  std::string nr = std::to_string(kGemmNr) + "LL";
  if (nl.gemm_b_panels >= 0) {
    // B is constant weights stored as panels of all K terms (runtime layout.h, panels16 or
    // panels16t: the same panels).
    std::string whole = std::to_string(ir::numel(p.reduce_domain) * kGemmNr) + "LL";
    emit_panels_call(t, "orc_gemm_panels(gemm_mp, gemm_np, gemm_kc, gemm_pa, " + arg_name(nl.gemm_b_panels) + " + " + t.n0 +
                     " / " + nr + " * " + whole + " + gemm_k0 * " + nr + ", " + whole + ", ", "", w);
  } else if (nl.gemm_q >= 0) {
    emit_b_rows(g, p, f, ex, s, t.n0, t.n1, w);
    w.line("orc_gemm_rows(gemm_mp, gemm_np, gemm_kc, gemm_pa, gemm_bq, gemm_flat, gemm_ct, " + t.ldc +
           ", gemm_k0 == 0, " + t.m1 + " - " + t.m0 + ");");
  } else {
    // gemm_pack_nr columns at a time (kGemmPackRows), each packed just before every A panel
    // passes them: they are then in L1.
    std::string cols = std::to_string(nl.gemm_pack_nr) + "LL";
    w.open("for (int64_t gemm_j = 0; gemm_j < gemm_np; gemm_j += " + cols + ") {");
    w.line("const int64_t gemm_j0 = " + t.n0 + " + gemm_j, gemm_j1 = orc_min64(" + t.n1 + ", gemm_j0 + " + cols + ");");
    emit_pack({f.b, f.n, kGemmNr, "gemm_pb", "gemm_j0", "gemm_j1"}, ex, s, w);
    emit_panels_call(t, "orc_gemm_panels(gemm_mp, orc_min64(gemm_np - gemm_j, " + cols + "), gemm_kc, gemm_pa, gemm_pb, gemm_kc * " + nr + ", ",
                     " + gemm_j", w);
    w.close();
  }
}

// The accumulated tiles stored to the primitive's home, each middle index's in turn; rows
// streamed past the caches where the kernel streams its outputs (a large output the tile's
// store would otherwise read into cache before writing it).
void emit_tile_store(const ir::Graph& g, const KernelLowering& kl, const NodeLowering& nl, const GemmFactors& f,
                     ExprEmitter& ex, const TileText& t, Writer& w) {
  const ir::Primitive& p = g.node(nl.node);
  ExprEmitter::Scope s = scope_of(p);
  s.dvars[f.m] = "gemm_m";
  s.dvars[f.n] = "gemm_n";
  std::string tile = "gemm_ct[(gemm_m - " + t.m0 + ") * " + t.ldc + " + (gemm_n - " + t.n0 + ")]";
  open_middle(nl, f, w);
  open_loop("gemm_m", t.m0, t.m1, w);
  if (streamed(kl, nl, p)) {
    std::vector<std::string> at = s.dvars;
    at[f.n] = "cb";
    emit_streamed_chunks(kl.schedule, "gemm_n", t.n0, t.n1, {{g.type(p.outputs[0]).dtype, ex.element(p.outputs[0], at), tile}},
                         w);
  } else {
    w.simd_pragmas(kl.schedule);
    open_loop("gemm_n", t.n0, t.n1, w);
    w.line(store(g, ex, p.outputs[0], s, tile));
    w.close();
  }
  w.close();
  close_middle(f, w);
}

// Whether a task's tile may be the primitive's output itself, the micro-kernel storing the
// last block of terms' sums there and nothing copied after (the copy, after the products,
// took 28% of a matmul of 64 terms, whose stores from registers otherwise overlap its
// multiply-adds): an f32 kernel output computed in place, its rows and columns the last two
// dims (no middle dims), B not read in place, the largest region's columns a multiple of 16.
// A task takes it where its tile's columns are whole blocks of 16 (the rows past its last,
// padding to whole register blocks, are not stored: they are the next task's or past the
// output), else its tile in scratch. The earlier blocks of terms still sum in the scratch
// tile: the micro-kernel reads the sums so far for whole register blocks, padding rows
// included, which in the output would be another task's rows or past its end.
bool output_tile_eligible(const ir::Graph& g, const NodeLowering& nl, const GemmFactors& f, const ir::Primitive& p) {
  ir::ValueId out = p.outputs[0];
  const ir::TensorType& t = g.type(out);
  return !nl.gemm_home && nl.gemm_q < 0 && nl.homes.at(out).global && t.dtype == ir::DType::F32 && f.n == f.m + 1 &&
         f.n + 1 == t.shape.size() && nl.most[f.n] % kGemmNr == 0;
}

// The epilogue (NodeLowering::gemm_epilogue): gemm_epi(r, j, v, nr, nc) computes the
// elementwise primitive at rows m0 + r to m0 + r + nr - 1 and columns n0 + j to
// n0 + j + nc - 1 (those inside the region) from the sums at v (rows of nc), the matmul's value
// bound to them, and stores it in the kernel output: a row's values (at most 32) through a
// buffer with one orc_stream where the kernel streams its outputs (Schedule::stream), else in
// place. The lane loop counts from 0: counting the columns themselves, as
// emit_streamed_chunks does, made 4096 x 1024 x 64 + bias + relu 1.05x slower.
void emit_epilogue(const ir::Graph& g, const KernelLowering& kl, const NodeLowering& nl, const GemmFactors& f,
                   ExprEmitter& ex, const TileText& t, Writer& w) {
  const NodeLowering& el = kl.nodes[static_cast<size_t>(nl.gemm_epilogue)];
  const ir::Primitive& q = g.node(el.node);
  ExprEmitter::Scope s = scope_of(q);
  s.hoist = true;  // divisions by a value of the row multiply by its reciprocal, as in emit_elementwise
  std::string row = s.dvars[f.m], col = s.dvars[f.n];
  ir::ValueId y = g.node(nl.node).outputs[0], z = q.outputs[0];
  ir::DType dt = g.type(z).dtype;
  ex.bind(y, "gemm_v[gemm_i * gemm_nc + gemm_l]");
  std::string value = ex.expr(q.bodies[0], s);
  ex.unbind(y);
  bool stream = streamed(kl, el, q);
  w.open("auto gemm_epi = [&](int64_t gemm_r, int64_t gemm_j, const float* __restrict__ gemm_v, int64_t gemm_nr, "
         "int64_t gemm_nc) {");
  w.line("const int64_t gemm_x = " + t.n0 + " + gemm_j, gemm_w = orc_min64(gemm_nc, " + t.n1 + " - gemm_x);");
  w.open("for (int64_t gemm_i = 0; gemm_i < gemm_nr; ++gemm_i) {");
  w.line("const int64_t " + row + " = " + t.m0 + " + gemm_r + gemm_i;");
  for (const std::string& h : ex.take_hoisted()) w.line(h);
  if (stream) w.line(storage_type(dt) + " gemm_o[" + std::to_string(4 * kGemmNr) + "] __attribute__((aligned(64)));");
  w.simd_pragmas(kl.schedule, "", 2 * kGemmNr);
  w.open("for (int64_t gemm_l = 0; gemm_l < gemm_w; ++gemm_l) {");
  w.line("const int64_t " + col + " = gemm_x + gemm_l;");
  w.line(stream ? "gemm_o[gemm_l] = " + to_storage(dt, value) + ";" : store(g, ex, z, s, value));
  w.close();
  std::vector<std::string> at = s.dvars;
  at[f.n] = "gemm_x";
  if (stream) w.line("orc_stream(&" + ex.element(z, at) + ", gemm_o, gemm_w * sizeof(" + storage_type(dt) + "));");
  w.close();
  w.close(";");
}

}  // namespace

void emit_gemm(const ir::Graph& g, const KernelLowering& kl, const NodeLowering& nl, ExprEmitter& ex, Writer& w) {
  const ir::Primitive& p = g.node(nl.node);
  std::optional<GemmFactors> f = gemm_factors(g, p);
  ORCHID_CHECK(f.has_value()) << "a primitive lowered for the GEMM micro-kernel has no factors";
  size_t m = f->m, n = f->n;
  open_domain(nl, 0, m, w);
  w.open("{");
  auto ptr = [](int64_t offset) { return "(float*)((char*)scratch + " + std::to_string(offset) + ")"; };
  w.line("float* __restrict__ gemm_pa = " + ptr(nl.gemm_a) + ";");
  w.line("float* __restrict__ gemm_pb = " + ptr(nl.gemm_b) + ";");
  bool in_output = output_tile_eligible(g, nl, *f, p);
  w.line("float* __restrict__ gemm_c = " + ptr(nl.gemm_c) + ";");
  w.line("float* __restrict__ gemm_st = " + ptr(nl.gemm_stage) + ";");
  if (nl.gemm_q >= 0) w.line("const float** __restrict__ gemm_bq = (const float**)((char*)scratch + " + std::to_string(nl.gemm_q) + ");");
  std::string m0 = region_lo(nl.node, m), m1 = region_hi(nl.node, m);
  std::string n0 = region_lo(nl.node, n), n1 = region_hi(nl.node, n);
  int64_t k_total = ir::numel(p.reduce_domain);
  std::string ldc = std::to_string(nl.gemm_ldc) + "LL", terms = std::to_string(k_total) + "LL";
  w.open("if (" + m1 + " > " + m0 + " && " + n1 + " > " + n0 + ") {");
  int64_t ldo = g.type(p.outputs[0]).shape[n];
  TileText t{m0, m1, n0, n1, ldc, in_output, nl.gemm_epilogue >= 0, in_output && streamed(kl, nl, p) && ldo % 16 == 0};
  if (in_output) {
    std::vector<std::string> at = scope_of(p).dvars;
    at[m] = m0;
    at[n] = n0;
    w.line("const int gemm_in_output = (" + n1 + " - " + n0 + ") % 16 == 0;");
    w.line("float* const gemm_out = &" + ex.element(p.outputs[0], at) + ";");
    w.line("const int64_t gemm_ldo = " + std::to_string(ldo) + "LL;");
    if (t.stream) w.line("const int gemm_nt = (uintptr_t)gemm_out % 64 == 0;");
  }
  if (t.epilogue) emit_epilogue(g, kl, nl, *f, ex, t, w);
  auto padded = [](const std::string& lo, const std::string& hi, int64_t block) {
    std::string b = std::to_string(block) + "LL";
    return "(" + hi + " - " + lo + " + " + b + " - 1) / " + b + " * " + b;
  };
  w.line("const int64_t gemm_mp = " + padded(m0, m1, kGemmMr) + ", gemm_np = " + padded(n0, n1, kGemmNr) + ";");
  w.open("for (int64_t gemm_k0 = 0; gemm_k0 < " + terms + "; gemm_k0 += " + std::to_string(nl.gemm_kc) + "LL) {");
  w.line("const int64_t gemm_kc = orc_min64(" + std::to_string(nl.gemm_kc) + "LL, " + terms + " - gemm_k0);");
  if (in_output || t.epilogue) w.line("const int gemm_last = gemm_k0 + gemm_kc == " + terms + ";");
  ExprEmitter::Scope s = scope_of(p);
  s.rvars = decoded_terms(p.reduce_domain);
  ExprEmitter::Scope flat = s;
  if (reads_terms_flat(g, kl, p, f->a)) {
    std::fill(flat.rvars.begin(), flat.rvars.end(), "0");
    flat.rvars.back() = "gemm_k";
  }
  emit_pack({f->a, m, kGemmMr, "gemm_pa", m0, m1}, ex, flat, w);
  open_middle(nl, *f, w);
  emit_multiply(g, nl, *f, ex, s, t, w);
  close_middle(*f, w);
  w.close();
  if (in_output) w.open("if (!gemm_in_output) {");
  if (!nl.gemm_home) emit_tile_store(g, kl, nl, *f, ex, t, w);
  if (in_output) w.close();
  w.close();
  w.close();
  close_n(m, w);
}

}  // namespace orchid::codegen::cpu::detail
