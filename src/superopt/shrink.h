// A small copy of a LAX program, for the search to verify its μGraphs on (instantiate.h then
// rebuilds them at the program's sizes): every dim class (dim_classes.h: the axes one loop
// index runs along) is divided by one power of two, so the ratios within a class — 32 query
// heads over 8 kv heads, read at floordiv(h, 4) — are kept and no index expression changes.
// Each class is divided as far as keeps its largest extent at least `largest` and its smallest
// at least `smallest` (extents of 1 stay 1): GQA decoding's 32 and 8 heads become 8 and 2, its
// head dim of 128 and 4096 tokens 8 each.
#pragma once

#include <optional>
#include <string>

#include "ir/graph.h"

namespace orchid::superopt {

struct ShrinkOptions {
  int64_t largest = 8;
  int64_t smallest = 2;
};

// The small program (same names, primitives and index expressions; smaller shapes), or none
// with the reason in `why`: it has constants, or the shrunk shapes do not verify (a view
// between dims of different classes).
std::optional<ir::Graph> shrink(const ir::Graph& program, std::string* why, const ShrinkOptions& o = {});

}  // namespace orchid::superopt
