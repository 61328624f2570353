#include "interp/compare.h"

#include <algorithm>
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

double relative_l2(const ir::Tensor& got, const ir::Tensor& want, std::string* why) {
  if (got.type() != want.type()) {
    if (why) *why = "type " + ir::type_str(got.type()) + ", expected " + ir::type_str(want.type());
    return INFINITY;
  }
  if (!ir::is_float(want.dtype())) {
    bool same = got.bytes() == want.bytes();
    if (!same && why) *why = "integer values differ";
    return same ? 0 : 1;
  }
  double num = 0, den = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    double x = got.get_f64(i), y = want.get_f64(i);
    if (!std::isfinite(y) || !std::isfinite(x)) {
      bool same = (std::isnan(x) && std::isnan(y)) || x == y;
      if (!same) {
        if (why) *why = "element " + std::to_string(i) + " is " + std::to_string(x) + ", expected " + std::to_string(y);
        return INFINITY;
      }
      continue;
    }
    num += (x - y) * (x - y);
    den += y * y;
  }
  return std::sqrt(num) / std::max(std::sqrt(den), 1e-30);
}

}  // namespace orchid::interp
