// Reductions whose trailing terms are read as one contiguous run (NodeLowering::reduce_run):
// an instance norm's statistics over [56, 56] are one row of 3136 terms, reduced over lanes
// in whole chunks, instead of 56 rows whose last 24 terms each went through the scalar tail.
#include "codegen/cpu/lower_internal.h"

namespace orchid::codegen::cpu::lower_detail {

using ir::Dims;
using ir::ValueId;

namespace {

// Variables first .. first + ext.size() - 1 of one kind, taking ext[j] values each: a run of
// terms if every expression reads them only as consecutive indices of loads whose storage
// makes them one contiguous range.
struct Run {
  ir::VarKind kind;
  int32_t first;
  Dims ext;

  bool holds(const ir::Expr& e) const {
    return e.op() == ir::ExprOp::Var && e->var_kind == kind && e->index >= first &&
           e->index < first + static_cast<int32_t>(ext.size());
  }
  bool mentioned(const ir::Expr& e) const {
    bool found = false;
    ir::visit_post(e, [&](const ir::Expr& x) { found |= holds(x); });
    return found;
  }
  // The index of the load's first run variable, where the load reads them all in order at
  // consecutive positions and nowhere else; -1 otherwise.
  int position(const ir::Expr& load, size_t rank) const {
    for (size_t d = 0; d + ext.size() <= rank; ++d) {
      if (!is_var(load.arg(d), kind, static_cast<size_t>(first))) continue;
      for (size_t j = 1; j < ext.size(); ++j)
        if (!is_var(load.arg(d + j), kind, static_cast<size_t>(first) + j)) return -1;
      for (size_t i = 0; i < rank; ++i)
        if ((i < d || i >= d + ext.size()) && mentioned(load.arg(i))) return -1;
      return static_cast<int>(d);
    }
    return -1;
  }
  // Whether storage strides make indices d .. d + |ext| - 1 one contiguous range.
  bool contiguous(const Dims& strides, size_t d) const {
    for (size_t j = 1; j < ext.size(); ++j)
      if (strides[d + j - 1] != strides[d + j] * ext[j]) return false;
    return true;
  }
};

bool reads_run(const ir::Graph& g, const KernelLowering& kl, const ir::Primitive& p, const Run& run);

bool expr_reads_run(const ir::Graph& g, const KernelLowering& kl, const ir::Primitive& p, const Run& run,
                    const ir::Expr& e) {
  if (run.holds(e)) return false;  // used as a number, not as an index of a run
  if (e.op() != ir::ExprOp::Load || !run.mentioned(e)) {
    for (size_t i = 0; i < e.num_args(); ++i)
      if (!expr_reads_run(g, kl, p, run, e.arg(i))) return false;
    return true;
  }
  if (e->predicated) return false;
  ValueId v = p.inputs.at(static_cast<size_t>(e->index));
  int d = run.position(e, e.num_args());
  if (d < 0) return false;
  for (size_t i = 0; i < e.num_args(); ++i)
    if (!run.mentioned(e.arg(i)) && !expr_reads_run(g, kl, p, run, e.arg(i))) return false;
  const NodeLowering* nl = producer_in_kernel(g, kl, v);
  if (nl != nullptr && nl->inlined)  // its body, with its variables d .. bound to the run
    return reads_run(g, kl, g.node(nl->node), Run{ir::VarKind::Domain, d, run.ext});
  return run.contiguous(storage_strides(g, kl, v), static_cast<size_t>(d));
}

bool reads_run(const ir::Graph& g, const KernelLowering& kl, const ir::Primitive& p, const Run& run) {
  for (const ir::Expr& b : p.bodies)
    if (!expr_reads_run(g, kl, p, run, b)) return false;
  return true;
}

}  // namespace

int32_t reduction_run(const ir::Graph& g, const KernelLowering& kl, const ir::Primitive& p) {
  size_t n = p.reduce_domain.size();
  for (size_t m = n; m >= 2; --m) {
    Run run{ir::VarKind::Reduce, static_cast<int32_t>(n - m), Dims(p.reduce_domain.end() - static_cast<long>(m), p.reduce_domain.end())};
    if (reads_run(g, kl, p, run)) return static_cast<int32_t>(m);
  }
  return 1;
}

}  // namespace orchid::codegen::cpu::lower_detail

namespace orchid::codegen::cpu {

int64_t run_extent(const ir::Primitive& p, const NodeLowering& nl) {
  int64_t n = 1;
  for (size_t d = p.reduce_domain.size() - static_cast<size_t>(nl.reduce_run); d < p.reduce_domain.size(); ++d)
    n *= p.reduce_domain[d];
  return n;
}

}  // namespace orchid::codegen::cpu
