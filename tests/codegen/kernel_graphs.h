// Texts of kernel graphs for differential tests of generated code (CPU and CUDA): rows
// reduced by every combiner, softmax and layernorm rows, matmuls with prologues and
// epilogues, transposing layout primitives, and Welder's two fused examples.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace orchid::codegen {

// A reduction over the rows of x : dt[rows, n] (or [rows, n1, n2], reduced over both), its
// body chosen so that results stay O(1): products of terms near 1, and for float max/min a
// NaN in about one term in 200.
inline std::string row_reduction(const std::string& combiner, const std::string& dt, int64_t rows,
                          const std::vector<int64_t>& n) {
  bool fl = dt[0] == 'f' || dt == "bf16";
  std::string x = n.size() == 1 ? "%x[i0, r0]" : "%x[i0, r0, r1]";
  std::string body = x;
  if (combiner == "prod" && fl) body = "add(mul(" + x + ", 0.01:" + dt + "), 1:" + dt + ")";
  if ((combiner == "max" || combiner == "min") && fl)
    body = "select(gt(" + x + ", 0.99:" + dt + "), nan:" + dt + ", " + x + ")";
  std::string shape = std::to_string(rows);
  std::string over;
  for (int64_t e : n) {
    shape += "," + std::to_string(e);
    over += (over.empty() ? "" : ",") + std::to_string(e);
  }
  std::string outs = "%y : " + dt + "[" + std::to_string(rows) + ",1]";
  if (combiner == "welford")
    outs = "%y, %v : " + dt + "[" + std::to_string(rows) + ",1], " + dt + "[" + std::to_string(rows) + ",1]";
  return "graph @g {\n  input %x : " + dt + "[" + shape + "]\n  " + outs + " = reduce " + combiner +
         "(%x) over [" + over + "] { " + body + " }\n  output " + (combiner == "welford" ? "%y, %v" : "%y") +
         "\n}\n";
}

inline std::string softmax_rows(int64_t rows, int64_t n) {
  std::string r = std::to_string(rows), c = std::to_string(n);
  return "graph @g {\n  input %x : f32[" + r + "," + c + "]\n"
         "  %m : f32[" + r + ",1] = reduce max(%x) over [" + c + "] { %x[i0, r0] }\n"
         "  %e : f32[" + r + "," + c + "] = elementwise(%x, %m) { exp(sub(%x[i0, i1], %m[i0, 0])) }\n"
         "  %s : f32[" + r + ",1] = reduce sum(%e) over [" + c + "] { %e[i0, r0] }\n"
         "  %y : f32[" + r + "," + c + "] = elementwise(%e, %s) { div(%e[i0, i1], %s[i0, 0]) }\n"
         "  output %y, %s\n}\n";  // %s too: softmax's values are below the absolute tolerance
}

inline std::string layernorm_rows(int64_t rows, int64_t n) {
  std::string r = std::to_string(rows), c = std::to_string(n);
  return "graph @g {\n  input %x : f32[" + r + "," + c + "]\n  input %w : f32[" + c + "]\n"
         "  %m, %v : f32[" + r + ",1], f32[" + r + ",1] = reduce welford(%x) over [" + c + "] { %x[i0, r0] }\n"
         "  %i : f32[" + r + ",1] = elementwise(%v) { rsqrt(add(%v[i0, i1], 1e-05:f32)) }\n"
         "  %y : f32[" + r + "," + c + "] = elementwise(%x, %m, %i, %w) "
         "{ mul(mul(sub(%x[i0, i1], %m[i0, 0]), %i[i0, 0]), %w[i1]) }\n"
         "  output %y\n}\n";
}

// The (value, index) of the largest (argmax) or smallest (argmin) term of each row.
inline std::string arg_rows(const std::string& combiner, const std::string& dt, int64_t rows, int64_t n) {
  std::string r = std::to_string(rows), c = std::to_string(n);
  return "graph @g {\n  input %x : " + dt + "[" + r + "," + c + "]\n  %v, %i : " + dt + "[" + r + "], i64[" + r +
         "] = reduce " + combiner + "(%x) over [" + c + "] { %x[i0, r0]; r0 }\n  output %v, %i\n}\n";
}

// The maximum of each row and the sum of the exponentials of its terms less that maximum.
inline std::string maxsum_rows(const std::string& dt, int64_t rows, int64_t n) {
  std::string r = std::to_string(rows), c = std::to_string(n);
  return "graph @g {\n  input %x : " + dt + "[" + r + "," + c + "]\n  %m, %z : " + dt + "[" + r + ",1], " + dt + "[" + r +
         ",1] = reduce maxsum(%x) over [" + c + "] { %x[i0, r0] }\n  output %m, %z\n}\n";
}

// Row kernels: every combiner over rows of 97 to 4099 terms in every dtype, Welford, argmax,
// argmin and maxsum, rows reduced over two dims, softmax and layernorm (rows of 1024, 512 and
// 128 terms too: a whole number of terms per thread of a CUDA block's group).
inline std::vector<std::string> row_kernel_graphs() {
  std::vector<std::string> texts;
  const int64_t lengths[] = {97, 300, 1000, 4099};
  for (const char* comb : {"sum", "prod", "max", "min"})
    for (const char* dt : {"f32", "f64", "f16", "bf16", "i32", "i64", "u8"})
      texts.push_back(row_reduction(comb, dt, 3, {lengths[texts.size() % 4]}));
  for (const char* comb : {"max", "min"}) texts.push_back(row_reduction(comb, "bool", 5, {300}));
  for (const char* dt : {"f32", "f64", "f16"}) {
    texts.push_back(row_reduction("welford", dt, 4, {1000}));
    texts.push_back(row_reduction("welford", dt, 2, {4099}));
  }
  texts.push_back(row_reduction("sum", "f32", 3, {17, 64}));
  texts.push_back(row_reduction("max", "f64", 3, {5, 129}));
  texts.push_back(row_reduction("welford", "f32", 3, {7, 100}));
  texts.push_back(arg_rows("argmax", "f32", 3, 300));
  texts.push_back(arg_rows("argmin", "f64", 2, 1000));
  texts.push_back(maxsum_rows("f32", 3, 4099));
  texts.push_back(maxsum_rows("f64", 4, 300));
  for (int64_t n : {300, 1024, 4099}) {
    texts.push_back(softmax_rows(5, n));
    texts.push_back(layernorm_rows(5, n));
  }
  texts.push_back(row_reduction("welford", "f16", 4, {512}));
  texts.push_back(row_reduction("welford", "f64", 3, {128}));
  return texts;
}

// A matmul kernel for the GEMM micro-kernel (emit_gemm.cpp): A [b?, m, k] (or transposed,
// through a layout primitive inlined into the packing: a prologue), B [k, n] or [b, k, n]
// (broadcast over A's batch, or transposed), then a bias and a relu (the epilogue).
inline std::string gemm_graph(int64_t batch, int64_t m, int64_t n, int64_t k, bool trans_a, bool trans_b, bool batched_b) {
  auto dims = [](std::vector<int64_t> d) {
    std::string s;
    for (int64_t e : d) s += (s.empty() ? "" : ",") + std::to_string(e);
    return s;
  };
  std::string a_in = trans_a ? dims({batch, k, m}) : dims({batch, m, k});
  std::string b_in = batched_b ? dims({batch, trans_b ? n : k, trans_b ? k : n}) : dims({trans_b ? n : k, trans_b ? k : n});
  std::string out = dims({batch, m, n});
  std::string text = "graph @g {\n  input %a : f32[" + a_in + "]\n  input %b : f32[" + b_in + "]\n  input %c : f32[" +
                     std::to_string(n) + "]\n";
  std::string a = "%a";
  if (trans_a) {
    text += "  %at : f32[" + dims({batch, m, k}) + "] = layout(%a) { %a[i0, i2, i1] }\n";
    a = "%at";
  }
  text += "  %y : f32[" + out + "] = matmul(" + a + ", %b) {trans_a=false, trans_b=" + (trans_b ? "true" : "false") + "}\n";
  text += "  %z : f32[" + out + "] = elementwise(%y, %c) { max(add(%y[i0, i1, i2], %c[i2]), 0:f32) }\n";
  return text + "  output %z\n}\n";
}

// x [2,16,19,23] -> conv 3x3 pad 1 -> + bias, ReLU -> MaxPool 3x3 stride 2: [2,32,9,11]
// (Welder's Conv + ReLU + MaxPool, fused through two levels).
inline std::string conv_relu_pool_graph() {
  return R"(
graph @crp {
  input %x : f32[2,16,19,23]
  input %w : f32[32,16,3,3]
  input %b : f32[32,1,1]
  %y : f32[2,32,19,23] = conv(%x, %w) {strides=[1,1], dilations=[1,1], pads_begin=[1,1], pads_end=[1,1], groups=1}
  %z : f32[2,32,19,23] = elementwise(%y, %b) { max(add(%y[i0, i1, i2, i3], %b[i1, 0, 0]), 0:f32) }
  %p : f32[2,32,9,11] = reduce max(%z) over [3,3] { %z[i0, i1, add(mul(i2, 2), r0), add(mul(i3, 2), r1)] }
  output %p
}
)";
}

// x [rows,64] . w [64,128], then a softmax along the rows (Welder's MatMul + Softmax).
inline std::string matmul_softmax_graph(int64_t rows) {
  std::string r = std::to_string(rows);
  return "graph @ms {\n  input %x : f32[" + r + ",64]\n  input %w : f32[64,128]\n  %y : f32[" + r +
         ",128] = matmul(%x, %w) {trans_a=false, trans_b=false}\n  %m : f32[" + r +
         ",1] = reduce max(%y) over [128] { %y[i0, r0] }\n  %e : f32[" + r +
         ",128] = elementwise(%y, %m) { exp(sub(%y[i0, i1], %m[i0, 0])) }\n  %s : f32[" + r +
         ",1] = reduce sum(%e) over [128] { %e[i0, r0] }\n  %o : f32[" + r +
         ",128] = elementwise(%e, %s) { div(%e[i0, i1], %s[i0, 0]) }\n  output %o\n}\n";
}

// A two-level schedule of one of Welder's examples (conv_relu_pool_graph, matmul_softmax_graph
// of 96 rows): the task's tile, the sub-tile, and the first node computed per sub-tile.
struct TwoLevelTiling {
  std::vector<int64_t> tile, inner;
  int split;
};

// Splits and sub-tile sizes, dividing and not, for the CPU and CUDA suites alike.
inline std::vector<TwoLevelTiling> conv_relu_pool_tilings() {
  return {
      {{1, 32, 9, 11}, {1, 32, 2, 11}, 1},  // conv per task; ReLU and pool per 2 rows
      {{1, 32, 9, 11}, {1, 16, 3, 0}, 2},   // conv and ReLU per task; pool per sub-tile
      {{1, 32, 4, 11}, {1, 8, 1, 5}, 1},    // 5 does not divide 11: sub-tiles of 1
      {{2, 32, 9, 11}, {1, 32, 4, 11}, 0},  // everything per sub-tile
      {{1, 16, 9, 11}, {1, 16, 3, 4}, 1},   // 4 does not divide 9 or 11: 3 x 1
  };
}
inline std::vector<TwoLevelTiling> matmul_softmax_tilings() {
  return {
      {{48, 128}, {6, 128}, 1},  // the matmul per task; softmax per 6 rows
      {{32, 128}, {4, 0}, 1},
      {{96, 128}, {12, 0}, 0},   // the matmul per sub-tile too
      {{24, 128}, {5, 128}, 3},  // 5 does not divide 24: rows of 4
  };
}

// Transposing layout primitives (lower.h, transposing_dim), computed in 16 x 16 blocks: a
// kernel that is one transpose (through a view of its input, as a Reshape then Transpose
// gives), one whose transpose feeds an elementwise GELU-like chain (scratch), a 4-D one with
// the transposed dim in the middle, a padded (predicated) one, and f16; sizes that are and
// are not multiples of the block, under default and random schedules.
inline std::vector<std::string> transpose_graphs() {
  std::vector<std::string> texts;
  for (auto [c, hw] : std::vector<std::pair<int64_t, int64_t>>{{16, 16}, {33, 50}, {64, 100}}) {
    std::string C = std::to_string(c), HW = std::to_string(hw), H = std::to_string(hw / 2);
    texts.push_back("graph @t {\n  input %x : f32[1," + C + ",2," + H + "]\n  %v : f32[1," + C + "," + HW +
                    "] = view(%x)\n  %y : f32[1," + HW + "," + C + "] = layout(%v) { %v[i0, i2, i1] }\n  output %y\n}\n");
    texts.push_back("graph @t {\n  input %x : f32[" + C + "," + HW + "]\n  %t : f32[" + HW + "," + C +
                    "] = layout(%x) { %x[i1, i0] }\n  %y : f32[" + HW + "," + C +
                    "] = elementwise(%t) { mul(%t[i0, i1], erf(mul(%t[i0, i1], 0.70710677:f32))) }\n  output %y\n}\n");
  }
  texts.push_back(R"(graph @t {
  input %x : f32[2,40,3,24]
  %y : f32[2,24,3,40] = layout(%x) { %x[i0, i3, i2, i1] }
  output %y
}
)");
  texts.push_back(R"(graph @t {
  input %x : f32[20,30]
  %y : f32[34,22] = layout(%x) { %x[sub(i1, 1), sub(i0, 2)] if and(and(ge(i1, 1), lt(i1, 21)), and(ge(i0, 2), lt(i0, 32))) else 0:f32 }
  output %y
}
)");
  texts.push_back(R"(graph @t {
  input %x : f16[48,17]
  %t : f16[17,48] = layout(%x) { %x[i1, i0] }
  %y : f16[17,48] = elementwise(%t) { add(%t[i0, i1], 1:f16) }
  output %y
}
)");
  return texts;
}

}  // namespace orchid::codegen
