// Parser of the text form (docs/ir.md, "Text form"). Errors are UserErrors naming the file,
// line and column and what was expected.
#pragma once

#include <string>
#include <string_view>

#include "ir/graph.h"

namespace orchid::ir {

// `source_name` names the text in messages (a path, or "<string>"). The result is verified.
Graph parse_graph(std::string_view text, const std::string& source_name = "<string>");
Graph parse_graph_file(const std::string& path);

}  // namespace orchid::ir
