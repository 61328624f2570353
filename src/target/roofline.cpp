#include "target/roofline.h"

#include <algorithm>

#include "ir/stats.h"
#include "support/error.h"

namespace orchid::target {

double transfer_seconds(const Target& t, size_t level, int64_t bytes) {
  ORCHID_CHECK(level < t.levels.size()) << "target '" << t.name << "' has no level " << level;
  const MemoryLevel& l = t.levels[level];
  ORCHID_CHECK(bytes >= 0) << "negative byte count " << bytes;
  ORCHID_CHECK(l.bandwidth_gbs > 0) << "target '" << t.name << "': level '" << l.name
                                    << "' has no bandwidth (not measured)";
  return double(bytes) / (l.bandwidth_gbs * 1e9);
}

double roofline_seconds(const Target& t, int64_t flops, int64_t bytes) {
  ORCHID_CHECK(flops >= 0) << "negative FLOP count " << flops;
  ORCHID_CHECK(t.peak_gflops_f32 > 0) << "target '" << t.name << "' has no peak (not measured)";
  double compute = double(flops) / (t.peak_gflops_f32 * 1e9);
  return std::max(compute, transfer_seconds(t, t.levels.size() - 1, bytes));
}

double primitive_roofline_seconds(const Target& t, const ir::Graph& g, const ir::Primitive& p) {
  return roofline_seconds(t, ir::primitive_flops(p), ir::primitive_bytes(g, p));
}

}  // namespace orchid::target
