#include "support/error.h"

#include <cstring>
#include <sstream>

namespace orchid {

namespace {

std::string escaped(std::string_view text) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\n' && c != '\t') || u == 0x7f) {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string for_terminal(std::string_view message, size_t max_bytes) {
  if (message.size() <= max_bytes) return escaped(message);
  size_t head = max_bytes * 3 / 4, tail = max_bytes - head;
  return escaped(message.substr(0, head)) + " [... " + std::to_string(message.size() - head - tail) +
         " bytes left out ...] " + escaped(message.substr(message.size() - tail));
}

}  // namespace orchid

namespace orchid::detail {

std::string check_prefix(const char* file, int line, const char* cond) {
  const char* base = std::strrchr(file, '/');
  std::ostringstream out;
  out << "internal error at " << (base ? base + 1 : file) << ":" << line << ": check failed: "
      << cond << ": ";
  return out.str();
}

}  // namespace orchid::detail
