// A CUDA plan step that calls a GPU library (cuBLASLt: lt_step.h; cuDNN: dnn_step.h) instead
// of launching a generated kernel. It is built once when a model loads, its descriptors,
// algorithm and device addresses fixed, so that enqueueing it is one call that a stream
// capture records into the model's CUDA graph.
#pragma once

#include <cstddef>
#include <string>
#include <variant>

#include "ir/graph.h"
#include "runtime/cuda/dnn_conv.h"
#include "runtime/cuda/lt_matmul.h"
#include "runtime/plan.h"

namespace orchid::runtime::cuda {

// What a library step's graph asks for: one cuBLASLt matmul or one cuDNN convolution.
using LibrarySpec = std::variant<LtMatmul, DnnConv>;

// The call of a cublaslt or cudnn step's graph: UserError, `where` and the reason, when the
// library cannot run it (lt_matmul.h, dnn_conv.h).
LibrarySpec library_spec(StepImpl impl, const ir::Graph& g, const std::string& where);
std::string describe(const LibrarySpec& spec);

// Workspace bytes a model gives its library calls (one buffer: the steps run in order).
inline constexpr size_t kLibraryWorkspaceBytes = size_t{32} << 20;

class LibraryCall {
 public:
  virtual ~LibraryCall() = default;
  // The call on `stream` (a CUstream).
  virtual void enqueue(void* stream) const = 0;
};

}  // namespace orchid::runtime::cuda
