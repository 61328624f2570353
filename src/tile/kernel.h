// Tile propagation through a candidate kernel, and what one tile costs (Welder §3.1: the
// tile-graph of a kernel, MemTraffic and MemFootprint).
//
// A kernel is a set of primitives and the values it writes to memory. One task of the kernel
// computes one tile of each of its outputs. Propagation walks the kernel's primitives in
// reverse topological order: a primitive must compute the union (bounding box) of what its
// consumers inside the kernel need of any of its outputs — and, for a kernel output, the tile
// itself — and needs of each input what propagate_primitive says. The result is the region of
// every value the task touches: kernel inputs (values read but produced outside the kernel:
// graph inputs, constants, other kernels' outputs), intermediates (produced inside and not
// written) and outputs.
//
// Costs of one task, in the tile-graph model where every input region is loaded once from
// memory, intermediates live only in the task's fast memory, and each output tile is stored
// once:
//   input_bytes[v]     region of kernel input v × its dtype size
//   load_bytes         the sum of input_bytes
//   store_bytes        tile of each output × its dtype size
//   intermediate_bytes regions of the intermediates (all of a multi-output primitive's
//                      outputs count, since it computes them together; views too)
//   footprint_bytes    load_bytes + intermediate_bytes + regions of the outputs (which may
//                      exceed the tile where consumers inside the kernel need more)
//   flops              per primitive: ir::primitive_flops per point × its computed region ×
//                      its reduction box (opaque: 0)
#pragma once

#include <map>
#include <optional>
#include <vector>

#include "ir/graph.h"
#include "tile/region.h"

namespace orchid::tile {

// A candidate kernel: a set of primitives and the values it writes to memory.
struct Kernel {
  std::vector<ir::NodeId> nodes;     // each once, any order
  std::vector<ir::ValueId> outputs;  // each an output of one of `nodes`
};

// k with its nodes and outputs in increasing order: kernels of the same primitives and
// outputs are then equal.
Kernel sorted(Kernel k);

// The values the kernel reads from memory (inputs of its nodes that none of its nodes
// produces), in increasing id order.
std::vector<ir::ValueId> kernel_inputs(const ir::Graph& g, const Kernel& k);

// One task of a kernel: a tile of each output and optional splits of reduction domains.
struct KernelTile {
  std::vector<Region> outputs;          // one per Kernel::outputs, in that value's index space
  std::map<ir::NodeId, Region> reduce;  // a box of a node's reduction domain (absent: whole)
};

struct TileStats {
  std::map<ir::ValueId, Region> regions;      // every value the task touches (never empty)
  std::map<ir::ValueId, int64_t> input_bytes;  // per kernel input read by the task
  int64_t load_bytes = 0;
  int64_t store_bytes = 0;
  int64_t intermediate_bytes = 0;
  int64_t footprint_bytes = 0;
  int64_t flops = 0;
  std::map<ir::NodeId, int64_t> node_points;  // per primitive computed: its points × reduction terms
};

// Propagates one task's tiles through the kernel. Output tiles must lie inside their values'
// shapes; an empty tile asks nothing of that output.
TileStats propagate_kernel(const ir::Graph& g, const Kernel& k, const KernelTile& tile);

// A kernel run as a grid of tasks: output k is cut into tiles of tile_shapes[k] (edge tiles
// clipped), giving ceil(dim / tile) tiles along each dim; every output must have the same
// rank and the same number of tiles along each dim, and task t computes the t-th tile (row-
// major) of each output. The sums over tasks are Welder's memory traffic of the kernel
// (load + store), the maxima its footprint at the tile level.
struct GridStats {
  int64_t tasks = 0;
  int64_t load_bytes = 0;
  int64_t store_bytes = 0;
  int64_t flops = 0;
  int64_t max_footprint_bytes = 0;
  int64_t max_intermediate_bytes = 0;
  int64_t traffic_bytes() const { return load_bytes + store_bytes; }
};
// Evaluates every task (its cost grows with the number of tasks).
GridStats propagate_grid(const ir::Graph& g, const Kernel& k, const std::vector<ir::Dims>& tile_shapes);

}  // namespace orchid::tile
