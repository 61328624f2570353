// A "cudnn" step at run time (library_call.h): cuDNN 9 loaded at run time (libcudnn.so.9, no
// link against it), and one forward convolution (dnn_conv.h) with its descriptors, its
// algorithm and its device addresses fixed. The algorithm is the first of cuDNN's heuristic
// ranking, asked once at load, that fits the workspace and computes in f32 FMA (no TF32 or
// other tensor-core conversion) or, where TF32 is allowed, on tensor cores in TF32.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/cuda/dnn_conv.h"
#include "runtime/cuda/library_call.h"

namespace orchid::runtime::cuda {

struct DnnApi;

// Whether cuDNN loads (and, if not, why).
bool cudnn_available(std::string* why = nullptr);

class DnnStep final : public LibraryCall {
 public:
  // args: the device address of each step argument (inputs, then the output). `where` names
  // the step in messages. UserError where cuDNN does not load, rejects the descriptors or has
  // no f32 algorithm for the convolution within the workspace.
  DnnStep(const DnnConv& conv, const std::vector<uint64_t>& args, uint64_t workspace, bool tf32, const std::string& where);
  ~DnnStep() override;
  DnnStep(const DnnStep&) = delete;
  DnnStep& operator=(const DnnStep&) = delete;

  void enqueue(void* stream) const override;

 private:
  void set_up(const DnnConv& conv, const std::vector<uint64_t>& args, bool tf32);
  void release();

  const DnnApi* api_;
  std::string where_;
  void* x_desc_ = nullptr;
  void* y_desc_ = nullptr;
  void* w_desc_ = nullptr;
  void* conv_desc_ = nullptr;
  int algo_ = 0;
  size_t workspace_bytes_ = 0;
  uint64_t x_ = 0, w_ = 0, y_ = 0, workspace_ = 0;
};

}  // namespace orchid::runtime::cuda
