// The GEMM micro-kernel's part of the lowering (lower.h, lower_internal.h): which primitives
// it computes and how (gemm_factors, uses_gemm, direct_b_rows), their scratch, the
// elementwise primitive it computes from its registers, and the constant weights it reads as
// panels.
#include <algorithm>
#include <optional>

#include "codegen/cpu/lower.h"
#include "codegen/cpu/lower_internal.h"

namespace orchid::codegen::cpu {

std::optional<GemmFactors> gemm_factors(const ir::Graph& g, const ir::Primitive& p) {
  bool matmul = p.op == ir::PrimOp::MatMul && p.reduce_domain.size() == 1 && p.domain.size() >= 2;
  bool conv = p.op == ir::PrimOp::Conv && p.domain.size() >= 3 && p.reduce_domain.size() + 1 == p.domain.size();
  if ((!matmul && !conv) || p.bodies.size() != 1 || p.reduce != ir::ReduceOp::Sum ||
      ir::numel(p.reduce_domain) < 1 || g.type(p.outputs[0]).dtype != ir::DType::F32)
    return std::nullopt;
  const ir::Expr& body = p.bodies[0];
  if (body.op() != ir::ExprOp::Mul || body.dtype() != ir::DType::F32) return std::nullopt;
  size_t n = p.domain.size() - 1, m = matmul ? n - 1 : 1;
  for (int swap = 0; swap < 2; ++swap) {
    const ir::Expr& a = body.arg(swap), &b = body.arg(1 - swap);
    bool a_free = true;
    for (size_t d = m + 1; d <= n; ++d) a_free &= !mentions(a, static_cast<int32_t>(d));
    if (a_free && !mentions(b, static_cast<int32_t>(m))) return GemmFactors{a, b, m, n};
  }
  return std::nullopt;
}

bool uses_gemm(const ir::Graph& g, const ir::Primitive& p, const Schedule& s) {
  if (!s.gemm) return false;
  std::optional<GemmFactors> f = gemm_factors(g, p);
  int64_t rows = p.op == ir::PrimOp::Conv ? kGemmMr / 2 : kGemmMr;
  return f && p.domain[f->m] >= rows && p.domain[f->n] >= 8;
}

namespace {

// The coefficient of d in e, load-free, where e is affine in d.
std::optional<int64_t> affine_coefficient(const ir::Expr& e, int32_t d) {
  if (!mentions(e, d)) return 0;
  switch (e.op()) {
    case ir::ExprOp::Var: return 1;
    case ir::ExprOp::Add:
    case ir::ExprOp::Sub: {
      std::optional<int64_t> a = affine_coefficient(e.arg(0), d), b = affine_coefficient(e.arg(1), d);
      if (!a || !b) return std::nullopt;
      return e.op() == ir::ExprOp::Add ? *a + *b : *a - *b;
    }
    case ir::ExprOp::Mul:
      for (int side = 0; side < 2; ++side) {
        const ir::Expr& k = e.arg(side);
        if (k.op() == ir::ExprOp::Const && ir::is_integral(k.dtype())) {
          std::optional<int64_t> c = affine_coefficient(e.arg(1 - side), d);
          if (c) return *c * k->value.i;
        }
      }
      return std::nullopt;
    default: return std::nullopt;
  }
}

// The coefficient of domain variable d in integer index expression e, where e is affine in it
// (sums, differences and products by integer constants of d and of expressions free of it
// and of loads); none otherwise.
std::optional<int64_t> coefficient(const ir::Expr& e, int32_t d) {
  bool loads = false;
  ir::visit_post(e, [&](const ir::Expr& x) { loads |= x.op() == ir::ExprOp::Load; });
  if (loads) return std::nullopt;
  return affine_coefficient(e, d);
}

}  // namespace

bool true_over_interval(const ir::Expr& e, int32_t d) {
  switch (e.op()) {
    case ir::ExprOp::And: return true_over_interval(e.arg(0), d) && true_over_interval(e.arg(1), d);
    case ir::ExprOp::Lt:
    case ir::ExprOp::Le:
    case ir::ExprOp::Gt:
    case ir::ExprOp::Ge: return coefficient(e.arg(0), d) && coefficient(e.arg(1), d);
    default: return !mentions(e, d) && coefficient(e, d).has_value();
  }
}

bool direct_b_rows(const ir::Graph& g, const KernelLowering& kl, const ir::Primitive& p, const GemmFactors& f) {
  const ir::Expr& b = f.b;
  if (p.op != ir::PrimOp::Conv || b.op() != ir::ExprOp::Load || b.dtype() != ir::DType::F32) return false;
  ValueId v = p.inputs[static_cast<size_t>(b->index)];
  if (g.type(v).dtype != ir::DType::F32) return false;
  for (const NodeLowering& nl : kl.nodes)
    if (nl.inlined && g.value(v).origin == ir::ValueOrigin::Node && nl.node == g.value(v).node) return false;
  auto n = static_cast<int32_t>(f.n);
  size_t rank = g.type(v).shape.size();
  if (rank == 0) return false;
  for (size_t i = 0; i < rank; ++i)
    if (coefficient(b.arg(i), n) != std::optional<int64_t>(i + 1 == rank ? 1 : 0)) return false;
  return !b->predicated || true_over_interval(b.arg(rank), n);
}

namespace {

// Whether a load reads the element its primitive computes: indices the domain variables in
// order, no predicate.
bool loads_own_element(const ir::Expr& load, size_t rank) {
  if (load->predicated || load.num_args() != rank) return false;
  for (size_t d = 0; d < rank; ++d)
    if (!is_var(load.arg(d), ir::VarKind::Domain, d)) return false;
  return true;
}

// Whether p's bodies read v, directly or through the producers inlined into them.
bool reaches(const ir::Graph& g, const KernelLowering& kl, const ir::Primitive& p, ValueId v) {
  bool found = false;
  for (const ir::Expr& b : p.bodies)
    ir::visit_post(b, [&](const ir::Expr& e) {
      if (found || e.op() != ir::ExprOp::Load) return;
      ValueId u = p.inputs[static_cast<size_t>(e->index)];
      const NodeLowering* nl = u == v ? nullptr : producer_in_kernel(g, kl, u);
      found = u == v || (nl != nullptr && nl->inlined && reaches(g, kl, g.node(nl->node), v));
    });
  return found;
}

// Whether elementwise primitive p can be computed from y's element alone where the GEMM at
// kl.nodes[gemm] stores it: p (and each producer inlined into it) reads y, and the inlined
// producers that read it, at the element it computes, and its other loads read kernel inputs
// or values computed before that GEMM, at the task's level.
bool reads_for_epilogue(const ir::Graph& g, const KernelLowering& kl, const ir::Primitive& p, ValueId y, size_t gemm) {
  bool ok = true;
  for (const ir::Expr& b : p.bodies)
    ir::visit_post(b, [&](const ir::Expr& e) {
      if (!ok || e.op() != ir::ExprOp::Load) return;
      ValueId u = p.inputs[static_cast<size_t>(e->index)];
      const NodeLowering* nl = producer_in_kernel(g, kl, u);
      if (u == y) {
        ok = loads_own_element(e, p.domain.size());
      } else if (nl != nullptr && nl->inlined) {  // read anyhow where it does not reach y (a broadcast bias)
        const ir::Primitive& q = g.node(nl->node);
        bool own = loads_own_element(e, p.domain.size()) && q.domain == p.domain && q.reduce == ir::ReduceOp::None;
        ok = (own || !reaches(g, kl, q, y)) && reads_for_epilogue(g, kl, q, y, gemm);
      } else if (nl != nullptr) {
        ok = !nl->inner && static_cast<size_t>(nl - kl.nodes.data()) < gemm;
      }
    });
  return ok;
}

// The elementwise primitive the GEMM at kl.nodes[i] can compute where it stores its last
// block of sums (NodeLowering::gemm_epilogue), or -1: the first computed primitive after it
// that reads its output y, where y's home is the tile (no kernel output), rows and columns
// its only dims but batch dims (so each 16 sums are 16 elements of one row), and that
// primitive elementwise over the same domain, of one output, a kernel output computed in
// place over the GEMM's region in every task, reading y only at the element it computes
// (reads_for_epilogue). No other primitive reads y.
int gemm_epilogue_of(const ir::Graph& g, const KernelLowering& kl, const TaskRegions& tr, size_t i) {
  const NodeLowering& nl = kl.nodes[i];
  const ir::Primitive& p = g.node(nl.node);
  std::optional<GemmFactors> f = nl.gemm ? gemm_factors(g, p) : std::nullopt;
  if (!f || !nl.gemm_home || nl.gemm_q >= 0 || nl.inner || f->n != f->m + 1 || f->n + 1 != p.domain.size()) return -1;
  ValueId y = p.outputs[0];
  int e = -1;
  for (size_t j = 0; j < kl.nodes.size(); ++j) {
    if (j == i || kl.nodes[j].inlined || !reaches(g, kl, g.node(kl.nodes[j].node), y)) continue;
    if (e >= 0 || j < i) return -1;
    e = static_cast<int>(j);
  }
  if (e < 0) return -1;
  const NodeLowering& el = kl.nodes[static_cast<size_t>(e)];
  const ir::Primitive& q = g.node(el.node);
  bool fits = !el.inner && !el.fused && el.fused_reduction < 0 && el.transpose_dim < 0 &&
              q.reduce == ir::ReduceOp::None && q.bodies.size() == 1 && q.outputs.size() == 1 && q.domain == p.domain &&
              el.homes.at(q.outputs[0]).global && reads_for_epilogue(g, kl, q, y, i);
  for (size_t t = 0; fits && t < tr.node[i].size(); ++t) fits = tr.node[i][t] == tr.node[static_cast<size_t>(e)][t];
  return fits ? e : -1;
}

// The constant a gemm node's B factor is, whole (lower.h, packable_weights), if any: read at
// [r0, n] ([K, N]), or transposed at [n, r0] ([N, K]).
struct PanelCandidate {
  ValueId value;
  bool transposed = false;
};
std::optional<PanelCandidate> panel_candidate(const ir::Graph& g, const ir::Primitive& p) {
  std::optional<GemmFactors> f = gemm_factors(g, p);
  if (!f || f->b.op() != ir::ExprOp::Load || f->b->predicated || f->b.num_args() != 2) return std::nullopt;
  size_t n = p.domain.size() - 1;
  bool plain = is_var(f->b.arg(0), ir::VarKind::Reduce, 0) && is_var(f->b.arg(1), ir::VarKind::Domain, n);
  bool transposed = is_var(f->b.arg(0), ir::VarKind::Domain, n) && is_var(f->b.arg(1), ir::VarKind::Reduce, 0);
  ValueId v = p.inputs[static_cast<size_t>(f->b->index)];
  const ir::TensorType& t = g.type(v);
  if (!(plain || transposed) || g.value(v).origin != ir::ValueOrigin::Constant || t.dtype != ir::DType::F32 ||
      t.shape.size() != 2)
    return std::nullopt;
  int64_t k = t.shape[transposed ? 1 : 0], cols = t.shape[transposed ? 0 : 1];
  if (cols % kGemmNr != 0 || k != p.reduce_domain[0] || cols != p.domain[n]) return std::nullopt;
  return PanelCandidate{v, transposed};
}

// Whether every task's column region of gemm node i starts on a panel.
bool panel_aligned(const TaskRegions& tr, size_t i) {
  for (const Region& r : tr.node[i]) {
    size_t n = r.rank() - 1;
    if (r.hi[n] > r.lo[n] && r.lo[n] % kGemmNr != 0) return false;
  }
  return true;
}

// Values loaded by the kernel's nodes, counted per load.
std::map<ValueId, int> loads_of(const ir::Graph& g, const KernelLowering& kl) {
  std::vector<NodeId> nodes;
  for (const NodeLowering& nl : kl.nodes) nodes.push_back(nl.node);
  return uses_in_kernel(g, nodes);
}

}  // namespace

bool transposed_panels(const ir::Graph& g, const tile::Kernel& k, ValueId v) {
  for (NodeId n : k.nodes)
    if (std::optional<PanelCandidate> c = panel_candidate(g, g.node(n)); c && c->value == v) return c->transposed;
  return false;
}

namespace lower_detail {

// Scratch for a linear primitive the GEMM micro-kernel computes (NodeLowering::gemm), from
// its largest region `most`: A panels, B panels and the tiles they accumulate into, one per
// middle index.
void place_gemm(const ir::Primitive& p, const GemmFactors& f, bool direct, const Dims& most, NodeLowering& nl,
                int64_t& offset) {
  int64_t k = ir::numel(p.reduce_domain);
  nl.gemm = true;
  nl.gemm_kc = ceil_div(k, ceil_div(k, kGemmKc));  // equal blocks
  int64_t mp = round_up(most[f.m], kGemmMr), middle = 1;
  for (size_t d = f.m + 1; d < f.n; ++d) middle *= most[d];
  nl.gemm_ldc = round_up(most[f.n], kGemmNr);
  nl.gemm_tile = mp * nl.gemm_ldc;
  nl.gemm_a = offset;
  offset += align64(mp * nl.gemm_kc * 4);
  nl.gemm_pack_nr = most[f.m] >= kGemmPackRows ? std::min(nl.gemm_ldc, kGemmPackNr) : nl.gemm_ldc;
  nl.gemm_b = offset;  // the columns packed at a time, or all a tile's where B is read in place
  offset += align64((direct ? nl.gemm_ldc : nl.gemm_pack_nr) * nl.gemm_kc * 4);
  nl.gemm_c = offset;
  offset += align64(middle * nl.gemm_tile * 4);
  nl.gemm_stage = offset;
  offset += align64(std::max(kGemmMr, kGemmNr) * nl.gemm_kc * 4);
  if (direct) {
    nl.gemm_q = offset;
    offset += align64(nl.gemm_ldc / kGemmNr * nl.gemm_kc * 8);
  }
}

// Lets each GEMM compute the elementwise primitive after it where it can (gemm_epilogue_of).
void fuse_gemm_epilogues(const ir::Graph& g, KernelLowering& kl, const TaskRegions& tr) {
  for (size_t i = 0; i < kl.nodes.size(); ++i) {
    int e = gemm_epilogue_of(g, kl, tr, i);
    if (e < 0) continue;
    kl.nodes[i].gemm_epilogue = e;
    kl.nodes[static_cast<size_t>(e)].in_gemm_store = true;
  }
}

// The inputs gemm nodes may read as panels (packable_weights), with the node reading each.
std::map<ValueId, size_t> panel_inputs(const ir::Graph& g, const KernelLowering& kl, const TaskRegions& tr) {
  std::map<ValueId, size_t> out;
  std::map<ValueId, int> loads = loads_of(g, kl);
  for (size_t i = 0; i < kl.nodes.size(); ++i) {
    if (!kl.nodes[i].gemm) continue;
    std::optional<PanelCandidate> c = panel_candidate(g, g.node(kl.nodes[i].node));
    if (c && loads[c->value] == 1 && panel_aligned(tr, i)) out[c->value] = i;
  }
  return out;
}

}  // namespace lower_detail

}  // namespace orchid::codegen::cpu
