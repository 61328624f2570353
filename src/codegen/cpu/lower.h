// Lowering a kernel and a schedule to what code generation needs: the grid of tasks, which
// primitives are inlined into their consumer and which are computed into memory, the region
// each computed primitive covers in each task (Welder's tile-graph, from tile propagation), and
// the scratch layout. Regions are evaluated exactly for every task at compile time; each bound
// is then emitted as a clamped affine function of the task's grid coordinates where one fits
// every task, and as a column of a per-task table where none does.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "codegen/cpu/schedule.h"
#include "ir/graph.h"
#include "tile/grid.h"
#include "tile/kernel.h"
#include "tile/region.h"

namespace orchid::codegen::cpu {

// One integer per task: clamp(c + sum_d step[d] * grid_coord[d], lo, hi), or table column.
struct TaskBound {
  bool affine = true;
  int64_t c = 0;
  std::vector<int64_t> step;  // per grid dim
  int64_t lo = 0, hi = 0;
  int column = -1;            // !affine: column of the per-task table
};

// Where a computed value lives during a task.
struct ValueHome {
  bool global = false;        // the kernel's output buffer, absolute indices
  int arg = -1;               // global: argument number
  int64_t scratch_offset = 0; // else: byte offset in scratch; indices relative to the region
  ir::Dims scratch_strides;   // elements, from the largest region over tasks
  bool copy_out = false;      // a kernel output computed in scratch: its tile is copied out
};

struct NodeLowering {
  ir::NodeId node;
  bool inlined = false;
  // Computed per sub-tile, in the inner loop of a two-level kernel (KernelLowering::inner):
  // its bounds are then functions of the sub-tile's coordinates (h<d>, table tbi).
  bool inner = false;
  std::vector<TaskBound> lo, hi;  // computed region per dim (empty region: lo == hi)
  // Computed nodes: the largest extent of the region per dim over the tasks, and whether every
  // task's region has the same extent there.
  ir::Dims most;
  std::vector<bool> uniform;
  std::map<ir::ValueId, ValueHome> homes;  // per output of the node
  // An elementwise primitive computing rows: the reduction along them (sum of softmax's exp)
  // computed in the same loop, from the values as they are computed (its index in
  // KernelLowering::nodes; -1: none). That reduction's `fused` is set and it emits no loop.
  int fused_reduction = -1;
  bool fused = false;
  bool accumulate_rows = false;   // reduction accumulated a row at a time (vectorized)
  // A reduction: how many of its trailing reduction dims every load reads as one contiguous
  // run of terms (lower_runs.cpp); reduced over lanes, they are looped over as one dim.
  int32_t reduce_run = 1;
  int64_t acc_offset = 0;         // scratch offset of the accumulator row(s)
  int64_t acc_row = 0;            // elements per accumulator row
  // An f32 matmul or conv computed by the packed GEMM micro-kernel (gemm.inc, emit_gemm.cpp):
  // per task, blocks of gemm_kc terms of its A and B regions packed into panels in scratch and
  // multiplied into a tile of gemm_ldc columns (the region's, rounded up to 16) per middle
  // index (GemmFactors), which is then stored to the primitive's home, unless it is that home.
  bool gemm = false;
  int64_t gemm_kc = 0;
  int64_t gemm_a = 0, gemm_b = 0, gemm_c = 0;  // scratch offsets: A panels, B panels, C tile
  // Scratch offset of kGemmNr rows of gemm_kc floats: an operand's rows (A's, or B's
  // columns) evaluated along k, where its factor reads along k, before orc_gemm_pack6 or
  // orc_gemm_pack16 interleaves them into a panel.
  int64_t gemm_stage = 0;
  int64_t gemm_ldc = 0;
  int64_t gemm_tile = 0;   // floats from one middle index's tile to the next (GemmFactors)
  int64_t gemm_pack_nr = 0;  // B's columns packed at a time (a multiple of kGemmNr)
  // Where B is read in place (direct_b_rows): scratch offset of the table of pointers to its
  // rows (per block of 16 columns, per term); the B panels then hold only the rows packed at
  // edges. -1: B is packed.
  int64_t gemm_q = -1;
  bool gemm_home = false;  // the tile is the matmul's home (its strides: gemm_ldc, 1)
  // The elementwise primitive (its index in KernelLowering::nodes; -1: none) that the
  // micro-kernel computes from the last block of terms' sums, from a copy of its registers on
  // the stack (gemm_epilogue_of): the matmul's values are then never stored. That primitive's
  // `in_gemm_store` is set and it emits no loop.
  int gemm_epilogue = -1;
  bool in_gemm_store = false;
  // The kernel argument that holds B already in panels (runtime layout.h, panels16 or
  // panels16t: constant weights packed when the artifact is built); B is then read from it,
  // not packed. -1: none.
  int gemm_b_panels = -1;
  // A transposing layout primitive (transposing_dim): computed, never inlined, in blocks of
  // kTransposeBlock x kTransposeBlock through a buffer, reading along this dim and writing
  // along the last (emit_node.cpp); -1 otherwise.
  int transpose_dim = -1;
};

// How output k's tile follows the grid (tile/grid.h).
using OutputTiling = tile::OutputTiling;

// The inner loop of a two-level kernel (Schedule::inner): the grid of sub-tiles over the whole
// anchor, `ratio` of them along each dim per task (task g's sub-tiles along dim d are
// g*ratio[d] .. min(grid[d], (g+1)*ratio[d]) - 1), each output cut like the tasks but in
// sub-tiles that divide the task's tile.
struct InnerLoop {
  ir::Dims grid, ratio;
  int64_t tasks = 0;                         // sub-tiles in all
  std::vector<OutputTiling> tilings;         // per output
  std::vector<int64_t> table;                // sub-tiles x table_columns
  int table_columns = 0;
};

struct KernelLowering {
  std::vector<ir::ValueId> inputs, outputs;  // arguments: inputs then outputs
  ir::Dims grid;                             // tiles per anchor dim
  int64_t tasks = 0;
  std::vector<OutputTiling> tilings;         // per output
  // Two-level kernels: the nodes from Schedule::split on are computed per sub-tile (inner).
  std::optional<InnerLoop> inner;
  std::vector<NodeLowering> nodes;           // the kernel's nodes in topological order
  std::vector<int64_t> table;                // tasks x table_columns
  int table_columns = 0;
  int64_t scratch_bytes = 0;
  // Scratch from this byte offset on holds only the values the inner loop computes (a
  // sub-tile's), before it those computed per task; scratch_bytes where the kernel is one level.
  // The CUDA generator may put the two parts in different memories.
  int64_t inner_scratch = 0;
  int64_t task_io_bytes = 0;    // the largest task's input regions and output tiles, in bytes
  int64_t task_part_bytes = 0;  // the largest task's regions of inputs it reads part of (bytes)
  Schedule schedule;

  const NodeLowering& node(ir::NodeId n) const;
  int arg_of(ir::ValueId v) const;  // -1 when not an argument
  // Each argument's bytes, inputs then outputs: what the kernel's descriptor promises it
  // reads and writes (kernel_abi.h, cuda_abi.h).
  std::vector<int64_t> arg_bytes(const ir::Graph& g) const;
};

// The lowering of the kernel's node that computes v, or none (a kernel input).
const NodeLowering* producer_in_kernel(const ir::Graph& g, const KernelLowering& kl, ir::ValueId v);
// The strides (in elements) with which the kernel addresses v: row-major in a kernel argument
// (an input, or an output computed in place), its home's in scratch.
ir::Dims storage_strides(const ir::Graph& g, const KernelLowering& kl, ir::ValueId v);

// Lanes a reduction over `extent` terms (along its innermost reduction dim) is computed over:
// the schedule's vector_width x unroll, halved (not below vector_width) while more than the
// terms; 0 where it is not computed over lanes (scalar schedules, fewer terms than lanes).
int64_t reduction_lanes(const Schedule& s, int64_t extent);
// Terms in the run of p's trailing reduction dims that nl reads as one (reduce_run).
int64_t run_extent(const ir::Primitive& p, const NodeLowering& nl);

// The two factors of a linear primitive that the GEMM micro-kernel can compute, and how its
// dims map onto a matrix product, or none. An f32 MatMul over [b.., m, n] with one term k, or
// an f32 Conv with one group over [n, co, o1.., ox] with terms (ci, k1.., kx) (implicit GEMM:
// rows co, columns ox, the terms flattened in order), whose body is a product of an A factor
// free of the columns and of the middle dims and a B factor free of the rows (any
// expressions: transposes, broadcasts, predicated borders, inlined producers). Dims before
// `m` are batch dims, each with its own A; dims between `m` and `n` (a conv's output rows
// but the last) are middle dims, whose every index is one more block of columns over the
// same A.
struct GemmFactors {
  ir::Expr a, b;
  size_t m = 0, n = 0;
};
std::optional<GemmFactors> gemm_factors(const ir::Graph& g, const ir::Primitive& p);
// Whether the schedule has the micro-kernel compute linear primitive p: it has factors, and
// at least 6 rows and 8 columns (a thinner matmul, a matrix-vector product, streams B once
// row by row instead: packing would double its memory traffic and the 6 x 16 block waste the
// FMAs). A conv needs 3 rows only: the plain sum over its window is slower than half the
// micro-kernel (a style-transfer network's last conv has 3 output channels).
bool uses_gemm(const ir::Graph& g, const ir::Primitive& p, const Schedule& s);
// Whether predicate e is true over an interval of domain variable d (for any values of the
// other variables): a conjunction of comparisons (not ==, !=) of expressions affine in d, and
// of conditions free of d.
bool true_over_interval(const ir::Expr& e, int32_t d);

// Whether the micro-kernel reads conv p's B factor in place (gemm.inc, orc_gemm_rows): B is
// one f32 load of a value computed into memory (a kernel input or a computed, not inlined,
// value), its last index the column variable plus terms free of it and its other indices
// free of it (a stride-1 window: every row of 16 columns is 16 consecutive floats), and its
// predicate, if any, a conjunction of comparisons of expressions affine in the column
// variable (a zero border: true over an interval of columns, so a row wholly inside it is
// found from its two ends).
bool direct_b_rows(const ir::Graph& g, const KernelLowering& kl, const ir::Primitive& p, const GemmFactors& f);

// Register blocking of the micro-kernel (gemm.inc), and the terms per packed block: a B
// panel of kGemmKc x 16 floats (16 KiB) stays in L1 while the A panels pass it.
constexpr int64_t kGemmMr = 6, kGemmNr = 16, kGemmKc = 256;
// B packed per block of terms is packed two panels (32 KiB) at a time, just before the A
// panels pass them, where a tile has at least kGemmPackRows rows; a tile of fewer rows, whose
// time goes to reading B (from memory, at a matrix's stride), packs all its columns at once,
// reading longer runs of each row of B (16 x 4096 x 4096 ran 2x slower packed 32 at a time).
constexpr int64_t kGemmPackNr = 2 * kGemmNr, kGemmPackRows = 96;

// The dim a layout primitive reads its input along, where that is not its own last dim: its
// body is one load whose last index is domain variable k < rank - 1, give or take a constant
// (a transpose, through any views, possibly padded). Computed element by element along its rows, such a primitive reads the input with a
// stride of a whole input row per element, and a power-of-two stride maps every read of a
// row to one cache set; computed in square blocks, it reads and writes whole cache lines.
// -1 for other primitives and where either dim is shorter than a block.
int transposing_dim(const ir::Primitive& p);
constexpr int64_t kTransposeBlock = 16;

// ceil(a / b) for a >= 0 (0 where b <= 0).
inline int64_t ceil_div(int64_t a, int64_t b) { return b <= 0 ? 0 : (a + b - 1) / b; }

using tile::grid_coords;
using tile::output_tile;

// The output a kernel's grid is cut from (its "anchor", which a schedule's tile refers to):
// the largest, the first among equals.
size_t anchor_output(const ir::Graph& g, const tile::Kernel& k);

// UserError-free: kernels must be valid (tile::Kernel over generic primitives, no opaque).
// `panels`: kernel inputs stored as B panels (packable_weights says which may be).
KernelLowering lower_kernel(const ir::Graph& g, const tile::Kernel& k, const Schedule& s,
                            const std::vector<ir::ValueId>& panels = {});

// What a lowering decides without the tasks' regions, in a fraction of the time: the grid,
// the inlined and the computed nodes, those of the inner loop (without checking that its
// sub-tiles read inside their task's regions, where lower_kernel may keep one level), and
// which the GEMM micro-kernel computes. No bounds, homes, scratch or tables. For the cost model.
KernelLowering lower_outline(const ir::Graph& g, const tile::Kernel& k, const Schedule& s);

// The kernel inputs that may be stored as the micro-kernel's B panels (panels16) under
// schedule s: f32 graph constants [K, N], N a multiple of 16, that are the whole B factor of
// a matmul the micro-kernel computes (read at [r0, n], no prologue; or [N, K] read at [n, r0],
// transposed: panels16t), where every task's columns start on a panel; and that nothing else
// in the kernel reads.
std::vector<ir::ValueId> packable_weights(const ir::Graph& g, const tile::Kernel& k, const Schedule& s);
// Whether kernel k reads packable weights v transposed ([N, K]: stored as panels16t).
bool transposed_panels(const ir::Graph& g, const tile::Kernel& k, ir::ValueId v);

}  // namespace orchid::codegen::cpu
