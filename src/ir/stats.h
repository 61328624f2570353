// Counting work and data of primitives, one definition for every kind (DESIGN.md: "FLOP and
// byte counting" is done once, on the uniform tensor expression).
//
// FLOPs of a primitive: every point of domain × reduction domain evaluates its bodies, each
// unary, binary or comparison operator counting 1 (loads, selects, casts and constants 0),
// and a reduction combines once per point and body (1). So a multiply-add of a matmul or
// conv counts 2. Opaque routines count 0.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace orchid::ir {

int64_t primitive_flops(const Primitive& p);
// Bytes read from inputs (each input tensor once) plus bytes written to outputs.
int64_t primitive_bytes(const Graph& g, const Primitive& p);

struct GraphStats {
  int64_t flops = 0;
  int64_t parameter_bytes = 0;  // constants
  std::array<int64_t, 5> primitives_by_kind{};  // indexed by PrimKind
};
GraphStats graph_stats(const Graph& g);

// Per value: the last node reading it, num_nodes() for a graph output, -1 when none reads it.
std::vector<int32_t> last_uses(const Graph& g);

// The most bytes g's values hold at once while its nodes run in order: each value from its
// producer (graph inputs and constants from the start) to its last reader (graph outputs and
// constants to the end), each element taking `element_bytes` (0: its dtype's size). `node`
// is the node at the peak (-1 when the peak is before the first node).
struct MemoryPeak {
  int64_t bytes = 0;
  int32_t node = -1;
};
MemoryPeak peak_memory(const Graph& g, int64_t element_bytes = 0);

}  // namespace orchid::ir
