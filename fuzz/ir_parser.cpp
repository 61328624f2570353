// Fuzz target: primitive-graph text (.oir) through the parser and the verifier. Bad text must
// end in a UserError naming the line and column; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "ir/parser.h"
#include "ir/printer.h"
#include "support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    orchid::ir::Graph g = orchid::ir::parse_graph(text);
    // What parses prints and parses back to the same text (the text form round-trips).
    std::string printed = orchid::ir::print_graph(g);
    if (orchid::ir::print_graph(orchid::ir::parse_graph(printed)) != printed)
      throw orchid::InternalError("the printed form of a parsed graph does not round-trip");
  } catch (const orchid::UserError&) {
  }
  return 0;
}
