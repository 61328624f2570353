// The reference interpreter: executes any primitive graph. It is the specification every
// other stage is tested against — simple and obviously right, and fast enough to check whole
// models: expressions are evaluated a block of points at a time (no per-element dispatch),
// linear primitives by blocked loops.
//
// Precision::F64: floats are computed in f64 throughout (the reference). Precision::Own:
// every float result is rounded to its dtype after each operation (reduction accumulators
// of f16/bf16 are kept in f32, as kernels do). Integers and bool are exact in i64 in both
// modes, wrapped to their width where a cast or a store narrows them. docs/ir.md states the
// semantics of every construct.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace orchid::interp {

enum class Precision { F64, Own };

struct Options {
  Precision precision = Precision::F64;
  // Float outputs are returned as f64 tensors (unrounded) when set; else in their dtype.
  bool f64_outputs = false;
};

// Runs g on `inputs` (one per graph input, in order, of exactly the declared types).
// Returns one tensor per graph output. Bad inputs (count, dtype, shape) and out-of-range
// indirect indices are UserErrors naming the input or the primitive.
std::vector<ir::Tensor> run(const ir::Graph& g, const std::vector<ir::Tensor>& inputs,
                            const Options& opts = {});

// Every value of the graph (inputs, constants, node outputs), indexed by ValueId: for tests
// and for bisecting compiled artifacts against the reference.
std::vector<ir::Tensor> run_all(const ir::Graph& g, const std::vector<ir::Tensor>& inputs,
                                const Options& opts = {});

}  // namespace orchid::interp
