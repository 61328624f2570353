// Abstract expressions of μGraph operators (Mirage Table 1), and the estimated cost of a
// μGraph.
#pragma once

#include <vector>

#include "superopt/abstract_expr.h"
#include "superopt/ugraph.h"

namespace orchid::superopt {

// The abstract expression of op's (first) output from its operands' expressions and shapes:
//   matmul(X, Y)               sum(k, mul(X, Y)), k the contracted extent
//   concat_matmul(A1,A2,B1,B2) add(sum(k1, mul(A1, B1)), sum(k2, mul(A2, B2)))
//   sum(X) k=n                 sum(n, X)
//   add / mul / div / exp      the same operator
//   repeat, reshape, in_iter   the operand's
//   out_accum(X)               sum(loop, X) where the fmap replicates, else X's
AbsId abstract_of(AbsPool& pool, const UOp& op, const std::vector<AbsId>& in,
                  const std::vector<ir::Dims>& in_shapes, const BlockGraph* block);

// A target's rates, for the estimate.
struct CostModel {
  double device_bytes_per_s = 30e9;  // DRAM
  double flops_per_s = 200e9;
  double kernel_overhead_s = 5e-6;   // launching a kernel (a parallel region on a CPU)
};

// Estimated seconds: each kernel operator costs the larger of its device traffic (what it
// reads and writes in device memory — for a graph-defined one, each block's in_iter parts in
// every iteration and its outputs) and its arithmetic, plus the overhead of a kernel.
double estimate_cost(const UGraph& g, const CostModel& m = {});

}  // namespace orchid::superopt
