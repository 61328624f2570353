// The text every generated CUDA module starts with (codegen/cuda/prelude.cpp).
#pragma once

#include <string_view>

namespace orchid::codegen::cuda {

std::string_view prelude_source();

}  // namespace orchid::codegen::cuda
