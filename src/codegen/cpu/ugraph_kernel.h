// A graph-defined kernel operator of a μGraph (superopt/ugraph.h, Mirage §2) as a CPU kernel
// with the kernel ABI (include/orchid/kernel_abi.h).
//
// A block is a task on one core: task t is the block at grid coordinates (g0, g1, g2) in
// row-major order (x outermost). Its for-loop streams the chunks of its inputs: each
// iteration's in_iter parts are read where they lie in the kernel inputs (a view: an offset
// from the block's and iteration's coordinates and the input's constant strides), so a block
// loads nothing it does not compute with. Block operators compute into per-task scratch (the
// block's fast memory: block_bytes of the μGraph, which the generator kept inside one core's
// cache), except a result that only an out_accum reads: that is computed straight into the
// block's part of the kernel output — added to it where the out_accum sums over the iterations
// (the part is zeroed before the loop), written to the iteration's slice where it
// concatenates. A reshape is a view where the strides allow one (ir/movement.h,
// reshaped_strides), else a copy.
// A thread graph computes each result it stores in one loop, its inner results inline (in
// registers). Innermost loops run along the result's last dim and are vectorized
// (`#pragma omp simd`); a matmul accumulates each row of its result by vector multiply-adds
// along the rows of its right operand where those are contiguous, and by dot products along
// the contracted dim otherwise; concat_matmul (A1 ‖ A2)·(B1 over B2) is A1·B1 + A2·B2 into the
// same result, with no concatenated copy. Sums and products run in the order of their terms
// (a rounding-level difference from the interpreter's order, as in any generated kernel).
#pragma once

#include <string>

#include "codegen/cpu/codegen.h"
#include "superopt/ugraph.h"

namespace orchid::codegen::cpu {

// `op` is a block operator of g (which verifies), over f32 tensors only (others are an
// UnsupportedError naming the tensor). `symbol` must be a C identifier of Orchid's making:
// nothing from the μGraph (tensor names) reaches the source. The kernel's arguments are
// op.inputs, then op.outputs; GeneratedKernel::inputs and outputs hold their μGraph tensor
// ids (as ValueIds), and its schedule is unused.
GeneratedKernel generate_block_kernel(const superopt::UGraph& g, const superopt::UOp& op, const std::string& symbol);

}  // namespace orchid::codegen::cpu
