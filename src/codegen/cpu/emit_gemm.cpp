// An f32 matmul by the packed GEMM micro-kernel (gemm.inc; NodeLowering::gemm). Per task and
// batch index, for each block of kc terms: the A region [m0, m1) x block is packed into panels
// of kc x 6 and the B region block x [n0, n1) into panels of kc x 16, each element evaluated
// from its factor of the matmul's body (so a transpose, a broadcast or an inlined producer is
// applied while packing — the prologue; constant weights stored as panels already are read
// where they are), then orc_gemm_panels accumulates the tile in
// scratch; the tile is the matmul's home or is finally stored there, where the kernel's
// elementwise primitives after it (the epilogue) read it like any computed value.
#include "codegen/cpu/emit_reduce.h"
#include "support/error.h"

namespace orchid::codegen::cpu::detail {

namespace {

// One operand's packing: `factor` evaluated with domain variable `lane_dim` running across a
// panel of `width` lanes and the term k along it.
struct Pack {
  ir::Expr factor;
  size_t lane_dim = 0;
  int64_t width = 0;
  std::string panel;   // the C pointer to the panels
  std::string lo, hi;  // the region's bounds along lane_dim
};

// Whether the factor reads memory contiguously along k: some load's last index is k.
bool contiguous_along_k(const ir::Expr& factor) {
  bool along = false;
  ir::visit_post(factor, [&](const ir::Expr& e) {
    if (e.op() != ir::ExprOp::Load) return;
    size_t rank = e.num_args() - (e->predicated ? 1 : 0);
    if (rank == 0) return;
    const ir::Expr& last = e.arg(rank - 1);
    along |= last.op() == ir::ExprOp::Var && last->var_kind == ir::VarKind::Reduce && last->index == 0;
  });
  return along;
}

// Fills the panels of one operand for the block of terms [gemm_k0, gemm_k0 + gemm_kc): the
// loop over k innermost where the factor reads along k, else the loop across the panel.
void emit_pack(const Pack& pk, ExprEmitter& ex, ExprEmitter::Scope s, Writer& w) {
  std::string width = std::to_string(pk.width) + "LL";
  w.open("{");
  w.line("const int64_t gemm_ext = " + pk.hi + " - " + pk.lo + ", gemm_blocks = (gemm_ext + " + width + " - 1) / " +
         width + ";");
  // The last panel's lanes past the edge are zeros.
  w.line("if (gemm_ext % " + width + ") for (int64_t i = (gemm_blocks - 1) * gemm_kc * " + width +
         "; i < gemm_blocks * gemm_kc * " + width + "; ++i) " + pk.panel + "[i] = 0.0f;");
  std::string at = pk.panel + "[gemm_b * gemm_kc * " + width + " + (gemm_k - gemm_k0) * " + width + " + gemm_l]";
  std::string lanes = "orc_min64(" + width + ", gemm_ext - gemm_b * " + width + ")";
  s.dvars[pk.lane_dim] = "gemm_x";
  s.rvars[0] = "gemm_k";
  bool k_inner = contiguous_along_k(pk.factor);
  s.inner = k_inner ? 0 : static_cast<int32_t>(pk.lane_dim);
  s.inner_kind = k_inner ? ir::VarKind::Reduce : ir::VarKind::Domain;
  std::string value = at + " = " + ex.expr(pk.factor, s) + ";";
  std::string k_loop = "for (int64_t gemm_k = gemm_k0; gemm_k < gemm_k0 + gemm_kc; ++gemm_k) {";
  std::string b_loop = "for (int64_t gemm_b = 0; gemm_b < gemm_blocks; ++gemm_b) {";
  std::string l_loop = "for (int64_t gemm_l = 0; gemm_l < " + lanes + "; ++gemm_l) {";
  std::string x = "const int64_t gemm_x = " + pk.lo + " + gemm_b * " + width + " + gemm_l;";
  if (k_inner) {
    w.open(b_loop);
    w.open(l_loop);
    w.line(x);
    w.line("#pragma omp simd");
    w.open(k_loop);
  } else {
    w.open(k_loop);
    w.open(b_loop);
    w.line("#pragma omp simd");
    w.open(l_loop);
    w.line(x);
  }
  w.line(value);
  close_n(4, w);
}

}  // namespace

void emit_gemm(const ir::Graph& g, const KernelLowering& kl, const NodeLowering& nl, ExprEmitter& ex, Writer& w) {
  const ir::Primitive& p = g.node(nl.node);
  std::optional<GemmFactors> f = gemm_factors(g, p);
  ORCHID_CHECK(f.has_value()) << "a matmul lowered for the GEMM micro-kernel has no factors";
  size_t r = p.domain.size(), m = r - 2, n = r - 1;
  open_domain(nl, 0, m, w);
  w.open("{");
  auto ptr = [](int64_t offset) { return "(float*)((char*)scratch + " + std::to_string(offset) + ")"; };
  w.line("float* __restrict__ gemm_pa = " + ptr(nl.gemm_a) + ";");
  w.line("float* __restrict__ gemm_pb = " + ptr(nl.gemm_b) + ";");
  w.line("float* __restrict__ gemm_c = " + ptr(nl.gemm_c) + ";");
  std::string m0 = region_lo(nl.node, m), m1 = region_hi(nl.node, m);
  std::string n0 = region_lo(nl.node, n), n1 = region_hi(nl.node, n);
  std::string ldc = std::to_string(nl.gemm_ldc) + "LL", terms = std::to_string(p.reduce_domain[0]) + "LL";
  w.open("if (" + m1 + " > " + m0 + " && " + n1 + " > " + n0 + ") {");
  auto padded = [](const std::string& lo, const std::string& hi, int64_t block) {
    std::string b = std::to_string(block) + "LL";
    return "(" + hi + " - " + lo + " + " + b + " - 1) / " + b + " * " + b;
  };
  w.line("const int64_t gemm_mp = " + padded(m0, m1, kGemmMr) + ", gemm_np = " + padded(n0, n1, kGemmNr) + ";");
  w.open("for (int64_t gemm_k0 = 0; gemm_k0 < " + terms + "; gemm_k0 += " + std::to_string(nl.gemm_kc) + "LL) {");
  w.line("const int64_t gemm_kc = orc_min64(" + std::to_string(nl.gemm_kc) + "LL, " + terms + " - gemm_k0);");
  ExprEmitter::Scope s = scope_of(p);
  emit_pack({f->a, m, kGemmMr, "gemm_pa", m0, m1}, ex, s, w);
  if (nl.gemm_b_panels >= 0) {
    // B is constant weights stored as panels of all K terms (runtime layout.h, panels16).
    std::string whole = std::to_string(p.reduce_domain[0] * kGemmNr) + "LL", nr = std::to_string(kGemmNr) + "LL";
    w.line("orc_gemm_panels(gemm_mp, gemm_np, gemm_kc, gemm_pa, " + arg_name(nl.gemm_b_panels) + " + " + n0 + " / " + nr +
           " * " + whole + " + gemm_k0 * " + nr + ", " + whole + ", gemm_c, " + ldc + ", gemm_k0 == 0);");
  } else {
    emit_pack({f->b, n, kGemmNr, "gemm_pb", n0, n1}, ex, s, w);
    w.line("orc_gemm_panels(gemm_mp, gemm_np, gemm_kc, gemm_pa, gemm_pb, gemm_kc * " + std::to_string(kGemmNr) +
           "LL, gemm_c, " + ldc + ", gemm_k0 == 0);");
  }
  w.close();
  if (!nl.gemm_home) {
    s.dvars[m] = "gemm_m";
    s.dvars[n] = "gemm_n";
    open_loop("gemm_m", m0, m1, w);
    w.simd_pragmas(kl.schedule);
    open_loop("gemm_n", n0, n1, w);
    w.line(store(g, ex, p.outputs[0], s, "gemm_c[(gemm_m - " + m0 + ") * " + ldc + " + (gemm_n - " + n0 + ")]"));
    close_n(2, w);
  }
  w.close();
  w.close();
  close_n(m, w);
}

}  // namespace orchid::codegen::cpu::detail
