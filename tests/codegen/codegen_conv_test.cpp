// Differential test of implicit-GEMM convolutions (lower.h, GemmFactors; emit_gemm.cpp): conv
// kernels computed by the packed GEMM micro-kernel, over every attribute combination (1-D,
// 2-D and 3-D windows, strides, dilations, symmetric and asymmetric zero pads, pointwise 1 x 1
// and wide 9 x 9 windows), B read in place and packed, odd channel counts and sizes (edges of the 6 x 16 register block
// and of the 256-term blocks), batches, with a bias + relu epilogue and with prologues (a
// reflect pad inlined into the packing, an elementwise producer), under default and random
// schedules, match the reference interpreter. Grouped and depthwise convs, whose B factor
// depends on the output channel, are computed as plain sums instead.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/cpu/lower.h"
#include "codegen/kernel_cases.h"

namespace orchid::codegen::cpu {
namespace {

std::string list(const std::vector<int64_t>& v) {
  std::string s;
  for (int64_t e : v) s += (s.empty() ? "" : ",") + std::to_string(e);
  return s;
}

struct ConvShape {
  int64_t batch, ci, co;
  std::vector<int64_t> in, window, strides, dilations, pads_begin, pads_end;
  int64_t groups = 1;
};

std::vector<int64_t> conv_out(const ConvShape& c, const std::vector<int64_t>& in) {
  std::vector<int64_t> out;
  for (size_t d = 0; d < in.size(); ++d)
    out.push_back((in[d] + c.pads_begin[d] + c.pads_end[d] - c.dilations[d] * (c.window[d] - 1) - 1) / c.strides[d] + 1);
  return out;
}

// Index variables i2.. of the spatial dims, as the IR text writes them.
std::string spatial_vars(size_t count, int shift = 0) {
  std::string s;
  for (size_t d = 0; d < count; ++d) s += ", i" + std::to_string(d + 2 + shift);
  return s;
}

// x -> [prologue] -> conv -> add bias, relu. Prologue 1: the input reflect-padded by one on
// every side of the last dim (a layout primitive the packing inlines); prologue 2: x * 0.5
// (an elementwise producer, computed into scratch: the conv reads each element many times).
std::string conv_graph(const ConvShape& c, int prologue) {
  std::vector<int64_t> in = c.in;
  size_t S = in.size();
  std::string x_shape = list({c.batch, c.ci}) + "," + list(in);
  std::string text = "graph @c {\n  input %x : f32[" + x_shape + "]\n";
  std::vector<int64_t> w_shape = {c.co, c.ci / c.groups};
  w_shape.insert(w_shape.end(), c.window.begin(), c.window.end());
  std::string ones, zeros;
  for (size_t d = 0; d < S; ++d) ones += ",1", zeros += ", 0";
  text += "  input %w : f32[" + list(w_shape) + "]\n  input %b : f32[" + std::to_string(c.co) + ones + "]\n";
  std::string x = "%x";
  if (prologue == 1) {
    std::vector<int64_t> padded = in;
    padded[S - 1] += 2;
    int64_t last = in[S - 1];
    std::string i = "i" + std::to_string(S + 1);
    // reflect: -1 -> 1, last -> last - 2
    std::string idx = "select(lt(" + i + ", 1), sub(1, " + i + "), select(gt(" + i + ", " + std::to_string(last) +
                      "), sub(" + std::to_string(2 * last - 1) + ", " + i + "), sub(" + i + ", 1)))";
    std::string lead = "i0, i1" + spatial_vars(S - 1);
    text += "  %p : f32[" + list({c.batch, c.ci}) + "," + list(padded) + "] = layout(%x) { %x[" + lead + ", " + idx + "] }\n";
    x = "%p";
    in = padded;
  } else if (prologue == 2) {
    text += "  %p : f32[" + x_shape + "] = elementwise(%x) { mul(%x[i0, i1" + spatial_vars(S) + "], 0.5:f32) }\n";
    x = "%p";
  }
  std::string out = list({c.batch, c.co}) + "," + list(conv_out(c, in));
  text += "  %y : f32[" + out + "] = conv(" + x + ", %w) {strides=[" + list(c.strides) + "], dilations=[" +
          list(c.dilations) + "], pads_begin=[" + list(c.pads_begin) + "], pads_end=[" + list(c.pads_end) +
          "], groups=" + std::to_string(c.groups) + "}\n";
  text += "  %z : f32[" + out + "] = elementwise(%y, %b) { max(add(%y[i0, i1" + spatial_vars(S) + "], %b[i1" + zeros + "]), 0:f32) }\n";
  return text + "  output %z\n}\n";
}

std::vector<ConvShape> conv_shapes() {
  return {
      // 2-D 3 x 3, stride 1, pad 1 (resnet's body) and stride 2 (its downsampling)
      {1, 16, 24, {14, 14}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
      {2, 5, 13, {11, 17}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}},
      // pointwise 1 x 1
      {1, 40, 32, {7, 9}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}},
      // wide window, 3 output channels (half the micro-kernel's rows) and 6
      {1, 3, 6, {20, 21}, {9, 9}, {1, 1}, {1, 1}, {4, 4}, {4, 4}},
      {1, 32, 3, {12, 12}, {9, 9}, {1, 1}, {1, 1}, {4, 4}, {4, 4}},
      // 3 rows over 40 columns: the 3 x 32 micro-kernel, then a 6 x 16 block
      {1, 5, 3, {6, 40}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
      // 3 rows over 70 columns: on AVX-512, the 3 x 64 kernel, then a 6 x 16 block
      {1, 4, 3, {4, 70}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
      // columns in whole blocks of 16 without a border: one B pointer per term (flat); with
      // one, per block and term
      {1, 6, 3, {5, 34}, {3, 3}, {1, 1}, {1, 1}, {0, 0}, {0, 0}},
      {1, 6, 8, {5, 32}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
      // dilation, asymmetric pads, rectangular window and strides; > 256 terms (two k blocks)
      {1, 30, 7, {13, 19}, {3, 5}, {2, 1}, {2, 1}, {0, 2}, {1, 0}},
      // 1-D, 3-D
      {2, 8, 12, {50}, {5}, {1}, {1}, {2}, {2}},
      {1, 4, 6, {5, 6, 17}, {3, 3, 3}, {1, 1, 2}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}},
      // 513 terms: 57 channels x 3 x 3
      {1, 57, 18, {9, 33}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}},
      // grouped and depthwise: plain sums
      {1, 8, 12, {10, 16}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 2},
      {1, 16, 16, {10, 16}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 16},
  };
}

// Each shape with and without a prologue, under default and random schedules.
std::vector<Case> conv_cases() {
  std::vector<ConvShape> shapes = conv_shapes();
  std::vector<Case> cases;
  for (size_t i = 0; i < shapes.size(); ++i)
    for (int variant = 0; variant < 4; ++variant) {
      const ConvShape& sh = shapes[i];
      int prologue = variant == 0 ? 0 : variant == 1 ? 1 : variant == 2 ? 2 : static_cast<int>(i % 3);
      std::string text = conv_graph(sh, prologue);
      SCOPED_TRACE(text);
      auto pick = [variant](const ir::Graph& g, const tile::Kernel& k, Rng& rng) {
        Schedule s = variant < 2 ? default_schedule(g, k, 2) : random_schedule(g, k, rng);
        s.gemm = true;
        return s;
      };
      Case c = make_case(98000 + 10 * i + variant, text, pick, "orc_c" + std::to_string(cases.size()));
      std::vector<int64_t> in = sh.in;
      if (prologue == 1) in.back() += 2;
      bool gemm = sh.groups == 1 && sh.co >= 3 && conv_out(sh, in).back() >= 8;
      // B read in place where its rows are contiguous: not through the inlined reflect pad.
      bool rows = gemm && prologue != 1 && sh.strides.back() == 1;
      const std::string& src = c.generated.source;
      EXPECT_EQ(src.find("orc_gemm_rows(") != std::string::npos, rows) << src;
      EXPECT_EQ(src.find("orc_gemm_panels(") != std::string::npos, gemm && !rows) << src;
      cases.push_back(std::move(c));
    }
  return cases;
}

TEST(ConvKernels, MatchInterpreter) {
  std::vector<Case> cases = conv_cases();
  check_cases(cases);
}

// The same with the 256-bit GEMM kernels, which an AVX-512 host otherwise never runs.
TEST(ConvKernels, MatchInterpreterOn256BitRegisters) {
  std::vector<Case> cases = conv_cases();
  check_cases(cases, {"-DORC_GEMM_NO_ZMM"});
}

// A conv kernel under the default schedule covers the output in tasks of whole rows of
// channels and columns, and the middle dims (output rows) in several tiles per task.
TEST(ConvKernels, DefaultScheduleTilesRowsColumnsAndMiddleDims) {
  ConvShape sh{1, 64, 64, {56, 56}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}};
  ir::Graph g = ir::parse_graph(conv_graph(sh, 0));
  tile::Kernel k = whole_kernel(g);
  Schedule s = default_schedule(g, k, 2);
  ASSERT_EQ(s.tile.size(), 4u);
  EXPECT_EQ(s.tile[0], 1);
  EXPECT_EQ(s.tile[1], 64);  // every output channel: the A panels are packed once per task
  EXPECT_EQ(s.tile[3], 56);  // whole output rows
  EXPECT_GT(s.tile[2], 1);   // several of them
  EXPECT_LE(s.tile[2] * 56, 256);
}

}  // namespace
}  // namespace orchid::codegen::cpu
