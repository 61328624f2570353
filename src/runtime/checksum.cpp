#include "runtime/checksum.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "support/error.h"
#include "support/hash.h"

namespace orchid::runtime {

uint64_t checksum_bytes(const void* data, size_t size) {
  return fnv1a64(std::string_view(static_cast<const char*>(data), size));
}

uint64_t checksum_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  ORCHID_USER_CHECK(in) << path << ": cannot open (" << std::strerror(errno) << ")";
  uint64_t h = fnv1a64("");
  std::vector<char> buf(1 << 20);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    h = fnv1a64(std::string_view(buf.data(), static_cast<size_t>(in.gcount())), h);
  }
  ORCHID_USER_CHECK(in.eof()) << path << ": read error";
  return h;
}

void check_checksum(const std::string& path, uint64_t sum, uint64_t expected) {
  ORCHID_USER_CHECK(sum == expected) << path << ": checksum " << checksum_hex(sum) << " does not match the plan's "
                                     << checksum_hex(expected) << ": the file is corrupted";
}

std::vector<char> read_checked_file(const std::string& path, uint64_t expected) {
  std::ifstream in(path, std::ios::binary);
  ORCHID_USER_CHECK(in) << path << ": cannot open (" << std::strerror(errno) << ")";
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ORCHID_USER_CHECK(!in.bad()) << path << ": read error";
  check_checksum(path, checksum_bytes(bytes.data(), bytes.size()), expected);
  return bytes;
}

std::string checksum_hex(uint64_t checksum) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, checksum >>= 4) s[static_cast<size_t>(i)] = kDigits[checksum & 15];
  return s;
}

std::optional<uint64_t> parse_checksum_hex(std::string_view text) {
  if (text.size() != 16) return std::nullopt;
  uint64_t v = 0;
  for (char c : text) {
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0) return std::nullopt;
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  return v;
}

}  // namespace orchid::runtime
