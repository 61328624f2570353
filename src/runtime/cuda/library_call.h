// A CUDA plan step that calls a GPU library (cuBLASLt: lt_step.h; cuDNN: dnn_step.h) instead
// of launching a generated kernel. It is built once when a model loads, its descriptors,
// algorithm and device addresses fixed, so that enqueueing it is one call that a stream
// capture records into the model's CUDA graph.
#pragma once

#include <cstddef>

namespace orchid::runtime::cuda {

// Workspace bytes a model gives its library calls (one buffer: the steps run in order).
inline constexpr size_t kLibraryWorkspaceBytes = size_t{32} << 20;

class LibraryCall {
 public:
  virtual ~LibraryCall() = default;
  // The call on `stream` (a CUstream).
  virtual void enqueue(void* stream) const = 0;
};

}  // namespace orchid::runtime::cuda
