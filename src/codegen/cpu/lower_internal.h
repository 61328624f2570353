// What the lowering's two files (lower.cpp, lower_gemm.cpp) share; not for code generation.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "codegen/cpu/lower.h"
#include "tile/region.h"

namespace orchid::codegen::cpu::lower_detail {

inline int64_t round_up(int64_t x, int64_t m) { return ceil_div(x, m) * m; }
inline int64_t align64(int64_t x) { return round_up(x, 64); }

// Whether e is variable `index` of the given kind.
inline bool is_var(const ir::Expr& e, ir::VarKind kind, size_t index) {
  return e.op() == ir::ExprOp::Var && e->var_kind == kind && e->index == static_cast<int32_t>(index);
}

// Whether e mentions domain variable d.
bool mentions(const ir::Expr& e, int32_t d);

// Loads of each value in the bodies of the kernel's nodes.
std::map<ir::ValueId, int> uses_in_kernel(const ir::Graph& g, const std::vector<ir::NodeId>& nodes);

// NodeLowering::reduce_run of computed primitive p (1 unless it reduces over two dims or
// more), once the homes of its producers in the kernel are placed.
int32_t reduction_run(const ir::Graph& g, const KernelLowering& kl, const ir::Primitive& p);

// Per-task region bounds of the computed nodes: regions[node index][task], over the tasks of
// the node's level (the sub-tiles for inner nodes).
struct TaskRegions {
  std::vector<std::vector<tile::Region>> node;  // per lowering node, per task
  int64_t most_io_bytes = 0;                    // input regions + output tiles, largest task
  int64_t most_part_bytes = 0;  // regions of the inputs the task reads part of, largest task
};

// Scratch for a linear primitive the GEMM micro-kernel computes (NodeLowering::gemm), from
// its largest region `most`, placed at `offset` on (which it advances).
void place_gemm(const ir::Primitive& p, const GemmFactors& f, bool direct, const ir::Dims& most, NodeLowering& nl,
                int64_t& offset);

// Lets each GEMM compute the elementwise primitive after it where it can
// (NodeLowering::gemm_epilogue).
void fuse_gemm_epilogues(const ir::Graph& g, KernelLowering& kl, const TaskRegions& tr);

// The inputs gemm nodes may read as panels (packable_weights), with the node reading each.
std::map<ir::ValueId, size_t> panel_inputs(const ir::Graph& g, const KernelLowering& kl, const TaskRegions& tr);

}  // namespace orchid::codegen::cpu::lower_detail

namespace orchid::codegen::cpu {

// The names both lowering files use unqualified (this header is theirs alone).
using ir::Dims;
using ir::NodeId;
using ir::ValueId;
using tile::Region;
using namespace lower_detail;

}  // namespace orchid::codegen::cpu
