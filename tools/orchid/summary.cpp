#include "summary.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace orchid::cli {

namespace {
std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}
}  // namespace

std::string summarize(const ir::Tensor& t) {
  std::string out = ir::type_str(t.type());
  int64_t n = t.numel();
  if (n == 0) return out + "  (empty)";
  double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0;
  int64_t nonfinite = 0;
  for (int64_t i = 0; i < n; ++i) {
    double v = t.get_as_double(i);
    if (!std::isfinite(v)) {
      ++nonfinite;
      continue;
    }
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  if (nonfinite < n)
    out += "  min " + num(lo) + "  max " + num(hi) + "  mean " + num(sum / double(n - nonfinite));
  if (nonfinite) out += "  non-finite " + std::to_string(nonfinite);
  out += "  [";
  int64_t shown = std::min<int64_t>(n, 6);
  for (int64_t i = 0; i < shown; ++i) out += (i ? ", " : "") + num(t.get_as_double(i));
  return out + (n > shown ? ", ...]" : "]");
}

std::string safe_file_stem(const std::string& name) {
  std::string out;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.';
    out += ok ? c : '_';
  }
  if (out.empty() || out[0] == '.' || out[0] == '-') out = "v" + out;
  return out;
}

}  // namespace orchid::cli
