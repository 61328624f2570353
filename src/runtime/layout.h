// Physical layouts of a plan buffer's bytes (plan.h, "layout"). Every buffer is dense
// row-major unless the plan says otherwise; a step reads and writes each of its arguments in
// the layout of that argument's buffer.
//
//   plain    dense row-major in the buffer's shape.
//   nChw8c   an f32 [N, C, H, W] buffer with C a multiple of 8, stored as [N, C/8, H, W, 8]:
//            eight channels of one pixel next to each other, the layout oneDNN's AVX2
//            convolutions compute in. The byte size is the plain one. Only oneDNN conv steps
//            read or write such a buffer, so chains of convolutions skip the reorders to and
//            from row-major between them.
//   nChw16c  the same in blocks of sixteen channels (C a multiple of 16), the layout oneDNN's
//            AVX-512 Winograd convolutions compute in.
//   nhwc     an f32 [N, C, H, W] buffer stored as [N, H, W, C]: channels-last, the layout
//            oneDNN's AVX-512 convolutions (brgconv) compute in, for any channel count.
//   panels16 an f32 [K, N] constant with N a multiple of 16, stored as [N/16, K, 16]: the B
//            panels of the GEMM micro-kernel (codegen/cpu/gemm.inc) over all K terms, packed
//            when the artifact is built. Only generated kernels compiled to read it so read
//            it, so a matmul by constant weights skips packing them on every run.
//   panels16t an f32 [N, K] constant with N a multiple of 16 (the weights of a matmul that
//            reads them transposed: ONNX Gemm's transB), stored as the panels16 of its
//            transpose, [N/16, K, 16].
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "ir/tensor.h"

namespace orchid::runtime {

enum class BufferLayout : uint8_t { Plain, NChw8c, Panels16, Nhwc, NChw16c, Panels16T };

// The layouts of activations between oneDNN convolutions (nChw8c, nChw16c, nhwc): only oneDNN
// conv steps read or write them.
bool is_activation_layout(BufferLayout l);

std::string_view buffer_layout_name(BufferLayout l);
std::optional<BufferLayout> parse_buffer_layout(std::string_view text);

// Whether a buffer of type t can be stored in layout l (plain: always). Every layout keeps
// the plain byte size.
bool layout_fits(BufferLayout l, const ir::TensorType& t);

// The tensor with its bytes in layout l (from plain), and back; l must fit its type.
ir::Tensor to_layout(const ir::Tensor& plain, BufferLayout l);
ir::Tensor from_layout(const ir::Tensor& stored, BufferLayout l);

}  // namespace orchid::runtime
