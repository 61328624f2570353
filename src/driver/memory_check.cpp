#include "driver/memory_check.h"

#include <cstdio>

#include "ir/stats.h"
#include "support/error.h"
#include "target/detect.h"

namespace orchid::driver {

namespace {

std::string gib(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / double(int64_t{1} << 30));
  return text;
}

}  // namespace

MemoryNeed memory_need(const ir::Graph& g, Evaluator by) {
  if (by == Evaluator::Artifact) {
    ir::MemoryPeak p = ir::peak_memory(g);
    return {p.bytes, p.node};
  }
  ir::MemoryPeak p = ir::peak_memory(g, 8);
  return {p.bytes + ir::graph_stats(g).parameter_bytes, p.node};
}

void check_memory_fits(const ir::Graph& g, const std::string& model, Evaluator by, int64_t limit_bytes) {
  int64_t limit = limit_bytes > 0 ? limit_bytes : target::physical_memory_bytes();
  if (limit <= 0) return;
  MemoryNeed need = memory_need(g, by);
  if (need.bytes <= limit) return;
  std::string at = need.node < 0 ? std::string("its inputs and weights")
                                 : "node '" + g.node(ir::NodeId(need.node)).name + "'";
  ORCHID_USER_ERROR() << model << ": the model's values need at least " << gib(need.bytes) << " of memory at once ("
                      << at << ", " << (by == Evaluator::Interpreter ? "as the reference interpreter that checks the "
                                                                        "compile holds them, 8 bytes per element"
                                                                     : "each in its own type")
                      << "), more than " << (limit_bytes > 0 ? "the limit of " : "this machine's ") << gib(limit);
}

}  // namespace orchid::driver
