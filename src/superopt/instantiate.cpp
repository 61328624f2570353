// Rebuilding a μGraph at other sizes (instantiate.h).
#include "superopt/instantiate.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "superopt/abstract_ops.h"
#include "superopt/check_ugraph.h"
#include "support/error.h"

namespace orchid::superopt {

namespace {

// The reshape of `in` that moves the dims of one element as old_in -> old_out does, or none
// where `in` has other dims of one element.
std::optional<ir::Dims> moved_units(const ir::Dims& old_in, const ir::Dims& old_out, const ir::Dims& in) {
  if (in.size() != old_in.size()) return std::nullopt;
  std::vector<int64_t> rest;
  for (size_t d = 0; d < in.size(); ++d) {
    if ((old_in[d] == 1) != (in[d] == 1)) return std::nullopt;
    if (in[d] != 1) rest.push_back(in[d]);
  }
  ir::Dims out = old_out;
  size_t k = 0;
  for (int64_t& d : out)
    if (d != 1) {
      if (k == rest.size()) return std::nullopt;
      d = rest[k++];
    }
  if (k != rest.size()) return std::nullopt;
  return out;
}

class Rebuild {
 public:
  Rebuild(const UGraph& old, const ir::Dims& output) : old_(old), u_(old), output_(output) {}

  Instance run(const std::vector<ir::Dims>& inputs, const std::vector<Tiling>& tilings) {
    if (inputs.size() != u_.inputs.size()) return fail("the program has another number of inputs");
    if (!tilings.empty() && tilings.size() != u_.blocks.size()) return fail("one tiling per block graph expected");
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i].size() != old_.shape(u_.inputs[i]).size())
        return fail("input " + old_.tensor(u_.inputs[i]).name + " has another rank");
      shape(u_.inputs[i]) = inputs[i];
    }
    for (size_t b = 0; b < tilings.size(); ++b) {
      if (tilings[b].grid.size() != u_.blocks[b].grid.size()) return fail("a tiling's grid has another rank");
      u_.blocks[b].grid = tilings[b].grid;
      u_.blocks[b].loop = tilings[b].loop;
    }
    for (UOp& op : u_.ops) {
      if (op.type != UOpType::Block) {
        if (!redo(op, nullptr)) return fail(error_);
        continue;
      }
      BlockGraph& b = u_.blocks[static_cast<size_t>(op.body)];
      for (UOp& bop : b.ops) {
        if (bop.type != UOpType::Thread) {
          if (!redo(bop, &b)) return fail(error_);
          continue;
        }
        for (UOp& top : u_.threads[static_cast<size_t>(bop.body)].ops)
          if (!redo(top, &b)) return fail(error_);
      }
    }
    if (u_.outputs.size() != 1 || u_.shape(u_.outputs[0]) != output_)
      return fail("the result has shape " + ir::dims_str(u_.shape(u_.outputs[0])) + ", not the program's " + ir::dims_str(output_));
    try {
      verify(u_);
    } catch (const UserError& e) {
      return fail(e.what());
    }
    return Instance{std::move(u_), {}};
  }

 private:
  ir::Dims& shape(TensorId t) { return u_.tensors[static_cast<size_t>(t)].shape; }
  Instance fail(const std::string& why) const { return Instance{std::nullopt, why}; }

  // The operator's attributes and output shapes at the new sizes.
  bool redo(UOp& op, const BlockGraph* block) {
    std::vector<ir::Dims> in;
    for (TensorId t : op.inputs) in.push_back(u_.shape(t));
    const ir::Dims& old_in = old_.shape(op.inputs[0]);
    if (op.type == UOpType::Sum) op.k = summed(op, old_in, in[0], block);
    if (op.type == UOpType::Reshape) {
      bool final_view = block == nullptr && std::find(u_.outputs.begin(), u_.outputs.end(), op.outputs[0]) != u_.outputs.end();
      std::optional<ir::Dims> s = final_view ? std::optional<ir::Dims>(output_)
                                             : moved_units(old_in, old_.shape(op.outputs[0]), in[0]);
      if (!s) {
        error_ = "reshape " + old_.tensor(op.outputs[0]).name + " moves more than dims of one element at " + ir::dims_str(in[0]);
        return false;
      }
      op.shape = *s;
    }
    Shapes s = infer_shapes(op, in, block);
    if (!s.error.empty()) {
      error_ = std::string(uop_name(op.type)) + " " + old_.tensor(op.outputs[0]).name + ": " + s.error;
      return false;
    }
    for (size_t k = 0; k < op.outputs.size() && k < s.out.size(); ++k) {
      shape(op.outputs[k]) = s.out[k];
      // A block tensor's dim of one element (one kv head per block, a single query row) is
      // what its operators' broadcasting and reshapes rely on: it stays one.
      const ir::Dims& was = old_.shape(op.outputs[k]);
      for (size_t d = 0; block != nullptr && d < was.size(); ++d)
        if (was[d] == 1 && s.out[k][d] != 1) {
          error_ = "block tensor " + old_.tensor(op.outputs[k]).name + ": dim " + std::to_string(d) +
                   " of one element would be " + std::to_string(s.out[k][d]);
          return false;
        }
    }
    return true;
  }

  // A sum's terms per group at the new sizes: a whole dim stays whole; at the kernel level, a
  // sum over the blocks of the innermost grid dims that partition its operand's dim (the
  // partial results of a split reduction) sums the blocks of the same grid dims at their new
  // sizes; others keep k.
  int64_t summed(const UOp& op, const ir::Dims& old_in, const ir::Dims& in, const BlockGraph* block) const {
    auto d = static_cast<size_t>(op.dim);
    if (op.k == old_in[d]) return in[d];
    if (block != nullptr) return op.k;
    for (const UOp& k : u_.ops) {
      if (k.type != UOpType::Block) continue;
      auto b = static_cast<size_t>(k.body);
      for (const UOp& acc : u_.blocks[b].ops) {
        if (acc.type != UOpType::OutAccum || acc.outputs[0] != op.inputs[0]) continue;
        int64_t was = 1, now = 1;
        for (size_t g = acc.map.grid.size(); g-- > 0;) {
          if (acc.map.grid[g] != op.dim) continue;
          was *= old_.blocks[b].grid[g];
          now *= u_.blocks[b].grid[g];
          if (was == op.k) return now;
        }
      }
    }
    return op.k;
  }

  const UGraph& old_;
  UGraph u_;
  ir::Dims output_;
  std::string error_;
};

}  // namespace

Instance instantiate(const UGraph& g, const std::vector<ir::Dims>& inputs, const ir::Dims& output,
                     const std::vector<Tiling>& tilings) {
  return Rebuild(g, output).run(inputs, tilings);
}

std::vector<Tiling> tiling_choices(const UGraph& g, const std::vector<ir::Dims>& inputs, const ir::Dims& output,
                                   int cores, int64_t block_memory, size_t max) {
  ORCHID_CHECK(g.blocks.size() == 1) << "tilings are chosen for μGraphs of one block graph";
  const BlockGraph& b = g.blocks[0];
  std::vector<bool> partitions(b.grid.size(), false);
  bool loop_partitions = false;
  for (const UOp& op : b.ops) {
    if (op.type != UOpType::InIter && op.type != UOpType::OutAccum) continue;
    for (size_t d = 0; d < op.map.grid.size(); ++d) partitions[d] = partitions[d] || op.map.grid[d] != kReplica;
    loop_partitions = loop_partitions || (op.type == UOpType::InIter && op.map.loop != kReplica);
  }
  std::vector<int64_t> powers;
  for (int64_t p = 1; p <= 256; p *= 2) powers.push_back(p);
  std::vector<std::vector<int64_t>> options;  // per grid dim, then the loop
  for (size_t d = 0; d < b.grid.size(); ++d) options.push_back(partitions[d] ? powers : std::vector<int64_t>{b.grid[d]});
  options.push_back(loop_partitions ? powers : std::vector<int64_t>{b.loop});
  struct Scored {
    double balance;  // |log2(blocks / (8 per core))|
    Tiling tiling;
  };
  // Per group (the block's parts all fit block_memory; only what it stores besides its in_iter
  // parts does), per loop extent.
  std::map<int64_t, std::vector<Scored>> by_loop[2];
  std::vector<size_t> at(options.size(), 0);
  while (true) {
    Tiling t;
    for (size_t d = 0; d < b.grid.size(); ++d) t.grid.push_back(options[d][at[d]]);
    t.loop = options.back()[at.back()];
    int64_t tasks = ir::numel(t.grid);
    if (tasks >= cores && tasks <= int64_t{64} * cores) {
      Instance in = instantiate(g, inputs, output, {t});
      MemoryUse m = in.ugraph ? memory_use(*in.ugraph) : MemoryUse{};
      if (in.ugraph && m.stored_bytes <= block_memory)
        by_loop[m.block_bytes <= block_memory ? 0 : 1][t.loop].push_back(
            {std::abs(std::log2(static_cast<double>(tasks) / (8.0 * cores))), t});
    }
    size_t d = 0;  // the next combination, odometer-wise
    while (d < at.size() && ++at[d] == options[d].size()) at[d++] = 0;
    if (d == at.size()) break;
  }
  std::vector<Tiling> out;
  for (std::map<int64_t, std::vector<Scored>>& group : by_loop) {
    for (auto& [loop, v] : group)
      std::stable_sort(v.begin(), v.end(), [](const Scored& x, const Scored& y) {
        return std::tie(x.balance, x.tiling.grid) < std::tie(y.balance, y.tiling.grid);
      });
    for (size_t rank = 0; out.size() < max; ++rank) {
      size_t before = out.size();
      for (const auto& [loop, v] : group)
        if (rank < v.size() && out.size() < max) out.push_back(v[rank].tiling);
      if (out.size() == before) break;
    }
  }
  return out;
}

std::vector<Instantiated> instantiate_results(const SearchResult& r, const ir::Graph& small, const ir::Graph& program,
                                              int cores, int64_t block_memory, size_t max_ugraphs, size_t tilings,
                                              std::vector<std::string>* notes) {
  std::vector<ir::Dims> inputs;
  for (ir::ValueId v : program.inputs()) inputs.push_back(program.type(v).shape);
  ir::Dims output = program.type(program.outputs()[0]).shape;
  struct Fit {
    double cost;
    size_t source;
    std::vector<Tiling> tilings;
  };
  std::vector<Fit> fits;
  size_t none = 0;
  for (size_t i = 0; i < r.found.size() + r.unverified.size(); ++i) {
    const UGraph& g = i < r.found.size() ? r.found[i] : r.unverified[i - r.found.size()];
    std::vector<Tiling> t = g.blocks.size() == 1 ? tiling_choices(g, inputs, output, cores, block_memory, tilings)
                                                 : std::vector<Tiling>{};
    if (t.empty()) {
      ++none;
      continue;
    }
    fits.push_back({estimate_cost(*instantiate(g, inputs, output, {t[0]}).ugraph), i, std::move(t)});
  }
  std::stable_sort(fits.begin(), fits.end(), [](const Fit& a, const Fit& b) { return a.cost < b.cost; });
  if (none > 0)
    notes->push_back(std::to_string(none) + " of " + std::to_string(r.found.size() + r.unverified.size()) +
                     " μGraphs have no tiling at these sizes (one graph-defined kernel, " + std::to_string(cores) +
                     " to " + std::to_string(64 * cores) + " blocks, what a block stores besides its in_iter parts within " +
                     std::to_string(block_memory) + " bytes)");
  std::vector<Instantiated> out;
  size_t kept = 0, rejected = 0;
  for (const Fit& f : fits) {
    if (kept == max_ugraphs) break;
    bool found = f.source < r.found.size();
    const UGraph& g = found ? r.found[f.source] : r.unverified[f.source - r.found.size()];
    if (!found && check_ugraph(small, g).outcome != verify::Outcome::Equivalent) {
      ++rejected;
      continue;
    }
    ++kept;
    for (const Tiling& t : f.tilings)
      out.push_back({std::move(*instantiate(g, inputs, output, {t}).ugraph), t, f.source, f.cost});
  }
  if (rejected > 0) notes->push_back(std::to_string(rejected) + " screened μGraphs failed verification");
  return out;
}

std::string instance_label(const Instantiated& x) {
  std::string grid;
  for (int64_t g : x.tiling.grid) grid += (grid.empty() ? "" : "x") + std::to_string(g);
  return "μgraph " + std::to_string(x.source + 1) + " at grid " + grid + ", loop " + std::to_string(x.tiling.loop);
}

}  // namespace orchid::superopt
