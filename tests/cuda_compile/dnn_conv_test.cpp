// Convolution step graphs described as cuDNN calls (runtime/cuda/dnn_conv.h), on every
// machine: the dims, padding, strides, dilations and groups of accepted convolutions, and the
// reasons for graphs that are refused. The convolutions themselves are checked on a GPU
// (tests/cuda/cuda_library_test).
#include <gtest/gtest.h>

#include "ir/parser.h"
#include "runtime/cuda/dnn_conv.h"
#include "testlib/text.h"

namespace orchid::runtime::cuda {
namespace {

std::string conv_graph(const std::string& x, const std::string& w, const std::string& y, const std::string& attrs,
                       const std::string& tail = "  output %y\n") {
  return "graph @g {\n  input %x : f32" + x + "\n  input %w : f32" + w + "\n  %y : f32" + y + " = conv(%x, %w) {" + attrs +
         "}\n" + tail + "}\n";
}

TEST(DnnConv, DescribesTheConvolution) {
  DnnMatch m = match_dnn_conv(ir::parse_graph(
      conv_graph("[2,8,17,17]", "[16,4,3,3]", "[2,16,9,9]",
                 "strides=[2,2], dilations=[1,1], pads_begin=[1,1], pads_end=[1,1], groups=2")));
  ASSERT_TRUE(m.conv) << m.reason;
  const DnnConv& c = *m.conv;
  EXPECT_EQ(c.x, 0);
  EXPECT_EQ(c.w, 1);
  EXPECT_EQ(c.y, 2);
  EXPECT_EQ(c.x_dims, (ir::Dims{2, 8, 17, 17}));
  EXPECT_EQ(c.w_dims, (ir::Dims{16, 4, 3, 3}));
  EXPECT_EQ(c.y_dims, (ir::Dims{2, 16, 9, 9}));
  EXPECT_EQ(c.pads, (ir::Dims{1, 1}));
  EXPECT_EQ(c.strides, (ir::Dims{2, 2}));
  EXPECT_EQ(c.groups, 2);
  EXPECT_EQ(describe(c), "cudnn conv f32 [2,8,17,17] * [16,4,3,3], strides [2,2], pads [1,1], groups 2");
}

TEST(DnnConv, ThreeSpatialDimsAndDilations) {
  DnnMatch m = match_dnn_conv(ir::parse_graph(
      conv_graph("[1,2,9,9,9]", "[4,2,3,3,3]", "[1,4,5,5,5]",
                 "strides=[1,1,1], dilations=[2,2,2], pads_begin=[0,0,0], pads_end=[0,0,0], groups=1")));
  ASSERT_TRUE(m.conv) << m.reason;
  EXPECT_EQ(describe(*m.conv), "cudnn conv f32 [1,2,9,9,9] * [4,2,3,3,3], strides [1,1,1], pads [0,0,0], dilations [2,2,2]");
}

// --precision fp16|bf16 stores a convolution's input, weights and result in 16 bits.
TEST(DnnConv, SixteenBitConvolutions) {
  for (const char* t : {"f16", "bf16"}) {
    std::string text = testlib::replaced_all(
        conv_graph("[1,8,9,9]", "[4,8,3,3]", "[1,4,9,9]",
                   "strides=[1,1], dilations=[1,1], pads_begin=[1,1], pads_end=[1,1], groups=1"),
        "f32", t);
    DnnMatch m = match_dnn_conv(ir::parse_graph(text));
    ASSERT_TRUE(m.conv) << m.reason;
    EXPECT_EQ(m.conv->dtype, *ir::parse_dtype(t));
    EXPECT_EQ(describe(*m.conv), std::string("cudnn conv ") + t + " [1,8,9,9] * [4,8,3,3], strides [1,1], pads [1,1]");
  }
}

TEST(DnnConv, ExplainsWhatItRefuses) {
  auto reason = [](const std::string& text) {
    DnnMatch m = match_dnn_conv(ir::parse_graph(text));
    EXPECT_FALSE(m.conv) << text;
    return m.reason;
  };
  EXPECT_EQ(reason(conv_graph("[1,2,10]", "[4,2,3]", "[1,4,8]",
                              "strides=[1], dilations=[1], pads_begin=[0], pads_end=[0], groups=1")),
            "cudnn: 1 spatial dims (cuDNN takes 2 or 3)");
  EXPECT_EQ(reason(conv_graph("[1,2,8,8]", "[4,2,3,3]", "[1,4,7,7]",
                              "strides=[1,1], dilations=[1,1], pads_begin=[0,0], pads_end=[1,1], groups=1")),
            "cudnn: padding that differs at the two ends of a dim");
  EXPECT_EQ(reason(conv_graph("[1,2,8,8]", "[4,2,3,3]", "[1,4,6,6]",
                              "strides=[1,1], dilations=[1,1], pads_begin=[0,0], pads_end=[0,0], groups=1",
                              "  %z : f32[1,4,6,6] = elementwise(%y) { max(%y[i0, i1, i2, i3], 0:f32) }\n  output %z\n")),
            "cudnn: a bias or post-op after the convolution (it is generated)");
  EXPECT_EQ(reason(R"(graph @g {
  input %a : f32[4,8]
  input %b : f32[8,5]
  %y : f32[4,5] = matmul(%a, %b) {trans_a=false, trans_b=false}
  output %y
})"),
            "cudnn: a matmul (only convolutions)");
}

}  // namespace
}  // namespace orchid::runtime::cuda
