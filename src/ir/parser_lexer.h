// The tokenizer of the text form and the error reporting shared by the parser's parts
// (private to orchid_ir). Errors are UserErrors "FILE:LINE:COL: error: MESSAGE".
#pragma once

#include <cstdint>
#include <algorithm>
#include <string>
#include <string_view>

namespace orchid::ir::detail {

enum class TokKind : uint8_t {
  End,
  Ident,      // [A-Za-z_][A-Za-z0-9_]*: keywords, operators, dtypes, variables, inf, nan
  Number,     // -?digits(.digits)?([eE][+-]?digits)?, or -inf / -nan
  String,     // "..." (text: decoded)
  Value,      // %name or %"name" (text: the name)
  GraphName,  // @name or @"name" (text: the name)
  Slot,       // $digits (text: the digits)
  Punct,      // one of { } ( ) [ ] , : = ; < >
};

struct Token {
  TokKind kind = TokKind::End;
  std::string text;
  int line = 1;
  int col = 1;
};

class Lexer {
 public:
  Lexer(std::string_view src, std::string source_name);

  const Token& peek() const { return tok_; }
  Token next();

  bool at_punct(char c) const { return tok_.kind == TokKind::Punct && tok_.text[0] == c; }
  bool at_ident(std::string_view word) const {
    return tok_.kind == TokKind::Ident && tok_.text == word;
  }
  bool accept_punct(char c);
  bool accept_ident(std::string_view word);
  // Consume the punctuation / keyword, or fail with "expected <what>, found ...".
  Token expect_punct(char c, std::string_view what = {});
  Token expect_ident(std::string_view word);

  [[noreturn]] void error_at(const Token& at, const std::string& msg) const;
  // "expected WHAT, found <the current token>".
  [[noreturn]] void expected(const std::string& what) const;
  // How a token reads in messages: 'foo', number 3, value %x, end of input, ...
  static std::string describe(const Token& t);
  // The location prefix "FILE:LINE:COL: error: ".
  std::string where(const Token& at) const;
  // Characters of the text not yet read past the current token.
  size_t remaining() const { return src_.size() - std::min(pos_, src_.size()); }

 private:
  void advance();
  void skip_space();
  char cur() const { return pos_ < src_.size() ? src_[pos_] : '\0'; }
  char at(size_t k) const { return pos_ + k < src_.size() ? src_[pos_ + k] : '\0'; }
  void bump();
  [[noreturn]] void lex_error(const std::string& msg) const;
  std::string lex_name(const char* after);
  std::string lex_string();
  void lex_number(Token& t);

  std::string_view src_;
  std::string source_name_;
  size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
  Token tok_;
};

}  // namespace orchid::ir::detail
