// weights.bin: the constants of a model, back to back, each at an offset that is a multiple
// of ORCHID_ALIGN (the bytes between are zero), so that kernels can read them in place.
// plan.json records the file's size and checksum and each constant's offset.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ir/tensor.h"
#include "ir/graph.h"
#include "runtime/aligned_buffer.h"
#include "runtime/plan.h"

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

// An artifact's graph (graph.oir: the real inputs, then the constants as inputs) gets its
// constants' values from the weights: every entry of `inputs` (one per input of g) whose input
// is named as one of the plan's constant buffers is replaced by that constant's bytes, in
// plain layout.
void bind_constants(const Plan& plan, const AlignedBuffer& weights, const ir::Graph& g, std::vector<ir::Tensor>& inputs);

}  // namespace orchid::runtime
