// The text every generated CUDA module starts with (codegen/cuda/prelude.cpp).
#pragma once

#include <string>

namespace orchid::codegen::cuda {

std::string prelude_source();

}  // namespace orchid::codegen::cuda
