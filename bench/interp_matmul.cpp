// Throughput of the reference interpreter: a 512^3 f32 matmul (GFLOP/s) and an elementwise
// exp(x) + y over 4M f32 elements (elements/s), both through interp::run in F64 precision.
// Performance is measured here, never asserted by tests.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <string>

#include "interp/interp.h"
#include "interp/random_inputs.h"
#include "ir/graph.h"

namespace {

using orchid::ir::DType;
using orchid::ir::Graph;
using orchid::ir::TensorType;

struct Timing {
  double wall = 1e30;  // best wall-clock seconds of a run
  double cpu = 1e30;   // best process CPU seconds of a run (steadier on a shared machine)
};

Timing best_of(const Graph& g, const std::vector<orchid::ir::Tensor>& inputs, int reps) {
  Timing best;
  for (int r = 0; r < reps; ++r) {
    std::clock_t c0 = std::clock();
    auto t0 = std::chrono::steady_clock::now();
    auto out = orchid::interp::run(g, inputs);
    auto t1 = std::chrono::steady_clock::now();
    std::clock_t c1 = std::clock();
    best.wall = std::min(best.wall, std::chrono::duration<double>(t1 - t0).count());
    best.cpu = std::min(best.cpu, static_cast<double>(c1 - c0) / CLOCKS_PER_SEC);
  }
  return best;
}

void bench_matmul(int64_t n) {
  Graph g;
  auto a = g.add_input("a", TensorType{DType::F32, {n, n}});
  auto b = g.add_input("b", TensorType{DType::F32, {n, n}});
  orchid::ir::Primitive p;
  p.op = orchid::ir::PrimOp::MatMul;
  p.inputs = {a, b};
  p.attrs = orchid::ir::MatMulAttrs{};
  auto id = g.add_node(p, {TensorType{DType::F32, {n, n}}}, {"c"});
  g.set_outputs({g.node(id).outputs[0]});
  auto inputs = orchid::interp::random_inputs(g, 1);
  Timing t = best_of(g, inputs, 5);
  double flop = 2.0 * static_cast<double>(n * n * n);
  std::printf("matmul f32 %lldx%lldx%lld: %.2f ms, %.2f GFLOP/s (CPU time: %.2f GFLOP/s)\n",
              (long long)n, (long long)n, (long long)n, t.wall * 1e3, flop / t.wall * 1e-9,
              flop / t.cpu * 1e-9);
}

void bench_elementwise(int64_t n) {
  using namespace orchid::ir;
  Graph g;
  auto x = g.add_input("x", TensorType{DType::F32, {n}});
  auto y = g.add_input("y", TensorType{DType::F32, {n}});
  Primitive p;
  p.op = PrimOp::Elementwise;
  p.inputs = {x, y};
  p.domain = {n};
  p.bodies = {unary(ExprOp::Exp, load(0, DType::F32, {dvar(0)})) + load(1, DType::F32, {dvar(0)})};
  auto id = g.add_node(p, {TensorType{DType::F32, {n}}}, {"z"});
  g.set_outputs({g.node(id).outputs[0]});
  auto inputs = orchid::interp::random_inputs(g, 2);
  Timing t = best_of(g, inputs, 5);
  auto elems = static_cast<double>(n);
  std::printf("elementwise exp(x)+y f32[%lld]: %.2f ms, %.1f M elements/s (CPU time: %.1f M/s)\n",
              (long long)n, t.wall * 1e3, elems / t.wall * 1e-6, elems / t.cpu * 1e-6);
}

}  // namespace

// Usage: interp_matmul_bench [matmul|elementwise] (both by default).
int main(int argc, char** argv) {
  std::string only = argc > 1 ? argv[1] : "";
  if (only.empty() || only == "matmul") bench_matmul(512);
  if (only.empty() || only == "elementwise") bench_elementwise(int64_t{1} << 22);
  return 0;
}
