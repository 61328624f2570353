#include "superopt/abstract_ops.h"

#include <algorithm>

#include "support/error.h"

namespace orchid::superopt {

namespace {

int64_t contracted(const ir::Dims& x) { return x.back(); }

int64_t bytes(const UGraph& g, TensorId t) {
  return ir::numel(g.shape(t)) * ir::dtype_bytes(g.tensor(t).dtype);
}

// Multiply-adds of one operator on one block (or of a kernel operator).
double flops_of(const UGraph& g, const UOp& op) {
  const ir::Dims& out = g.shape(op.outputs[0]);
  double n = static_cast<double>(ir::numel(out));
  switch (op.type) {
    case UOpType::Matmul: return 2 * n * static_cast<double>(contracted(g.shape(op.inputs[0])));
    case UOpType::ConcatMatmul:
      return 2 * n * static_cast<double>(contracted(g.shape(op.inputs[0])) + contracted(g.shape(op.inputs[1])));
    case UOpType::Sum: return static_cast<double>(ir::numel(g.shape(op.inputs[0])));
    case UOpType::Add:
    case UOpType::Mul:
    case UOpType::Div: return n;
    case UOpType::Exp: return 8 * n;  // a polynomial
    case UOpType::Scale: return n;
    case UOpType::Repeat:
    case UOpType::Transpose:
    case UOpType::Reshape:
    case UOpType::InIter:
    case UOpType::OutAccum:
    case UOpType::Block:
    case UOpType::Thread: return 0;
  }
  return 0;
}

double block_cost(const UGraph& g, const UOp& op, const CostModel& m) {
  const BlockGraph& b = g.blocks[static_cast<size_t>(op.body)];
  double blocks = static_cast<double>(ir::numel(b.grid));
  double traffic = 0, flops = 0;
  for (const UOp& bop : b.ops) {
    if (bop.type == UOpType::InIter) {
      traffic += static_cast<double>(bytes(g, bop.outputs[0])) * blocks * static_cast<double>(b.loop);
    } else if (bop.type == UOpType::OutAccum) {
      traffic += static_cast<double>(bytes(g, bop.outputs[0]));
    } else if (bop.type == UOpType::Thread) {
      for (const UOp& top : g.threads[static_cast<size_t>(bop.body)].ops)
        flops += flops_of(g, top) * blocks * static_cast<double>(b.loop);
    } else {
      flops += flops_of(g, bop) * blocks * static_cast<double>(b.loop);
    }
  }
  return std::max(traffic / m.device_bytes_per_s, flops / m.flops_per_s);
}

}  // namespace

AbsId abstract_of(AbsPool& pool, const UOp& op, const std::vector<AbsId>& in,
                  const std::vector<ir::Dims>& in_shapes, const BlockGraph* block) {
  switch (op.type) {
    case UOpType::Matmul: return pool.sum(contracted(in_shapes[0]), pool.mul(in[0], in[1]));
    case UOpType::ConcatMatmul:
      return pool.add(pool.sum(contracted(in_shapes[0]), pool.mul(in[0], in[2])),
                      pool.sum(contracted(in_shapes[1]), pool.mul(in[1], in[3])));
    case UOpType::Sum: return pool.sum(op.k, in[0]);
    case UOpType::Add: return pool.add(in[0], in[1]);
    case UOpType::Mul: return pool.mul(in[0], in[1]);
    case UOpType::Div: return pool.div(in[0], in[1]);
    case UOpType::Exp: return pool.exp(in[0]);
    // A constant factor and a transpose are outside the abstraction (abstract_program.h: an
    // operation with a constant is its other operand; indices are not told apart).
    case UOpType::Scale:
    case UOpType::Transpose:
    case UOpType::Repeat:
    case UOpType::Reshape:
    case UOpType::InIter: return in[0];
    case UOpType::OutAccum:
      ORCHID_CHECK(block != nullptr) << "out_accum outside a block graph";
      return op.map.loop == kReplica ? pool.sum(block->loop, in[0]) : in[0];
    case UOpType::Block:
    case UOpType::Thread: break;
  }
  ORCHID_CHECK(false) << "no abstract expression of a nested graph's operator itself";
  return -1;
}

double estimate_cost(const UGraph& g, const CostModel& m) {
  double total = 0;
  for (const UOp& op : g.ops) {
    if (op.type == UOpType::Reshape) continue;  // a view: no kernel, no traffic
    total += m.kernel_overhead_s;
    if (op.type == UOpType::Block) {
      total += block_cost(g, op, m);
      continue;
    }
    double traffic = static_cast<double>(bytes(g, op.outputs[0]));
    for (TensorId t : op.inputs) traffic += static_cast<double>(bytes(g, t));
    total += std::max(traffic / m.device_bytes_per_s, flops_of(g, op) / m.flops_per_s);
  }
  return total;
}

}  // namespace orchid::superopt
