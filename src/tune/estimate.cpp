#include "tune/estimate.h"

#include <algorithm>

#include "codegen/cpu/lower.h"

namespace orchid::tune {

tile::CostConfig cpu_cost_config(const ir::Graph& g, const tile::Kernel& k, const codegen::cpu::Schedule& s) {
  codegen::cpu::KernelLowering kl = codegen::cpu::lower_outline(g, k, s);
  tile::CostConfig c;
  c.grid.grid = kl.grid;
  c.grid.tilings = kl.tilings;
  if (kl.inner) {
    c.inner = tile::InnerLevel{tile::TaskGrid{kl.inner->grid, kl.inner->tilings}, kl.inner->ratio, {}};
    for (const codegen::cpu::NodeLowering& n : kl.nodes)
      if (n.inner) c.inner->nodes.insert(n.node);
  }
  for (const codegen::cpu::NodeLowering& n : kl.nodes) {
    if (n.inlined) c.inlined.insert(n.node);
    std::optional<codegen::cpu::GemmFactors> f = codegen::cpu::gemm_factors(g, g.node(n.node));
    if (n.gemm) {
      c.full_width.insert(n.node);
      if (f) c.blocks[n.node] = {f->m, f->n, codegen::cpu::kGemmMr, codegen::cpu::kGemmNr};
    } else if (s.vector_width <= 1 && g.node(n.node).reduce != ir::ReduceOp::None) {
      c.serial.insert(n.node);
    } else if (f) {
      c.unblocked.insert(n.node);
    }
  }
  // A loop without `omp simd` (vector_width 1) is still vectorized by the compiler at its own
  // width, unless it folds a reduction (floating-point folds are not reassociated).
  c.vector_lanes = s.vector_width <= 1 ? 0 : s.vector_width;
  c.write_allocate = !s.stream;
  return c;
}

tile::Estimate estimate_cpu_schedule(const ir::Graph& g, const tile::Kernel& k, const codegen::cpu::Schedule& s,
                                     const target::Target& t, const tile::CostOptions& o) {
  return tile::estimate_kernel(g, k, cpu_cost_config(g, k, s), t, o);
}

}  // namespace orchid::tune
