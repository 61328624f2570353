// The abstract expressions (abstract_expr.h) of a primitive graph: Mirage's Table 1 applied to
// Orchid's primitives, giving E_O, the target of the subexpression oracle.
//
// Leaves: graph input n (its position in Graph::inputs()) is input(n); constant tensor c (its
// index in Graph::constants()) is input(I + c) with I the number of graph inputs — a constant
// tensor is abstracted like one more input, so its elements are "any element of it".
//
// Written bodies (elementwise, layout, broadcast, reduce) translate their scalar expression;
// index expressions are ignored (the abstraction does not distinguish the elements of one
// tensor, so transposes, slices, broadcasts and gathers are the identity):
//   load of input k          the term of input k
//   add, sub                 add          neg, cast between float types   the operand
//   mul                      mul          div                             div
//   exp                      exp
//   select(c, a, b), c free of loads (a mask or a pad): the branch that is a term, or the
//                            common term of both; two different terms are outside
// Scalar constants and loop variables depend on no tensor: an operation with one of them as
// operand is its other operand (mul(x, 0.125) → x, add(x, 1) → x, div(x, 8) → x), as Mirage's
// expressions have no constants; a constant divided by a tensor (a reciprocal) is outside.
//   reduce sum over a domain of K elements        sum(K, body)
//   matmul (k: A's last dim, its second to last with trans_a)   sum(k, mul(A, B))
//   view                                          its input's term
// Everything else — other unary and binary operators (max, erf, sqrt, log, tanh, pow, ...),
// comparisons, other combiners (max, prod, welford, maxsum, ...), conv and opaque routines —
// is outside the fragment; so is an output that depends on no tensor.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "superopt/abstract_expr.h"

namespace orchid::superopt {

struct AbstractProgram {
  std::vector<AbsId> outputs;  // one per graph output, in order; empty when unsupported
  std::string unsupported;     // empty when every output is abstracted; else the reason,
                               // naming the node and its primitive
};

// Interns the outputs' expressions into `pool`. Nodes that no output depends on may be
// outside the fragment.
AbstractProgram abstract_program(const ir::Graph& g, AbsPool& pool);

}  // namespace orchid::superopt
