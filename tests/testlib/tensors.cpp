#include "testlib/tensors.h"

#include <cmath>

namespace orchid::testlib {

ir::Tensor random_tensor(const ir::TensorType& type, Rng& rng, double lo, double hi) {
  ir::Tensor t(type);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (ir::is_float(type.dtype)) t.set_f64(i, rng.uniform(lo, hi));
    else if (ir::is_bool(type.dtype)) t.set_i64(i, rng.coin());
    else t.set_i64(i, static_cast<int64_t>(std::floor(rng.uniform(lo, hi))));
  }
  return t;
}

int64_t flat_offset(const ir::Dims& shape, const ir::Dims& index) {
  int64_t off = 0;
  for (size_t k = 0; k < shape.size(); ++k) off = off * shape[k] + index[k];
  return off;
}

bool next_index(const ir::Dims& shape, ir::Dims& index) {
  for (size_t k = shape.size(); k-- > 0;) {
    if (++index[k] < shape[k]) return true;
    index[k] = 0;
  }
  return false;
}

}  // namespace orchid::testlib
