#include "codegen/cuda/schedule.h"

#include <algorithm>

#include "codegen/cpu/lower.h"
#include "support/error.h"

namespace orchid::codegen::cuda {

std::string schedule_str(const Schedule& s) {
  std::string tile;
  for (size_t d = 0; d < s.tile.size(); ++d) tile += (d ? "x" : "") + std::to_string(s.tile[d]);
  return "tile=" + (tile.empty() ? std::string("-") : tile) + " threads=" + std::to_string(s.threads) +
         " inline=" + (s.inline_single_use ? "1" : "0");
}

cpu::Schedule lowering_schedule(const Schedule& s) {
  cpu::Schedule c;
  c.tile = s.tile;
  c.vector_width = 1;
  c.unroll = 1;
  c.inline_single_use = s.inline_single_use;
  c.stream = false;
  c.prefetch = 0;
  c.gemm = false;
  return c;
}

Schedule default_schedule(const ir::Graph& g, const tile::Kernel& k, int threads, int per_thread) {
  ORCHID_CHECK(!k.outputs.empty()) << "a kernel without outputs";
  ir::ValueId anchor = k.outputs[0];  // as lowering picks it: the largest output
  for (ir::ValueId v : k.outputs)
    if (g.type(v).numel() > g.type(anchor).numel()) anchor = v;
  const ir::Dims& shape = g.type(anchor).shape;
  Schedule s;
  s.threads = threads;
  s.tile = shape;
  // An anchor computed by a reduction: each element's terms are shared by a group of threads.
  int64_t terms = std::max<int64_t>(1, ir::numel(g.node(g.value(anchor).node).reduce_domain));
  const int64_t most = std::max<int64_t>(1, static_cast<int64_t>(per_thread) * threads / terms);
  // A transpose in the kernel: tiles of at most 32 along the last dim, so that a task's tile
  // is square in the two dims the transpose swaps.
  bool transposes = false;
  for (ir::NodeId n : k.nodes) transposes = transposes || cpu::transposing_dim(g.node(n)) >= 0;
  if (transposes && !s.tile.empty()) s.tile.back() = std::min<int64_t>(s.tile.back(), 32);
  for (size_t d = 0; d < s.tile.size(); ++d)
    while (ir::numel(s.tile) > most && s.tile[d] > 1) s.tile[d] = (s.tile[d] + 1) / 2;
  return s;
}

}  // namespace orchid::codegen::cuda
