// A seeded generator of random, valid primitive graphs for tests: every primitive kind and
// operator (elementwise with broadcasting and iota bodies, every reduction combiner,
// broadcast, layout with transposes/slices/pads/concats/gathers, views, matmul, conv with
// random attributes, opaque routines), odd shapes (1, primes, sizes that divide nothing),
// and every dtype where an operator allows it. Later issues use it for differential tests.
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace orchid::testlib {

struct RandomGraphOptions {
  int min_nodes = 1;
  int max_nodes = 12;
  int max_rank = 4;
  int64_t max_elements = 4096;     // per tensor, keeps interpreter runs fast
  bool allow_opaque = true;
  bool allow_linear = true;
  bool allow_indirect = true;      // gathers with integer index inputs
  bool float_only = false;         // only float dtypes (for tolerance-based comparisons)
};

// Same seed and options give the same graph. The result passes ir::verify.
ir::Graph random_graph(uint64_t seed, const RandomGraphOptions& opts = {});

}  // namespace orchid::testlib
