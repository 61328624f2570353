#include "codegen/cuda/schedule.h"

#include <algorithm>

#include "codegen/cpu/lower.h"
#include "support/error.h"

namespace orchid::codegen::cuda {

std::string schedule_str(const Schedule& s) {
  return "tile=" + cpu::dims_text(s.tile) + " threads=" + std::to_string(s.threads) + " unroll=" +
         std::to_string(s.unroll) + " inline=" + (s.inline_single_use ? "1" : "0") + cpu::levels_text(s.inner, s.split);
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
  c.row_accumulators = false;
  c.inner = s.inner;
  c.split = s.split;
  return c;
}

namespace {
constexpr int64_t kGemmTile = 64;
// A product with fewer rows or columns than these, or fewer tiles than multiprocessors even at
// kGemmMinTile x kGemmMinTile, is computed as a reduction (gemm_tile).
constexpr int64_t kGemmMinRows = 16;
constexpr int64_t kGemmMinColumns = 4;
constexpr int64_t kGemmMinTile = 16;

// The tile of a matrix product's rows and columns (other dims: 1) for emit_tiled_gemm: 64 x 64,
// halved (the larger side first, not below 16) while the product has fewer tiles than the
// GPU has multiprocessors (`blocks_wanted`); none where it still has fewer at 16 x 16, or
// fewer than 16 rows or 4 columns: its elements are then computed as a reduction, a group of
// threads sharing each element's terms (a decode step's one row per head, a 16-token adapter
// over 4096 terms).
std::optional<ir::Dims> gemm_tile(const ir::Dims& shape, const cpu::GemmFactors& f, int64_t blocks_wanted) {
  if (shape[f.m] < kGemmMinRows || shape[f.n] < kGemmMinColumns) return std::nullopt;
  ir::Dims tile(shape.size(), 1);
  tile[f.m] = std::min<int64_t>(shape[f.m], kGemmTile);
  tile[f.n] = std::min<int64_t>(shape[f.n], kGemmTile);
  auto blocks = [&] {
    int64_t b = 1;
    for (size_t d = 0; d < shape.size(); ++d) b *= (shape[d] + tile[d] - 1) / tile[d];
    return b;
  };
  while (blocks() < blocks_wanted && (tile[f.m] > kGemmMinTile || tile[f.n] > kGemmMinTile)) {
    size_t d = tile[f.m] >= tile[f.n] && tile[f.m] > kGemmMinTile ? f.m : f.n;
    tile[d] = (tile[d] + 1) / 2;
  }
  if (blocks() < blocks_wanted) return std::nullopt;
  return tile;
}

// The largest number of terms of a reduction in the kernel over the anchor's whole shape (the
// anchor's own, or one its elementwise epilogue reads element by element).
int64_t anchor_terms(const ir::Graph& g, const tile::Kernel& k, const ir::Dims& shape) {
  int64_t terms = 1;
  for (ir::NodeId n : k.nodes)
    if (g.node(n).domain == shape) terms = std::max(terms, ir::numel(g.node(n).reduce_domain));
  return terms;
}

}  // namespace

Schedule default_schedule(const ir::Graph& g, const tile::Kernel& k, int multiprocessors, int threads, int per_thread) {
  ORCHID_CHECK(!k.outputs.empty()) << "a kernel without outputs";
  const ir::Dims& shape = g.type(k.outputs[cpu::anchor_output(g, k)]).shape;
  Schedule s;
  s.threads = threads;
  s.tile = shape;
  // A matrix product over the anchor's shape (codegen/cpu/lower.h, gemm_factors), with
  // enough tiles to fill the GPU: tiled (emit_kernel.cpp, emit_tiled_gemm).
  for (ir::NodeId n : k.nodes) {
    std::optional<cpu::GemmFactors> f = cpu::gemm_factors(g, g.node(n));
    if (!f || g.node(n).domain != shape) continue;
    if (std::optional<ir::Dims> tile = gemm_tile(shape, *f, multiprocessors)) {
      s.tile = *tile;
      return s;
    }
  }
  // A reduction over the anchor's shape: each element's terms are shared by a group of
  // threads, so a task holds fewer elements.
  const int64_t most = std::max<int64_t>(1, static_cast<int64_t>(per_thread) * threads / anchor_terms(g, k, shape));
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
