// Helpers for the interpreter tests: tensors from value lists, one-node graphs.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "interp/interp.h"
#include "ir/expr.h"
#include "ir/graph.h"
#include "ir/tensor.h"
#include "support/error.h"

namespace orchid::interp::test {

using namespace orchid::ir;  // NOLINT: tests read better with the IR names unqualified

inline Tensor tensor_f(DType t, Dims shape, const std::vector<double>& values) {
  Tensor out(TensorType{t, std::move(shape)});
  EXPECT_EQ(out.numel(), static_cast<int64_t>(values.size()));
  for (size_t k = 0; k < values.size(); ++k) out.set_f64(static_cast<int64_t>(k), values[k]);
  return out;
}

inline Tensor tensor_i(DType t, Dims shape, const std::vector<int64_t>& values) {
  Tensor out(TensorType{t, std::move(shape)});
  EXPECT_EQ(out.numel(), static_cast<int64_t>(values.size()));
  for (size_t k = 0; k < values.size(); ++k) out.set_i64(static_cast<int64_t>(k), values[k]);
  return out;
}

inline std::vector<double> doubles(const Tensor& t) {
  std::vector<double> out;
  for (int64_t k = 0; k < t.numel(); ++k) out.push_back(t.get_f64(k));
  return out;
}

inline std::vector<int64_t> ints(const Tensor& t) {
  std::vector<int64_t> out;
  for (int64_t k = 0; k < t.numel(); ++k) out.push_back(t.get_i64(k));
  return out;
}

// Bitwise equality of doubles, except that any NaN equals any NaN.
inline bool same(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

inline Primitive prim(PrimOp op, std::vector<Expr> bodies, Dims domain,
                      ReduceOp reduce = ReduceOp::None, Dims reduce_domain = {}) {
  Primitive p;
  p.op = op;
  p.bodies = std::move(bodies);
  p.domain = std::move(domain);
  p.reduce = reduce;
  p.reduce_domain = std::move(reduce_domain);
  p.name = "test_node";
  return p;
}

// A graph of one primitive reading every input (slot k = input k), whose outputs are the
// graph's outputs.
inline Graph one_node(const std::vector<TensorType>& inputs, Primitive p,
                      const std::vector<TensorType>& outputs) {
  Graph g;
  g.name = "t";
  p.inputs.clear();
  for (size_t k = 0; k < inputs.size(); ++k)
    p.inputs.push_back(g.add_input("x" + std::to_string(k), inputs[k]));
  std::vector<std::string> names;
  for (size_t k = 0; k < outputs.size(); ++k) names.push_back("y" + std::to_string(k));
  NodeId id = g.add_node(std::move(p), outputs, names);
  g.set_outputs(g.node(id).outputs);
  return g;
}

// The message of the UserError that running g raises, or "(no error)".
inline std::string error_of(const Graph& g, const std::vector<Tensor>& inputs) {
  try {
    run(g, inputs);
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

inline Options own() { return Options{Precision::Own, false}; }
inline Options f64_out() { return Options{Precision::F64, true}; }

// Row-major index helpers for reference loops.
inline Expr i_(int k) { return dvar(k); }
inline Expr r_(int k) { return rvar(k); }

}  // namespace orchid::interp::test
