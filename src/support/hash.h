// Stable 64-bit FNV-1a hashing: the same bytes give the same hash on every machine and run.
#pragma once

#include <cstdint>
#include <string_view>

namespace orchid {

constexpr uint64_t fnv1a64(std::string_view s, uint64_t h = 0xcbf29ce484222325ull) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

}  // namespace orchid
