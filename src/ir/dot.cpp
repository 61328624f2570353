// Graphviz output. Node ids are generated (`v3`, `n2`, `out0`); every name from the graph
// only ever appears inside an escaped quoted string, so no name can break the dot syntax.
#include "ir/dot.h"

#include <cstdio>

#include "ir/printer.h"
#include "ir/text_internal.h"

namespace orchid::ir {

namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 when the bytes there are not one.
size_t utf8_sequence_length(std::string_view s, size_t i) {
  auto b = static_cast<unsigned char>(s[i]);
  size_t len = b >= 0xf0 && b <= 0xf4 ? 4 : b >= 0xe0 ? 3 : b >= 0xc2 && b < 0xe0 ? 2 : 0;
  if (b >= 0xf5 || len == 0 || i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return 0;
  return len;
}

// Escapes `s` for a dot double-quoted string: \" and \\ (a lone backslash would start a dot
// escape such as \N or \l), & as an entity (dot reads entities in labels), control bytes and
// invalid UTF-8 shown as the text \xHH.
std::string escape_dot(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    auto u = static_cast<unsigned char>(s[i]);
    if (s[i] == '"' || s[i] == '\\') {
      out += '\\';
      out += s[i];
    } else if (s[i] == '&') {
      out += "&amp;";
    } else if (u >= 0x80) {
      size_t len = utf8_sequence_length(s, i);
      if (len == 0) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\\\x%02x", u);
        out += buf;
      } else {
        out.append(s.substr(i, len));
        i += len - 1;
      }
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\\\x%02x", u);
      out += buf;
    } else {
      out += s[i];
    }
  }
  return out;
}

// A label from lines (each escaped), joined by dot's centred line break.
std::string label(const std::vector<std::string>& lines) {
  std::string out = "\"";
  for (size_t k = 0; k < lines.size(); ++k) out += (k ? "\\n" : "") + escape_dot(lines[k]);
  return out + "\"";
}

const char* kind_colour(PrimKind k) {
  switch (k) {
    case PrimKind::Elementwise: return "#cfe2f3";
    case PrimKind::Reduce: return "#f4cccc";
    case PrimKind::Layout: return "#d9ead3";
    case PrimKind::Linear: return "#fff2cc";
    case PrimKind::Opaque: return "#d9d9d9";
  }
  return "#ffffff";
}

bool valid_value(const Graph& g, ValueId v) { return v.valid() && v.v < g.num_values(); }

// The dot node that defines value v: its producer's box, or its own ellipse.
std::string source_id(const Graph& g, ValueId v) {
  const Value& val = g.value(v);
  if (val.origin == ValueOrigin::Node) return std::string("n") + std::to_string(val.node.v);
  return std::string("v") + std::to_string(v.v);
}

std::string op_text(const Primitive& p) {
  std::string op(prim_op_name(p.op));
  if (p.op == PrimOp::Reduce) op += " " + std::string(reduce_op_name(p.reduce));
  if (const auto* oa = std::get_if<OpaqueAttrs>(&p.attrs))
    op += " " + std::string(opaque_routine_name(oa->routine));
  return op;
}

void write_node(const Graph& g, int32_t n, std::string& out) {
  const Primitive& p = g.nodes()[static_cast<size_t>(n)];
  std::string outs;
  std::vector<std::string> types;
  for (ValueId v : p.outputs) {
    if (!valid_value(g, v)) continue;
    outs += (outs.empty() ? "" : ", ") + print_value_name(g.value(v).name);
    types.push_back(type_str(g.type(v)));
  }
  std::vector<std::string> lines = {outs + " = " + op_text(p),
                                    std::string("[").append(prim_kind_name(p.kind())).append("]")};
  lines.insert(lines.end(), types.begin(), types.end());
  if (!p.name.empty()) lines.push_back("from " + p.name);
  out += "  n" + std::to_string(n) + " [shape=box, style=filled, fillcolor=\"" +
         kind_colour(p.kind()) + "\", label=" + label(lines) + "];\n";
  for (ValueId in : p.inputs) {
    if (!valid_value(g, in)) continue;
    out += "  " + source_id(g, in) + " -> n" + std::to_string(n) +
           " [label=" + label({type_str(g.type(in))}) + "];\n";
  }
}

void write_leaf(const Graph& g, ValueId v, std::string& out) {
  const Value& val = g.value(v);
  std::string what = val.origin == ValueOrigin::Input ? "input " : "const ";
  out += "  v" + std::to_string(v.v) + " [shape=ellipse, label=" +
         label({what + print_value_name(val.name), type_str(val.type)}) + "];\n";
}

}  // namespace

std::string to_dot(const Graph& g) {
  std::string out = "digraph \"" + escape_dot(g.name) + "\" {\n";
  out += "  node [fontname=\"monospace\"];\n  edge [fontname=\"monospace\"];\n";
  for (int32_t v = 0; v < g.num_values(); ++v)
    if (g.values()[static_cast<size_t>(v)].origin != ValueOrigin::Node)
      write_leaf(g, ValueId(v), out);
  for (int32_t n = 0; n < g.num_nodes(); ++n) write_node(g, n, out);
  for (size_t k = 0; k < g.outputs().size(); ++k) {
    ValueId v = g.outputs()[k];
    if (!valid_value(g, v)) continue;
    std::string id = "out" + std::to_string(k);
    out += "  " + id +
           " [shape=plaintext, label=" + label({"output " + print_value_name(g.value(v).name)}) +
           "];\n";
    out +=
        "  " + source_id(g, v) + " -> " + id + " [label=" + label({type_str(g.type(v))}) + "];\n";
  }
  return out + "}\n";
}

}  // namespace orchid::ir
