// Parsing of body expressions and literals. The expression constructors treat dtype misuse
// as an internal error, so every operand is checked here first and reported at its place.
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>

#include "ir/parser_internal.h"
#include "ir/printer.h"
#include "ir/verifier_internal.h"

namespace orchid::ir::detail {

namespace {

std::string dt(DType t) { return std::string(dtype_name(t)); }

bool is_integer_text(std::string_view s) {
  size_t i = !s.empty() && s[0] == '-' ? 1 : 0;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

// The text of a float-valued token: a number, or the identifiers inf and nan.
bool is_float_token(const Token& t) {
  return t.kind == TokKind::Number ||
         (t.kind == TokKind::Ident && (t.text == "inf" || t.text == "nan"));
}

double parse_float_text(const Lexer& lex, const Token& tok, DType t) {
  const std::string& s = tok.text;
  if (s == "nan" || s == "-nan") return std::numeric_limits<double>::quiet_NaN();
  if (s == "inf" || s == "-inf") return s[0] == '-' ? -INFINITY : INFINITY;
  const char* end = s.data() + s.size();
  std::from_chars_result r;
  double v = 0;
  if (t == DType::F64) {
    r = std::from_chars(s.data(), end, v);
  } else {
    float f = 0;
    r = std::from_chars(s.data(), end, f);
    v = f;
  }
  if (r.ec == std::errc::result_out_of_range)
    lex.error_at(tok, s + " is out of the range of " + dt(t));
  if (r.ec != std::errc() || r.ptr != end) lex.error_at(tok, "invalid number " + s);
  return v;
}

Scalar parse_int_text(const Lexer& lex, const Token& tok, DType t) {
  const std::string& s = tok.text;
  if (!is_integer_text(s))
    lex.error_at(tok, "expected an integer for " + dt(t) + ", found " + Lexer::describe(tok));
  const char* end = s.data() + s.size();
  int bits = static_cast<int>(dtype_bytes(t)) * 8;
  bool ok = false;
  int64_t v = 0;
  if (dtype_class(t) == DTypeClass::Unsigned) {
    uint64_t u = 0;
    auto r = std::from_chars(s.data(), end, u);
    ok = s[0] != '-' && r.ec == std::errc() && r.ptr == end &&
         (bits == 64 || u < (uint64_t{1} << bits));
    v = static_cast<int64_t>(u);
  } else {
    auto r = std::from_chars(s.data(), end, v);
    int64_t lim = bits == 64 ? 0 : int64_t{1} << (bits - 1);
    ok = r.ec == std::errc() && r.ptr == end && (bits == 64 || (v >= -lim && v < lim));
  }
  if (!ok) lex.error_at(tok, s + " is out of the range of " + dt(t));
  return Scalar::of_int(t, v);
}

class ExprParser {
 public:
  ExprParser(Lexer& lex, const BodyScope& scope) : lex_(lex), scope_(scope) {}

  // Expressions nest at most kMaxDepth deep: every pass over them recurses.
  static constexpr int kMaxDepth = 500;

  Expr parse() {
    const Token& t = lex_.peek();
    if (depth_ >= kMaxDepth) lex_.error_at(t, "expression nested deeper than " + std::to_string(kMaxDepth));
    struct Nest {
      int& d;
      explicit Nest(int& depth) : d(depth) { ++d; }
      ~Nest() { --d; }
    } nest(depth_);
    switch (t.kind) {
      case TokKind::Number: return constant(parse_literal());
      case TokKind::Value:
      case TokKind::Slot: return parse_load();
      case TokKind::Ident:
        if (t.text == "true" || t.text == "false" || t.text == "inf" || t.text == "nan")
          return constant(parse_literal());
        if (is_var_name(t.text)) return parse_var();
        return parse_call();
      case TokKind::End:
      case TokKind::String:
      case TokKind::GraphName:
      case TokKind::Punct: break;
    }
    lex_.expected("an expression");
  }

  // literal := int | number ':' dtype | 'true' | 'false'
  Scalar parse_literal() {
    Token t = lex_.next();
    if (t.kind == TokKind::Ident && (t.text == "true" || t.text == "false"))
      return Scalar::of_int(DType::Bool, t.text == "true");
    if (!is_float_token(t)) lex_.error_at(t, "expected a literal, found " + Lexer::describe(t));
    if (!lex_.accept_punct(':')) {
      if (!is_integer_text(t.text))
        lex_.error_at(t, "a non-integer literal needs a dtype, as in " + t.text + ":f32");
      return token_scalar(lex_, t, DType::I64);
    }
    Token type = lex_.peek();
    std::optional<DType> d = type.kind == TokKind::Ident ? parse_dtype(type.text) : std::nullopt;
    if (!d) lex_.expected("a dtype after ':'");
    lex_.next();
    return token_scalar(lex_, t, *d);
  }

 private:
  int depth_ = 0;

  static bool is_var_name(const std::string& s) {
    if (s.size() < 2 || (s[0] != 'i' && s[0] != 'r')) return false;
    for (size_t i = 1; i < s.size(); ++i)
      if (s[i] < '0' || s[i] > '9') return false;
    return true;
  }

  Expr parse_var() {
    Token t = lex_.next();
    int32_t index = 0;
    auto r = std::from_chars(t.text.data() + 1, t.text.data() + t.text.size(), index);
    if (r.ec != std::errc()) lex_.error_at(t, "variable number out of range: " + t.text);
    return var(index, t.text[0] == 'i' ? VarKind::Domain : VarKind::Reduce);
  }

  // The load slot named by a value or `$k` token.
  int32_t slot_of(const Token& t) {
    if (t.kind == TokKind::Slot) {
      size_t k = 0;
      auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), k);
      if (r.ec != std::errc() || k >= scope_.names.size())
        lex_.error_at(t, "load slot $" + t.text + " does not exist (the node has " +
                             std::to_string(scope_.names.size()) + " inputs)");
      return static_cast<int32_t>(k);
    }
    for (size_t k = 0; k < scope_.names.size(); ++k)
      if (scope_.names[k] == t.text) return static_cast<int32_t>(k);
    lex_.error_at(t, print_value_name(t.text) + " is not an input of this node");
  }

  // load := (value | '$' int) '[' [expr (',' expr)*] ']' ['if' expr 'else' literal]
  Expr parse_load() {
    Token head = lex_.next();
    int32_t slot = slot_of(head);
    const TensorType& type = scope_.types[static_cast<size_t>(slot)];
    std::string what = head.kind == TokKind::Slot ? "$" + head.text : print_value_name(head.text);
    Token open = lex_.expect_punct('[', "'[' and the indices of " + what);
    std::vector<Expr> indices;
    while (!lex_.at_punct(']')) {
      if (!indices.empty()) lex_.expect_punct(',', "',' or ']'");
      Token at = lex_.peek();
      Expr e = parse();
      if (e.dtype() != DType::I64)
        lex_.error_at(at, "a load index must be i64, found a " + dt(e.dtype()) + " expression");
      indices.push_back(std::move(e));
    }
    lex_.next();
    if (static_cast<int64_t>(indices.size()) != type.rank())
      lex_.error_at(open, what + " is " + type_str(type) + " and takes " +
                              std::to_string(type.rank()) + " indices, found " +
                              std::to_string(indices.size()));
    if (!lex_.accept_ident("if")) return load(slot, type.dtype, std::move(indices));
    Token at = lex_.peek();
    Expr pred = parse();
    if (pred.dtype() != DType::Bool)
      lex_.error_at(at,
                    "a load predicate must be bool, found a " + dt(pred.dtype()) + " expression");
    lex_.expect_ident("else");
    Token fill_at = lex_.peek();
    Scalar fill = parse_literal();
    if (fill.dtype != type.dtype)
      lex_.error_at(fill_at, "the fill value of a load of " + what + " must be a " +
                                 dt(type.dtype) + " literal, found a " + dt(fill.dtype) + " one");
    return load_pred(slot, type.dtype, std::move(indices), std::move(pred), fill);
  }

  // call := opname '(' expr (',' expr)* ')' | 'cast' '<' dtype '>' '(' expr ')'
  Expr parse_call() {
    Token name = lex_.next();
    ExprOp op = ExprOp::Const;
    if (!parse_expr_op(name.text, &op))
      lex_.error_at(
          name, "expected an expression, found " + Lexer::describe(name) + " (not an operator)");
    DType cast_to = DType::I64;
    if (op == ExprOp::Cast) {
      lex_.expect_punct('<', "'<' and the dtype of the cast");
      Token type = lex_.peek();
      std::optional<DType> d = type.kind == TokKind::Ident ? parse_dtype(type.text) : std::nullopt;
      if (!d) lex_.expected("a dtype");
      lex_.next();
      cast_to = *d;
      lex_.expect_punct('>');
    }
    lex_.expect_punct('(', "'(' and the operands of " + name.text);
    std::vector<Expr> args = {parse()};
    while (lex_.accept_punct(',')) args.push_back(parse());
    lex_.expect_punct(')', "',' or ')'");
    int arity = expr_op_arity(op);
    if (static_cast<int>(args.size()) != arity)
      lex_.error_at(name, name.text + " takes " + std::to_string(arity) + " operand" +
                              (arity == 1 ? "" : "s") + ", found " + std::to_string(args.size()));
    if (std::string p = operand_type_problem(op, args); !p.empty()) lex_.error_at(name, p);
    return make_op(op, cast_to, std::move(args));
  }

  Lexer& lex_;
  const BodyScope& scope_;
};

}  // namespace

Scalar token_scalar(const Lexer& lex, const Token& tok, DType t) {
  if (is_float(t)) return Scalar::of(t, parse_float_text(lex, tok, t));
  if (!is_bool(t)) return parse_int_text(lex, tok, t);
  if (tok.text != "0" && tok.text != "1")
    lex.error_at(tok, "expected 0 or 1 for bool, found " + Lexer::describe(tok));
  return Scalar::of_int(DType::Bool, tok.text == "1");
}

int64_t token_int(const Lexer& lex, const Token& tok) {
  if (tok.kind != TokKind::Number || !is_integer_text(tok.text))
    lex.error_at(tok, "expected an integer, found " + Lexer::describe(tok));
  return parse_int_text(lex, tok, DType::I64).i;
}

Expr parse_body_expr(Lexer& lex, const BodyScope& scope) { return ExprParser(lex, scope).parse(); }

}  // namespace orchid::ir::detail
