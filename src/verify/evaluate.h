// The dynamic half of the equivalence check: a primitive graph evaluated over Z_p × Z_q
// (field.h) for one random draw. Floats are field elements; integers and bools are computed
// exactly as the interpreter does (docs/ir.md); the functions terms.h lists as uninterpreted
// are seeded random functions of their arguments' field values:
//  - unary and binary ones (erf, sqrt, log, pow, floor, …, an exp after an exp) hash the
//    operator and the arguments;
//  - max and min, binary or reductions, are a function of the *set* of their arguments (so
//    they are commutative, idempotent and blind to the order of a reduction; a single value
//    is its own max);
//  - lt/le/gt/ge are one random relation (a < b, b > a and !(b <= a) agree);
//  - argmax/argmin pick a random position of their set, the value is that set's max / min.
// Non-finite constants (masks' −inf) are fixed random elements, one per kind.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "verify/field.h"
#include "verify/terms.h"

namespace orchid::verify {

// A tensor over the field (floats) or exact (integers and bool), row-major.
struct FTensor {
  ir::TensorType type;
  std::vector<FElem> f;
  std::vector<int64_t> i;
};

// One random test: ω, a q-th root of unity other than 1, and the salt of the uninterpreted
// functions.
struct Draw {
  uint64_t omega = 0;
  uint64_t salt = 0;
};

// The evaluation cannot decide the graph (an opaque routine, an index computed from floats
// that leaves its tensor, the work budget): the message names the primitive.
class Undecidable : public std::runtime_error {
 public:
  explicit Undecidable(const std::string& msg) : std::runtime_error(msg) {}
};

// A division met zero in this draw: the caller draws again.
class ZeroDivisor : public std::runtime_error {
 public:
  explicit ZeroDivisor(const std::string& msg) : std::runtime_error(msg) {}
};

// Whether p is evaluated directly rather than through its expression (a float matmul), at
// one unit of work per multiply-add.
bool evaluated_directly(const ir::Graph& g, const ir::Primitive& p);

// Every value of g (by ValueId) for the given inputs (one per graph input). `work` counts
// expression evaluations down; below zero, Undecidable.
std::vector<FTensor> evaluate(const ir::Graph& g, const Analysis& an,
                              const std::vector<FTensor>& inputs, const Draw& draw, int64_t& work);

// Constant tensors over the field: finite floats exactly, others as the draw's fixed elements.
FTensor field_constant(const ir::Tensor& t, const Draw& draw);

}  // namespace orchid::verify
