// The text form (docs/ir.md, "Text form"). Printing is total: a malformed graph prints too
// (with `%?N` for undefined values), so that the verifier's messages and debugging dumps
// never fail; only a well-formed graph's text is guaranteed to parse back.
#include "ir/printer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <variant>

#include "ir/text_internal.h"
#include "support/hash.h"

namespace orchid::ir {

namespace detail {

bool is_plain_name(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string quote_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"') {
      out += "\\\"";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string float_text(double v, DType t) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  std::to_chars_result r = t == DType::F64
                               ? std::to_chars(buf, buf + sizeof buf, v)
                               : std::to_chars(buf, buf + sizeof buf, static_cast<float>(v));
  return std::string(buf, r.ptr);
}

std::string int_text(int64_t v, DType t) {
  if (t == DType::U64) return std::to_string(static_cast<uint64_t>(v));
  return std::to_string(v);
}

std::string scalar_literal(const Scalar& s) {
  if (is_bool(s.dtype)) return s.i != 0 ? "true" : "false";
  if (s.dtype == DType::I64) return int_text(s.i, s.dtype);
  std::string text = is_float(s.dtype) ? float_text(s.f, s.dtype) : int_text(s.i, s.dtype);
  return text + ":" + std::string(dtype_name(s.dtype));
}

}  // namespace detail

namespace {

using detail::TextStyle;

// Prints expressions; loads name their input by `slot_names` (or `$k` when absent).
class ExprPrinter {
 public:
  explicit ExprPrinter(const std::vector<std::string>* slot_names) : slot_names_(slot_names) {}

  void print(const Expr& e, std::string& out) const {
    if (!e.defined()) {
      out += "<null>";
      return;
    }
    switch (expr_op_category(e.op())) {
      case ExprCategory::Leaf: print_leaf(*e, out); return;
      case ExprCategory::Load: print_load(*e, out); return;
      case ExprCategory::Cast:
        out += "cast<";
        out += dtype_name(e.dtype());
        out += ">";
        print_args(e->args, 0, e->args.size(), out);
        return;
      case ExprCategory::Unary:
      case ExprCategory::Binary:
      case ExprCategory::Compare:
      case ExprCategory::Select:
        out += expr_op_name(e.op());
        print_args(e->args, 0, e->args.size(), out);
        return;
    }
  }

 private:
  void print_leaf(const ExprNode& n, std::string& out) const {
    if (n.op == ExprOp::Var) {
      out += n.var_kind == VarKind::Domain ? "i" : "r";
      out += std::to_string(n.index);
      return;
    }
    out += detail::scalar_literal(n.value);
  }

  void print_args(const std::vector<Expr>& args, size_t begin, size_t end, std::string& out,
                  const char* open = "(", const char* close = ")") const {
    out += open;
    for (size_t i = begin; i < end; ++i) {
      if (i > begin) out += ", ";
      print(args[i], out);
    }
    out += close;
  }

  void print_load(const ExprNode& n, std::string& out) const {
    bool named = slot_names_ && n.index >= 0 && static_cast<size_t>(n.index) < slot_names_->size();
    if (named) {
      out += (*slot_names_)[static_cast<size_t>(n.index)];
    } else {
      out += "$";
      out += std::to_string(n.index);
    }
    size_t num_idx = n.args.size() - (n.predicated && !n.args.empty() ? 1 : 0);
    print_args(n.args, 0, num_idx, out, "[", "]");
    if (!n.predicated) return;
    out += " if ";
    if (n.args.empty()) {
      out += "<null>";
    } else {
      print(n.args.back(), out);
    }
    out += " else ";
    out += detail::scalar_literal(n.value);
  }

  const std::vector<std::string>* slot_names_;
};

class GraphPrinter {
 public:
  GraphPrinter(const Graph& g, const TextStyle& style) : g_(g), style_(style) {}

  std::string run() {
    out_ = "graph ";
    if (style_.graph_name) out_ += "@" + name_text(g_.name) + " ";
    out_ += "{\n";
    int32_t next_node = 0;
    for (int32_t v = 0; v < g_.num_values(); ++v) {
      const Value& val = g_.values()[static_cast<size_t>(v)];
      switch (val.origin) {
        case ValueOrigin::Input: print_input(ValueId(v)); break;
        case ValueOrigin::Constant: print_constant(ValueId(v)); break;
        case ValueOrigin::Node:
          while (next_node <= val.node.v && next_node < g_.num_nodes()) print_node(next_node++);
          break;
      }
    }
    while (next_node < g_.num_nodes()) print_node(next_node++);
    out_ += "  output";
    for (size_t k = 0; k < g_.outputs().size(); ++k)
      out_ += (k ? ", " : " ") + value_name(g_.outputs()[k]);
    out_ += "\n}\n";
    return std::move(out_);
  }

 private:
  static std::string name_text(const std::string& name) {
    return detail::is_plain_name(name) ? name : detail::quote_string(name);
  }

  std::string value_name(ValueId v) const {
    if (!v.valid() || v.v >= g_.num_values()) return std::string("%?") + std::to_string(v.v);
    if (style_.rename) return std::string("%") + std::to_string(v.v);
    return print_value_name(g_.value(v).name);
  }

  void print_input(ValueId v) {
    out_ += "  input " + value_name(v) + " : " + type_str(g_.type(v)) + "\n";
  }

  void print_constant(ValueId v) {
    out_ += "  const " + value_name(v) + " : " + type_str(g_.type(v)) + " = ";
    const Value& val = g_.value(v);
    if (val.constant < 0 || static_cast<size_t>(val.constant) >= g_.constants().size()) {
      out_ += "<missing data>\n";
      return;
    }
    const Tensor& t = g_.constants()[static_cast<size_t>(val.constant)];
    if (style_.hash_constants) {
      print_hash(t);
    } else {
      print_data(t);
    }
    out_ += "\n";
  }

  void print_hash(const Tensor& t) {
    std::string_view bytes(reinterpret_cast<const char*>(t.data()), t.bytes().size());
    char buf[32];
    std::snprintf(buf, sizeof buf, "hash(%016llx)",
                  static_cast<unsigned long long>(fnv1a64(bytes)));
    out_ += buf;
  }

  static std::string element_text(const Tensor& t, int64_t i) {
    if (is_float(t.dtype())) return detail::float_text(t.get_f64(i), t.dtype());
    return detail::int_text(t.get_i64(i), t.dtype());
  }

  // True when every element prints like the first (bit-for-bit equal, or all NaN).
  static bool is_splat(const Tensor& t) {
    int64_t n = t.numel();
    if (n == 0) return false;
    auto size = static_cast<size_t>(dtype_bytes(t.dtype()));
    const std::byte* p = t.data();
    bool same_bytes = true;
    for (int64_t i = 1; i < n && same_bytes; ++i)
      same_bytes = std::equal(p, p + size, p + static_cast<size_t>(i) * size);
    if (same_bytes) return true;
    std::string first = element_text(t, 0);
    for (int64_t i = 1; i < n; ++i)
      if (element_text(t, i) != first) return false;
    return true;
  }

  void print_data(const Tensor& t) {
    if (is_splat(t)) {
      out_ += "splat(" + element_text(t, 0) + ")";
      return;
    }
    out_ += "[";
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (i) out_ += ", ";
      out_ += element_text(t, i);
    }
    out_ += "]";
  }

  void print_attrs(const PrimAttrs& attrs) {
    std::visit([this](const auto& a) { print_attr_struct(a); }, attrs);
  }
  void print_attr_struct(const NoAttrs&) {}
  void print_attr_struct(const MatMulAttrs& a) {
    out_ += std::string(" {trans_a=") + (a.trans_a ? "true" : "false") +
            ", trans_b=" + (a.trans_b ? "true" : "false") + "}";
  }
  void print_attr_struct(const ConvAttrs& a) {
    out_ += " {strides=" + dims_str(a.strides) + ", dilations=" + dims_str(a.dilations) +
            ", pads_begin=" + dims_str(a.pads_begin) + ", pads_end=" + dims_str(a.pads_end) +
            ", groups=" + std::to_string(a.groups) + "}";
  }
  // The routine's parameters in opaque.def order, then any others (malformed) by name.
  void print_attr_struct(const OpaqueAttrs& a) {
    std::vector<std::string> keys = opaque_routine_params(a.routine);
    for (const auto& [k, v] : a.params)
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    if (keys.empty()) return;  // a routine without parameters (det) prints none
    out_ += " {";
    bool first = true;
    for (const std::string& k : keys) {
      auto it = a.params.find(k);
      if (it == a.params.end()) continue;
      out_ += (first ? "" : ", ") + k + "=" + std::to_string(it->second);
      first = false;
    }
    out_ += "}";
  }

  void print_op(const Primitive& p) {
    out_ += prim_op_name(p.op);
    if (p.op == PrimOp::Reduce) (out_ += " ") += reduce_op_name(p.reduce);
    if (const auto* oa = std::get_if<OpaqueAttrs>(&p.attrs); oa && p.op == PrimOp::Opaque)
      (out_ += " ") += opaque_routine_name(oa->routine);
  }

  void print_bodies(const Primitive& p) {
    std::vector<std::string> slot_names;
    for (ValueId in : p.inputs) slot_names.push_back(value_name(in));
    ExprPrinter ep(&slot_names);
    out_ += " {";
    for (size_t k = 0; k < p.bodies.size(); ++k) {
      out_ += k ? "; " : " ";
      ep.print(p.bodies[k], out_);
    }
    out_ += " }";
  }

  void print_node(int32_t n) {
    const Primitive& p = g_.nodes()[static_cast<size_t>(n)];
    out_ += "  ";
    for (size_t k = 0; k < p.outputs.size(); ++k)
      out_ += (k ? ", " : "") + value_name(p.outputs[k]);
    out_ += " : ";
    for (size_t k = 0; k < p.outputs.size(); ++k) {
      ValueId v = p.outputs[k];
      bool ok = v.valid() && v.v < g_.num_values();
      out_ += (k ? ", " : "") + (ok ? type_str(g_.type(v)) : std::string("?"));
    }
    out_ += " = ";
    print_op(p);
    out_ += "(";
    for (size_t k = 0; k < p.inputs.size(); ++k) out_ += (k ? ", " : "") + value_name(p.inputs[k]);
    out_ += ")";
    print_attrs(p.attrs);
    bool written = !prim_op_derived(p.op) && p.op != PrimOp::Opaque;
    if (written && !p.reduce_domain.empty()) out_ += " over " + dims_str(p.reduce_domain);
    if (written) print_bodies(p);
    if (style_.provenance && !p.name.empty()) out_ += " from " + detail::quote_string(p.name);
    out_ += "\n";
  }

  const Graph& g_;
  TextStyle style_;
  std::string out_;
};

}  // namespace

namespace detail {
std::string print_graph_styled(const Graph& g, const TextStyle& style) {
  return GraphPrinter(g, style).run();
}
}  // namespace detail

std::string print_graph(const Graph& g, const PrintOptions& opts) {
  TextStyle style;
  style.rename = opts.canonical;
  style.provenance = !opts.canonical;
  return detail::print_graph_styled(g, style);
}

std::string print_expr(const Expr& e) {
  std::string out;
  ExprPrinter(nullptr).print(e, out);
  return out;
}

std::string print_value_name(const std::string& name) {
  return "%" + (detail::is_plain_name(name) ? name : detail::quote_string(name));
}

}  // namespace orchid::ir
