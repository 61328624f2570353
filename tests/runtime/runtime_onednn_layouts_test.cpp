// The oneDNN step with arguments in nChw8c or nhwc (layout.h): convolutions whose src, dst and
// residual are in those layouts compute what the interpreter computes on the plain tensors;
// the layouts a step prefers; and the arguments a step refuses to take blocked.
#include <gtest/gtest.h>

#include <cmath>

#include "interp/compare.h"
#include "interp/interp.h"
#include "interp/random_inputs.h"
#include "ir/parser.h"
#include "runtime/layout.h"
#include "runtime/library_step.h"
#include "support/error.h"
#include "testlib/errors.h"
#include "artifact_util.h"

namespace orchid::runtime {
namespace {

using ir::Tensor;
using testutil::contains;
constexpr BufferLayout P = BufferLayout::Plain, B = BufferLayout::NChw8c, L = BufferLayout::Nhwc;

// Runs g's oneDNN step with its arguments in `layouts` (inputs given and outputs returned
// plain, converted on the way by layout.h's conversions, whose element positions
// runtime_plan_test pins) and compares with the interpreter.
void check_in_layouts(const ir::Graph& g, const std::vector<BufferLayout>& layouts, uint64_t seed,
                      std::string_view impl = "onednn") {
  std::vector<Tensor> inputs = interp::random_inputs(g, seed);
  std::vector<Tensor> want = interp::run(g, inputs);
  std::vector<const void*> constants(inputs.size(), nullptr);
  constants[1] = inputs[1].data();  // the weights
  auto step = make_library_step(impl, g, constants, layouts);
  std::vector<Tensor> args = inputs;
  for (size_t k = 0; k < inputs.size(); ++k)
    if (layouts[k] != P) args[k] = to_layout(inputs[k], layouts[k]);
  args.emplace_back(g.type(g.outputs()[0]));
  std::vector<void*> ptrs;
  for (Tensor& t : args) ptrs.push_back(t.data());
  step->run(ptrs.data());
  Tensor got = from_layout(args.back(), layouts.back());
  EXPECT_EQ(interp::compare_tensors(got, want[0], 1e-4, 2e-4), "");
}

// conv 3×3 (16 → 16 channels, or depthwise over 16) + bias + residual + relu.
ir::Graph conv_graph(bool depthwise) {
  std::string w = depthwise ? "f32[16,1,3,3]" : "f32[16,16,3,3]";
  std::string c = "16";
  std::string groups = depthwise ? "16" : "1";
  return ir::parse_graph(R"(graph @conv {
  input %x : f32[2,)" + c + R"(,9,7]
  input %w : )" + w + R"(
  input %b : f32[16,1,1]
  input %r : f32[2,16,9,7]
  %c : f32[2,16,9,7] = conv(%x, %w) {strides=[1,1], dilations=[1,1], pads_begin=[1,1], pads_end=[1,1], groups=)" +
                         groups + R"(}
  %cb : f32[2,16,9,7] = elementwise(%c, %b) { add(%c[i0, i1, i2, i3], %b[i1, 0, 0]) }
  %s : f32[2,16,9,7] = elementwise(%cb, %r) { add(%cb[i0, i1, i2, i3], %r[i0, i1, i2, i3]) }
  %y : f32[2,16,9,7] = elementwise(%s) { max(%s[i0, i1, i2, i3], 0:f32) }
  output %y
})");
}

TEST(OnednnLayouts, BlockedArgumentsMatchTheInterpreter) {
  for (bool depthwise : {false, true}) {
    ir::Graph g = conv_graph(depthwise);
    SCOPED_TRACE(depthwise ? "depthwise" : "dense");
    uint64_t seed = 1;
    // x, w, b, r, y: every combination of plain, nChw8c and nhwc src, residual and dst.
    for (BufferLayout x : {P, B, L})
      for (BufferLayout r : {P, B, L})
        for (BufferLayout y : {P, B, L}) check_in_layouts(g, {x, P, P, r, y}, seed++);
  }
}

// oneDNN's f32 convolutions compute in nChw8c on AVX2 hosts and in nhwc on AVX-512 ones.
std::vector<BufferLayout> on_this_host(std::vector<BufferLayout> avx2, std::vector<BufferLayout> avx512) {
  return __builtin_cpu_supports("avx512f") ? avx512 : avx2;
}

TEST(OnednnLayouts, PreferredLayouts) {
  // A conv computes blocked where channels come in blocks: src, residual and dst.
  EXPECT_EQ(preferred_layouts("onednn", conv_graph(false), {false, true, false, false}), on_this_host({B, P, P, B, B}, {L, P, P, L, L}));
  // Three input channels: the src stays plain in nChw8c's place, where the channels do not
  // fill a block; nhwc takes any count.
  ir::Graph rgb = ir::parse_graph(R"(graph @rgb {
  input %x : f32[1,3,16,16]
  input %w : f32[16,3,3,3]
  %y : f32[1,16,16,16] = conv(%x, %w) {strides=[1,1], dilations=[1,1], pads_begin=[1,1], pads_end=[1,1], groups=1}
  output %y
})");
  EXPECT_EQ(preferred_layouts("onednn", rgb, {false, true}), on_this_host({P, P, B}, {L, P, L}));
  // Winograd computes in nChw16c on AVX-512 hosts (and does not exist on others).
  if (library_step_unsupported("onednn_winograd", conv_graph(false)).empty()) {
    constexpr BufferLayout B16 = BufferLayout::NChw16c;
    EXPECT_EQ(preferred_layouts("onednn_winograd", conv_graph(false), {false, true, false, false}),
              (std::vector<BufferLayout>{B16, P, P, B16, B16}));
    for (BufferLayout x : {P, B16})
      for (BufferLayout y : {P, B16}) check_in_layouts(conv_graph(false), {x, P, P, x, y}, 9, "onednn_winograd");
  }
  // A matmul and the reference step keep everything plain.
  ir::Graph mm = ir::parse_graph(R"(graph @mm {
  input %a : f32[8,8]
  input %b : f32[8,8]
  %y : f32[8,8] = matmul(%a, %b) {trans_a=false, trans_b=false}
  output %y
})");
  EXPECT_EQ(preferred_layouts("onednn", mm, {false, true}), (std::vector<BufferLayout>{P, P, P}));
  EXPECT_EQ(preferred_layouts("reference", mm, {false, true}), (std::vector<BufferLayout>{P, P, P}));
}

TEST(OnednnLayouts, RefusesBlockedArgumentsItCannotTake) {
  ir::Graph g = conv_graph(false);
  std::vector<const void*> none(4, nullptr);
  EXPECT_TRUE(contains(testlib::error_of([&] { make_library_step("onednn", g, none, {P, B, P, P, P}); }),
                                "the weights (input 1) must be plain, not nChw8c"));
  EXPECT_TRUE(contains(testlib::error_of([&] { make_library_step("onednn", g, none, {P, P}); }),
                                "2 layouts for 5 arguments"));
  ir::Graph mm = ir::parse_graph(R"(graph @mm {
  input %a : f32[1,8,2,2]
  input %b : f32[1,8,2,2]
  %y : f32[1,8,2,2] = matmul(%a, %b) {trans_a=false, trans_b=false}
  output %y
})");
  EXPECT_TRUE(contains(testlib::error_of([&] { make_library_step("onednn", mm, {}, {B, P, P}); }),
                                "a matmul reads and writes plain buffers only"));
  EXPECT_TRUE(contains(testlib::error_of([&] { make_library_step("reference", mm, {}, {P, P, B}); }),
                                "the interpreter reads and writes plain buffers only"));
}

}  // namespace
}  // namespace orchid::runtime
