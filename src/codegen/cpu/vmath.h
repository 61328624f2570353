// The texts that every generated kernel source pastes instead of including them (including a
// header costs 50-90 ms of compile time per kernel library; see TOOLCHAIN.md):
//
//   kernel_abi_source()  include/orchid/kernel_abi.h, the kernels' binary interface (it
//                        includes <stdint.h>, the one header generated code includes);
//   vmath_source()       src/codegen/cpu/vmath.inc, Orchid's vectorizable math: orc_expf,
//                        orc_logf, orc_erff, orc_tanhf, orc_sigmoidf and the f16 / bf16
//                        storage conversions, each with its error bound. It needs <stdint.h>
//                        before it, so it comes after kernel_abi_source();
//   gemm_source()        src/codegen/cpu/gemm.inc, the packed f32 GEMM micro-kernel that
//                        matmuls in generated kernels call (after vmath_source()).
//
// All are embedded in the library at build time (embed.cmake), byte for byte.
#pragma once

#include <string_view>

namespace orchid::codegen::cpu {

std::string_view kernel_abi_source();
std::string_view vmath_source();
std::string_view gemm_source();

}  // namespace orchid::codegen::cpu
