// parse_ugraph: the text form (text.h) into a verified UGraph. Shares the primitive IR's
// tokenizer, so names, numbers and comments read alike in both forms.
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "ir/parser_lexer.h"
#include "superopt/text.h"
#include "support/error.h"

namespace orchid::superopt {

namespace {

using ir::detail::Lexer;
using ir::detail::TokKind;
using ir::detail::Token;

// An attribute value: a number, `rep`, or a list of them.
struct AttrValue {
  std::vector<int64_t> items;
  bool list = false;
  Token at;
};

class Parser {
 public:
  Parser(std::string_view text, const std::string& source) : lex_(text, source) {}

  UGraph run() {
    lex_.expect_ident("ugraph");
    if (lex_.peek().kind != TokKind::GraphName) lex_.expected("a graph name '@name'");
    g_.name = lex_.next().text;
    lex_.expect_punct('{');
    while (!lex_.accept_punct('}')) kernel_item();
    if (lex_.peek().kind != TokKind::End) lex_.expected("end of input");
    verify(g_);
    return std::move(g_);
  }

 private:
  [[noreturn]] void error(const Token& at, const std::string& msg) const { lex_.error_at(at, msg); }

  std::string value_name() {
    if (lex_.peek().kind != TokKind::Value) lex_.expected("a tensor '%name'");
    return lex_.next().text;
  }

  TensorId lookup() {
    Token t = lex_.peek();
    std::string n = value_name();
    auto it = names_.find(n);
    if (it == names_.end()) error(t, "unknown tensor %" + n);
    return it->second;
  }

  TensorId declare(const Token& at, const std::string& n, ir::DType dtype, ir::Dims shape, Level level) {
    if (names_.count(n)) error(at, "tensor %" + n + " is defined twice");
    TensorId id = g_.add_tensor(n, dtype, std::move(shape), level);
    names_[n] = id;
    return id;
  }

  // The next token as `what`: converted whole by `convert` (std::stoll, std::stod) and
  // accepted by `valid`.
  template <class T, class Convert, class Valid>
  T numeric(const std::string& what, Convert convert, Valid valid) {
    Token t = lex_.peek();
    if (t.kind != TokKind::Number) lex_.expected(what);
    lex_.next();
    try {
      size_t used = 0;
      T v = convert(t.text, &used);
      if (used == t.text.size() && valid(v)) return v;
    } catch (const std::exception&) {
    }
    error(t, "expected " + what + ", found " + Lexer::describe(t));
  }

  int64_t number() {
    return numeric<int64_t>(
        "an integer", [](const std::string& s, size_t* used) { return static_cast<int64_t>(std::stoll(s, used)); },
        [](int64_t) { return true; });
  }

  // A finite real number (scale's constant).
  double real() {
    return numeric<double>(
        "a finite number", [](const std::string& s, size_t* used) { return std::stod(s, used); },
        [](double v) { return std::isfinite(v); });
  }

  int64_t dim_or_rep() {
    if (lex_.accept_ident("rep")) return kReplica;
    return number();
  }

  std::pair<ir::DType, ir::Dims> type() {
    Token t = lex_.peek();
    if (t.kind != TokKind::Ident) lex_.expected("a type such as f32[2,3]");
    std::optional<ir::DType> d = ir::parse_dtype(lex_.next().text);
    if (!d) error(t, "unknown dtype '" + t.text + "'");
    lex_.expect_punct('[');
    ir::Dims dims;
    while (!lex_.accept_punct(']')) {
      if (!dims.empty()) lex_.expect_punct(',');
      dims.push_back(number());
    }
    return {*d, dims};
  }

  std::vector<TensorId> operands() {
    lex_.expect_punct('(');
    std::vector<TensorId> out;
    while (!lex_.accept_punct(')')) {
      if (!out.empty()) lex_.expect_punct(',');
      out.push_back(lookup());
    }
    return out;
  }

  // name=value pairs up to `{` or the end of the line's operator.
  std::map<std::string, AttrValue> attrs(std::initializer_list<std::string_view> allowed) {
    std::map<std::string, AttrValue> out;
    while (lex_.peek().kind == TokKind::Ident) {
      Token key = lex_.peek();
      bool known = false;
      for (std::string_view a : allowed) known |= a == key.text;
      if (!known) break;
      lex_.next();
      lex_.expect_punct('=');
      AttrValue v;
      v.at = key;
      if (lex_.accept_punct('[')) {
        v.list = true;
        while (!lex_.accept_punct(']')) {
          if (!v.items.empty()) lex_.expect_punct(',');
          v.items.push_back(dim_or_rep());
        }
      } else {
        v.items.push_back(dim_or_rep());
      }
      if (!out.emplace(key.text, v).second) error(key, "attribute " + key.text + " given twice");
    }
    return out;
  }

  int64_t scalar(const std::map<std::string, AttrValue>& a, const std::string& key, const Token& op) {
    auto it = a.find(key);
    if (it == a.end()) error(op, std::string(op.text) + " needs " + key + "=");
    if (it->second.list) error(it->second.at, key + " takes one number");
    return it->second.items[0];
  }

  DimMap dim_map(const std::map<std::string, AttrValue>& a, const std::string& grid_key, const Token& op) {
    auto it = a.find(grid_key);
    if (it == a.end() || !it->second.list) error(op, std::string(op.text) + " needs " + grid_key + "=[...]");
    DimMap m;
    for (int64_t d : it->second.items) m.grid.push_back(static_cast<int32_t>(d));
    m.loop = static_cast<int32_t>(scalar(a, "fmap", op));
    return m;
  }

  // `%a : T, %b : T = op(operands) attrs` at `level` (out_accum results are kernel tensors);
  // the results are declared here.
  UOp definition(Level level) {
    std::vector<std::pair<Token, std::string>> results;
    std::vector<std::pair<ir::DType, ir::Dims>> types;
    do {
      Token at = lex_.peek();
      results.emplace_back(at, value_name());
      lex_.expect_punct(':');
      types.push_back(type());
    } while (lex_.accept_punct(','));
    lex_.expect_punct('=');
    Token op_tok = lex_.peek();
    if (op_tok.kind != TokKind::Ident) lex_.expected("an operator");
    std::optional<UOpType> type = parse_uop(lex_.next().text);
    if (!type || *type == UOpType::Block || *type == UOpType::Thread) error(op_tok, "unknown operator '" + op_tok.text + "'");
    UOp op;
    op.type = *type;
    op.inputs = operands();
    if (op.type == UOpType::Scale) {
      lex_.expect_ident("by");
      lex_.expect_punct('=');
      op.factor = real();
    }
    auto a = attrs({"dim", "k", "imap", "omap", "fmap", "perm"});
    if (op.type == UOpType::Sum || op.type == UOpType::Repeat) {
      op.dim = static_cast<int32_t>(scalar(a, "dim", op_tok));
      op.k = scalar(a, "k", op_tok);
    }
    if (op.type == UOpType::InIter) op.map = dim_map(a, "imap", op_tok);
    if (op.type == UOpType::OutAccum) op.map = dim_map(a, "omap", op_tok);
    if (op.type == UOpType::Reshape) op.shape = types[0].second;
    if (op.type == UOpType::Transpose) {
      auto it = a.find("perm");
      if (it == a.end() || !it->second.list) error(op_tok, "transpose needs perm=[...]");
      op.shape = it->second.items;
    }
    Level out_level = op.type == UOpType::OutAccum ? Level::Kernel : level;
    for (size_t i = 0; i < results.size(); ++i)
      op.outputs.push_back(declare(results[i].first, results[i].second, types[i].first, types[i].second, out_level));
    return op;
  }

  void kernel_item() {
    Token at = lex_.peek();
    if (lex_.accept_ident("input")) {
      std::string n = value_name();
      lex_.expect_punct(':');
      auto [d, s] = type();
      g_.inputs.push_back(declare(at, n, d, s, Level::Kernel));
    } else if (lex_.accept_ident("output")) {
      do g_.outputs.push_back(lookup());
      while (lex_.accept_punct(','));
    } else if (lex_.accept_ident("block")) {
      block();
    } else if (at.kind == TokKind::Value) {
      g_.ops.push_back(definition(Level::Kernel));
    } else {
      lex_.expected("'input', 'output', 'block' or a definition");
    }
  }

  void block() {
    UOp op;
    op.type = UOpType::Block;
    op.inputs = operands();
    Token at = lex_.peek();
    auto a = attrs({"grid", "loop"});
    BlockGraph b;
    auto grid = a.find("grid");
    if (grid == a.end() || !grid->second.list) error(at, "block needs grid=[...]");
    b.grid = grid->second.items;
    b.loop = a.count("loop") ? scalar(a, "loop", at) : 1;
    lex_.expect_punct('{');
    while (!lex_.accept_punct('}')) {
      if (lex_.accept_ident("thread")) {
        b.ops.push_back(thread());
        continue;
      }
      b.ops.push_back(definition(Level::Block));
      if (b.ops.back().type == UOpType::OutAccum) op.outputs.push_back(b.ops.back().outputs[0]);
    }
    op.body = static_cast<int32_t>(g_.blocks.size());
    g_.blocks.push_back(std::move(b));
    g_.ops.push_back(std::move(op));
  }

  UOp thread() {
    UOp op;
    op.type = UOpType::Thread;
    op.inputs = operands();
    lex_.expect_ident("store");
    lex_.expect_punct('=');
    lex_.expect_punct('[');
    std::vector<std::pair<Token, std::string>> stored_names;
    while (!lex_.accept_punct(']')) {
      if (!stored_names.empty()) lex_.expect_punct(',');
      Token t = lex_.peek();
      stored_names.emplace_back(t, value_name());
    }
    lex_.expect_punct('{');
    ThreadGraph tg;
    while (!lex_.accept_punct('}')) tg.ops.push_back(definition(Level::Thread));
    for (auto& [t, n] : stored_names) {
      auto it = names_.find(n);
      if (it == names_.end()) error(t, "the thread graph stores %" + n + ", which it does not compute");
      g_.tensors[static_cast<size_t>(it->second)].level = Level::Block;
      op.outputs.push_back(it->second);
    }
    op.body = static_cast<int32_t>(g_.threads.size());
    g_.threads.push_back(std::move(tg));
    return op;
  }

  Lexer lex_;
  UGraph g_;
  std::map<std::string, TensorId> names_;
};

}  // namespace

UGraph parse_ugraph(std::string_view text, const std::string& source_name) {
  return Parser(text, source_name).run();
}

UGraph parse_ugraph_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  ORCHID_USER_CHECK(in) << path << ": cannot open the μgraph file";
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_ugraph(ss.str(), path);
}

}  // namespace orchid::superopt
