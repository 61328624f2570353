// A seeded generator of random, valid primitive graphs for tests: every primitive kind and
// operator (elementwise with broadcasting and iota bodies, every reduction combiner and
// pooling windows, broadcast, layout with transposes/slices/pads/concats/gathers/splits/
// tiles/masks, views, matmul, conv with random attributes, opaque routines), odd shapes (1,
// primes, sizes that divide nothing), and every dtype where an operator allows it. Later
// issues use it for differential tests.
//
// Numerics are tame, so that results can be compared across precisions and implementations:
// inputs are those of interp::random_inputs (floats in [-1, 1), small integers), float values
// stay O(1) (log/sqrt/rsqrt/recip/pow/div see arguments kept away from 0, exp bounded
// arguments, sums are scaled, prod has at most 8 factors), integers stay inside their dtype
// (only casts and stores wrap; integer division by zero, which gives 0, does occur), no NaN or
// infinity is produced (the -inf/+inf fills of padded max/min pooling are never selected), and
// every discontinuous operator (floor, ceil, round, sign, comparisons, float -> integer casts,
// float floordiv/mod, argmax/argmin, topk) only sees values that are bit-identical in F64 and
// Own precision, so integer and bool results never depend on the precision. The internals
// (random_graph_internal.h) describe the rules.
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace orchid::testlib {

struct RandomGraphOptions {
  int min_nodes = 1;
  int max_nodes = 12;              // a hard limit: helper nodes (scales, clamps) count too
  int max_rank = 4;
  int64_t max_elements = 4096;     // per tensor, keeps interpreter runs fast
  bool allow_opaque = true;
  bool allow_linear = true;
  bool allow_indirect = true;      // gathers with integer index inputs
  // Only float tensors, except the i32/i64 graph inputs of gathers and the i64 index outputs
  // of argmax/argmin/topk, which are consumed right away; every graph output is float.
  // Bodies may still compute with integers and bools internally.
  bool float_only = false;
};

// Same seed and options give the same graph. The result passes ir::verify.
ir::Graph random_graph(uint64_t seed, const RandomGraphOptions& opts = {});

}  // namespace orchid::testlib
