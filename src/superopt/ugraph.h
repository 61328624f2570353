// μGraphs (Mirage §2): a tensor program at three levels of the compute hierarchy.
//
// - The kernel graph's operators each run on the whole machine; its tensors live in device
//   memory (DRAM on a CPU). An operator is pre-defined (a library kernel: matmul, sum, …) or
//   graph-defined (`block`): a block graph says what each block of its grid computes.
// - A block graph runs once per block of its grid (up to 3 dims) and, in each block, `loop`
//   times (its for-loop). `in_iter` loads the block's part of a kernel input for one
//   iteration: the imap partitions a data dim of the input among the blocks along each grid
//   dim (or replicates it), the fmap partitions the block's part among the iterations (or
//   replicates it). `out_accum` collects a result across iterations — summed where its fmap
//   replicates, concatenated along a data dim otherwise — and its omap places each block's
//   part in the kernel output. Block tensors live in a block's fast memory (shared memory on
//   a GPU, one core's L1/L2 on a CPU).
// - A thread graph (`thread`) is a chain of elementwise operators computed in registers; only
//   the results it names are stored back to the block's memory.
//
// All tensors of a μGraph share one table (TensorId), whatever their level; names are unique.
// Operators are stored in a topological order at each level. Semantics of each operator:
// ops.def and docs/superopt.md; lowering to primitives (so that the interpreter runs any
// μGraph and the finite-field check verifies it): lower.h.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/dtype.h"

namespace orchid::superopt {

constexpr uint8_t kLevelK = 1;  // kernel graph
constexpr uint8_t kLevelB = 2;  // block graph
constexpr uint8_t kLevelT = 4;  // thread graph

enum class UOpType : uint8_t {
#define ORCHID_UOP(e, text, inputs, levels) e,
#include "superopt/ops.def"
#undef ORCHID_UOP
};

enum class Level : uint8_t { Kernel, Block, Thread };

std::string_view uop_name(UOpType t);
std::optional<UOpType> parse_uop(std::string_view text);
int uop_inputs(UOpType t);      // -1: any number
uint8_t uop_levels(UOpType t);  // kLevel* bits
bool uop_allowed(UOpType t, Level level);
bool is_elementwise(UOpType t);  // add, mul, div, exp
std::string_view level_name(Level l);

using TensorId = int32_t;

struct UTensor {
  std::string name;
  ir::DType dtype = ir::DType::F32;
  ir::Dims shape;
  Level level = Level::Kernel;
};

// The replica dimension φ: a grid dim or the for-loop that partitions no data dim.
constexpr int32_t kReplica = -1;

// For in_iter: imap (grid) and fmap (loop); for out_accum: omap (grid) and fmap (loop). One
// entry of `grid` per grid dim of the block graph: the data dim it partitions, or kReplica.
// Grid dims that partition one data dim split it in grid order (x outermost); the for-loop
// splits each block's part of its data dim again.
struct DimMap {
  std::vector<int32_t> grid;
  int32_t loop = kReplica;
  bool operator==(const DimMap&) const = default;
};

struct UOp {
  UOpType type = UOpType::Add;
  std::vector<TensorId> inputs;
  std::vector<TensorId> outputs;
  int32_t dim = 0;  // sum, repeat: the data dim
  int64_t k = 1;    // sum: elements per group; repeat: copies of each element
  DimMap map;       // in_iter, out_accum
  ir::Dims shape;   // reshape: the result's shape; transpose: the permutation
  double factor = 1;  // scale: the constant
  int32_t body = -1;  // block: index of its BlockGraph; thread: of its ThreadGraph
  bool operator==(const UOp&) const = default;
};

struct BlockGraph {
  ir::Dims grid;     // 1 to 3 dims (x, y, z)
  int64_t loop = 1;  // for-loop iterations
  std::vector<UOp> ops;  // in_iter first … out_accum last (one per output of its `block`)
  bool operator==(const BlockGraph&) const = default;
};

// Elementwise operators over the thread op's inputs and earlier results; the thread op's
// outputs are results of these operators.
struct ThreadGraph {
  std::vector<UOp> ops;
  bool operator==(const ThreadGraph&) const = default;
};

struct UGraph {
  std::string name = "main";
  std::vector<UTensor> tensors;
  std::vector<TensorId> inputs;   // kernel tensors, in the order of the program's inputs
  std::vector<TensorId> outputs;  // kernel tensors, in the order of the program's outputs
  std::vector<UOp> ops;           // the kernel graph
  std::vector<BlockGraph> blocks;
  std::vector<ThreadGraph> threads;

  const UTensor& tensor(TensorId t) const { return tensors[static_cast<size_t>(t)]; }
  const ir::Dims& shape(TensorId t) const { return tensor(t).shape; }
  TensorId add_tensor(std::string name, ir::DType dtype, ir::Dims shape, Level level);
  std::optional<TensorId> find(std::string_view name) const;
};

// ---- Shape inference: the operator's output shapes from its inputs' and attributes, or a
// message saying why they do not fit (empty shapes vector). Block operators see shapes of
// one block for one iteration; in_iter and out_accum need their block graph's grid and loop.
struct Shapes {
  std::vector<ir::Dims> out;
  std::string error;  // empty when the shapes fit
};
Shapes infer_shapes(const UOp& op, const std::vector<ir::Dims>& in, const BlockGraph* block);

// The block's part of a tensor of shape `whole` under map (in_iter), or an error.
Shapes in_iter_shape(const ir::Dims& whole, const DimMap& map, const BlockGraph& block);
// The kernel tensor an out_accum of per-iteration shape `part` builds, or an error.
Shapes out_accum_shape(const ir::Dims& part, const DimMap& map, const BlockGraph& block);
// The broadcast shape of an elementwise operator's operands (equal ranks; dims equal or 1).
std::optional<ir::Dims> broadcast(const ir::Dims& a, const ir::Dims& b);

// The kernel-level transposes that are views: every reader is a graph-defined operator (whose
// in_iter loads read the operand's buffer with the view's strides), the result is no output
// and the operand is laid out row-major (not such a view itself). Per view: its element strides into the operand's buffer.
std::map<TensorId, std::vector<int64_t>> strided_views(const UGraph& g);
// The kernel tensors that share their operand's buffer: reshapes' results (row-major views)
// and strided_views'.
std::set<TensorId> buffer_views(const UGraph& g);

// ---- Memory. Bytes of the kernel graph's tensors, and the largest block's fast memory: every
// block tensor it stores (in_iter results, operator results, accumulators; results kept in a
// thread graph's registers are not stored).
struct MemoryUse {
  int64_t device_bytes = 0;
  int64_t block_bytes = 0;  // the largest over the block graphs
  // The same without the in_iter parts: what a CPU block stores, since it reads those where
  // they lie in the kernel inputs (codegen/cpu/ugraph_kernel.h).
  int64_t stored_bytes = 0;
};
MemoryUse memory_use(const UGraph& g);
int64_t block_bytes(const UGraph& g, const BlockGraph& b, bool in_iter_parts = true);

// ---- Verification: every structural rule of a μGraph, with a message naming the operator
// and tensor that breaks one (UserError). Run by the parser and after lowering-related edits.
void verify(const UGraph& g);

}  // namespace orchid::superopt
