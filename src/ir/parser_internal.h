// Private to the parser: the parts shared by parser.cpp (graphs, items, constants,
// attributes) and parser_exprs.cpp (bodies).
#pragma once

#include <string>
#include <vector>

#include "ir/expr.h"
#include "ir/parser_lexer.h"

namespace orchid::ir::detail {

// The inputs of the node whose bodies are being parsed: load slot k is names[k].
struct BodyScope {
  std::vector<std::string> names;
  std::vector<TensorType> types;
};

// One body expression (docs/ir.md, `expr`), dtype-checked with located errors.
Expr parse_body_expr(Lexer& lex, const BodyScope& scope);

// The value of a number token (or inf/nan/true/false identifier) as a scalar of dtype t:
// integers must be written as integers and fit t; floats read at t's precision.
Scalar token_scalar(const Lexer& lex, const Token& tok, DType t);

// A number token that must be an integer (an i64).
int64_t token_int(const Lexer& lex, const Token& tok);

}  // namespace orchid::ir::detail
