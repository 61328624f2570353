// Disjoint sets over 0 .. n-1 (union-find with path halving): which elements joins have put
// together.
#pragma once

#include <cstddef>
#include <numeric>
#include <vector>

namespace orchid {

class UnionFind {
 public:
  explicit UnionFind(size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), size_t{0}); }
  // The representative of x's set.
  size_t find(size_t x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void join(size_t a, size_t b) { parent_[find(a)] = find(b); }

 private:
  std::vector<size_t> parent_;
};

}  // namespace orchid
