// The analytic latency of a kernel on a target: Welder's traffic and footprint model (§3.1)
// with its hardware penalties (§4.1), for a kernel run as a grid of tasks (grid.h) the way
// Orchid's code generators run it. It is the cost the orchestrator sees before anything is
// measured, and ranks schedules for the tuner.
//
// For one task (a tile of every output), tile propagation gives the region of every value
// the task touches. Over the grid:
//  - grid traffic: each task loads its input regions and stores its output tiles, counted in
//    whole transactions of main memory (a row of a region that starts or ends inside a cache
//    line, an HBM sector, moves the whole of it: §4.1's uncoalesced access);
//  - unique traffic: each byte of the kernel's inputs and outputs once, served by the fastest
//    level that holds all of them (the private levels of all cores together: a kernel's
//    inputs were just written by the kernels before it, its outputs are read by those after
//    it); main memory when none does. The rest of the grid traffic (an input every task
//    reads again, such as a matmul's weights) is served by the fastest level that holds every
//    such input: a private level (per core, per SM) when all of them fit one instance, a
//    shared level when they fit it whole. A shared level serving the unique bytes streams
//    them more slowly where the grid's runs are short (CostOptions::efficient_run_bytes);
//  - intermediate traffic: a primitive computed into memory (not inlined into its consumer,
//    whose values stay in registers: Welder's connection at the register level) writes its
//    region once and each consumer in the kernel reads it; this traffic stays in the fastest
//    private level that holds the task's footprint;
//  - footprint: every region a task holds, allocated best-fit in topological order and freed
//    after its last use (§3.1); kernel outputs are held to the end;
//  - write-allocate (CostConfig::write_allocate): outputs stored through the caches, where a
//    shared level serves the unique bytes, are read from it before they are written;
//  - two-level kernels (InnerLevel): the nodes of the inner loop are priced per sub-tile (their
//    work and the values they pass each other, from the level holding a sub-tile's
//    footprint), the others per task; a task holds one sub-tile's values of the inner nodes;
//  - compute: the kernel's work in vector instruction slots (work_per_point: an FMA of a
//    matmul or conv term is one slot, as is each add, compare or select; a division or
//    square root four; exp, log, tanh, erf and the like twelve, Orchid's polynomials) at the
//    target's rate (its f32 peak counts an FMA as 2 FLOPs), scaled by the vector lanes used
//    (the full width for the primitives that always use it), the elements of an elementwise
//    row past its last whole vector costing an iteration each, a primitive computed in
//    register blocks paying for whole blocks; a reduction folded into a single scalar
//    accumulator runs on one lane at the latency of its fold, four times the slots.
// Latency = max(compute, each level's traffic / its bandwidth) / utilization + the tasks'
// fixed cost, where utilization = tasks / (waves × cores) is §4.1's parallelism penalty
// (waves = ceil(tasks / cores)), and each task costs `task_overhead_seconds` of one core.
//
// Tasks are sampled, not enumerated: along each grid dim of n > 4 tasks, the first two and the
// last two are evaluated and the second stands for itself and the n − 4 interior ones. This
// is exact for affine index maps, whose interior tasks are translates of each other.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "target/target.h"
#include "tile/grid.h"
#include "tile/kernel.h"

namespace orchid::tile {

// A primitive computed in register blocks of `rows` × `cols` of its output's dims row_dim and
// col_dim (the GEMM micro-kernel's 6 × 16): a task's region is covered by whole blocks, so a
// region of 4 × 20 costs the work of 6 × 32.
struct RegisterBlock {
  size_t row_dim = 0, col_dim = 0;
  int64_t rows = 1, cols = 1;
  bool operator==(const RegisterBlock&) const = default;
};

// The inner loop of a two-level kernel: each task's tile cut into sub-tiles (the grid of them
// over the whole output; task g holds sub-tiles g*ratio[d] .. along dim d) and the nodes
// computed per sub-tile, from values the other nodes computed over the task.
struct InnerLevel {
  TaskGrid grid;
  ir::Dims ratio;
  std::set<ir::NodeId> nodes;
};

struct CostConfig {
  TaskGrid grid;
  std::optional<InnerLevel> inner;  // two-level kernels
  std::set<ir::NodeId> inlined;  // computed inside their consumer: their values stay in registers
  int vector_lanes = 0;          // f32 lanes of the innermost loops; 0: the target's full width
  std::set<ir::NodeId> full_width;  // computed at the full width whatever vector_lanes (a GEMM micro-kernel)
  std::set<ir::NodeId> serial;      // reductions folded a term at a time into one scalar accumulator
  // Linear primitives (matmul, conv) whose sums run a row of accumulators at a time, not in
  // register blocks: each multiply-add also loads and stores its accumulator.
  std::set<ir::NodeId> unblocked;
  std::map<ir::NodeId, RegisterBlock> blocks;  // computed in whole register blocks
  // Outputs are stored through the caches (not streamed): where a shared level serves the
  // kernel's unique bytes, each output line is read from it before it is written.
  bool write_allocate = false;
};

struct CostOptions {
  double task_overhead_seconds = 1e-8;  // entering one task on one core (its setup, its tables)
  // A shared level (L3, DRAM, HBM) streams at its bandwidth over contiguous runs of at least
  // this many bytes; a shorter run (a column strip of a matrix) takes as long as one this long.
  int64_t efficient_run_bytes = 256;
};

struct LevelTraffic {
  std::string level;  // the target's name of the level
  int64_t bytes = 0;  // moved to and from it
  double seconds = 0; // bytes / its bandwidth (0 where the level has no bandwidth)
  bool operator==(const LevelTraffic&) const = default;
};

struct Estimate {
  double seconds = 0;              // the analytic latency
  int64_t tasks = 0;
  double utilization = 1;          // tasks / (waves × cores)
  int64_t flops = 0;
  double work = 0;                 // vector instruction slots (work_per_point)
  double narrow_work = 0;          // those computed at vector_lanes, with their rows' scalar remainders
  double compute_seconds = 0;
  int64_t grid_bytes = 0;          // Σ tasks: input regions and output tiles, in transactions
  int64_t unique_bytes = 0;        // the kernel's inputs (as read) and outputs, once each
  int64_t intermediate_bytes = 0;  // Σ tasks: intermediates written and read back
  int64_t footprint_bytes = 0;     // the largest task's, best fit
  int64_t sub_intermediate_bytes = 0;  // two-level: those of the inner nodes, Σ sub-tiles
  int64_t sub_footprint_bytes = 0;     // two-level: the largest sub-tile's
  std::vector<LevelTraffic> levels;  // every level below the registers, fastest first
};

// The target must have an f32 peak and a main-memory bandwidth.
Estimate estimate_kernel(const ir::Graph& g, const Kernel& k, const CostConfig& c, const target::Target& t,
                         const CostOptions& o = {});

// Bytes of `r` (a region of a row-major tensor of `shape` and `element_bytes` per element)
// counted in whole transactions of `transaction_bytes`: its contiguous runs, each from its
// start's offset within a transaction (that of the region's first element), and each counted
// as `min_run` bytes at least.
int64_t transaction_bytes(const Region& r, const ir::Dims& shape, int64_t element_bytes, int64_t transaction_bytes,
                          int64_t min_run = 0);

// Vector instruction slots one point (with one reduction term) of p costs.
double work_per_point(const ir::Primitive& p);

// The bytes of level `level` one core has: an instance of a private level, a core's share of a
// shared one.
int64_t core_share(const target::Target& t, size_t level);

// Welder's MemFootprint of one task: the regions of `stats` (what propagate_kernel found)
// allocated best-fit, 64-byte aligned, in topological order, each freed after its last use in
// the kernel (its values held by an inlined consumer until that consumer's own consumer
// runs); kernel inputs are allocated at their first use, inlined primitives' values never.
int64_t task_footprint(const ir::Graph& g, const Kernel& k, const TileStats& stats,
                       const std::set<ir::NodeId>& inlined);

}  // namespace orchid::tile
