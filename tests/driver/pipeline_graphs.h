// Graphs the pipeline tests compile for every device: a model imported from ONNX, opaque
// routines, views, pass-through outputs, no steps, integers and f16.
#pragma once

#include "ir/graph.h"
#include "support/random.h"
#include "testlib/onnx_builder.h"
#include "testlib/tensors.h"

namespace orchid::driver {

// MatMul (weights), Add (bias), Relu, Softmax, Transpose from ONNX: linear, reduction and
// layout kernels, weights in weights.bin.
inline ir::Graph onnx_mlp() {
  Rng rng(11);
  testlib::OnnxModel m;
  m.inputs = {{"x", {ir::DType::F32, {4, 8}}}};
  m.initializers = {{"w", testlib::random_tensor({ir::DType::F32, {8, 6}}, rng)},
                    {"b", testlib::random_tensor({ir::DType::F32, {6}}, rng)}};
  m.nodes = {{"MatMul", {"x", "w"}, {"xw"}, {}, "", "mm"},
             {"Add", {"xw", "b"}, {"h"}, {}, "", "bias"},
             {"Relu", {"h"}, {"r"}, {}, "", "relu"},
             {"Softmax", {"r"}, {"p"}, {{"axis", int64_t{1}}}, "", "softmax"},
             {"Transpose", {"p"}, {"y"}, {{"perm", std::vector<int64_t>{1, 0}}}, "", "transpose"}};
  m.outputs = {"y"};
  return testlib::import_model(m, "mlp.onnx");
}

// Opaque routines become reference steps; an i64 output comes from topk.
inline const char* kOpaque = R"(graph @opaque {
  input %x : f32[3,8]
  %e : f32[3,8] = elementwise(%x) { mul(%x[i0, i1], 2:f32) }
  %t, %ti : f32[3,2], i64[3,2] = opaque topk(%e) {axis=1, k=2, largest=1, sorted=1}
  %c : f32[3,8] = opaque cumsum(%e) {axis=1, exclusive=0, reverse=0}
  %s : f32[3,2] = elementwise(%t) { neg(%t[i0, i1]) }
  output %s, %ti, %c
})";

// Views: of a computed value, and of a graph input that is itself a graph output.
inline const char* kViews = R"(graph @views {
  input %x : f32[2,6]
  %y : f32[2,6] = elementwise(%x) { exp(%x[i0, i1]) }
  %r : f32[12] = view(%y)
  %s : f32[3,4] = view(%x)
  %z : f32[3,4] = elementwise(%s) { add(%s[i0, i1], 1:f32) }
  output %r, %s, %z
})";

// Outputs that are a graph input, a constant, and one value listed twice.
inline const char* kPassThrough = R"(graph @passthrough {
  input %x : f32[5]
  input %n : i32[5]
  const %c : f32[3] = [1, 2.5, -3]
  %y : f32[5] = elementwise(%x) { tanh(%x[i0]) }
  %k : i32[5] = elementwise(%n) { add(mul(%n[i0], 3:i32), -1:i32) }
  output %x, %y, %c, %y, %k, %x
})";

// No primitive at all: the plan has no steps and no libraries.
inline const char* kNoSteps = R"(graph @nosteps {
  input %x : f32[2,2]
  const %c : i64[2] = [7, -7]
  output %c, %x, %c
})";

// Integer and bool outputs.
inline const char* kIntegers = R"(graph @ints {
  input %a : i32[4,5]
  input %b : i32[4,5]
  %s : i32[4,5] = elementwise(%a, %b) { add(mul(%a[i0, i1], %b[i0, i1]), 7:i32) }
  %v, %i : i32[4], i64[4] = reduce argmax(%s) over [5] { %s[i0, r0]; r0 }
  %t : i64[4,1] = reduce sum(%s) over [5] { cast<i64>(%s[i0, r0]) }
  %g : bool[4,5] = elementwise(%a, %b) { gt(%a[i0, i1], %b[i0, i1]) }
  output %s, %v, %i, %t, %g
})";

// f16 elementwise, reduction and a layout.
inline const char* kHalf = R"(graph @half {
  input %x : f16[4,16]
  input %y : f16[4,16]
  %s : f16[4,16] = elementwise(%x, %y) { add(mul(%x[i0, i1], %y[i0, i1]), 0.5:f16) }
  %r : f16[4,1] = reduce sum(%s) over [16] { %s[i0, r0] }
  %t : f16[16,4] = layout(%s) { %s[i1, i0] }
  output %s, %r, %t
})";

}  // namespace orchid::driver
