// The block-level steps of Algorithm 1: a graph-defined operator's block graph, built one
// operator at a time (in_iters with their first reader), closed by out_accums.
#include <algorithm>

#include "superopt/abstract_ops.h"
#include "superopt/generator_internal.h"

namespace orchid::superopt::detail {

namespace {

// Every map of a rank-r tensor for `block`: each grid dim and the loop partition a data dim or
// replicate; a loop of one iteration and grid dims of one block only replicate.
std::vector<DimMap> all_maps(size_t rank, const BlockGraph& block, bool replica_grid) {
  std::vector<DimMap> out;
  std::vector<int32_t> choices;
  for (size_t d = 0; d < rank; ++d) choices.push_back(static_cast<int32_t>(d));
  size_t dims = block.grid.size() + 1;  // grid dims, then the loop
  std::vector<size_t> at(dims, 0);
  auto options = [&](size_t i) -> std::vector<int32_t> {
    int64_t extent = i < block.grid.size() ? block.grid[i] : block.loop;
    if (extent == 1) return {kReplica};
    std::vector<int32_t> o = choices;
    if (i == block.grid.size() || replica_grid) o.insert(o.begin(), kReplica);
    return o;
  };
  std::vector<std::vector<int32_t>> opts;
  for (size_t i = 0; i < dims; ++i) opts.push_back(options(i));
  while (true) {
    DimMap m;
    for (size_t i = 0; i < block.grid.size(); ++i) m.grid.push_back(opts[i][at[i]]);
    m.loop = opts.back()[at.back()];
    out.push_back(m);
    size_t i = 0;
    while (i < dims && ++at[i] == opts[i].size()) at[i++] = 0;
    if (i == dims) break;
  }
  return out;
}

int64_t bytes_of(const ir::Dims& s) { return ir::numel(s) * 4; }

// Shapes of x with one dim of size 1 moved elsewhere (reshapes that move no data).
std::vector<ir::Dims> unit_moves(const ir::Dims& x) {
  std::vector<ir::Dims> out;
  for (size_t p = 0; p < x.size(); ++p) {
    if (x[p] != 1) continue;
    ir::Dims rest = x;
    rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(p));
    for (size_t q = 0; q <= rest.size(); ++q) {
      ir::Dims y = rest;
      y.insert(y.begin() + static_cast<std::ptrdiff_t>(q), 1);
      if (y != x && std::find(out.begin(), out.end(), y) == out.end()) out.push_back(y);
    }
  }
  return out;
}

uint8_t varies_of(const DimMap& m) {
  uint8_t bits = 0;
  for (size_t g = 0; g < m.grid.size(); ++g)
    if (m.grid[g] != kReplica) bits |= static_cast<uint8_t>(1u << g);
  if (m.loop != kReplica) bits |= 1u << kLoopBit;
  return bits;
}

// A per-dim property of a reshape that moves dims of size 1 (unit_moves): the other dims keep
// their order, and so do the unit dims among themselves; `none` where a dim has no source.
template <class T>
std::vector<T> unit_moved(const std::vector<T>& in, const ir::Dims& in_shape, const ir::Dims& out_shape, T none) {
  std::vector<T> big, unit, out;
  for (size_t i = 0; i < in.size(); ++i) (in_shape[i] == 1 ? unit : big).push_back(in[i]);
  size_t bi = 0, ui = 0;
  for (int64_t extent : out_shape) {
    bool is_unit = extent == 1 && ui < unit.size();
    out.push_back(is_unit ? unit[ui++] : bi < big.size() ? big[bi++] : none);
  }
  return out;
}

// Which grid dims and loop partition each data dim of an in_iter's result.
std::vector<uint8_t> dims_of(const DimMap& m, size_t rank, const BlockGraph& block) {
  std::vector<uint8_t> out(rank, 0);
  for (size_t g = 0; g < m.grid.size(); ++g)
    if (m.grid[g] != kReplica && block.grid[g] > 1) out[static_cast<size_t>(m.grid[g])] |= static_cast<uint8_t>(1u << g);
  if (m.loop != kReplica && block.loop > 1) out[static_cast<size_t>(m.loop)] |= 1u << kLoopBit;
  return out;
}

// The same for an operator's result from its operands'.
std::vector<uint8_t> dims_of(const UOp& op, const std::vector<std::vector<uint8_t>>& in,
                             const std::vector<ir::Dims>& in_shapes, const ir::Dims& out_shape) {
  size_t r = out_shape.size();
  std::vector<uint8_t> out(r, 0);
  switch (op.type) {
    case UOpType::Matmul:
    case UOpType::ConcatMatmul: {
      size_t lhs = op.type == UOpType::Matmul ? 1 : 2;  // operands on the left
      for (size_t k = 0; k < in.size(); ++k) {
        for (size_t i = 0; i + 2 < r; ++i) out[i] |= in[k][i];
        if (k < lhs) out[r - 2] |= in[k][r - 2];
        else out[r - 1] |= in[k][r - 1];
      }
      return out;
    }
    case UOpType::Reshape: return unit_moved(in[0], in_shapes[0], out_shape, uint8_t{0});
    case UOpType::Sum:
      out = in[0];
      if (out_shape[static_cast<size_t>(op.dim)] == 1) out[static_cast<size_t>(op.dim)] = 0;
      return out;
    case UOpType::Add:
    case UOpType::Mul:
    case UOpType::Div:
    case UOpType::Exp:
    case UOpType::Scale:
    case UOpType::Repeat:
      for (const auto& d : in)
        for (size_t i = 0; i < r; ++i) out[i] |= d[i];
      return out;
    case UOpType::Transpose:  // kernel operators only
    case UOpType::InIter:
    case UOpType::OutAccum:
    case UOpType::Block:
    case UOpType::Thread: break;
  }
  return out;
}


// Agreeing classes: equal, or one unknown.
bool agree(int32_t a, int32_t b) { return a < 0 || b < 0 || a == b; }
int32_t known(int32_t a, int32_t b) { return a >= 0 ? a : b; }

}  // namespace

bool matmul_fits(const ir::Dims& a, const ir::Dims& b) {
  size_t r = a.size();
  if (r < 2 || b.size() != r || a[r - 1] != b[r - 2]) return false;
  for (size_t i = 0; i + 2 < r; ++i)
    if (a[i] != b[i] && a[i] != 1 && b[i] != 1) return false;
  return true;
}

std::optional<std::vector<int32_t>> classes_of(const UOp& op, const std::vector<std::vector<int32_t>>& in,
                                               const std::vector<ir::Dims>& in_shapes, const ir::Dims& out,
                                               const std::vector<bool>& reduced) {
  size_t r = out.size();
  auto summable = [&](int32_t c) { return c < 0 || reduced[static_cast<size_t>(c)]; };
  std::vector<int32_t> c(r, -1);
  auto batch = [&](size_t i, const std::vector<size_t>& operands) -> bool {
    for (size_t k : operands) {
      if (in_shapes[k][i] == 1) continue;
      if (!agree(c[i], in[k][i])) return false;
      c[i] = known(c[i], in[k][i]);
    }
    return true;
  };
  switch (op.type) {
    case UOpType::Matmul:
    case UOpType::ConcatMatmul: {
      size_t pairs = op.type == UOpType::Matmul ? 1 : 2;  // (A_k, B_k) operand pairs
      std::vector<size_t> all;
      for (size_t k = 0; k < in.size(); ++k) all.push_back(k);
      for (size_t i = 0; i + 2 < r; ++i)
        if (!batch(i, all)) return std::nullopt;
      for (size_t p = 0; p < pairs; ++p) {
        const std::vector<int32_t>& a = in[p];
        const std::vector<int32_t>& b = in[pairs + p];
        if (!agree(a[r - 1], b[r - 2]) || !summable(known(a[r - 1], b[r - 2])) || !agree(c[r - 2], a[r - 2]) ||
            !agree(c[r - 1], b[r - 1]))
          return std::nullopt;
        c[r - 2] = known(c[r - 2], a[r - 2]);
        c[r - 1] = known(c[r - 1], b[r - 1]);
      }
      return c;
    }
    case UOpType::Add:
    case UOpType::Mul:
    case UOpType::Div:
      for (size_t i = 0; i < r; ++i)
        if (!batch(i, {0, 1})) return std::nullopt;
      return c;
    case UOpType::Sum:
      if (!summable(in[0][static_cast<size_t>(op.dim)])) return std::nullopt;
      return in[0];
    case UOpType::Exp:
    case UOpType::Scale:
    case UOpType::Repeat: return in[0];
    case UOpType::Transpose: return std::nullopt;  // a kernel operator only
    case UOpType::Reshape: return unit_moved(in[0], in_shapes[0], out, int32_t{-1});
    case UOpType::InIter:
    case UOpType::OutAccum:
    case UOpType::Block:
    case UOpType::Thread: return in[0];
  }
  return c;
}

void Worker::open_block(const std::vector<TensorId>& inputs, const ir::Dims& grid, int64_t loop, int depth) {
  OpenBlock b;
  b.inputs = inputs;
  b.graph.grid = grid;
  b.graph.loop = loop;
  b.in_iter.resize(inputs.size());
  if (o_.consistent_maps) {
    std::vector<int32_t> plan;
    open_planned(b, plan, depth);
    return;
  }
  for (TensorId t : inputs) {
    std::vector<DimMap> maps;
    for (const DimMap& m : all_maps(g_.shape(t).size(), b.graph, true)) {
      Shapes s = in_iter_shape(g_.shape(t), m, b.graph);
      if (s.error.empty() && bytes_of(s.out[0]) <= o_.block_memory_bytes) maps.push_back(m);
    }
    if (maps.empty()) return;
    b.maps.push_back(std::move(maps));
  }
  ++stats.blocks_opened;
  block_step(b, depth);
}

// A tiling plan: the class each grid dim and then the for-loop split (-1: none). Every input
// splits its dim of that class (the first, where it has several) or replicates. Grid dims of
// one extent take their classes in increasing order (swapping them gives the same μGraph).
void Worker::open_planned(OpenBlock& b, std::vector<int32_t>& plan, int depth) {
  size_t dims = b.graph.grid.size() + 1;
  if (plan.size() < dims) {
    int64_t extent = plan.size() < b.graph.grid.size() ? b.graph.grid[plan.size()] : b.graph.loop;
    std::vector<int32_t> options = {-1};
    if (extent > 1)
      for (TensorId t : b.inputs)
        for (int32_t c : classes_[static_cast<size_t>(t)])
          if (c >= 0 && std::find(options.begin(), options.end(), c) == options.end()) options.push_back(c);
    std::sort(options.begin(), options.end());
    for (int32_t c : options) {
      size_t g = plan.size();
      if (g > 0 && g < b.graph.grid.size() && b.graph.grid[g] == b.graph.grid[g - 1] && c < plan[g - 1]) continue;
      plan.push_back(c);
      open_planned(b, plan, depth);
      plan.pop_back();
    }
    return;
  }
  b.maps.clear();
  std::vector<bool> used(dims, false);
  for (TensorId t : b.inputs) {
    const std::vector<int32_t>& cls = classes_[static_cast<size_t>(t)];
    auto dim_of = [&](int32_t c) -> int32_t {
      for (size_t d = 0; d < cls.size(); ++d)
        if (c >= 0 && cls[d] == c) return static_cast<int32_t>(d);
      return kReplica;
    };
    DimMap m;
    for (size_t g = 0; g < b.graph.grid.size(); ++g) m.grid.push_back(dim_of(plan[g]));
    m.loop = dim_of(plan.back());
    for (size_t g = 0; g < dims; ++g) used[g] = used[g] || (g < m.grid.size() ? m.grid[g] : m.loop) != kReplica;
    Shapes s = in_iter_shape(g_.shape(t), m, b.graph);
    if (!s.error.empty() || bytes_of(s.out[0]) > o_.block_memory_bytes) return;
    b.maps.push_back({m});
  }
  for (size_t g = 0; g < dims; ++g) {
    int64_t extent = g < b.graph.grid.size() ? b.graph.grid[g] : b.graph.loop;
    if (extent > 1 && !used[g]) return;
  }
  ++stats.blocks_opened;
  block_step(b, depth);
}

std::vector<Operand> Worker::operands(const OpenBlock& b) const {
  std::vector<Operand> out;
  for (size_t i = 0; i < b.inputs.size(); ++i) {
    if (b.in_iter[i]) {
      TensorId t = b.in_iter[i]->outputs[0];
      out.push_back(Operand{t, static_cast<int>(i), b.in_iter[i]->map, g_.shape(t)});
      continue;
    }
    for (const DimMap& m : b.maps[i])
      out.push_back(Operand{-1, static_cast<int>(i), m, in_iter_shape(g_.shape(b.inputs[i]), m, b.graph).out[0]});
  }
  for (const UOp& op : b.ops) out.push_back(Operand{op.outputs[0], -1, {}, g_.shape(op.outputs[0])});
  return out;
}

void Worker::block_step(OpenBlock& b, int depth) {
  if (expired()) return;
  bool loaded = std::all_of(b.in_iter.begin(), b.in_iter.end(), [](const auto& u) { return u.has_value(); });
  if (!b.ops.empty() && loaded) close_block(b, depth);
  if (static_cast<int>(b.ops.size()) >= o_.max_block_ops) return;
  std::vector<Operand> args = operands(b);
  auto op_of = [](UOpType t) {
    UOp op;
    op.type = t;
    return op;
  };
  // Sums reduce a dim of the block's part whole (a partial sum would only re-tile it), and
  // reshapes move the unit dims of loaded parts (to line up a matmul's operands).
  for (const Operand& a : args) {
    try_block_op(b, op_of(UOpType::Exp), {a}, depth);
    for (size_t d = 0; d < a.shape.size(); ++d) {
      if (a.shape[d] < 2) continue;
      UOp op = op_of(UOpType::Sum);
      op.dim = static_cast<int32_t>(d);
      op.k = a.shape[d];
      try_block_op(b, op, {a}, depth);
    }
    if (!a.lazy() && b.ordinal[static_cast<size_t>(a.tensor)] >= 0) continue;  // not an in_iter's
    for (const ir::Dims& s : unit_moves(a.shape)) {
      UOp op = op_of(UOpType::Reshape);
      op.shape = s;
      try_block_op(b, op, {a}, depth);
    }
  }
  std::vector<std::pair<size_t, size_t>> products;  // operand pairs a matmul accepts
  for (size_t i = 0; i < args.size(); ++i)
    for (size_t j = 0; j < args.size(); ++j) {
      const Operand &a = args[i], &c = args[j];
      if (matmul_fits(a.shape, c.shape)) {
        products.emplace_back(i, j);
        try_block_op(b, op_of(UOpType::Matmul), {a, c}, depth);
      }
      if (!broadcast(a.shape, c.shape)) continue;
      try_block_op(b, op_of(UOpType::Div), {a, c}, depth);
      if (j < i) continue;  // add and mul commute
      try_block_op(b, op_of(UOpType::Add), {a, c}, depth);
      try_block_op(b, op_of(UOpType::Mul), {a, c}, depth);
    }
  if (!o_.concat_matmul) return;
  // (A1 ‖ A2)·(B1 over B2) = (A2 ‖ A1)·(B2 over B1): the first product comes first.
  for (auto [i1, j1] : products)
    for (auto [i2, j2] : products)
      if (std::pair(i1, j1) < std::pair(i2, j2) && args[i1].shape[args[i1].shape.size() - 2] == args[i2].shape[args[i2].shape.size() - 2] &&
          args[j1].shape.back() == args[j2].shape.back())
        try_block_op(b, op_of(UOpType::ConcatMatmul), {args[i1], args[i2], args[j1], args[j2]}, depth);
}

// The checks of a block operator before it is applied: canonical rank, shapes, dim classes,
// the block's memory (with the in_iters it loads) and its abstract expression.
std::optional<BlockStep> Worker::check_block_op(const OpenBlock& b, const UOp& op, const std::vector<Operand>& args) {
  // One in_iter per input: operands loading the same input must agree on its map.
  for (size_t i = 0; i < args.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (args[i].lazy() && args[j].lazy() && args[i].input == args[j].input && !(args[i].map == args[j].map))
        return std::nullopt;
  BlockStep step;
  for (const Operand& a : args) {
    int32_t ord = a.input >= 0 ? a.input : static_cast<int32_t>(b.inputs.size()) + b.ordinal[static_cast<size_t>(a.tensor)];
    step.rank.in.push_back(ord);
    step.rank.max_in = std::max(step.rank.max_in, ord);
  }
  step.rank.type = static_cast<int32_t>(op.type);
  step.rank.attrs = {op.dim, op.k};
  step.rank.attrs.insert(step.rank.attrs.end(), op.shape.begin(), op.shape.end());
  if (o_.canonical && !b.ranks.empty() && !(b.ranks.back() < step.rank)) {
    ++stats.pruned_canonical;
    return std::nullopt;
  }
  std::vector<AbsId> exprs;
  std::vector<std::vector<int32_t>> in_classes;
  for (const Operand& a : args) {
    TensorId source = a.lazy() ? b.inputs[static_cast<size_t>(a.input)] : a.tensor;
    step.shapes.push_back(a.shape);
    exprs.push_back(expr_[static_cast<size_t>(source)]);
    in_classes.push_back(a.lazy() ? classes_[static_cast<size_t>(source)] : b.classes[static_cast<size_t>(a.tensor)]);
  }
  Shapes s = infer_shapes(op, step.shapes, &b.graph);
  if (!s.error.empty()) {
    ++stats.pruned_shape;
    return std::nullopt;
  }
  step.out = s.out[0];
  std::optional<std::vector<int32_t>> cls = classes_of(op, in_classes, step.shapes, step.out, reduced_);
  if (!cls && o_.consistent_maps) {
    ++stats.pruned_dims;
    return std::nullopt;
  }
  step.classes = cls ? *cls : std::vector<int32_t>(step.out.size(), -1);
  step.added = bytes_of(step.out);
  for (size_t i = 0; i < args.size(); ++i) {
    bool first = true;
    for (size_t j = 0; j < i; ++j) first &= !(args[j].lazy() && args[j].input == args[i].input);
    if (args[i].lazy() && first) step.added += bytes_of(args[i].shape);
  }
  if (b.bytes + step.added > o_.block_memory_bytes) {
    ++stats.pruned_memory;
    return std::nullopt;
  }
  step.expr = abstract_of(pool_, op, exprs, step.shapes, &b.graph);
  if (!keep(step.expr)) return std::nullopt;
  return step;
}

// A block tensor's bookkeeping, sized to the tensor table.
void Worker::track(OpenBlock& b, TensorId t, std::vector<int32_t> classes, uint8_t varies, std::vector<uint8_t> dims) {
  size_t n = g_.tensors.size();
  b.ordinal.resize(n, -1);
  b.readers.resize(n, 0);
  b.varies.resize(n, 0);
  b.dims.resize(n);
  b.classes.resize(n);
  b.classes[static_cast<size_t>(t)] = std::move(classes);
  b.varies[static_cast<size_t>(t)] = varies;
  b.dims[static_cast<size_t>(t)] = std::move(dims);
}

// The in_iter that loads operand a (created now when a is lazy and its input not yet loaded).
TensorId Worker::load(OpenBlock& b, const Operand& a, std::vector<size_t>& loaded) {
  if (!a.lazy()) return a.tensor;
  size_t i = static_cast<size_t>(a.input);
  if (!b.in_iter[i]) {
    UOp in;
    in.type = UOpType::InIter;
    in.inputs = {b.inputs[i]};
    in.map = a.map;
    in.outputs = {new_tensor(a.shape, Level::Block, expr_[static_cast<size_t>(in.inputs[0])])};
    track(b, in.outputs[0], classes_[static_cast<size_t>(in.inputs[0])], varies_of(a.map),
          dims_of(a.map, a.shape.size(), b.graph));
    b.in_iter[i] = in;
    loaded.push_back(i);
  }
  return b.in_iter[i]->outputs[0];
}

void Worker::try_block_op(OpenBlock& b, UOp op, const std::vector<Operand>& args, int depth) {
  if (expired()) return;
  ++stats.block_ops_tried;
  std::optional<BlockStep> step = check_block_op(b, op, args);
  if (!step) return;
  Mark m = mark();
  std::vector<size_t> loaded;
  for (const Operand& a : args) op.inputs.push_back(load(b, a, loaded));
  op.outputs = {new_tensor(step->out, Level::Block, step->expr)};
  uint8_t varies = 0;
  std::vector<std::vector<uint8_t>> in_dims;
  for (TensorId t : op.inputs) {
    varies |= b.varies[static_cast<size_t>(t)];
    in_dims.push_back(b.dims[static_cast<size_t>(t)]);
  }
  track(b, op.outputs[0], step->classes, varies, dims_of(op, in_dims, step->shapes, step->out));
  b.ordinal[static_cast<size_t>(op.outputs[0])] = static_cast<int32_t>(b.ops.size());
  for (TensorId t : op.inputs) ++b.readers[static_cast<size_t>(t)];
  b.bytes += step->added;
  b.ops.push_back(op);
  b.ranks.push_back(step->rank);
  block_step(b, depth);
  b.ranks.pop_back();
  b.ops.pop_back();
  b.bytes -= step->added;
  for (TensorId t : op.inputs) --b.readers[static_cast<size_t>(t)];
  for (size_t i : loaded) b.in_iter[i].reset();
  restore(m);
}

bool Worker::grid_is_used(const OpenBlock& b) const {
  for (size_t gd = 0; gd < b.graph.grid.size(); ++gd) {
    if (b.graph.grid[gd] == 1) continue;
    bool used = false;
    for (const auto& in : b.in_iter) used |= in->map.grid[gd] != kReplica;
    if (!used) return false;
  }
  if (b.graph.loop == 1) return true;
  return std::any_of(b.in_iter.begin(), b.in_iter.end(), [](const auto& in) { return in->map.loop != kReplica; });
}

void Worker::close_block(OpenBlock& b, int depth) {
  if (!grid_is_used(b)) return;
  std::vector<TensorId> results;
  for (const UOp& op : b.ops)
    if (b.readers[static_cast<size_t>(op.outputs[0])] == 0) results.push_back(op.outputs[0]);
  if (results.empty() || static_cast<int>(results.size()) > o_.max_block_outputs) return;
  std::vector<std::vector<DimMap>> maps;
  for (TensorId r : results) {
    maps.push_back(out_maps(b, r));
    if (maps.back().empty()) return;
  }
  std::vector<DimMap> chosen;
  close_with(b, results, maps, chosen, depth);
}

// The omaps and fmaps an out_accum of `result` may use. Blocks that differ along a grid dim
// must compute different parts, and iterations different terms: a result that does not vary
// along a grid dim of several blocks, or along a for-loop of several iterations, would only
// repeat (or multiply) one value and is not closed. A grid dim places the blocks' parts along
// the data dims it partitions, where the result has such a dim; where it partitions only
// summed dims (a split reduction), along any dim. The for-loop concatenates along the dims
// it partitions, or else sums. Each map's abstract expression is checked once: it depends
// only on whether the loop sums.
std::vector<DimMap> Worker::out_maps(const OpenBlock& b, TensorId result) {
  uint8_t v = b.varies[static_cast<size_t>(result)];
  const std::vector<uint8_t>& d = b.dims[static_cast<size_t>(result)];
  uint8_t placed = 0;
  for (uint8_t bits : d) placed |= bits;
  for (size_t g = 0; g < b.graph.grid.size(); ++g)
    if (b.graph.grid[g] > 1 && !(v >> g & 1)) return {};
  if (b.graph.loop > 1 && !(v >> kLoopBit & 1)) return {};
  auto allowed = [&](int32_t dim, int bit) {
    if (!(placed >> bit & 1)) return bit != kLoopBit || dim == kReplica;
    return dim != kReplica && (d[static_cast<size_t>(dim)] >> bit & 1);
  };
  std::vector<DimMap> out;
  int keep_summed = -1, keep_concat = -1;  // unknown yet
  for (const DimMap& m : all_maps(g_.shape(result).size(), b.graph, false)) {
    bool ok = b.graph.loop == 1 || allowed(m.loop, kLoopBit);
    for (size_t g = 0; g < m.grid.size(); ++g) ok &= b.graph.grid[g] == 1 || allowed(m.grid[g], static_cast<int>(g));
    if (!ok) continue;
    int& known = m.loop == kReplica ? keep_summed : keep_concat;
    if (known < 0) {
      UOp acc;
      acc.type = UOpType::OutAccum;
      acc.map = m;
      known = keep(abstract_of(pool_, acc, {expr_[static_cast<size_t>(result)]}, {g_.shape(result)}, &b.graph));
    }
    if (known) out.push_back(m);
  }
  return out;
}

// Chooses an omap and fmap for each result after `chosen`, then adds the graph-defined
// operator.
void Worker::close_with(OpenBlock& b, const std::vector<TensorId>& results, const std::vector<std::vector<DimMap>>& maps,
                        std::vector<DimMap>& chosen, int depth) {
  if (expired()) return;
  size_t k = chosen.size();
  if (k < results.size()) {
    for (const DimMap& m : maps[k]) {
      chosen.push_back(m);
      close_with(b, results, maps, chosen, depth);
      chosen.pop_back();
    }
    return;
  }
  Mark m = mark();
  BlockGraph graph = b.graph;
  for (const auto& in : b.in_iter) graph.ops.push_back(*in);
  graph.ops.insert(graph.ops.end(), b.ops.begin(), b.ops.end());
  UOp block;
  block.type = UOpType::Block;
  block.inputs = b.inputs;
  for (size_t i = 0; i < results.size(); ++i) {
    UOp acc;
    acc.type = UOpType::OutAccum;
    acc.inputs = {results[i]};
    acc.map = chosen[i];
    Shapes s = out_accum_shape(g_.shape(results[i]), chosen[i], graph);
    if (!s.error.empty() || device_bytes_ + bytes_of(s.out[0]) > o_.device_memory_bytes) {
      ++stats.pruned_memory;
      restore(m);
      return;
    }
    AbsId e = abstract_of(pool_, acc, {expr_[static_cast<size_t>(results[i])]}, {g_.shape(results[i])}, &graph);
    acc.outputs = {new_tensor(s.out[0], Level::Kernel, e)};
    // A dim that blocks split along a summed class (a split reduction) now also runs over
    // the splits: its class is mixed (unknown), so a kernel sum may add the splits up.
    std::vector<int32_t> cls = b.classes[static_cast<size_t>(results[i])];
    const std::vector<uint8_t>& from = b.dims[static_cast<size_t>(results[i])];
    for (size_t g = 0; g < chosen[i].grid.size(); ++g) {
      int32_t j = chosen[i].grid[g];
      if (j != kReplica && graph.grid[g] > 1 && !(from[static_cast<size_t>(j)] >> g & 1)) cls[static_cast<size_t>(j)] = -1;
    }
    classes_[static_cast<size_t>(acc.outputs[0])] = cls;
    block.outputs.push_back(acc.outputs[0]);
    graph.ops.push_back(acc);
  }
  Rank r;
  for (TensorId t : block.inputs) {
    r.in.push_back(kernel_ordinal_[static_cast<size_t>(t)]);
    r.max_in = std::max(r.max_in, r.in.back());
  }
  r.type = static_cast<int32_t>(UOpType::Block);
  if (o_.canonical && !kernel_ranks_.empty() && r < kernel_ranks_.back()) {
    ++stats.pruned_canonical;
    restore(m);
    return;
  }
  ++stats.blocks_closed;
  block.body = static_cast<int32_t>(g_.blocks.size());
  g_.blocks.push_back(std::move(graph));
  g_.ops.push_back(block);
  kernel_ranks_.push_back(r);
  ++graph_defined_;
  after_kernel_push(depth, block.outputs);
  restore(m);
}

}  // namespace orchid::superopt::detail
