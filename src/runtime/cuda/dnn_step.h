// A "cudnn" step at run time (library_call.h): cuDNN 9 loaded at run time (libcudnn.so.9, no
// link against it), and one forward convolution (dnn_conv.h) with its descriptors, its
// algorithm and its device addresses fixed. The algorithm is one of cuDNN's heuristic ranking,
// asked once at load, that fits the workspace and computes in f32 FMA (no TF32 or other
// tensor-core conversion) or, where TF32 is allowed, on tensor cores in TF32: the fastest of
// the first kDnnCandidates such, each timed on the GPU at load (library_call.h,
// pick_algorithms), or the first where algorithms are not timed (LibraryOptions). Like
// LtStep it holds the first and the fastest, and the model chooses which runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/cuda/dnn_conv.h"
#include "runtime/cuda/library_call.h"

namespace orchid::runtime::cuda {

struct DnnApi;

// Qualifying algorithms of cuDNN's heuristic timed at load (pick_algorithms).
constexpr int kDnnCandidates = 8;

// Whether cuDNN loads (and, if not, why).
bool cudnn_available(std::string* why = nullptr);

class DnnStep final : public LibraryCall {
 public:
  // args: the device address of each step argument (inputs, then the output). `where` names
  // the step in messages. UserError where cuDNN does not load, rejects the descriptors or has
  // no f32 algorithm for the convolution within the workspace.
  DnnStep(const DnnConv& conv, const std::vector<uint64_t>& args, uint64_t workspace, const LibraryOptions& options,
          const std::string& where);
  ~DnnStep() override;
  DnnStep(const DnnStep&) = delete;
  DnnStep& operator=(const DnnStep&) = delete;

  void enqueue(void* stream) const override;

 private:
  void set_up(const DnnConv& conv, const std::vector<uint64_t>& args, const LibraryOptions& options);
  void choose_algorithms(const DnnConv& conv, const LibraryOptions& options);
  void release();
  // An algorithm with its math type and workspace.
  struct Algorithm {
    int algo = 0, math = 0;
    size_t workspace_bytes = 0;
  };
  // cudnnConvolutionForward with `algo` (its math type set on the descriptor first) on the
  // handle's stream: its status. The caller holds the API's lock and has set the stream.
  int call(const Algorithm& algo) const;

  const DnnApi* api_;
  std::string where_;
  void* x_desc_ = nullptr;
  void* y_desc_ = nullptr;
  void* w_desc_ = nullptr;
  void* conv_desc_ = nullptr;
  // The heuristic's first qualifying algorithm and the one timed fastest at load
  // (LibraryCall::slot picks one).
  Algorithm algos_[2];
  uint64_t x_ = 0, w_ = 0, y_ = 0, workspace_ = 0;
};

}  // namespace orchid::runtime::cuda
