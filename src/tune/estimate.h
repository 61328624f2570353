// The analytic latency of a generated CPU kernel under a schedule (tile/cost.h), priced as
// the code generator runs it: the schedule's grid of tasks, its inlined primitives (values
// that stay in registers), its vector width, its reductions folded one term at a time
// (scalar schedules), and the GEMM micro-kernel's full width and 6 × 16 register blocks. It
// ranks schedules before they are measured and prices candidate kernels before the
// orchestrator has measured them.
#pragma once

#include "codegen/cpu/schedule.h"
#include "ir/graph.h"
#include "target/target.h"
#include "tile/cost.h"
#include "tile/kernel.h"

namespace orchid::tune {

// What the cost model sees of a kernel lowered under schedule s.
tile::CostConfig cpu_cost_config(const ir::Graph& g, const tile::Kernel& k, const codegen::cpu::Schedule& s);

tile::Estimate estimate_cpu_schedule(const ir::Graph& g, const tile::Kernel& k, const codegen::cpu::Schedule& s,
                                     const target::Target& t, const tile::CostOptions& o = {});

}  // namespace orchid::tune
