#include "rewrite/rules.h"

#include "support/error.h"

namespace orchid::rewrite {

const std::vector<Rule>& rule_table() {
  static const std::vector<Rule> table = {
      {"sum-to-matmul",
       "R[.., m, 1] = reduce sum over [n] { E[.., m, r0] } (or R[.., m] without the kept dim)",
       "R = E · 1, a matmul with a constant column of n ones (viewed as R's shape)",
       "a float E of rank >= 2; the body is E read as it is along the leading dims",
       find_sum_to_matmul, apply_sum_to_matmul},
      {"scale-after-matmul",
       "P = elementwise { E[i..] / f } or { E[i..] · f }; O = matmul(P, B) (or matmul(A, P))",
       "O = elementwise { matmul(E, B)[..] / f' } (f' reads f at O's indices)",
       "P is read by the matmul alone; f does not vary along the contracted dim, does not read E "
       "at other indices, and reads no dim where P is broadcast",
       find_scale_after_matmul, apply_scale_after_matmul},
      {"merge-shared-operand",
       "O_k = matmul(X, B_k) for k = 1..n (or matmul(A_k, X)), the same attributes",
       "O = matmul(X, [B_1 | .. | B_n]); O_k = the k-th slice of O",
       "the B_k differ only in their output dim; no O_k feeds another member's operand",
       find_merge_shared_operand, apply_merge_shared_operand},
      {"sum-of-matmuls",
       "S = elementwise { M1[i..] + M2[i..] }, M1 = matmul(A1, B1), M2 = matmul(A2, B2) (LoRA: W·X + B·(A·X))",
       "S = matmul([A1 | A2], [B1 ; B2]), the operands joined along the contracted dim",
       "the same attributes; A1, A2 and B1, B2 differ only in the contracted dim; M1 and M2 are "
       "read by S alone",
       find_sum_of_matmuls, apply_sum_of_matmuls},
      {"transpose-into-matmul",
       "T = layout { X[.., i_{r-1}, i_{r-2}] }; O = matmul(T, B) (or matmul(A, T))",
       "O = matmul(X, B) with the operand's trans flag flipped",
       "T swaps the last two dims and nothing else",
       find_transpose_into_matmul, apply_transpose_into_matmul},
      {"permutation-pair",
       "Y = permute(permute(X, q1), q2), or Y = permute(X, identity)",
       "Y = permute(X, q1 then q2), or X itself when that is the identity",
       "both layouts are pure permutations of their one input",
       find_permutation_pair, apply_permutation_pair},
      {"view-chain",
       "Y = view(view(X)), or Y = view(X) of X's own shape",
       "Y = view(X), or X itself",
       "none (views keep the row-major order of elements)",
       find_view_chain, apply_view_chain},
  };
  return table;
}

int rule_index(std::string_view name) {
  const std::vector<Rule>& t = rule_table();
  for (size_t k = 0; k < t.size(); ++k)
    if (t[k].name == name) return static_cast<int>(k);
  ORCHID_CHECK(false) << "no rewrite rule named " << name;
  return -1;
}

std::vector<Site> find_sites(const ir::Graph& g, int rule) {
  std::vector<Site> sites = rule_table().at(static_cast<size_t>(rule)).find(g);
  for (Site& s : sites) s.rule = rule;
  return sites;
}

std::vector<Site> find_sites(const ir::Graph& g) {
  std::vector<Site> all;
  for (size_t r = 0; r < rule_table().size(); ++r) {
    std::vector<Site> some = find_sites(g, static_cast<int>(r));
    all.insert(all.end(), some.begin(), some.end());
  }
  return all;
}

ir::Graph apply_site(const ir::Graph& g, const Site& s) {
  return rule_table().at(static_cast<size_t>(s.rule)).apply(g, s);
}

}  // namespace orchid::rewrite
