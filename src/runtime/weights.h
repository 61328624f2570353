// weights.bin: the constants of a model, back to back, each at an offset that is a multiple
// of ORCHID_ALIGN (the bytes between are zero), so that kernels can read them in place.
// plan.json records the file's size and checksum and each constant's offset.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ir/tensor.h"
#include "runtime/aligned_buffer.h"

namespace orchid::runtime {

struct WeightsLayout {
  std::vector<int64_t> offsets;  // one per tensor, in order
  int64_t bytes = 0;             // the file's size
  uint64_t checksum = 0;         // of the file's bytes (checksum.h)
};

// Where each tensor goes, without writing anything.
WeightsLayout layout_weights(std::span<const ir::Tensor> tensors);
// Writes the file; a UserError naming `path` when it cannot be written.
WeightsLayout write_weights(const std::string& path, std::span<const ir::Tensor> tensors);

// Reads the whole file into aligned memory, checking that it has `expected_bytes` bytes and
// the expected checksum (a UserError naming `path` and what differs otherwise). The file is
// read rather than mapped so that the bytes checked are the bytes used.
AlignedBuffer read_weights(const std::string& path, int64_t expected_bytes,
                           uint64_t expected_checksum);

}  // namespace orchid::runtime
