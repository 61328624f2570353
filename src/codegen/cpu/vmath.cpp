// vmath_source() and kernel_abi_source() are defined in sources that the build generates
// (embed.cmake); this file gives the library a source of its own in this folder, which is
// what makes src/codegen/cpu/CMakeLists.txt create it.
#include "codegen/cpu/vmath.h"
