#include "interp/compare.h"

#include <cmath>

namespace orchid::interp {

std::string compare_tensors(const ir::Tensor& got, const ir::Tensor& want, double rtol, double atol) {
  if (got.type() != want.type())
    return "type " + ir::type_str(got.type()) + ", expected " + ir::type_str(want.type());
  for (int64_t i = 0; i < got.numel(); ++i) {
    if (!ir::is_float(got.dtype())) {
      if (got.get_i64(i) != want.get_i64(i))
        return "element " + std::to_string(i) + " is " + std::to_string(got.get_i64(i)) +
               ", expected " + std::to_string(want.get_i64(i));
      continue;
    }
    double g = got.get_f64(i), w = want.get_f64(i);
    // An infinity matches only itself: the tolerance test would read inf <= inf as a match.
    bool finite = std::isfinite(g) && std::isfinite(w);
    if ((std::isnan(g) && std::isnan(w)) || g == w ||
        (finite && std::fabs(g - w) <= atol + rtol * std::fabs(w)))
      continue;
    return "element " + std::to_string(i) + " is " + std::to_string(g) + ", expected " + std::to_string(w);
  }
  return "";
}

}  // namespace orchid::interp
