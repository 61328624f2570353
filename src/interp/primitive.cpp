// The generic evaluator: any primitive through its tensor expression.
//
// The iteration space is domain × reduction domain. A block is a run of consecutive points of
// one of them in row-major order (so a block spans several dimensions when the inner ones are
// short), while the variables of the other are fixed:
//  - by domain: a block of output points; the reduction points are visited one after another
//    and every output lane accumulates its own terms (many outputs, short reductions);
//  - by reduction: one output point at a time; a block of its reduction points is evaluated
//    at once and the lanes are combined in order (few outputs, long reductions).
// Either way each output sees its terms in iteration order, so both give identical results.
#include <algorithm>

#include "interp/kernels.h"
#include "interp/machine.h"
#include "interp/reduce.h"
#include "support/error.h"

namespace orchid::interp::detail {

using ir::Dims;

namespace {

constexpr int64_t kLanes = 256;  // lanes per block: registers stay in L1

int64_t blocks(int64_t n, int64_t lanes) { return (n + lanes - 1) / lanes; }

// Fills lanes [0, n) of a varying variable: the coordinate of dimension `dim` of the points
// start, start+1, ... of `dims` in row-major order (runs of equal values, one per stride).
void fill_varying(int64_t* out, const Dims& dims, size_t dim, int64_t start, int64_t n) {
  int64_t stride = 1;
  for (size_t k = dim + 1; k < dims.size(); ++k) stride *= dims[k];
  int64_t extent = dims[dim];
  int64_t q = (start / stride) % extent;
  if (stride == 1) {  // runs q, q+1, .., extent-1, then from 0 again
    for (int64_t j = 0; j < n; q = 0) {
      int64_t run = std::min(extent - q, n - j);
      for (int64_t t = 0; t < run; ++t) out[j + t] = q + t;
      j += run;
    }
    return;
  }
  int64_t left = stride - start % stride;
  for (int64_t j = 0; j < n;) {
    int64_t run = std::min(left, n - j);
    for (int64_t e = j + run; j < e; ++j) out[j] = q;
    q = q + 1 == extent ? 0 : q + 1;
    left = stride;
  }
}

// Sets the variables of one kind: varying ones from the block [start, start+n), uniform ones
// to the coordinates of the point `start`.
void set_vars(Machine& m, const Program& prog, ir::VarKind kind, const Dims& dims, int64_t start,
              int64_t n) {
  for (const VarReg& v : prog.vars) {
    if (v.kind != kind) continue;
    auto dim = static_cast<size_t>(v.index);
    int64_t* lanes = m.var_lanes(v.reg);
    if (prog.regs[static_cast<size_t>(v.reg)].uniform) {
      fill_varying(lanes, dims, dim, start, 1);
    } else {
      fill_varying(lanes, dims, dim, start, n);
    }
  }
}

std::vector<LaneRef> body_lanes(Machine& m, const Program& prog) {
  std::vector<LaneRef> out;
  for (int32_t r : prog.bodies) {
    if (prog.regs[static_cast<size_t>(r)].is_float) {
      out.push_back({m.f(r), nullptr});
    } else {
      out.push_back({nullptr, m.i(r)});
    }
  }
  return out;
}

std::vector<LoadSource> load_sources(const NodeEval& ne) {
  std::vector<LoadSource> out;
  const ir::Primitive& p = ne.prim();
  for (size_t k = 0; k < ne.in.size(); ++k)
    out.push_back({ne.in[k], ir::row_major_strides(ne.in[k]->type.shape),
                   ne.graph.value(p.inputs[k]).name});
  return out;
}

// The invariants the evaluator relies on (the verifier's rule 2).
void check_outputs(const NodeEval& ne) {
  const ir::Primitive& p = ne.prim();
  for (const Buffer& b : ne.out)
    ORCHID_CHECK(b.type.shape == p.domain) << ne.label() << ": output shape "
                                           << ir::dims_str(b.type.shape) << " is not the domain";
  int bodies = ir::reduce_op_bodies(p.reduce), outs = ir::reduce_op_outputs(p.reduce);
  ORCHID_CHECK(!p.bodies.empty() && (bodies < 0 || p.bodies.size() == size_t(bodies)) &&
               ne.out.size() == (outs < 0 ? p.bodies.size() : size_t(outs)))
      << ne.label() << ": " << p.bodies.size() << " bodies for " << ne.out.size() << " outputs";
  bool floats = p.reduce == ir::ReduceOp::Welford || p.reduce == ir::ReduceOp::MaxSum;
  bool arg = p.reduce == ir::ReduceOp::ArgMax || p.reduce == ir::ReduceOp::ArgMin;
  for (size_t k = 0; k < ne.out.size(); ++k) {
    ir::DType out = ne.out[k].type.dtype;
    ir::DType body = p.bodies[floats ? 0 : k].dtype();
    bool ok = floats ? ir::is_float(body) && out == body
              : (arg && k == 1) ? out == ir::DType::I64 && body == ir::DType::I64
                                : out == body;
    ORCHID_CHECK(ok) << ne.label() << ": output " << k << " of dtype " << ir::dtype_name(out)
                     << " does not match its body";
  }
}

void check_vars(const NodeEval& ne, const Program& prog) {
  const ir::Primitive& p = ne.prim();
  for (const VarReg& v : prog.vars) {
    const Dims& dims = v.kind == ir::VarKind::Domain ? p.domain : p.reduce_domain;
    ORCHID_CHECK(v.index < static_cast<int32_t>(dims.size()))
        << ne.label() << ": variable " << (v.kind == ir::VarKind::Domain ? "i" : "r") << v.index
        << " out of range";
  }
}

std::vector<Buffer*> out_ptrs(NodeEval& ne) {
  std::vector<Buffer*> out;
  for (Buffer& b : ne.out) out.push_back(&b);
  return out;
}

// No reduction: every block of output points is computed and stored.
void run_map(NodeEval& ne, Machine& m, const Program& prog, int64_t points) {
  for (int64_t start = 0; start < points; start += kLanes) {
    int64_t n = std::min(kLanes, points - start);
    set_vars(m, prog, ir::VarKind::Domain, ne.prim().domain, start, n);
    m.run(start, n);
    for (size_t k = 0; k < ne.out.size(); ++k) {
      Buffer& out = ne.out[k];
      int32_t r = prog.bodies[k];
      if (out.is_float()) {
        std::copy(m.f(r), m.f(r) + n, out.f.data() + start);
      } else {
        std::copy(m.i(r), m.i(r) + n, out.i.data() + start);
        wrap_lanes(out.i.data() + start, n, out.type.dtype);
      }
    }
  }
}

Accumulator make_accumulator(const NodeEval& ne, int64_t lanes, int64_t terms) {
  const ir::Primitive& p = ne.prim();
  std::vector<ir::DType> bodies, outs;
  for (const ir::Expr& b : p.bodies) bodies.push_back(b.dtype());
  for (const Buffer& b : ne.out) outs.push_back(b.type.dtype);
  return Accumulator(p.reduce, bodies, outs, ne.precision, lanes, terms == 0);
}

void run_by_domain(NodeEval& ne, Machine& m, const Program& prog, int64_t points, int64_t terms) {
  const ir::Primitive& p = ne.prim();
  int64_t lanes = std::min(kLanes, points);
  Accumulator acc = make_accumulator(ne, lanes, terms);
  std::vector<LaneRef> bodies = body_lanes(m, prog);
  std::vector<Buffer*> outs = out_ptrs(ne);
  for (int64_t start = 0; start < points; start += kLanes) {
    int64_t n = std::min(kLanes, points - start);
    set_vars(m, prog, ir::VarKind::Domain, p.domain, start, n);
    acc.reset(n);
    for (int64_t r = 0; r < terms; ++r) {
      set_vars(m, prog, ir::VarKind::Reduce, p.reduce_domain, r, 1);
      m.run(start, n);
      acc.update(bodies, n, false);
    }
    acc.store(outs, start, n);
  }
}

void run_by_reduction(NodeEval& ne, Machine& m, const Program& prog, int64_t points,
                      int64_t terms) {
  const ir::Primitive& p = ne.prim();
  Accumulator acc = make_accumulator(ne, 1, terms);
  std::vector<LaneRef> bodies = body_lanes(m, prog);
  std::vector<Buffer*> outs = out_ptrs(ne);
  for (int64_t point = 0; point < points; ++point) {
    set_vars(m, prog, ir::VarKind::Domain, p.domain, point, 1);
    acc.reset(1);
    for (int64_t start = 0; start < terms; start += kLanes) {
      int64_t n = std::min(kLanes, terms - start);
      set_vars(m, prog, ir::VarKind::Reduce, p.reduce_domain, start, n);
      m.run(0, n);  // no contiguous loads: the domain is uniform
      acc.update(bodies, n, true);
    }
    acc.store(outs, point, 1);
  }
}

}  // namespace

void eval_generic(NodeEval& ne) {
  const ir::Primitive& p = ne.prim();
  check_outputs(ne);
  int64_t points = ir::numel(p.domain);
  bool reducing = p.reduce != ir::ReduceOp::None;
  int64_t terms = reducing ? ir::numel(p.reduce_domain) : 1;
  if (points == 0) return;
  // Fewer, fuller blocks win; ties go to blocking by domain.
  bool by_reduction = reducing && points * blocks(terms, kLanes) < blocks(points, kLanes) * terms;
  CompileInfo info{!by_reduction, by_reduction, p.domain, {}};
  for (const Buffer* b : ne.in) info.input_shapes.push_back(b->type.shape);
  Program prog = compile_bodies(p.bodies, info);
  check_vars(ne, prog);
  int64_t lanes = std::min(kLanes, by_reduction ? terms : points);
  Machine m(prog, load_sources(ne), std::max<int64_t>(lanes, 1), ne.precision, ne.label());
  if (!reducing) {
    run_map(ne, m, prog, points);
  } else if (by_reduction) {
    run_by_reduction(ne, m, prog, points, terms);
  } else {
    run_by_domain(ne, m, prog, points, terms);
  }
}

}  // namespace orchid::interp::detail
