// Recursive-descent parser of the text form (docs/ir.md, "Text form"): graph, items,
// constants and attributes here; bodies in parser_exprs.cpp; tokens in parser_lexer.cpp.
#include "ir/parser.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include "ir/parser_internal.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "support/error.h"

namespace orchid::ir {

namespace {

using detail::Lexer;
using detail::Token;
using detail::TokKind;

// One `key=value` of an attribute list, as written.
struct AttrEntry {
  Token key;
  Token value;  // the first token of the value
  enum class Kind : uint8_t { Int, Bool, Dims } kind = Kind::Int;
  int64_t i = 0;
  bool b = false;
  Dims dims;
};

// The attribute keys an operator takes, in print order (empty: it takes none).
std::vector<std::string> attr_keys(PrimOp op, OpaqueRoutine routine) {
  switch (op) {
    case PrimOp::MatMul: return {"trans_a", "trans_b"};
    case PrimOp::Conv: return {"strides", "dilations", "pads_begin", "pads_end", "groups"};
    case PrimOp::Opaque: return opaque_routine_params(routine);
    case PrimOp::Elementwise:
    case PrimOp::Reduce:
    case PrimOp::Broadcast:
    case PrimOp::Layout:
    case PrimOp::View: break;
  }
  return {};
}

OpaqueRoutine routine_of(const Primitive& p) {
  const auto* a = std::get_if<OpaqueAttrs>(&p.attrs);
  return a ? a->routine : OpaqueRoutine::CumSum;
}

// The names of the opaque routines, for messages ("cumsum, topk, ...").
std::string routine_names() {
  std::string names;
#define ORCHID_OPAQUE(e, text, params) names += std::string(names.empty() ? "" : ", ") + (text);
#include "ir/opaque.def"
#undef ORCHID_OPAQUE
  return names;
}

// Constants in the text form are at most 1 GiB: larger ones are certainly a mistake (a splat
// of a huge shape would allocate it all).
constexpr int64_t kMaxConstantBytes = int64_t{1} << 30;

class GraphParser {
 public:
  GraphParser(std::string_view text, const std::string& source) : lex_(text, source) {}

  Graph run() {
    graph_tok_ = lex_.expect_ident("graph");
    if (lex_.peek().kind != TokKind::GraphName) lex_.expected("a graph name '@name'");
    g_.name = lex_.next().text;
    lex_.expect_punct('{');
    while (!lex_.at_ident("output")) parse_item();
    lex_.next();
    std::vector<ValueId> outputs;
    if (lex_.peek().kind == TokKind::Value) {
      outputs.push_back(use_value(lex_.next()));
      while (lex_.accept_punct(',')) outputs.push_back(use_value(expect_value()));
    }
    g_.set_outputs(std::move(outputs));
    lex_.expect_punct('}', "',' or '}'");
    if (lex_.peek().kind != TokKind::End) lex_.expected("end of input");
    verify_located();
    return std::move(g_);
  }

 private:
  // ---- names and types ----

  Token expect_value() {
    if (lex_.peek().kind != TokKind::Value) lex_.expected("a value '%name'");
    return lex_.next();
  }

  // Records a newly defined name; names are exact, so a second definition is an error.
  std::string define(const Token& t) {
    if (t.text.empty()) lex_.error_at(t, "empty value name");
    auto [it, fresh] = defined_.emplace(t.text, t);
    if (!fresh)
      lex_.error_at(t, "duplicate value name " + print_value_name(t.text) + " (first defined at " +
                           std::to_string(it->second.line) + ":" + std::to_string(it->second.col) +
                           ")");
    return t.text;
  }

  ValueId use_value(const Token& t) {
    std::optional<ValueId> v = g_.find_value(t.text);
    if (!v) lex_.error_at(t, "unknown value " + print_value_name(t.text));
    return *v;
  }

  int64_t parse_int() {
    if (lex_.peek().kind != TokKind::Number) lex_.expected("an integer");
    return detail::token_int(lex_, lex_.next());
  }

  // dims := '[' [int (',' int)*] ']'; `what` names the list in messages.
  Dims parse_dims(bool allow_negative, const std::string& what = "a dimension") {
    lex_.expect_punct('[');
    Dims dims;
    while (!lex_.at_punct(']')) {
      if (!dims.empty()) lex_.expect_punct(',', "',' or ']'");
      Token t = lex_.peek();
      if (t.kind != TokKind::Number) lex_.expected(what);
      int64_t d = parse_int();
      if (d < 0 && !allow_negative)
        lex_.error_at(t, "expected " + what + " (>= 0), found " + t.text);
      dims.push_back(d);
    }
    lex_.next();
    return dims;
  }

  // type := dtype dims; its size in bytes must fit in an int64 (`max_bytes` when given).
  TensorType parse_type(int64_t max_bytes = std::numeric_limits<int64_t>::max()) {
    Token t = lex_.peek();
    std::optional<DType> d = t.kind == TokKind::Ident ? parse_dtype(t.text) : std::nullopt;
    if (!d) lex_.expected("a dtype (f32, f16, bf16, f64, i8..i64, u8..u64, bool)");
    lex_.next();
    if (!lex_.at_punct('[')) lex_.expected("'[' and the dimensions of the type");
    TensorType type{*d, parse_dims(false)};
    // The dims other than 0 must multiply within the limit too: an empty tensor's strides are
    // still computed from them (a fuzzing finding).
    int64_t bytes = dtype_bytes(type.dtype);
    for (int64_t dim : type.shape) {
      if (dim == 0) continue;
      if (dim > max_bytes / bytes)
        lex_.error_at(t, type_str(type) + " is too large (more than " + std::to_string(max_bytes) +
                             " bytes)");
      bytes *= dim;
    }
    return type;
  }

  // ---- items ----

  void parse_item() {
    if (lex_.at_ident("input")) return parse_input();
    if (lex_.at_ident("const")) return parse_const();
    if (lex_.peek().kind == TokKind::Value) return parse_node();
    lex_.expected("'input', 'const', a node or 'output'");
  }

  void parse_input() {
    lex_.next();
    std::string name = define(expect_value());
    lex_.expect_punct(':');
    g_.add_input(name, parse_type());
  }

  void parse_const() {
    lex_.next();
    std::string name = define(expect_value());
    lex_.expect_punct(':');
    TensorType type = parse_type(kMaxConstantBytes);
    lex_.expect_punct('=');
    // The statement is read as far as it can be before the tensor is allocated: a short text
    // naming a large type must not cost its memory (a fuzzing finding).
    if (lex_.accept_ident("splat")) {
      lex_.expect_punct('(');
      Token v = lex_.next();
      Tensor one({type.dtype, {}});
      set_element(one, 0, v);
      lex_.expect_punct(')');
      Tensor data(type);
      for (int64_t i = 0; i < data.numel(); ++i) set_element(data, i, v);
      g_.add_constant(name, std::move(data));
    } else if (lex_.at_punct('[')) {
      // Each element takes at least two characters (a digit and a ',' or the ']').
      if (static_cast<uint64_t>(type.numel()) > lex_.remaining() / 2 + 2)
        lex_.error_at(lex_.peek(), type_str(type) + " needs " + std::to_string(type.numel()) +
                                       " elements; the text is too short to hold them");
      Tensor data(type);
      parse_elements(data);
      g_.add_constant(name, std::move(data));
    } else {
      lex_.expected("'splat(' or '[' and the elements");
    }
  }

  void set_element(Tensor& data, int64_t i, const Token& t) {
    if (t.kind != TokKind::Number &&
        !(t.kind == TokKind::Ident && (t.text == "inf" || t.text == "nan")))
      lex_.error_at(t, "expected a number, found " + Lexer::describe(t));
    Scalar s = detail::token_scalar(lex_, t, data.dtype());
    if (is_float(data.dtype())) {
      data.set_f64(i, s.f);
    } else {
      data.set_i64(i, s.i);
    }
  }

  // '[' e0, e1, .. ']' (the caller has seen the '[').
  void parse_elements(Tensor& data) {
    lex_.next();
    int64_t n = 0;
    while (!lex_.at_punct(']')) {
      if (n > 0) lex_.expect_punct(',', "',' or ']'");
      Token t = lex_.next();
      if (n >= data.numel())
        lex_.error_at(t, "too many elements for " + type_str(data.type()) + " (" +
                             std::to_string(data.numel()) + ")");
      set_element(data, n++, t);
    }
    if (n != data.numel())
      lex_.error_at(lex_.peek(), type_str(data.type()) + " needs " + std::to_string(data.numel()) +
                                     " elements, found " + std::to_string(n));
    lex_.next();
  }

  // ---- nodes ----

  // op := 'elementwise' | 'reduce' combiner | ... | 'opaque' routine; fills p.op, p.reduce and
  // the routine (in p.attrs).
  void parse_op(Primitive& p) {
    Token t = lex_.peek();
    std::optional<PrimOp> op = t.kind == TokKind::Ident ? parse_prim_op(t.text) : std::nullopt;
    if (!op)
      lex_.expected(
          "an operator (elementwise, reduce, broadcast, layout, view, matmul, conv, opaque)");
    lex_.next();
    p.op = *op;
    if (p.op == PrimOp::Reduce) {
      const Token& c = lex_.peek();
      std::optional<ReduceOp> r = c.kind == TokKind::Ident ? parse_reduce_op(c.text) : std::nullopt;
      if (!r) lex_.expected("a combiner (sum, prod, max, min, argmax, argmin, welford, maxsum)");
      lex_.next();
      p.reduce = *r;
    }
    if (p.op == PrimOp::Opaque) {
      const Token& c = lex_.peek();
      std::optional<OpaqueRoutine> r =
          c.kind == TokKind::Ident ? parse_opaque_routine(c.text) : std::nullopt;
      if (!r) lex_.expected("an opaque routine (" + routine_names() + ")");
      lex_.next();
      p.attrs = OpaqueAttrs{*r, {}};
    }
  }

  void parse_inputs(Primitive& p, detail::BodyScope& scope) {
    lex_.expect_punct('(');
    while (!lex_.at_punct(')')) {
      if (!p.inputs.empty()) lex_.expect_punct(',', "',' or ')'");
      Token t = expect_value();
      ValueId v = use_value(t);
      for (ValueId seen : p.inputs)  // derived operators read inputs by position
        if (seen == v && !prim_op_derived(p.op))
          lex_.error_at(t, "input " + print_value_name(t.text) + " is listed twice");
      p.inputs.push_back(v);
      scope.names.push_back(t.text);
      scope.types.push_back(g_.type(v));
    }
    lex_.next();
  }

  AttrEntry parse_attr_entry() {
    AttrEntry e;
    if (lex_.peek().kind != TokKind::Ident) lex_.expected("an attribute name");
    e.key = lex_.next();
    lex_.expect_punct('=');
    e.value = lex_.peek();
    if (lex_.accept_ident("true") || lex_.accept_ident("false")) {
      e.kind = AttrEntry::Kind::Bool;
      e.b = e.value.text == "true";
    } else if (lex_.at_punct('[')) {
      e.kind = AttrEntry::Kind::Dims;
      e.dims = parse_dims(true, "an integer");
    } else if (lex_.peek().kind == TokKind::Number) {
      e.i = parse_int();
    } else {
      lex_.expected("an integer, true, false or a list of integers");
    }
    return e;
  }

  // attrs := '{' key '=' value (',' key '=' value)* '}', checked against the keys of the op.
  std::map<std::string, AttrEntry> parse_attrs(const Primitive& p, const std::string& op) {
    std::vector<std::string> keys = attr_keys(p.op, routine_of(p));
    lex_.expect_punct('{', "'{' and the attributes of " + op);
    std::map<std::string, AttrEntry> out;
    while (!lex_.at_punct('}')) {
      if (!out.empty()) lex_.expect_punct(',', "',' or '}'");
      AttrEntry e = parse_attr_entry();
      if (std::find(keys.begin(), keys.end(), e.key.text) == keys.end())
        lex_.error_at(e.key, op + " has no attribute '" + e.key.text + "'");
      if (out.count(e.key.text)) lex_.error_at(e.key, "attribute '" + e.key.text + "' given twice");
      out.emplace(e.key.text, std::move(e));
    }
    for (const std::string& k : keys)
      if (!out.count(k)) lex_.error_at(lex_.peek(), op + " needs the attribute '" + k + "'");
    lex_.next();
    return out;
  }

  const AttrEntry& attr_of(const std::map<std::string, AttrEntry>& attrs, const std::string& key,
                           AttrEntry::Kind kind, const char* what) {
    const AttrEntry& e = attrs.at(key);
    if (e.kind != kind)
      lex_.error_at(e.value, "expected " + std::string(what) + " for " + key + ", found " +
                                 Lexer::describe(e.value));
    return e;
  }

  void set_attrs(Primitive& p, const std::map<std::string, AttrEntry>& a) {
    using K = AttrEntry::Kind;
    switch (p.op) {
      case PrimOp::MatMul:
        p.attrs = MatMulAttrs{attr_of(a, "trans_a", K::Bool, "true or false").b,
                              attr_of(a, "trans_b", K::Bool, "true or false").b};
        return;
      case PrimOp::Conv: {
        ConvAttrs c;
        c.strides = attr_of(a, "strides", K::Dims, "a list of integers").dims;
        c.dilations = attr_of(a, "dilations", K::Dims, "a list of integers").dims;
        c.pads_begin = attr_of(a, "pads_begin", K::Dims, "a list of integers").dims;
        c.pads_end = attr_of(a, "pads_end", K::Dims, "a list of integers").dims;
        c.groups = attr_of(a, "groups", K::Int, "an integer").i;
        p.attrs = c;
        return;
      }
      case PrimOp::Opaque: {
        auto& o = std::get<OpaqueAttrs>(p.attrs);
        for (const auto& [key, e] : a) o.params[key] = attr_of(a, key, K::Int, "an integer").i;
        return;
      }
      case PrimOp::Elementwise:
      case PrimOp::Reduce:
      case PrimOp::Broadcast:
      case PrimOp::Layout:
      case PrimOp::View: return;
    }
  }

  // ['over' dims] '{' expr (';' expr)* '}' of an operator with a written body.
  void parse_bodies(Primitive& p, const detail::BodyScope& scope) {
    if (lex_.accept_ident("over")) p.reduce_domain = parse_dims(false);
    lex_.expect_punct('{', "'{' and the body");
    p.bodies.push_back(detail::parse_body_expr(lex_, scope));
    while (lex_.accept_punct(';')) p.bodies.push_back(detail::parse_body_expr(lex_, scope));
    lex_.expect_punct('}', "';' or '}'");
  }

  // The shapes of a derived operator must fit before add_node derives its expression.
  void check_derived_types(const Token& at, const Primitive& p,
                           const std::vector<TensorType>& outs) {
    std::string op(prim_op_name(p.op));
    size_t want_inputs = p.op == PrimOp::View ? 1 : 2;
    if (p.inputs.size() != want_inputs || outs.size() != 1)
      lex_.error_at(at, op + " takes " + std::to_string(want_inputs) + " input" +
                            (want_inputs == 1 ? "" : "s") + " and 1 output, found " +
                            std::to_string(p.inputs.size()) + " and " +
                            std::to_string(outs.size()));
    std::vector<TensorType> in;
    for (ValueId v : p.inputs) in.push_back(g_.type(v));
    TensorType want = outs[0];
    try {
      if (p.op == PrimOp::MatMul)
        want = matmul_result_type(in[0], in[1], std::get<MatMulAttrs>(p.attrs));
      if (p.op == PrimOp::Conv) want = conv_result_type(in[0], in[1], std::get<ConvAttrs>(p.attrs));
    } catch (const UserError& e) {
      lex_.error_at(at, e.what());
    }
    if (p.op == PrimOp::View && (in[0].dtype != outs[0].dtype || in[0].numel() != outs[0].numel()))
      lex_.error_at(at, "view of " + type_str(in[0]) + " as " + type_str(outs[0]) +
                            " changes the dtype or the element count");
    if (want != outs[0])
      lex_.error_at(at, op + " of " + type_str(in[0]) + " and " + type_str(in[1]) + " gives " +
                            type_str(want) + ", declared " + type_str(outs[0]));
  }

  // node := value (',' value)* ':' type (',' type)* '=' op '(' values ')' [attrs]
  //         ['over' dims] ['{' bodies '}'] ['from' string]
  void parse_node() {
    Token first = lex_.peek();
    std::vector<std::string> names = {define(expect_value())};
    while (lex_.accept_punct(',')) names.push_back(define(expect_value()));
    lex_.expect_punct(':', "',' or ':'");
    std::vector<TensorType> types = {parse_type()};
    while (lex_.accept_punct(',')) types.push_back(parse_type());
    Token eq = lex_.expect_punct('=', "',' or '='");
    if (types.size() != names.size())
      lex_.error_at(eq, std::to_string(names.size()) + " values but " +
                            std::to_string(types.size()) + " types");
    Primitive p;
    Token op_tok = lex_.peek();
    parse_op(p);
    // How the operator is named in messages: its routine for opaque primitives.
    std::string op =
        p.op == PrimOp::Opaque ? std::string(opaque_routine_name(routine_of(p))) : op_tok.text;
    detail::BodyScope scope;
    parse_inputs(p, scope);
    if (!attr_keys(p.op, routine_of(p)).empty()) set_attrs(p, parse_attrs(p, op));
    bool written = !prim_op_derived(p.op) && p.op != PrimOp::Opaque;
    if (written) {
      parse_bodies(p, scope);
    } else if (lex_.at_punct('{') || lex_.at_ident("over")) {
      lex_.error_at(lex_.peek(),
                    op + " has no written body (" +
                        (p.op == PrimOp::Opaque ? std::string("it is a library routine")
                                                : "its expression is derived") +
                        ")");
    }
    if (lex_.accept_ident("from")) {
      if (lex_.peek().kind != TokKind::String) lex_.expected("a string after 'from'");
      p.name = lex_.next().text;
    }
    if (prim_op_derived(p.op)) check_derived_types(op_tok, p, types);
    p.domain = types[0].shape;
    node_tokens_.push_back(first);
    g_.add_node(std::move(p), types, names);
  }

  // Verifies the graph; each violation is reported at its node's first token.
  void verify_located() {
    std::vector<std::string> errors = verify(g_);
    if (errors.empty()) return;
    std::string msg;
    for (const std::string& e : errors) {
      const Token* at = &graph_tok_;
      size_t n = 0;
      bool about_node = e.rfind("node ", 0) == 0 &&
                        std::from_chars(e.data() + 5, e.data() + e.size(), n).ec == std::errc();
      if (about_node && n < node_tokens_.size()) at = &node_tokens_[n];
      if (!msg.empty()) msg += "\n";
      msg += lex_.where(*at) + e;
    }
    throw UserError(msg);
  }

  Lexer lex_;
  Graph g_;
  Token graph_tok_;
  std::map<std::string, Token, std::less<>> defined_;
  std::vector<Token> node_tokens_;
};

}  // namespace

Graph parse_graph(std::string_view text, const std::string& source_name) {
  return GraphParser(text, source_name).run();
}

Graph parse_graph_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(path + ": cannot open the file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw UserError(path + ": cannot read the file");
  return parse_graph(text.str(), path);
}

}  // namespace orchid::ir
