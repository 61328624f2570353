// The rewrite rules of the search (Korch §3; DESIGN.md "rewrite/"), as a table: each row names
// a rule, states its pattern, its replacement and its guards, and holds the two functions that
// find its sites in a graph and apply it at one. The search (search.h) applies rules at sites,
// prices the variants and checks what it keeps with the verifier; a rule is only ever applied
// where its guards hold, and the rewritten graph is equal to the original in exact arithmetic.
//
// The clean-ups run before and after the search (constant folding, scalar constants inlined,
// BatchNorm folded into convolutions) are passes of their own (driver/pipeline.cpp).
#pragma once

#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace orchid::rewrite {

// A place where a rule applies: the primitives it rewrites, the first one the anchor.
struct Site {
  int rule = -1;                   // index into rule_table()
  std::vector<ir::NodeId> nodes;
  int32_t slot = 0;                // the operand a rule works on, where it has a choice
};

struct Rule {
  std::string_view name;
  std::string_view pattern;
  std::string_view replacement;
  std::string_view guards;
  std::vector<Site> (*find)(const ir::Graph& g);                 // in node order; rule unset
  ir::Graph (*apply)(const ir::Graph& g, const Site& s);          // verified
};

const std::vector<Rule>& rule_table();
// The index of the rule named `name`; InternalError for an unknown name.
int rule_index(std::string_view name);

// Every site of every rule in g: by rule, then in node order.
std::vector<Site> find_sites(const ir::Graph& g);
// The sites of one rule.
std::vector<Site> find_sites(const ir::Graph& g, int rule);
ir::Graph apply_site(const ir::Graph& g, const Site& s);

// ---- The rules' functions (rule_*.cpp). ----
std::vector<Site> find_sum_to_matmul(const ir::Graph& g);
ir::Graph apply_sum_to_matmul(const ir::Graph& g, const Site& s);
std::vector<Site> find_scale_after_matmul(const ir::Graph& g);
ir::Graph apply_scale_after_matmul(const ir::Graph& g, const Site& s);
std::vector<Site> find_merge_shared_operand(const ir::Graph& g);
ir::Graph apply_merge_shared_operand(const ir::Graph& g, const Site& s);
std::vector<Site> find_sum_of_matmuls(const ir::Graph& g);
ir::Graph apply_sum_of_matmuls(const ir::Graph& g, const Site& s);
std::vector<Site> find_transpose_into_matmul(const ir::Graph& g);
ir::Graph apply_transpose_into_matmul(const ir::Graph& g, const Site& s);
std::vector<Site> find_permutation_pair(const ir::Graph& g);
ir::Graph apply_permutation_pair(const ir::Graph& g, const Site& s);
std::vector<Site> find_view_chain(const ir::Graph& g);
ir::Graph apply_view_chain(const ir::Graph& g, const Site& s);

}  // namespace orchid::rewrite
