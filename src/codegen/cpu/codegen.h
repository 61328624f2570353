// CPU code generation: a kernel (a convex set of primitives and the values it writes) and a
// schedule become a C++ function with the kernel ABI (include/orchid/kernel_abi.h), computed as
// a tile-graph (Welder §3.1): each task computes one tile of the kernel's outputs, and for it
// the region of every computed primitive that the tile needs, in topological order, in
// per-task scratch; primitives without a reduction that one consumer reads (at most once per
// element) are inlined into it. Innermost loops are contiguous and vectorized (`#pragma omp
// simd`): reductions along their innermost dim over independent lanes (emit_lanes.cpp), and
// one along the rows an elementwise primitive computes in that primitive's loop; reductions
// whose output rows are long accumulate a row at once. Large outputs are written with
// streaming stores and large inputs prefetched a task ahead (schedule.h). Transcendentals of
// f32 come from vmath.inc.
//
// Identifiers in the generated source are Orchid's own (arguments a0.., values by number);
// nothing from the model (names, strings) is ever written into it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/cpu/schedule.h"
#include "ir/graph.h"
#include "tile/kernel.h"

namespace orchid::codegen::cpu {

// Bump when generated code changes meaning or speed: it is part of every cache key.
constexpr int kCodegenVersion = 30;

struct GeneratedKernel {
  std::string symbol;                // the function's name
  std::string source;                // its definition (and its task table)
  int64_t tasks = 0;
  int64_t scratch_bytes = 0;
  std::vector<ir::ValueId> inputs;   // arguments, in order: inputs then outputs
  std::vector<ir::ValueId> outputs;
  std::vector<int64_t> arg_bytes;    // per argument (inputs then outputs): its tensor's bytes
  std::vector<std::string> checks;   // what run-time index check k+1 is (names a primitive)
  Schedule schedule;
};

// The kernel must hold no opaque primitive; symbol must be a C identifier of Orchid's making.
// `panels`: inputs whose bytes are B panels (runtime layout.h, panels16 or panels16t), a subset of
// packable_weights(g, k, s) (lower.h); the caller stores them so.
GeneratedKernel generate_kernel(const ir::Graph& g, const tile::Kernel& k, const Schedule& s,
                                const std::string& symbol, const std::vector<ir::ValueId>& panels = {});

// A whole shared object's source: the ABI, vmath.inc and the prelude, the kernels, and the
// table `orchid_kernel_table` listing them in order.
std::string library_source(const std::vector<GeneratedKernel>& kernels);

// Extra flags generated code is compiled with, beyond the compiler's -O3 -march=native:
// wrapping signed arithmetic (integer semantics of docs/ir.md); no errno from math functions
// (nothing reads it, and setting it keeps sqrt, for one, from vectorizing); vectors as wide as
// the target has (the schedule's simdlen decides the width of each loop).
std::vector<std::string> codegen_flags();

}  // namespace orchid::codegen::cpu
