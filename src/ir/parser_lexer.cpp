#include "ir/parser_lexer.h"

#include <cstdio>

#include "ir/printer.h"
#include "ir/text_internal.h"
#include "support/error.h"

namespace orchid::ir::detail {

namespace {
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_alpha(c) || is_digit(c) || c == '.' || c == '-'; }
int hex_value(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
constexpr std::string_view kPuncts = "{}()[],:=;<>";
}  // namespace

Lexer::Lexer(std::string_view src, std::string source_name)
    : src_(src), source_name_(std::move(source_name)) {
  advance();
}

Token Lexer::next() {
  Token t = std::move(tok_);
  advance();
  return t;
}

bool Lexer::accept_punct(char c) {
  if (!at_punct(c)) return false;
  advance();
  return true;
}

bool Lexer::accept_ident(std::string_view word) {
  if (!at_ident(word)) return false;
  advance();
  return true;
}

Token Lexer::expect_punct(char c, std::string_view what) {
  if (!at_punct(c)) expected(what.empty() ? std::string{'\'', c, '\''} : std::string(what));
  return next();
}

Token Lexer::expect_ident(std::string_view word) {
  if (!at_ident(word)) expected("'" + std::string(word) + "'");
  return next();
}

std::string Lexer::where(const Token& at) const {
  return source_name_ + ":" + std::to_string(at.line) + ":" + std::to_string(at.col) + ": error: ";
}

void Lexer::error_at(const Token& at, const std::string& msg) const {
  throw UserError(where(at) + msg);
}

void Lexer::expected(const std::string& what) const {
  error_at(tok_, "expected " + what + ", found " + describe(tok_));
}

std::string Lexer::describe(const Token& t) {
  switch (t.kind) {
    case TokKind::End: return "end of input";
    case TokKind::Ident: return "'" + t.text + "'";
    case TokKind::Number: return "number " + t.text;
    case TokKind::String: return "string " + quote_string(t.text);
    case TokKind::Value: return "value " + print_value_name(t.text);
    case TokKind::GraphName:
      return "'@" + (is_plain_name(t.text) ? t.text : quote_string(t.text)) + "'";
    case TokKind::Slot: return "'$" + t.text + "'";
    case TokKind::Punct: return "'" + t.text + "'";
  }
  return "?";
}

void Lexer::lex_error(const std::string& msg) const {
  Token here;
  here.line = line_;
  here.col = col_;
  error_at(here, msg);
}

void Lexer::bump() {
  if (cur() == '\n') {
    ++line_;
    col_ = 1;
  } else {
    ++col_;
  }
  ++pos_;
}

void Lexer::skip_space() {
  while (pos_ < src_.size()) {
    char c = cur();
    if (c == '#') {
      while (pos_ < src_.size() && cur() != '\n') bump();
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      bump();
    } else {
      return;
    }
  }
}

// The name after '%' or '@': a quoted string or a run of [A-Za-z0-9_.\-].
std::string Lexer::lex_name(const char* after) {
  if (cur() == '"') return lex_string();
  std::string name;
  while (is_name_char(cur())) {
    name += cur();
    bump();
  }
  if (name.empty()) error_at(tok_, std::string("expected a name after '") + after + "'");
  return name;
}

std::string Lexer::lex_string() {
  Token start;
  start.line = line_;
  start.col = col_;
  bump();  // opening quote
  std::string out;
  while (true) {
    if (pos_ >= src_.size() || cur() == '\n') error_at(start, "unterminated string");
    char c = cur();
    if (c == '"') {
      bump();
      return out;
    }
    if (c != '\\') {
      out += c;
      bump();
      continue;
    }
    Token escape;
    escape.line = line_;
    escape.col = col_;
    bump();
    char e = cur();
    if (e == '"' || e == '\\') {
      out += e;
    } else if (e == 'n') {
      out += '\n';
    } else if (e == 't') {
      out += '\t';
    } else if (e == 'x' && hex_value(at(1)) >= 0 && hex_value(at(2)) >= 0) {
      out += static_cast<char>(hex_value(at(1)) * 16 + hex_value(at(2)));
      bump();
      bump();
    } else {
      error_at(escape, "unknown escape in a string (expected \\\", \\\\, \\n, \\t or \\xHH)");
    }
    bump();
  }
}

void Lexer::lex_number(Token& t) {
  auto take_digits = [this, &t] {
    while (is_digit(cur())) {
      t.text += cur();
      bump();
    }
  };
  if (cur() == '-') {
    t.text += '-';
    bump();
  }
  if (is_alpha(cur())) {  // -inf, -nan
    while (is_alpha(cur())) {
      t.text += cur();
      bump();
    }
    if (t.text != "-inf" && t.text != "-nan") error_at(t, "expected a number after '-'");
    return;
  }
  take_digits();
  if (cur() == '.' && is_digit(at(1))) {
    t.text += cur();
    bump();
    take_digits();
  }
  bool exp_sign = (at(1) == '+' || at(1) == '-') && is_digit(at(2));
  if ((cur() == 'e' || cur() == 'E') && (is_digit(at(1)) || exp_sign)) {
    t.text += cur();
    bump();
    if (exp_sign) {
      t.text += cur();
      bump();
    }
    take_digits();
  }
}

void Lexer::advance() {
  skip_space();
  tok_ = Token();
  tok_.line = line_;
  tok_.col = col_;
  char c = cur();
  if (pos_ >= src_.size()) return;
  if (c == '%' || c == '@') {
    tok_.kind = c == '%' ? TokKind::Value : TokKind::GraphName;
    bump();
    tok_.text = lex_name(c == '%' ? "%" : "@");
  } else if (c == '$') {
    tok_.kind = TokKind::Slot;
    bump();
    while (is_digit(cur())) {
      tok_.text += cur();
      bump();
    }
    if (tok_.text.empty()) error_at(tok_, "expected a load slot number after '$'");
  } else if (c == '"') {
    tok_.kind = TokKind::String;
    tok_.text = lex_string();
  } else if (is_digit(c) || (c == '-' && (is_digit(at(1)) || is_alpha(at(1))))) {
    tok_.kind = TokKind::Number;
    lex_number(tok_);
  } else if (is_alpha(c)) {
    tok_.kind = TokKind::Ident;
    while (is_alpha(cur()) || is_digit(cur())) {
      tok_.text += cur();
      bump();
    }
  } else if (kPuncts.find(c) != std::string_view::npos) {
    tok_.kind = TokKind::Punct;
    tok_.text = std::string(1, c);
    bump();
  } else {
    auto u = static_cast<unsigned char>(c);
    char buf[40];
    if (u >= 0x20 && u < 0x7f) {
      std::snprintf(buf, sizeof buf, "unexpected character '%c'", c);
    } else {
      std::snprintf(buf, sizeof buf, "unexpected byte 0x%02x", u);
    }
    lex_error(buf);
  }
}

}  // namespace orchid::ir::detail
