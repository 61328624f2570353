// NumPy .npy files (format 1.0/2.0/3.0, C order, either byte order on reading) for tensors:
// descr f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1. NumPy has no bfloat16: a bf16 tensor is
// written as f4 (exactly). Errors are UserErrors naming the path and what is wrong.
#pragma once

#include <string>
#include <string_view>

#include "ir/tensor.h"

namespace orchid::ir {

Tensor read_npy(const std::string& path);
void write_npy(const std::string& path, const Tensor& t);
// The same from and to memory (the file's bytes); `what` names the source in messages.
Tensor parse_npy(std::string_view bytes, const std::string& what);
std::string serialize_npy(const Tensor& t);

}  // namespace orchid::ir
