// A CUDA plan's "cudnn" step: a convolution step graph (onednn_pattern.h's recognition, as for
// the CPU's oneDNN steps) described as one cuDNN forward convolution. Pure (no GPU, no
// library): the driver asks it whether a kernel can be such a step, and the runtime
// (dnn_step.h) builds the call from it.
//
// Accepted: f32, f16 or bf16 (f32 accumulation either way), one conv with 2 or 3 spatial
// dims, equal padding at both ends of each dim, its input and weights dense step inputs, and
// nothing after it: no bias or other post-op (a kernel with them is split, its epilogue
// generated), the result written dense.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ir/graph.h"

namespace orchid::runtime::cuda {

struct DnnConv {
  int32_t x = -1, w = -1, y = -1;  // step arguments: input, weights, output
  ir::Dims x_dims;                 // N, C, spatial..
  ir::Dims w_dims;                 // K, C / groups, kernel..
  ir::Dims y_dims;                 // N, K, output spatial..
  ir::Dims pads, strides, dilations;
  int64_t groups = 1;
  ir::DType dtype = ir::DType::F32;  // of input, weights and output; accumulation in f32

  bool operator==(const DnnConv&) const = default;
};

// The call for step graph g, or (conv empty) why there is none: "cudnn: ...".
struct DnnMatch {
  std::optional<DnnConv> conv;
  std::string reason;
};
DnnMatch match_dnn_conv(const ir::Graph& g);

// "cudnn conv f32 [1,3,224,224] * [384,3,16,16], strides [16,16], pads [0,0]": for plans and
// reports.
std::string describe(const DnnConv& c);

}  // namespace orchid::runtime::cuda
