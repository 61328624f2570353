// Matmul step graphs described as cuBLASLt calls (runtime/cuda/lt_matmul.h), on every machine:
// the column-major operands, leading dims and batch strides of plain, transposed, permuted
// and broadcast operands; the bias, residual and relu epilogues; and the reasons for graphs
// that are refused. The products themselves are checked on a GPU (tests/cuda/cuda_lt_test).
#include <gtest/gtest.h>

#include "ir/parser.h"
#include "runtime/cuda/lt_matmul.h"

namespace orchid::runtime::cuda {
namespace {

LtMatmul matched(const std::string& text) {
  LtMatch m = match_lt_matmul(ir::parse_graph(text));
  EXPECT_TRUE(m.matmul) << m.reason << "\n" << text;
  return m.matmul.value_or(LtMatmul{});
}

std::string refusal(const std::string& text) {
  LtMatch m = match_lt_matmul(ir::parse_graph(text));
  EXPECT_FALSE(m.matmul) << text;
  return m.reason;
}

// C[64, 48] = A[64, 32] · B[32, 48], row-major: cuBLASLt computes Cᵀ = Bᵀ·Aᵀ column-major.
TEST(LtMatmul, PlainProductIsItsTransposeColumnMajor) {
  LtMatmul mm = matched(R"(graph @g {
  input %a : f32[64,32]
  input %b : f32[32,48]
  %y : f32[64,48] = matmul(%a, %b) {trans_a=false, trans_b=false}
  output %y
})");
  EXPECT_EQ(mm.m, 48);
  EXPECT_EQ(mm.n, 64);
  EXPECT_EQ(mm.k, 32);
  EXPECT_EQ(mm.batch, 1);
  EXPECT_EQ(mm.a, (LtMatrix{1, false, 48, 32, 48, 0}));  // B as stored: 48 × 32 column-major
  EXPECT_EQ(mm.b, (LtMatrix{0, false, 32, 64, 32, 0}));  // A as stored: 32 × 64 column-major
  EXPECT_EQ(mm.d, (LtMatrix{2, false, 48, 64, 48, 3072}));
  EXPECT_FALSE(mm.c);
  EXPECT_EQ(mm.bias, -1);
  EXPECT_FALSE(mm.relu);
  EXPECT_EQ(describe(mm), "cublaslt f32 m 48 n 64 k 32");
}

TEST(LtMatmul, TransposedOperandsAreReadTransposed) {
  LtMatmul mm = matched(R"(graph @g {
  input %a : f32[32,64]
  input %b : f32[48,32]
  %y : f32[64,48] = matmul(%a, %b) {trans_a=true, trans_b=true}
  output %y
})");
  EXPECT_EQ(mm.a, (LtMatrix{1, true, 32, 48, 32, 0}));
  EXPECT_EQ(mm.b, (LtMatrix{0, true, 64, 32, 64, 0}));
  EXPECT_EQ(describe(mm), "cublaslt f32 m 48 n 64 k 32, A^T, B^T");
}

// Q·Kᵀ of attention: batch dims collapse into one count; K read through a permuting layout.
TEST(LtMatmul, BatchesCollapseAndPermutedOperandsUseTheirStrides) {
  LtMatmul mm = matched(R"(graph @g {
  input %q : f32[2,4,16,8]
  input %k : f32[2,4,16,8]
  %kt : f32[2,4,8,16] = layout(%k) { %k[i0, i1, i3, i2] }
  %s : f32[2,4,16,16] = matmul(%q, %kt) {trans_a=false, trans_b=false}
  output %s
})");
  EXPECT_EQ(mm.batch, 8);
  EXPECT_EQ(mm.a, (LtMatrix{1, true, 8, 16, 8, 128}));
  EXPECT_EQ(mm.b, (LtMatrix{0, false, 8, 16, 8, 128}));
  EXPECT_EQ(mm.d, (LtMatrix{2, false, 16, 16, 16, 256}));
}

// Weights shared by every batch: the batches of rows become one product of all the rows.
TEST(LtMatmul, BatchesOfRowsUnderSharedWeightsAreOneProduct) {
  LtMatmul mm = matched(R"(graph @g {
  input %x : f32[3,5,10,32]
  input %w : f32[32,24]
  %y : f32[3,5,10,24] = matmul(%x, %w) {trans_a=false, trans_b=false}
  output %y
})");
  EXPECT_EQ(mm.batch, 1);
  EXPECT_EQ(mm.n, 150);
  EXPECT_EQ(mm.a, (LtMatrix{1, false, 24, 32, 24, 0}));
  EXPECT_EQ(mm.b, (LtMatrix{0, false, 32, 150, 32, 0}));
  EXPECT_EQ(mm.d, (LtMatrix{2, false, 24, 150, 24, 3600}));
  // One row per batch (a vision transformer's tokens as batches), the weights transposed.
  LtMatmul tokens = matched(R"(graph @g {
  input %x : f32[197,1,768]
  input %w : f32[2304,768]
  %y : f32[197,1,2304] = matmul(%x, %w) {trans_a=false, trans_b=true}
  output %y
})");
  EXPECT_EQ(describe(tokens), "cublaslt f32 m 2304 n 197 k 768, A^T");
  EXPECT_EQ(tokens.b, (LtMatrix{0, false, 768, 197, 768, 0}));
}

// Shared left factors stay batched: cuBLASLt's B (A'ᵀ) has batch stride 0.
TEST(LtMatmul, ABroadcastOperandHasBatchStrideZero) {
  LtMatmul mm = matched(R"(graph @g {
  input %a : f32[10,32]
  input %b : f32[3,5,32,24]
  %y : f32[3,5,10,24] = matmul(%a, %b) {trans_a=false, trans_b=false}
  output %y
})");
  EXPECT_EQ(mm.batch, 15);
  EXPECT_EQ(mm.a.batch_stride, 768);
  EXPECT_EQ(mm.b.batch_stride, 0);
  EXPECT_EQ(mm.d.batch_stride, 240);
}

TEST(LtMatmul, BiasResidualAndReluAreEpilogues) {
  LtMatmul mm = matched(R"(graph @g {
  input %x : f32[64,32]
  input %w : f32[32,48]
  input %bias : f32[48]
  input %r : f32[64,48]
  %y : f32[64,48] = matmul(%x, %w) {trans_a=false, trans_b=false}
  %yb : f32[64,48] = elementwise(%y, %bias) { add(%y[i0, i1], %bias[i1]) }
  %yr : f32[64,48] = elementwise(%yb, %r) { add(%yb[i0, i1], %r[i0, i1]) }
  %z : f32[64,48] = elementwise(%yr) { max(%yr[i0, i1], 0:f32) }
  output %z
})");
  EXPECT_EQ(mm.bias, 2);
  ASSERT_TRUE(mm.c);
  EXPECT_EQ(*mm.c, (LtMatrix{3, false, 48, 64, 48, 3072}));
  EXPECT_EQ(mm.d.arg, 4);
  EXPECT_TRUE(mm.relu);
  EXPECT_EQ(describe(mm), "cublaslt f32 m 48 n 64 k 32, bias, residual, relu");
}

// Attention's scaled scores, then a residual and a relu: alpha, C and the relu epilogue.
TEST(LtMatmul, AScaleIsAlpha) {
  LtMatmul mm = matched(R"(graph @g {
  input %q : f32[4,16,8]
  input %k : f32[4,16,8]
  input %r : f32[4,16,16]
  %s : f32[4,16,16] = matmul(%q, %k) {trans_a=false, trans_b=true}
  %t : f32[4,16,16] = elementwise(%s) { mul(%s[i0, i1, i2], 0.25:f32) }
  %u : f32[4,16,16] = elementwise(%t, %r) { add(%t[i0, i1, i2], %r[i0, i1, i2]) }
  %z : f32[4,16,16] = elementwise(%u) { max(%u[i0, i1, i2], 0:f32) }
  output %z
})");
  EXPECT_EQ(mm.alpha, 0.25f);
  ASSERT_TRUE(mm.c);
  EXPECT_EQ(mm.c->arg, 2);
  EXPECT_TRUE(mm.relu);
  EXPECT_EQ(describe(mm), "cublaslt f32 batch 4 m 16 n 16 k 8, A^T, alpha 0.25, residual, relu");
}

// A bf16 product (--precision bf16, rewrite/store_precision.h) with its bias, residual and relu
// computed in f32 between casts is one bf16 call with the same epilogues.
TEST(LtMatmul, SixteenBitStepsReadTheirEpiloguesUnderTheRounding) {
  LtMatmul mm = matched(R"(graph @g {
  input %x : bf16[8,16]
  input %w : bf16[16,32]
  input %b : bf16[32]
  input %r : bf16[8,32]
  %h : bf16[8,32] = matmul(%x, %w) {trans_a=false, trans_b=false}
  %a : bf16[8,32] = elementwise(%h, %b) { cast<bf16>(add(cast<f32>(%h[i0, i1]), cast<f32>(%b[i1]))) }
  %c : bf16[8,32] = elementwise(%a, %r) { cast<bf16>(add(cast<f32>(%a[i0, i1]), cast<f32>(%r[i0, i1]))) }
  %y : bf16[8,32] = elementwise(%c) { cast<bf16>(max(cast<f32>(%c[i0, i1]), 0:f32)) }
  output %y
})");
  EXPECT_EQ(mm.dtype, ir::DType::BF16);
  EXPECT_EQ(mm.bias, 2);
  EXPECT_TRUE(mm.c);
  EXPECT_TRUE(mm.relu);
  EXPECT_EQ(describe(mm), "cublaslt bf16 m 32 n 8 k 16, bias, residual, relu");
  // An f16 scale, as alpha.
  LtMatmul scaled = matched(R"(graph @g {
  input %x : f16[8,16]
  input %w : f16[16,32]
  %h : f16[8,32] = matmul(%x, %w) {trans_a=false, trans_b=false}
  %y : f16[8,32] = elementwise(%h) { cast<f16>(mul(cast<f32>(%h[i0, i1]), 0.25:f32)) }
  output %y
})");
  EXPECT_EQ(scaled.dtype, ir::DType::F16);
  EXPECT_EQ(scaled.alpha, 0.25f);
  // Arithmetic in bf16 itself, or a post-op operand of another dtype: refused.
  EXPECT_NE(refusal(R"(graph @g {
  input %x : bf16[8,16]
  input %w : bf16[16,32]
  %h : bf16[8,32] = matmul(%x, %w) {trans_a=false, trans_b=false}
  %y : bf16[8,32] = elementwise(%h) { mul(%h[i0, i1], 2:bf16) }
  output %y
})").find("does not compute in f32 from bf16 values"), std::string::npos);
  EXPECT_NE(refusal(R"(graph @g {
  input %x : bf16[8,16]
  input %w : bf16[16,32]
  input %b : f32[32]
  %h : bf16[8,32] = matmul(%x, %w) {trans_a=false, trans_b=false}
  %y : bf16[8,32] = elementwise(%h, %b) { cast<bf16>(add(cast<f32>(%h[i0, i1]), %b[i1])) }
  output %y
})").find("reads a tensor that is not bf16"), std::string::npos);
}

TEST(LtMatmul, ExplainsWhatItRefuses) {
  EXPECT_NE(refusal(R"(graph @g {
  input %a : f32[64,32]
  input %b : f32[32,48]
  %y : f32[64,48] = matmul(%a, %b) {trans_a=false, trans_b=false}
  %z : f32[64,48] = elementwise(%y) { tanh(%y[i0, i1]) }
  output %z
})").find("cublaslt: post-op tanh (only a scale without a bias, a residual, then a relu)"), std::string::npos);
  // A scale after a bias would scale the bias too, which cuBLASLt does not.
  EXPECT_EQ(refusal(R"(graph @g {
  input %a : f32[64,32]
  input %b : f32[32,48]
  input %bias : f32[48]
  %y : f32[64,48] = matmul(%a, %b) {trans_a=false, trans_b=false}
  %yb : f32[64,48] = elementwise(%y, %bias) { add(%y[i0, i1], %bias[i1]) }
  %z : f32[64,48] = elementwise(%yb) { mul(%yb[i0, i1], 0.5:f32) }
  output %z
})"), "cublaslt: post-op linear(0.5, 0) (only a scale without a bias, a residual, then a relu)");
  EXPECT_NE(refusal(R"(graph @g {
  input %a : f64[64,32]
  input %b : f64[32,48]
  %y : f64[64,48] = matmul(%a, %b) {trans_a=false, trans_b=false}
  output %y
})").find("cublaslt: matmul with f64 inputs (steps are f32, f16 or bf16"), std::string::npos);
  EXPECT_EQ(refusal(R"(graph @g {
  input %x : f32[1,3,8,8]
  input %w : f32[6,3,3,3]
  %y : f32[1,6,6,6] = conv(%x, %w) {strides=[1,1], dilations=[1,1], pads_begin=[0,0], pads_end=[0,0], groups=1}
  output %y
})"), "cublaslt: a convolution (only matmuls)");
  // Batches [3, 2] of an operand broadcast over the inner one only: no single stride.
  EXPECT_EQ(refusal(R"(graph @g {
  input %a : f32[3,1,8,4]
  input %b : f32[3,2,4,8]
  %y : f32[3,2,8,8] = matmul(%a, %b) {trans_a=false, trans_b=false}
  output %y
})"), "cublaslt: an operand whose strides are not those of a (batched) matrix");
  // The result written through a permutation.
  EXPECT_EQ(refusal(R"(graph @g {
  input %a : f32[16,8]
  input %b : f32[8,12]
  %y : f32[16,12] = matmul(%a, %b) {trans_a=false, trans_b=false}
  %t : f32[12,16] = layout(%y) { %y[i1, i0] }
  output %t
})"), "cublaslt: the product is written through a permutation");
}

}  // namespace
}  // namespace orchid::runtime::cuda
