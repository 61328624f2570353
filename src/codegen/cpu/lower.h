// Lowering a kernel and a schedule to what code generation needs: the grid of tasks, which
// primitives are inlined into their consumer and which are computed into memory, the region
// each computed primitive covers in each task (Welder's tile-graph, from tile propagation), and
// the scratch layout. Regions are evaluated exactly for every task at compile time; each bound
// is then emitted as a clamped affine function of the task's grid coordinates where one fits
// every task, and as a column of a per-task table where none does.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "codegen/cpu/schedule.h"
#include "ir/graph.h"
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
  std::vector<TaskBound> lo, hi;  // computed region per dim (empty region: lo == hi)
  std::map<ir::ValueId, ValueHome> homes;  // per output of the node
  // An elementwise primitive computing rows: the reduction along them (sum of softmax's exp)
  // computed in the same loop, from the values as they are computed (its index in
  // KernelLowering::nodes; -1: none). That reduction's `fused` is set and it emits no loop.
  int fused_reduction = -1;
  bool fused = false;
  bool accumulate_rows = false;   // reduction accumulated a row at a time (vectorized)
  int64_t acc_offset = 0;         // scratch offset of the accumulator row(s)
  int64_t acc_row = 0;            // elements per accumulator row
};

// How output k's tile follows the grid: dim j of the output is cut like grid dim align[j]
// (-1: whole), in pieces of `tile[j]` elements (the last ones may be short or empty).
struct OutputTiling {
  std::vector<int> align;
  ir::Dims tile;
};

struct KernelLowering {
  std::vector<ir::ValueId> inputs, outputs;  // arguments: inputs then outputs
  ir::Dims grid;                             // tiles per anchor dim
  int64_t tasks = 0;
  std::vector<OutputTiling> tilings;         // per output
  std::vector<NodeLowering> nodes;           // the kernel's nodes in topological order
  std::vector<int64_t> table;                // tasks x table_columns
  int table_columns = 0;
  int64_t scratch_bytes = 0;
  int64_t task_io_bytes = 0;    // the largest task's input regions and output tiles, in bytes
  int64_t task_part_bytes = 0;  // the largest task's regions of inputs it reads part of (bytes)
  Schedule schedule;

  const NodeLowering& node(ir::NodeId n) const;
  int arg_of(ir::ValueId v) const;  // -1 when not an argument
};

// Lanes a reduction over `extent` terms (along its innermost reduction dim) is computed over:
// the schedule's vector_width x unroll, halved (not below vector_width) while more than the
// terms; 0 where it is not computed over lanes (scalar schedules, fewer terms than lanes).
int64_t reduction_lanes(const Schedule& s, int64_t extent);

// Coordinates of a task in the grid (row-major task numbering).
ir::Dims grid_coords(int64_t task, const ir::Dims& grid);
// The tile of an output a task writes (possibly empty; a rank-0 output is whole for every task
// and written by task 0 alone).
tile::Region output_tile(const OutputTiling& t, const ir::Dims& shape, const ir::Dims& coords);

// UserError-free: kernels must be valid (tile::Kernel over generic primitives, no opaque).
KernelLowering lower_kernel(const ir::Graph& g, const tile::Kernel& k, const Schedule& s);

}  // namespace orchid::codegen::cpu
