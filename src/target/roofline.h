// Roofline lower bounds: no kernel runs faster than its FLOPs at the target's peak, nor moves
// its bytes faster than the bandwidth of the level they come from. These are the analytic
// costs the orchestration BLP sees before anything is measured (DESIGN.md, "Cost loop").
#pragma once

#include <cstdint>

#include "ir/graph.h"
#include "target/target.h"

namespace orchid::target {

// max(flops / peak_gflops_f32, bytes / main-memory bandwidth), in seconds. The target must
// have a peak and a main-memory bandwidth (measured, or from a preset).
double roofline_seconds(const Target& t, int64_t flops, int64_t bytes);

// Seconds to move `bytes` through level `level` (an index into t.levels) at its bandwidth.
double transfer_seconds(const Target& t, size_t level, int64_t bytes);

// The roofline of one primitive as a kernel of its own: its FLOPs and the bytes it reads and
// writes (ir/stats.h), all from main memory.
double primitive_roofline_seconds(const Target& t, const ir::Graph& g, const ir::Primitive& p);

}  // namespace orchid::target
