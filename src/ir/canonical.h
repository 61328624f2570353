// Canonical structural signature of a graph: a canonical text (the printed form with values
// renamed in definition order, provenance dropped, constants' bytes hashed) and its 64-bit
// hash. Two graphs are structurally equal iff their canonical texts are equal; the hash is
// a key, the text the check (the tuning cache compares both).
#pragma once

#include <cstdint>
#include <string>

#include "ir/graph.h"

namespace orchid::ir {

struct Signature {
  std::string text;
  uint64_t hash = 0;
  bool operator==(const Signature&) const = default;
};

Signature canonical_signature(const Graph& g);

}  // namespace orchid::ir
