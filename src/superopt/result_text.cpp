#include "superopt/result_text.h"

#include <cstdio>
#include <sstream>

#include "superopt/text.h"
#include "support/error.h"

namespace orchid::superopt {

namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// The μGraph texts of `text` from `at` on, each from "ugraph" to its closing "}" line.
size_t next_graph(const std::string& text, size_t at, std::string* graph) {
  size_t end = text.find("\n}\n", at);
  ORCHID_USER_CHECK(end != std::string::npos) << "superopt result: a μgraph without its closing brace";
  *graph = text.substr(at, end + 3 - at);
  return end + 3;
}

}  // namespace

std::string options_key(const SearchOptions& o) {
  std::ostringstream os;
  os << "generator " << kGeneratorVersion << "; kernel ops " << o.max_kernel_ops << "; block ops " << o.max_block_ops
     << "; graph-defined " << o.max_graph_defined << "; block inputs " << o.max_block_inputs << "; block outputs "
     << o.max_block_outputs << "; grids";
  for (const ir::Dims& g : o.grids) os << " " << ir::dims_str(g);
  os << "; loops";
  for (int64_t l : o.loops) os << " " << l;
  os << "; block memory " << o.block_memory_bytes << "; device memory " << o.device_memory_bytes << "; canonical "
     << o.canonical << "; prune " << o.prune_abstract << "; concat_matmul " << o.concat_matmul << "; consistent "
     << o.consistent_maps << "; screen " << o.screen_tests << "; results " << o.max_results << "; oracle "
     << o.oracle.timeout_ms << " ms " << o.oracle.resource_limit << " " << o.oracle.prechecks;
  return os.str();
}

std::string result_text(const SearchResult& r) {
  std::string out = "stats " + describe(r.stats) + "\n";
  for (size_t i = 0; i < r.found.size(); ++i) out += "found " + number(r.cost[i]) + "\n" + print_ugraph(r.found[i]);
  for (const UGraph& g : r.unverified) out += "unverified\n" + print_ugraph(g);
  return out;
}

SearchResult parse_result_text(const std::string& text, std::string* stats_line) {
  SearchResult r;
  size_t at = 0;
  auto line = [&]() {
    size_t end = text.find('\n', at);
    ORCHID_USER_CHECK(end != std::string::npos) << "superopt result: a line without its end";
    std::string l = text.substr(at, end - at);
    at = end + 1;
    return l;
  };
  std::string stats = line();
  ORCHID_USER_CHECK(stats.rfind("stats ", 0) == 0) << "superopt result: expected the stats line";
  *stats_line = stats.substr(6);
  while (at < text.size()) {
    std::string head = line();
    std::string graph;
    at = next_graph(text, at, &graph);
    if (head.rfind("found ", 0) == 0) {
      r.cost.push_back(std::stod(head.substr(6)));
      r.found.push_back(parse_ugraph(graph, "<superopt result>"));
    } else {
      ORCHID_USER_CHECK(head == "unverified") << "superopt result: unexpected line '" << head << "'";
      r.unverified.push_back(parse_ugraph(graph, "<superopt result>"));
    }
  }
  return r;
}

}  // namespace orchid::superopt
