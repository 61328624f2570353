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
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "ir/tensor.h"

namespace orchid::runtime {

enum class BufferLayout : uint8_t { Plain, NChw8c };

std::string_view buffer_layout_name(BufferLayout l);
std::optional<BufferLayout> parse_buffer_layout(std::string_view text);

// Whether a buffer of type t can be stored in layout l (plain: always).
bool layout_fits(BufferLayout l, const ir::TensorType& t);

}  // namespace orchid::runtime
