// Reduced-precision storage (`orchid compile --precision fp16|bf16`): the f32 values of a
// primitive graph stored in a 16-bit float dtype, arithmetic kept in f32.
//
// What is stored in `to`:
//  - f32 constants (weights), rounded once (a finite value beyond `to`'s range saturates to
//    its largest finite value rather than becoming infinite);
//  - the outputs of elementwise primitives that read a float input: the body still computes
//    in f32 and its result is rounded once (cast(to, body));
//  - movement (views, layout primitives, broadcasts): whatever their inputs are stored in, so
//    moving data never rounds;
//  - matmuls and convolutions: their operands are read in `to` (cast where a value is not
//    stored so) and their result is `to`, accumulated in f32 by every implementation.
// What stays f32:
//  - graph inputs and outputs (the interface does not change; an output computed in `to` is
//    cast back under its own name);
//  - reductions' results (accumulators, small), elementwise results computed from indices
//    alone (iota: 301 is not a bf16);
//  - values an opaque routine reads, and values a consumer casts to an integer (indices and
//    positions must stay exact), and what views, layouts and broadcasts move into such a
//    value;
//  - the result of a body holding a finite constant beyond `to`'s range (a -1e9 mask in f16).
// Every read of a value stored in `to` where the f32 value was read is cast(f32, load), so
// every body computes what it did, from rounded inputs. Other dtypes are left as they are.
#pragma once

#include "ir/graph.h"

namespace orchid::rewrite {

// g with its f32 storage reduced to `to` (F16 or BF16) as above; verified.
ir::Graph store_floats_as(const ir::Graph& g, ir::DType to);

}  // namespace orchid::rewrite
