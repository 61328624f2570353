// Random matmul shapes for the differential tests of library steps (oneDNN on the CPU,
// cuBLASLt on a GPU): rank 2 to 4, batch dims numpy-broadcast (dropped or 1 on either side),
// either operand transposed.
#pragma once

#include <string>

#include "ir/graph.h"
#include "support/random.h"

namespace orchid::testlib {

using ir::Dims;

struct MatMulCase {
  Dims a, b;
  bool ta = false, tb = false;
  int64_t k = 0;
};

inline MatMulCase random_matmul(Rng& rng) {
  size_t rank = rng.range(2, 5);
  Dims batch;
  for (size_t j = 0; j + 2 < rank; ++j) batch.push_back(rng.range(1, 4));
  auto operand = [&](int64_t rows, int64_t cols, bool trans) {
    size_t keep = rng.range(0, static_cast<int64_t>(batch.size()) + 1);  // batch dims kept (from the right)
    Dims s;
    for (size_t j = batch.size() - keep; j < batch.size(); ++j) s.push_back(rng.coin(0.3) ? 1 : batch[j]);
    s.push_back(trans ? cols : rows);
    s.push_back(trans ? rows : cols);
    return s;
  };
  MatMulCase mc;
  int64_t m = rng.range(1, 40), n = rng.range(1, 40);
  mc.k = rng.range(1, 70);
  mc.ta = rng.coin(), mc.tb = rng.coin();
  mc.a = operand(m, mc.k, mc.ta);
  mc.b = operand(mc.k, n, mc.tb);
  return mc;
}

inline std::string matmul_rhs(bool ta, bool tb) {
  return std::string("matmul(%a, %b) {trans_a=") + (ta ? "true" : "false") + ", trans_b=" + (tb ? "true" : "false") + "}";
}

}  // namespace orchid::testlib
