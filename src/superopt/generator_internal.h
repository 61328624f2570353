// The generator's worker (private to generator*.cpp): one depth-first search over μGraph
// prefixes with its own abstract-expression pool and solver. Kernel-level steps live in
// generator.cpp, block-level ones in generator_block.cpp.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "superopt/generator.h"

namespace orchid::superopt::detail {

using Clock = std::chrono::steady_clock;

// Canonical rank of an operator (Mirage §4.1): operators of a graph come in increasing rank.
// Operands are ordinals of tensors at the operator's level.
struct Rank {
  int32_t max_in = -1;
  std::vector<int32_t> in;
  int32_t type = 0;
  std::vector<int64_t> attrs;
  auto operator<=>(const Rank&) const = default;
};

// A μGraph that passed the screening tests.
struct Screened {
  UGraph g;
  std::string text;
  double cost = 0;
};

// Sizes of the growing vectors, to undo a step.
struct Mark {
  size_t tensors, ops, blocks, exprs, kernel_ordinals, ranks;
  int graph_defined;
  int64_t device_bytes;
};

// An operand of a block operator: an existing block tensor, or the part of block input
// `input` that an in_iter with `map` would load (created with its first reader).
struct Operand {
  TensorId tensor = -1;
  int input = -1;
  DimMap map;
  ir::Dims shape;
  bool lazy() const { return tensor < 0; }
};

constexpr int kLoopBit = 3;

// A block operator that passed its checks (Worker::check_block_op): what applying it needs.
struct BlockStep {
  Rank rank;
  std::vector<ir::Dims> shapes;  // of the operands
  ir::Dims out;
  std::vector<int32_t> classes;  // of the result's dims
  AbsId expr = -1;
  int64_t added = 0;             // block bytes, the in_iters it loads included
};

// The block graph being built.
struct OpenBlock {
  std::vector<TensorId> inputs;  // kernel tensors
  BlockGraph graph;              // grid, loop; ops filled when closed
  std::vector<std::vector<DimMap>> maps;  // per input: the maps in_iter may use
  std::vector<std::optional<UOp>> in_iter;  // per input, once loaded
  std::vector<UOp> ops;          // compute operators, in rank order
  std::vector<Rank> ranks;
  std::vector<int32_t> ordinal;  // per TensorId of a block tensor
  std::vector<int32_t> readers;  // per TensorId
  // Per TensorId: the grid dims (bit g) and the for-loop (bit kLoopBit) along which a block
  // tensor's value changes: those that partition an input it is computed from.
  std::vector<uint8_t> varies;
  // Per TensorId, per data dim: the grid dims and for-loop (same bits) that partition the
  // input dim it indexes. A dim reduced to one element (a partial sum) carries none.
  std::vector<std::vector<uint8_t>> dims;
  std::vector<std::vector<int32_t>> classes;  // per TensorId: dim classes of block tensors
  int64_t bytes = 0;             // the block tensors' bytes
};

class Worker {
 public:
  Worker(const ir::Graph& program, const SearchOptions& o, int index, int count, Clock::time_point deadline);
  // Empty when the program is inside the fragment.
  const std::string& unsupported() const { return unsupported_; }
  void run();

  std::vector<Screened> screened;
  SearchStats stats;

 private:
  // generator.cpp: the kernel graph.
  void kernel(int depth);
  std::vector<UOp> kernel_moves() const;
  bool push_kernel_op(UOp op);
  void after_kernel_push(int depth, const std::vector<TensorId>& fresh);
  void candidate(TensorId t);
  bool expired();
  bool mine(int depth, int64_t& choice) const;
  Mark mark() const;
  void restore(const Mark& m);
  TensorId new_tensor(ir::Dims shape, Level level, AbsId expr);
  bool keep(AbsId e);

  // generator_block.cpp: graph-defined operators.
  void open_block(const std::vector<TensorId>& inputs, const ir::Dims& grid, int64_t loop, int depth);
  void open_planned(OpenBlock& b, std::vector<int32_t>& plan, int depth);
  void block_step(OpenBlock& b, int depth);
  std::vector<Operand> operands(const OpenBlock& b) const;
  void try_block_op(OpenBlock& b, UOp op, const std::vector<Operand>& args, int depth);
  std::optional<BlockStep> check_block_op(const OpenBlock& b, const UOp& op, const std::vector<Operand>& args);
  TensorId load(OpenBlock& b, const Operand& a, std::vector<size_t>& loaded);
  void track(OpenBlock& b, TensorId t, std::vector<int32_t> classes, uint8_t varies, std::vector<uint8_t> dims);
  void close_block(OpenBlock& b, int depth);
  void close_with(OpenBlock& b, const std::vector<TensorId>& results, const std::vector<std::vector<DimMap>>& maps,
                  std::vector<DimMap>& chosen, int depth);
  std::vector<DimMap> out_maps(const OpenBlock& b, TensorId result);
  bool grid_is_used(const OpenBlock& b) const;

  const ir::Graph& program_;
  const SearchOptions& o_;
  int index_, count_;
  Clock::time_point deadline_;
  std::string unsupported_;

  AbsPool pool_;
  std::vector<AbsId> targets_;
  std::unique_ptr<SubexprOracle> oracle_;
  std::unique_ptr<FeatureModel> model_;
  ir::Dims out_shape_;

  UGraph g_;
  std::vector<AbsId> expr_;              // per TensorId
  std::vector<TensorId> kernel_tensors_;  // kernel ordinal -> tensor
  std::vector<int32_t> kernel_ordinal_;   // per TensorId (kernel tensors)
  std::vector<std::vector<int32_t>> classes_;  // per TensorId: dim classes of kernel tensors
  std::vector<bool> reduced_;                  // per class: the program sums along it
  std::vector<Rank> kernel_ranks_;
  int graph_defined_ = 0;
  int64_t device_bytes_ = 0;
  std::set<std::string> seen_;
  int64_t steps_ = 0;
  bool expired_ = false;
};

// Dim classes (dim_classes.h) of an operator's result from its operands' (-1: unknown, agrees
// with any), or nullopt where the operator would combine dims of different classes (a
// contraction of two classes, elementwise operands whose aligned dims differ in class) or sum
// along a class the program never sums over (`reduced`, per class).
std::optional<std::vector<int32_t>> classes_of(const UOp& op, const std::vector<std::vector<int32_t>>& in,
                                               const std::vector<ir::Dims>& in_shapes, const ir::Dims& out,
                                               const std::vector<bool>& reduced);

// Whether matmul(a, b) has fitting shapes (a quick test before an operator is built).
bool matmul_fits(const ir::Dims& a, const ir::Dims& b);

// The μGraph that computes only `out` from g's kernel graph (operators nothing needs are
// dropped, tensors renumbered and renamed in order), its output reshaped to `shape`.
UGraph extract(const UGraph& g, TensorId out, const ir::Dims& shape);

}  // namespace orchid::superopt::detail
