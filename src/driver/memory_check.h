// Whether a model's values fit in this machine's memory, checked before any work on them: a
// model whose shapes imply more memory than the machine has is refused with a message, not
// left to fail in an allocation halfway through a compile or a run.
#pragma once

#include <cstdint>
#include <string>

#include "ir/graph.h"

namespace orchid::driver {

// Who holds the values: the reference interpreter (8 bytes per element, the constants also
// in their own dtype in the graph), or a compiled artifact (each value in its dtype).
enum class Evaluator { Interpreter, Artifact };

// The bytes evaluating g in node order holds at its peak (ir::peak_memory) and the node there.
struct MemoryNeed {
  int64_t bytes = 0;
  int32_t node = -1;
};
MemoryNeed memory_need(const ir::Graph& g, Evaluator by);

// UserError naming `model`, the need, the node at the peak and the limit when the need
// exceeds `limit_bytes` (0: this machine's physical memory; no check where that is unknown).
void check_memory_fits(const ir::Graph& g, const std::string& model, Evaluator by, int64_t limit_bytes = 0);

}  // namespace orchid::driver
