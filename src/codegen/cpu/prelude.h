// Text pasted at the top of every generated source, after the kernel ABI and vmath.inc.
#pragma once

#include <string_view>

namespace orchid::codegen::cpu {

std::string_view prelude_source();

}  // namespace orchid::codegen::cpu
