// Kernels of the shapes the benchmark models run, for the kernel-level benchmarks (the cost
// model's rank agreement, bench/tile_rank.cpp; schedule search, bench/tune_search.cpp), each
// small enough to time in milliseconds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/kernel_graphs.h"
#include "testlib/tile_fixtures.h"

namespace orchid::bench {

struct KernelCase {
  std::string name;
  std::string text;
};

inline std::string conv_relu(int64_t n, int64_t ci, int64_t co, int64_t hw, int64_t k, int64_t groups, bool pool) {
  auto s = [](int64_t x) { return std::to_string(x); };
  int64_t pad = k / 2;
  std::string x = "f32[" + s(n) + "," + s(ci) + "," + s(hw) + "," + s(hw) + "]";
  std::string y = "f32[" + s(n) + "," + s(co) + "," + s(hw) + "," + s(hw) + "]";
  std::string t = "graph @g {\n  input %x : " + x + "\n  input %w : f32[" + s(co) + "," + s(ci / groups) + "," + s(k) +
                  "," + s(k) + "]\n  input %b : f32[" + s(co) + ",1,1]\n";
  t += "  %y : " + y + " = conv(%x, %w) {strides=[1,1], dilations=[1,1], pads_begin=[" + s(pad) + "," + s(pad) +
       "], pads_end=[" + s(pad) + "," + s(pad) + "], groups=" + s(groups) + "}\n";
  t += "  %z : " + y + " = elementwise(%y, %b) { max(add(%y[i0, i1, i2, i3], %b[i1, 0, 0]), 0:f32) }\n";
  if (!pool) return t + "  output %z\n}\n";
  std::string p = "f32[" + s(n) + "," + s(co) + "," + s(hw / 2) + "," + s(hw / 2) + "]";
  t += "  %p : " + p + " = reduce max(%z) over [2,2] { %z[i0, i1, add(mul(i2, 2), r0), add(mul(i3, 2), r1)] }\n";
  return t + "  output %p\n}\n";
}

inline std::string unary(const std::string& shape, const std::string& body) {
  return "graph @g {\n  input %x : f32[" + shape + "]\n  %y : f32[" + shape + "] = elementwise(%x) { " + body +
         " }\n  output %y\n}\n";
}

// vit_small, bert, resnet18, mobilenet_v2, segformer, candy, gqa_decode.
inline std::vector<KernelCase> kernel_cases() {
  using namespace codegen;
  std::vector<KernelCase> c;
  c.push_back({"softmax 1182x197", softmax_rows(1182, 197)});
  c.push_back({"softmax 1024x1000", softmax_rows(1024, 1000)});
  c.push_back({"layernorm 1576x384", layernorm_rows(1576, 384)});
  c.push_back({"layernorm 512x768", layernorm_rows(512, 768)});
  c.push_back({"row sum 8192x512", row_reduction("sum", "f32", 8192, {512})});
  c.push_back({"gelu 1576x1536", unary("1576,1536", "mul(mul(%x[i0, i1], 0.5:f32), add(erf(mul(%x[i0, i1], 0.70710677:f32)), 1:f32))")});
  c.push_back({"silu 8,96,56,56", unary("8,96,56,56", "div(%x[i0, i1, i2, i3], add(exp(neg(%x[i0, i1, i2, i3])), 1:f32))")});
  c.push_back({"tanh 4096x1024", unary("4096,1024", "tanh(%x[i0, i1])")});
  c.push_back({"transpose 1024x768", R"(graph @g {
  input %x : f32[1024,768]
  %y : f32[768,1024] = layout(%x) { %x[i1, i0] }
  output %y
})"});
  c.push_back({"head split 8,197,6,64", R"(graph @g {
  input %x : f32[8,197,6,64]
  %y : f32[8,6,197,64] = layout(%x) { %x[i0, i2, i1, i3] }
  output %y
})"});
  c.push_back({"bias residual 4096x768", R"(graph @g {
  input %x : f32[4096,768]
  input %r : f32[4096,768]
  input %b : f32[768]
  %y : f32[4096,768] = elementwise(%x, %b, %r) { add(add(%x[i0, i1], %b[i1]), %r[i0, i1]) }
  output %y
})"});
  c.push_back({"se scale 8,96,56,56", R"(graph @g {
  input %x : f32[8,96,56,56]
  input %s : f32[8,96,1,1]
  %y : f32[8,96,56,56] = elementwise(%x, %s) { mul(%x[i0, i1, i2, i3], %s[i0, i1, 0, 0]) }
  output %y
})"});
  c.push_back({"avg pool 8,512,7,7", R"(graph @g {
  input %x : f32[8,512,7,7]
  %s : f32[8,512,1,1] = reduce sum(%x) over [7,7] { %x[i0, i1, r0, r1] }
  %y : f32[8,512,1,1] = elementwise(%s) { mul(%s[i0, i1, i2, i3], 0.020408163:f32) }
  output %y
})"});
  c.push_back({"upsample 1,32,128,128", R"(graph @g {
  input %x : f32[1,32,64,64]
  %y : f32[1,32,128,128] = layout(%x) { %x[i0, i1, floordiv(i2, 2), floordiv(i3, 2)] }
  output %y
})"});
  c.push_back({"rmsnorm 2048x1024", R"(graph @g {
  input %x : f32[2048,1024]
  input %w : f32[1024]
  %s : f32[2048,1] = reduce sum(%x) over [1024] { mul(%x[i0, r0], %x[i0, r0]) }
  %i : f32[2048,1] = elementwise(%s) { rsqrt(add(mul(%s[i0, i1], 0.0009765625:f32), 1e-06:f32)) }
  %y : f32[2048,1024] = elementwise(%x, %i, %w) { mul(mul(%x[i0, i1], %i[i0, 0]), %w[i1]) }
  output %y
})"});
  c.push_back({"matmul relu 512^3", gemm_graph(1, 512, 512, 512, false, false, false)});
  c.push_back({"matmul relu 197x1536x384", gemm_graph(1, 197, 1536, 384, false, false, false)});
  c.push_back({"batched matmul 8x128x128x64", gemm_graph(8, 128, 128, 64, false, false, true)});
  c.push_back({"matmul softmax 8192x128x64", testlib::matmul_softmax(8192)});
  c.push_back({"conv3x3 relu 64@28", conv_relu(1, 64, 64, 28, 3, 1, false)});
  c.push_back({"depthwise3x3 relu 96@56", conv_relu(1, 96, 96, 56, 3, 96, false)});
  c.push_back({"conv relu maxpool 32@56", conv_relu(1, 32, 32, 56, 3, 1, true)});
  return c;
}

}  // namespace orchid::bench
