// Private helpers shared by the printer, the verifier's messages, the canonical signature and
// the dot writer (not part of the public API of orchid_ir).
#pragma once

#include <string>
#include <string_view>

#include "ir/expr.h"
#include "ir/graph.h"

namespace orchid::ir::detail {

// How print_graph_styled renders a graph. print_graph uses {rename=canonical,
// provenance=!canonical, graph_name=true, hash_constants=false}; canonical_signature
// renames, drops provenance and the graph name and hashes constants' bytes.
struct TextStyle {
  bool rename = false;          // values named %0, %1, ... by ValueId
  bool provenance = true;       // `from "..."` on nodes with a source name
  bool graph_name = true;       // `graph @name {` (else `graph {`)
  bool hash_constants = false;  // `= hash(<fnv1a64 of the bytes, 16 hex digits>)`
};

std::string print_graph_styled(const Graph& g, const TextStyle& style);

// `"..."` with \" \\ \n \t and \xHH for other control bytes; bytes >= 0x80 are kept.
std::string quote_string(std::string_view s);
// True when `s` is non-empty and made only of [A-Za-z0-9_.\-] (printable without quotes).
bool is_plain_name(std::string_view s);
// A scalar as an expression literal: `3` (i64), `-3:i32`, `0.5:f32`, `inf:f16`, `true`.
std::string scalar_literal(const Scalar& s);
// A float value in the shortest text that reads back to the same value of dtype `t`
// (`inf`, `-inf`, `nan`, `-0` included); f16/bf16 print their value as a float.
std::string float_text(double v, DType t);
// An integer element of dtype `t` held as int64 (u64 printed unsigned).
std::string int_text(int64_t v, DType t);

}  // namespace orchid::ir::detail
