#include "superopt/ugraph.h"

#include <algorithm>
#include <sstream>

namespace orchid::superopt {

namespace {

struct UOpInfo {
  std::string_view name;
  int inputs;
  uint8_t levels;
};

constexpr UOpInfo kUOps[] = {
#define ORCHID_UOP(e, text, inputs, levels) {text, inputs, levels},
#include "superopt/ops.def"
#undef ORCHID_UOP
};

const UOpInfo& info(UOpType t) { return kUOps[static_cast<size_t>(t)]; }

uint8_t level_bit(Level l) {
  switch (l) {
    case Level::Kernel: return kLevelK;
    case Level::Block: return kLevelB;
    case Level::Thread: return kLevelT;
  }
  return 0;
}

Shapes fail(std::string msg) { return Shapes{{}, std::move(msg)}; }

std::string str(const ir::Dims& d) { return ir::dims_str(d); }

// Leading (batch) dims of operands that are multiplied: equal ranks, each dim equal or 1.
std::optional<ir::Dims> batch_of(const std::vector<const ir::Dims*>& operands) {
  size_t rank = operands[0]->size();
  ir::Dims batch(rank - 2, 1);
  for (const ir::Dims* d : operands) {
    if (d->size() != rank) return std::nullopt;
    for (size_t i = 0; i + 2 < rank; ++i) {
      int64_t v = (*d)[i];
      if (v != 1 && batch[i] != 1 && v != batch[i]) return std::nullopt;
      batch[i] = std::max(batch[i], v);
    }
  }
  return batch;
}

Shapes matmul_shapes(const std::vector<ir::Dims>& in) {
  const ir::Dims &x = in[0], &y = in[1];
  if (x.size() < 2 || y.size() < 2) return fail("matmul needs rank >= 2, got " + str(x) + " and " + str(y));
  std::optional<ir::Dims> batch = batch_of({&x, &y});
  size_t r = x.size();
  if (!batch || x[r - 1] != y[r - 2])
    return fail("matmul of " + str(x) + " and " + str(y) + " does not fit");
  batch->push_back(x[r - 2]);
  batch->push_back(y[r - 1]);
  return Shapes{{*batch}, {}};
}

Shapes concat_matmul_shapes(const std::vector<ir::Dims>& in) {
  for (const ir::Dims& d : in)
    if (d.size() < 2) return fail("concat_matmul needs rank >= 2, got " + str(d));
  std::optional<ir::Dims> batch = batch_of({&in[0], &in[1], &in[2], &in[3]});
  size_t r = in[0].size();
  bool fits = batch && in[0][r - 2] == in[1][r - 2] && in[2][r - 1] == in[3][r - 1] &&
              in[0][r - 1] == in[2][r - 2] && in[1][r - 1] == in[3][r - 2];
  if (!fits)
    return fail("concat_matmul of " + str(in[0]) + " ‖ " + str(in[1]) + " and " + str(in[2]) +
                " over " + str(in[3]) + " does not fit");
  batch->push_back(in[0][r - 2]);
  batch->push_back(in[2][r - 1]);
  return Shapes{{*batch}, {}};
}

Shapes sum_or_repeat_shapes(const UOp& op, const ir::Dims& x) {
  if (op.dim < 0 || static_cast<size_t>(op.dim) >= x.size())
    return fail("dim " + std::to_string(op.dim) + " is outside " + str(x));
  if (op.k < 1) return fail("k must be at least 1, got " + std::to_string(op.k));
  ir::Dims out = x;
  int64_t& d = out[static_cast<size_t>(op.dim)];
  if (op.type == UOpType::Repeat) {
    d *= op.k;
  } else {
    if (d % op.k != 0)
      return fail("dim " + std::to_string(op.dim) + " of " + str(x) + " is not a multiple of " +
                  std::to_string(op.k));
    d /= op.k;
  }
  return Shapes{{out}, {}};
}

// The data dims a map names must be dims of a rank-`rank` tensor. Several grid dims may
// partition one data dim: the earlier grid dim is the outer one.
std::string check_map(const DimMap& map, const BlockGraph& block, size_t rank) {
  if (map.grid.size() != block.grid.size())
    return "the map has " + std::to_string(map.grid.size()) + " grid entries for a grid of " +
           std::to_string(block.grid.size()) + " dims";
  for (int32_t d : map.grid)
    if (d != kReplica && (d < 0 || static_cast<size_t>(d) >= rank))
      return "grid dim maps to dim " + std::to_string(d) + " of a rank-" + std::to_string(rank) + " tensor";
  if (map.loop != kReplica && (map.loop < 0 || static_cast<size_t>(map.loop) >= rank))
    return "the for-loop maps to dim " + std::to_string(map.loop) + " of a rank-" + std::to_string(rank) + " tensor";
  return {};
}

}  // namespace

std::string_view uop_name(UOpType t) { return info(t).name; }

std::optional<UOpType> parse_uop(std::string_view text) {
  for (size_t i = 0; i < std::size(kUOps); ++i)
    if (kUOps[i].name == text) return static_cast<UOpType>(i);
  return std::nullopt;
}

int uop_inputs(UOpType t) { return info(t).inputs; }
uint8_t uop_levels(UOpType t) { return info(t).levels; }
bool uop_allowed(UOpType t, Level level) { return (info(t).levels & level_bit(level)) != 0; }

bool is_elementwise(UOpType t) {
  return t == UOpType::Add || t == UOpType::Mul || t == UOpType::Div || t == UOpType::Exp;
}

std::string_view level_name(Level l) {
  switch (l) {
    case Level::Kernel: return "kernel";
    case Level::Block: return "block";
    case Level::Thread: return "thread";
  }
  return "?";
}

TensorId UGraph::add_tensor(std::string tname, ir::DType dtype, ir::Dims tshape, Level level) {
  tensors.push_back(UTensor{std::move(tname), dtype, std::move(tshape), level});
  return static_cast<TensorId>(tensors.size() - 1);
}

std::optional<TensorId> UGraph::find(std::string_view tname) const {
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == tname) return static_cast<TensorId>(i);
  return std::nullopt;
}

std::optional<ir::Dims> broadcast(const ir::Dims& a, const ir::Dims& b) {
  if (a.size() != b.size()) return std::nullopt;
  ir::Dims out(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i] && a[i] != 1 && b[i] != 1) return std::nullopt;
    out[i] = a[i] == 1 ? b[i] : a[i];
  }
  return out;
}

Shapes in_iter_shape(const ir::Dims& whole, const DimMap& map, const BlockGraph& block) {
  if (std::string e = check_map(map, block, whole.size()); !e.empty()) return fail(e);
  ir::Dims part = whole;
  auto divide = [&](int32_t d, int64_t parts, const char* what) -> std::string {
    int64_t& n = part[static_cast<size_t>(d)];
    if (n % parts != 0)
      return "dim " + std::to_string(d) + " of " + str(whole) + " does not split into " +
             std::to_string(parts) + " " + what;
    n /= parts;
    return {};
  };
  for (size_t g = 0; g < map.grid.size(); ++g)
    if (map.grid[g] != kReplica)
      if (std::string e = divide(map.grid[g], block.grid[g], "blocks"); !e.empty()) return fail(e);
  if (map.loop != kReplica)
    if (std::string e = divide(map.loop, block.loop, "iterations"); !e.empty()) return fail(e);
  return Shapes{{part}, {}};
}

Shapes out_accum_shape(const ir::Dims& part, const DimMap& map, const BlockGraph& block) {
  if (std::string e = check_map(map, block, part.size()); !e.empty()) return fail(e);
  ir::Dims whole = part;
  for (size_t g = 0; g < map.grid.size(); ++g) {
    if (map.grid[g] == kReplica) {
      if (block.grid[g] != 1)
        return fail("grid dim " + std::to_string(g) + " of " + std::to_string(block.grid[g]) +
                    " blocks maps to no data dim: blocks would write the same elements");
      continue;
    }
    whole[static_cast<size_t>(map.grid[g])] *= block.grid[g];
  }
  if (map.loop != kReplica) whole[static_cast<size_t>(map.loop)] *= block.loop;
  return Shapes{{whole}, {}};
}

Shapes infer_shapes(const UOp& op, const std::vector<ir::Dims>& in, const BlockGraph* block) {
  int want = uop_inputs(op.type);
  if (want >= 0 && in.size() != static_cast<size_t>(want))
    return fail(std::string(uop_name(op.type)) + " takes " + std::to_string(want) + " inputs, got " +
                std::to_string(in.size()));
  switch (op.type) {
    case UOpType::Matmul: return matmul_shapes(in);
    case UOpType::ConcatMatmul: return concat_matmul_shapes(in);
    case UOpType::Sum:
    case UOpType::Repeat: return sum_or_repeat_shapes(op, in[0]);
    case UOpType::Add:
    case UOpType::Mul:
    case UOpType::Div: {
      std::optional<ir::Dims> b = broadcast(in[0], in[1]);
      if (!b) return fail("operands " + str(in[0]) + " and " + str(in[1]) + " do not broadcast");
      return Shapes{{*b}, {}};
    }
    case UOpType::Exp:
    case UOpType::Scale: return Shapes{{in[0]}, {}};
    case UOpType::Transpose: {
      ir::Dims out;
      std::vector<bool> seen(in[0].size(), false);
      for (int64_t p : op.shape) {
        if (p < 0 || static_cast<size_t>(p) >= in[0].size() || seen[static_cast<size_t>(p)])
          return fail("perm " + str(op.shape) + " is not a permutation of the dims of " + str(in[0]));
        seen[static_cast<size_t>(p)] = true;
        out.push_back(in[0][static_cast<size_t>(p)]);
      }
      if (out.size() != in[0].size()) return fail("perm " + str(op.shape) + " does not permute " + str(in[0]));
      return Shapes{{out}, {}};
    }
    case UOpType::Reshape:
      if (ir::numel(op.shape) != ir::numel(in[0]))
        return fail("cannot reshape " + str(in[0]) + " to " + str(op.shape));
      return Shapes{{op.shape}, {}};
    case UOpType::InIter:
      if (!block) return fail("in_iter outside a block graph");
      return in_iter_shape(in[0], op.map, *block);
    case UOpType::OutAccum:
      if (!block) return fail("out_accum outside a block graph");
      return out_accum_shape(in[0], op.map, *block);
    case UOpType::Block:
    case UOpType::Thread: return fail("the shapes of a nested graph come from the graph itself");
  }
  return fail("unknown operator");
}

std::map<TensorId, std::vector<int64_t>> strided_views(const UGraph& g) {
  std::map<TensorId, bool> only_blocks;  // per kernel tensor read: whether only blocks read it
  for (const UOp& op : g.ops)
    for (TensorId t : op.inputs) {
      auto [at, fresh] = only_blocks.emplace(t, true);
      at->second = at->second && op.type == UOpType::Block;
    }
  std::map<TensorId, std::vector<int64_t>> views;
  for (const UOp& op : g.ops) {
    if (op.type != UOpType::Transpose || views.count(op.inputs[0])) continue;
    TensorId t = op.outputs[0];
    if (std::find(g.outputs.begin(), g.outputs.end(), t) != g.outputs.end()) continue;  // written row-major
    auto read = only_blocks.find(t);
    if (read == only_blocks.end() || !read->second) continue;
    std::vector<int64_t> from = ir::row_major_strides(g.shape(op.inputs[0])), st;
    for (int64_t p : op.shape) st.push_back(from[static_cast<size_t>(p)]);
    views.emplace(t, std::move(st));
  }
  return views;
}

std::set<TensorId> buffer_views(const UGraph& g) {
  std::set<TensorId> views;
  for (const auto& [t, strides] : strided_views(g)) views.insert(t);
  for (const UOp& op : g.ops)
    if (op.type == UOpType::Reshape) views.insert(op.outputs[0]);
  return views;
}

int64_t block_bytes(const UGraph& g, const BlockGraph& b, bool in_iter_parts) {
  int64_t bytes = 0;
  auto size = [&](TensorId t) { return ir::numel(g.shape(t)) * ir::dtype_bytes(g.tensor(t).dtype); };
  for (const UOp& op : b.ops) {
    if (op.type == UOpType::OutAccum) {
      // A sum across iterations keeps its accumulator in the block; a concatenation writes
      // each iteration's part out directly.
      if (op.map.loop == kReplica && b.loop > 1) bytes += size(op.inputs[0]);
      continue;
    }
    if (op.type == UOpType::InIter && !in_iter_parts) continue;
    for (TensorId t : op.outputs) bytes += size(t);
  }
  return bytes;
}

MemoryUse memory_use(const UGraph& g) {
  MemoryUse m;
  for (const UTensor& t : g.tensors)
    if (t.level == Level::Kernel) m.device_bytes += ir::numel(t.shape) * ir::dtype_bytes(t.dtype);
  for (const BlockGraph& b : g.blocks) {
    m.block_bytes = std::max(m.block_bytes, block_bytes(g, b));
    m.stored_bytes = std::max(m.stored_bytes, block_bytes(g, b, false));
  }
  return m;
}

}  // namespace orchid::superopt
