// The graphs a oneDNN step runs, recognised structurally: one linear primitive (matmul or
// conv) followed by a chain of elementwise primitives that oneDNN applies as post-ops.
//
// Accepted graph shape (every other graph is refused with a reason):
//  - leaf views: `view` primitives and permuting `layout` primitives (ir/movement.h) of
//    graph inputs, constants or other leaf views anywhere in the graph: the same bytes read
//    in another shape, through strides where a permutation is involved;
//  - exactly one matmul or conv, f32 (GPU libraries: or f16 or bf16), whose operands are
//    graph inputs, constants or leaf views (only a matmul's operands and a conv's src may
//    need strides other than dense row-major ones: weights, bias and post-op operands are
//    dense);
//  - then a chain of elementwise primitives, each reading the previous result at the
//    identity index (the previous result's shape is the domain) and at most one other leaf,
//    read numpy-broadcast; views (reshapes) of the previous result may come between links,
//    where each operand's broadcast is one over the linear output (ir::
//    broadcast_before_reshape: a bias over the last dim or a residual of the whole shape after
//    fission's [M, N] -> [1, M, N]); each intermediate result is read only by the next link
//    (by the nodes of a composed post-op, below, reading it);
//  - then optionally views and permuting layout primitives of the chain's result (the
//    primitive then writes the output through strides; after a permutation, only post-ops
//    of X alone, which commute with it); the last value is the one graph output.
//
// Post-op bodies recognised (X: the previous result at [i0..], T: the other operand, c: an
// f32 constant):
//   X op T, T op X (op commutative)   add, sub, mul, div, max, min   → binary post-op
//   max(X, 0)                                                        → relu
//   select(lt(X, 0), mul(X, c), X)                                   → leaky relu (relu α=c)
//   max(X, lo), min(X, hi), min(max(X, lo), hi), max(min(X, hi), lo) → clip
//   add/sub/mul/div of X and c, neg(X)                               → linear (αx + β)
//   sigmoid, tanh, exp, log, abs, sqrt of X                          → eltwise of that name
//   mul(X, sigmoid(X)), mul(sigmoid(X), X)                           → swish
//   X·(1 + erf(X/√2))/2, its factors in any order and grouping          → gelu_erf
// A post-op may span up to five consecutive elementwise primitives that read nothing but X,
// constants and each other's results (those read only inside the group): their bodies are
// composed into one and matched as above, the largest such group first. So GELU as exporters
// write it (div, erf, add, mul by X, mul by 0.5: X is read twice) is one post-op, as is swish
// written as a sigmoid and a mul. f32 steps only (a 16-bit step rounds each node's result).
//
// Two adds become parts of the primitive itself rather than binary post-ops (oneDNN 2.6's
// gemm-based convolution runs binary post-ops at a fraction of its speed: a 3×3 64→64 56×56
// conv takes 13 ms on one thread with its bias as a binary post-op, 2.7 ms with it as the
// bias; and the sum post-op adds a residual in the primitive's own output layout, which
// lets a convolution with a residual run on channel-blocked copies, onednn_step.h):
//  - the first post-op, when it adds a tensor with one value per output channel (conv: dim
//    1; matmul: the last dim N), is the primitive's bias;
//  - the post-op after that (the first, without a bias), when it adds a tensor of the
//    output's full shape (a residual), is a sum post-op.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ir/graph.h"

namespace orchid::runtime::onednn {

// Where the data of an operand comes from: graph input `input` (run()'s args[input]) or, when
// input < 0, the graph constant `constant`; `shape` is the shape it is read in (a view's), at
// element `strides` (empty: dense row-major, the common case).
struct Operand {
  int32_t input = -1;
  ir::ValueId constant;
  ir::Dims shape;
  ir::Dims strides;
};

// The strides of operand o (its own when it has them, else dense row-major).
ir::Dims strides_of(const Operand& o);

enum class BinaryAlg : uint8_t { Add, Sub, Mul, Div, Max, Min };
enum class EltwiseAlg : uint8_t { Relu, Clip, Linear, Logistic, Tanh, Exp, Log, Abs, Sqrt, Swish, Hardswish, GeluErf };

// dst = dst (alg) operand, the operand read in `dims`: its shape right-aligned to the output's
// rank, padded with leading 1s (a dim of 1 broadcasts).
struct BinaryPostOp {
  BinaryAlg alg = BinaryAlg::Add;
  Operand operand;
  ir::Dims dims;
};

// dst = f(dst) with oneDNN's parameters: relu (alpha: negative slope), clip (alpha, beta: the
// bounds), linear (alpha·x + beta), swish (x·sigmoid(alpha·x)).
struct EltwisePostOp {
  EltwiseAlg alg = EltwiseAlg::Relu;
  float alpha = 0;
  float beta = 0;
};

// dst = dst + operand, the operand of the output's full shape (dims: the output's). Run as
// oneDNN's sum post-op: the operand is copied into the output before the primitive runs, and
// the primitive adds its result to it. oneDNN's gemm-based convolution supports a sum only as
// the first post-op (elsewhere only the reference implementation takes it), the only place
// the pattern puts it.
struct SumPostOp {
  Operand operand;
};

using PostOp = std::variant<BinaryPostOp, EltwisePostOp, SumPostOp>;

struct LinearPattern {
  ir::PrimOp op = ir::PrimOp::MatMul;  // MatMul or Conv
  ir::PrimAttrs attrs;                 // MatMulAttrs or ConvAttrs
  Operand a;                           // matmul A / conv X
  Operand b;                           // matmul B / conv W
  // Added to the linear result before the post-ops: one value per output channel, dense (its
  // shape is C or N with any number of 1s around it).
  std::optional<Operand> bias;
  ir::Dims out;                  // the linear primitive's output shape
  ir::Dims out_strides;          // where it lies in the output (empty: dense row-major)
  std::vector<PostOp> post_ops;  // in order
  // The linear primitive's operands and result (post-op operands alike): f32, or for GPU
  // libraries f16 or bf16, whose post-ops compute in f32 what they round to it.
  ir::DType dtype = ir::DType::F32;
};

// The pattern of g, or (pattern empty) why g does not fit: "onednn: ...".
struct PatternMatch {
  std::optional<LinearPattern> pattern;
  std::string reason;
};
// The dtypes of steps a library takes: f32 alone (oneDNN), or f16 and bf16 as well (GPU
// libraries; post-op bodies cast(dtype, f32 arithmetic on cast(f32, loads)), as
// rewrite/store_precision.h writes them).
enum class StepDtypes : uint8_t { F32, F32AndHalf };
PatternMatch match_linear_pattern(const ir::Graph& g, StepDtypes dtypes = StepDtypes::F32);

// For another library that takes these graphs (cuBLASLt, cuDNN): matches g and hands its
// pattern to `take`, which returns why the library cannot run it, or "". The reason from
// either, as "<library>: ..."; empty where the library takes g.
template <typename Take>
std::string match_for(std::string_view library, const ir::Graph& g, Take take) {
  PatternMatch pm = match_linear_pattern(g, StepDtypes::F32AndHalf);
  std::string why = pm.pattern ? take(*pm.pattern) : pm.reason.substr(pm.reason.starts_with("onednn: ") ? 8 : 0);
  return why.empty() ? why : std::string(library) + ": " + why;
}

// "relu", "binary add [1,8,1,1]", "sum": for messages and logs.
std::string describe(const PostOp& op);

// The dim of a linear output its channels run along: 1 for a conv, the last for a matmul.
size_t channel_dim(const LinearPattern& p);

}  // namespace orchid::runtime::onednn
