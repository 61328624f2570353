// The form of a LAX program that the superoptimizer searches, and the way back.
//
// A program cut from a model (lax_programs.h) reads its inputs through views (an attention's
// head split), transposed (the keys a matmul reads with trans_b) and scaled by a constant (the
// 1/√d of attention scores); its output may be a view. μGraphs have no transposed operand and
// no constant, and views at the boundary only lengthen the search. The search form moves them
// to the boundary:
// - an input read by one view (a chain of them) becomes an input of the last view's shape;
// - an input read by one matmul that transposes it becomes an input of the transposed shape,
//   and the matmul reads it as it is;
// - a scale by a constant of a matmul's result that nothing else reads moves onto an operand
//   of the matmul that is such an input (the smaller, where both are): c·(A·B) = (c·A)·B;
// - an output computed by a view (a chain) becomes the view's operand.
// attach() puts them back as kernel operators in front of a μGraph of the search form and
// behind it (reshape, transpose, scale), so that the μGraph computes the program itself.
// A transpose that only blocks read is a strided view, not a copy (ugraph.h, strided_views).
// Moving the scale changes the order of roundings only.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "superopt/ugraph.h"

namespace orchid::superopt {

struct SearchForm {
  ir::Graph program;  // what is searched: the program's inputs in order, one output
  // Per input: the kernel operators (reshape, transpose, scale) that make the searched input
  // from the program's, in order; their operands and results are left empty.
  std::vector<std::vector<UOp>> input_steps;
  ir::Dims output_shape;  // the program's output's (the searched output is reshaped to it)
  bool changed = false;   // whether `program` differs from the program
};

// The search form of a program (one with several outputs is its own).
SearchForm search_form(const ir::Graph& program);

// What the form moved to the boundary, as "input 2 by transpose, output by reshape".
std::string describe(const SearchForm& form);

// `found`, a μGraph computing form.program, with the boundary operators of `form` around it:
// inputs and output of the shapes of the program form was made from, named as it names them.
UGraph attach(const SearchForm& form, const ir::Graph& program, const UGraph& found);

}  // namespace orchid::superopt
