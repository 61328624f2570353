// SHA-256 (FIPS 180-4): content keys for caches of compiled objects, and artifact checksums.
// A strong hash where a collision would silently load the wrong code; fnv1a64 (hash.h) is for
// hash tables, not for naming content.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace orchid {

class Sha256 {
 public:
  using Digest = std::array<uint8_t, 32>;

  Sha256();
  Sha256& update(std::string_view bytes);
  // The digest of everything passed to update; the object must not be used afterwards.
  Digest finish();

 private:
  void compress(const uint8_t* block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> block_{};
  size_t block_used_ = 0;
  uint64_t total_bytes_ = 0;
};

// Lower-case hexadecimal, two digits a byte.
std::string to_hex(const Sha256::Digest& digest);

// The hexadecimal SHA-256 of `bytes` (64 characters).
std::string sha256_hex(std::string_view bytes);

}  // namespace orchid
