// Helpers of the layout-family fission tests (layout_test.cpp, layout_slice_test.cpp,
// resize_test.cpp, constant_test.cpp): one-node models whose inputs are graph inputs or
// initializers, random shapes and tensors of any dtype, element copies for naive
// references, and error capture.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "interp/interp.h"
#include "support/error.h"
#include "testlib/errors.h"
#include "testlib/onnx_builder.h"
#include "testlib/tensors.h"

namespace orchid::layout_test {

using ir::Dims;
using ir::DType;
using ir::Tensor;
using ir::TensorType;
using Attrs = std::vector<std::pair<std::string, frontend::Attribute>>;

// One input of a node: a graph input (its type), an initializer (its data), or omitted.
using Arg = std::variant<std::monostate, TensorType, Tensor>;

// A model of one node named "node" over the given arguments, with `outputs` graph outputs
// y0, y1, ...
inline testlib::OnnxModel node_model(const std::string& op, const std::vector<Arg>& args,
                                     int outputs = 1, Attrs attrs = {}, int64_t opset = 17) {
  testlib::OnnxModel m;
  m.opset = opset;
  testlib::OnnxNode n;
  n.op_type = op;
  n.attrs = std::move(attrs);
  for (size_t k = 0; k < args.size(); ++k) {
    std::string name = "x" + std::to_string(k);
    if (const auto* t = std::get_if<TensorType>(&args[k]))
      m.inputs.emplace_back(name, *t);
    else if (const auto* c = std::get_if<Tensor>(&args[k]))
      m.initializers.emplace_back(name, *c);
    else
      name = "";
    n.inputs.push_back(name);
  }
  for (int k = 0; k < outputs; ++k) {
    n.outputs.push_back("y" + std::to_string(k));
    m.outputs.push_back("y" + std::to_string(k));
  }
  m.nodes.push_back(std::move(n));
  return m;
}

// Imports m and runs it on `inputs` (one per graph input, in order).
inline std::vector<Tensor> run_model(const testlib::OnnxModel& m,
                                     const std::vector<Tensor>& inputs) {
  return interp::run(testlib::import_model(m), inputs);
}

inline Tensor i64s(const std::vector<int64_t>& v) {
  Tensor t(TensorType{DType::I64, {static_cast<int64_t>(v.size())}});
  for (size_t k = 0; k < v.size(); ++k) t.set_i64(static_cast<int64_t>(k), v[k]);
  return t;
}

inline Tensor scalar(DType t, double v) {
  Tensor s(TensorType{t, {}});
  if (ir::is_float(t))
    s.set_f64(0, v);
  else
    s.set_i64(0, static_cast<int64_t>(v));
  return s;
}

// Copies element si of src to element di of dst (same dtype), bit for bit.
inline void copy_elem(Tensor& dst, int64_t di, const Tensor& src, int64_t si) {
  int64_t b = ir::dtype_bytes(src.dtype());
  std::memcpy(dst.data() + di * b, src.data() + si * b, static_cast<size_t>(b));
}

// A tensor of shape `shape` whose element at each index is src at map(index).
inline Tensor gather_ref(const Tensor& src, const Dims& shape,
                         const std::function<Dims(const Dims&)>& map) {
  Tensor out(TensorType{src.dtype(), shape});
  Dims idx(shape.size(), 0);
  for (int64_t i = 0; i < out.numel(); ++i, testlib::next_index(shape, idx))
    copy_elem(out, i, src, testlib::flat_offset(src.shape(), map(idx)));
  return out;
}

inline Dims random_shape(Rng& rng, int64_t min_rank, int64_t max_rank, int64_t max_dim = 5) {
  Dims s(static_cast<size_t>(rng.range(min_rank, max_rank + 1)));
  for (auto& d : s) d = rng.range(1, max_dim + 1);
  return s;
}

inline DType random_dtype(Rng& rng) {
  static const DType kTypes[] = {DType::F32,  DType::I64, DType::F16, DType::I8,
                                 DType::Bool, DType::U8,  DType::F64};
  return kTypes[rng.range(0, 7)];
}

inline Tensor random_data(const TensorType& t, Rng& rng) {
  return testlib::random_tensor(t, rng, -9, 9);
}

// The number of primitives of each operator in g.
inline int count_ops(const ir::Graph& g, ir::PrimOp op) {
  int n = 0;
  for (const auto& p : g.nodes()) n += p.op == op ? 1 : 0;
  return n;
}

// The message of the UserError (UnsupportedError included) fn throws.
using testlib::error_of;

// Expects importing m (as "e.onnx") to fail with the message of node 'node' `text`.
inline void expect_error(const testlib::OnnxModel& m, const std::string& op,
                         const std::string& text) {
  std::string prefix = "e.onnx: node 'node' (" + op + ", opset " + std::to_string(m.opset) + "): ";
  EXPECT_EQ(error_of([&] { testlib::import_model(m, "e.onnx"); }), prefix + text);
}

inline void expect_unsupported(const testlib::OnnxModel& m, const std::string& op,
                               const std::string& text) {
  expect_error(m, op, "not supported: " + text);
}

inline std::string seed_trace(const std::string& what, uint64_t seed) {
  return what + " seed " + std::to_string(seed);
}

}  // namespace orchid::layout_test
