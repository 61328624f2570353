#include "support/error.h"

#include <cstring>
#include <sstream>

namespace orchid::detail {

std::string check_prefix(const char* file, int line, const char* cond) {
  const char* base = std::strrchr(file, '/');
  std::ostringstream out;
  out << "internal error at " << (base ? base + 1 : file) << ":" << line << ": check failed: "
      << cond << ": ";
  return out.str();
}

}  // namespace orchid::detail
