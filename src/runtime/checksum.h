// Checksums of artifact files: FNV-1a 64 (support/hash.h) of a file's bytes, written as 16
// lowercase hex digits. They detect corruption (a truncated copy, a flipped bit), not
// tampering: whoever can edit an artifact can edit its plan too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace orchid::runtime {

uint64_t checksum_bytes(const void* data, size_t size);
// The checksum of a whole file; a UserError naming the path when it cannot be read.
uint64_t checksum_file(const std::string& path);
std::string checksum_hex(uint64_t checksum);
// A UserError naming `path` unless its checksum `sum` is the plan's `expected`.
void check_checksum(const std::string& path, uint64_t sum, uint64_t expected);
// A whole file whose checksum the plan gives; UserError naming the path where it cannot be
// read or its checksum differs.
std::vector<char> read_checked_file(const std::string& path, uint64_t expected);
// Exactly 16 hex digits (either case); nullopt otherwise.
std::optional<uint64_t> parse_checksum_hex(std::string_view text);

}  // namespace orchid::runtime
