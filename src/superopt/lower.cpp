#include "superopt/lower.h"

#include "support/error.h"

namespace orchid::superopt {

namespace {

using ir::Expr;
using ir::ValueId;

std::vector<Expr> domain_vars(size_t n) {
  std::vector<Expr> v;
  for (size_t i = 0; i < n; ++i) v.push_back(ir::dvar(static_cast<int32_t>(i)));
  return v;
}

Expr div_by(const Expr& e, int64_t d) { return d == 1 ? e : ir::floordiv(e, d); }
Expr mod_by(const Expr& e, int64_t d) { return d == 1 ? ir::const_i64(0) : ir::mod(e, d); }
Expr times(const Expr& e, int64_t d) { return d == 1 ? e : e * d; }
Expr plus(const Expr& a, const Expr& b) { return a.get() == nullptr ? b : a + b; }

// A numpy-broadcast read (equal ranks) of an operand of shape `in` in a domain of shape `out`.
std::vector<Expr> broadcast_index(const ir::Dims& in, const ir::Dims& out) {
  std::vector<Expr> idx = domain_vars(out.size());
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i] == 1 && out[i] != 1) idx[i] = ir::const_i64(0);
  return idx;
}

class Lowering {
 public:
  explicit Lowering(const UGraph& g) : g_(g), value_(g.tensors.size()) {}

  ir::Graph run() {
    out_.name = g_.name;
    for (TensorId t : g_.inputs) value_[idx(t)] = out_.add_input(g_.tensor(t).name, type_of(t, {}));
    for (const UOp& op : g_.ops) {
      if (op.type == UOpType::Block) {
        block(op);
        continue;
      }
      std::vector<ValueId> in;
      for (TensorId t : op.inputs) in.push_back(value_[idx(t)]);
      value_[idx(op.outputs[0])] = compute(op, in, 0, type_of(op.outputs[0], {}), g_.tensor(op.outputs[0]).name);
    }
    std::vector<ValueId> outs;
    for (TensorId t : g_.outputs) outs.push_back(value_[idx(t)]);
    out_.set_outputs(outs);
    return std::move(out_);
  }

 private:
  static size_t idx(TensorId t) { return static_cast<size_t>(t); }

  ir::TensorType type_of(TensorId t, const ir::Dims& prefix) const {
    ir::Dims shape = prefix;
    for (int64_t d : g_.shape(t)) shape.push_back(d);
    return ir::TensorType{g_.tensor(t).dtype, shape};
  }
  const ir::Dims& shape(ValueId v) const { return out_.type(v).shape; }

  ValueId emit(ir::Primitive p, const ir::TensorType& t, const std::string& name) {
    p.domain = t.shape;
    p.name = name;
    ir::NodeId n = out_.add_node(std::move(p), {t}, {name});
    return out_.node(n).outputs[0];
  }

  // A pre-defined operator on values whose leading `batch` dims are a block graph's grid and
  // iteration (0 at the kernel level): data dims are shifted by it.
  ValueId compute(const UOp& op, const std::vector<ValueId>& in, size_t batch, const ir::TensorType& t,
                  const std::string& name) {
    ir::Primitive p;
    p.inputs = in;
    switch (op.type) {
      case UOpType::Matmul:
        p.op = ir::PrimOp::MatMul;
        p.attrs = ir::MatMulAttrs{};
        return emit(std::move(p), t, name);
      case UOpType::ConcatMatmul: return concat_matmul(in, t, name);
      case UOpType::Add:
      case UOpType::Mul:
      case UOpType::Div: {
        ir::ExprOp e = op.type == UOpType::Add ? ir::ExprOp::Add : op.type == UOpType::Mul ? ir::ExprOp::Mul : ir::ExprOp::Div;
        p.op = ir::PrimOp::Elementwise;
        p.bodies = {ir::binary(e, ir::load(0, t.dtype, broadcast_index(shape(in[0]), t.shape)),
                               ir::load(1, t.dtype, broadcast_index(shape(in[1]), t.shape)))};
        return emit(std::move(p), t, name);
      }
      case UOpType::Exp:
        p.op = ir::PrimOp::Elementwise;
        p.bodies = {ir::unary(ir::ExprOp::Exp, ir::load(0, t.dtype, domain_vars(t.shape.size())))};
        return emit(std::move(p), t, name);
      case UOpType::Sum: {
        std::vector<Expr> i = domain_vars(t.shape.size());
        size_t d = batch + static_cast<size_t>(op.dim);
        i[d] = times(i[d], op.k) + ir::rvar(0);
        p.op = ir::PrimOp::Reduce;
        p.reduce = ir::ReduceOp::Sum;
        p.reduce_domain = {op.k};
        p.bodies = {ir::load(0, t.dtype, i)};
        return emit(std::move(p), t, name);
      }
      case UOpType::Repeat: {
        std::vector<Expr> i = domain_vars(t.shape.size());
        size_t d = batch + static_cast<size_t>(op.dim);
        i[d] = div_by(i[d], op.k);
        p.op = ir::PrimOp::Layout;
        p.bodies = {ir::load(0, t.dtype, i)};
        return emit(std::move(p), t, name);
      }
      case UOpType::Reshape:
        p.op = ir::PrimOp::View;
        return emit(std::move(p), t, name);
      case UOpType::Transpose: {
        std::vector<Expr> out = domain_vars(t.shape.size()), i = out;
        for (size_t d = 0; d < op.shape.size(); ++d) i[batch + static_cast<size_t>(op.shape[d])] = out[batch + d];
        p.op = ir::PrimOp::Layout;
        p.bodies = {ir::load(0, t.dtype, i)};
        return emit(std::move(p), t, name);
      }
      case UOpType::Scale:
        p.op = ir::PrimOp::Elementwise;
        p.bodies = {ir::binary(ir::ExprOp::Mul, ir::load(0, t.dtype, domain_vars(t.shape.size())),
                               ir::const_f(t.dtype, op.factor))};
        return emit(std::move(p), t, name);
      case UOpType::InIter:
      case UOpType::OutAccum:
      case UOpType::Block:
      case UOpType::Thread: break;
    }
    ORCHID_CHECK(false) << uop_name(op.type) << " is not a pre-defined operator";
    return {};
  }

  // parts[0] ‖ parts[1] along dim `axis` (leading dims broadcast to `shape`'s).
  ValueId concat(ValueId a, ValueId b, size_t axis, const ir::Dims& shape, ir::DType dtype, const std::string& name) {
    int64_t split = this->shape(a)[axis];
    std::vector<Expr> ia = broadcast_index(this->shape(a), shape), ib = broadcast_index(this->shape(b), shape);
    Expr i = ir::dvar(static_cast<int32_t>(axis));
    ia[axis] = i;
    ib[axis] = i - split;
    ir::Primitive p;
    p.op = ir::PrimOp::Layout;
    p.inputs = {a, b};
    p.bodies = {ir::select(ir::binary(ir::ExprOp::Lt, i, ir::const_i64(split)), ir::load(0, dtype, ia),
                           ir::load(1, dtype, ib))};
    return emit(std::move(p), ir::TensorType{dtype, shape}, name);
  }

  ValueId concat_matmul(const std::vector<ValueId>& in, const ir::TensorType& t, const std::string& name) {
    size_t r = t.shape.size();
    ir::Dims a = t.shape, b = t.shape;
    a[r - 1] = shape(in[0])[r - 1] + shape(in[1])[r - 1];
    b[r - 2] = a[r - 1];
    for (size_t i = 0; i + 2 < r; ++i) {  // each side keeps its own broadcast batch dims
      a[i] = std::max(shape(in[0])[i], shape(in[1])[i]);
      b[i] = std::max(shape(in[2])[i], shape(in[3])[i]);
    }
    ValueId ca = concat(in[0], in[1], r - 1, a, t.dtype, name + ".lhs");
    ValueId cb = concat(in[2], in[3], r - 2, b, t.dtype, name + ".rhs");
    ir::Primitive p;
    p.op = ir::PrimOp::MatMul;
    p.attrs = ir::MatMulAttrs{};
    p.inputs = {ca, cb};
    return emit(std::move(p), t, name);
  }

  void block(const UOp& op) {
    const BlockGraph& b = g_.blocks[idx(op.body)];
    ir::Dims prefix = b.grid;
    prefix.push_back(b.loop);
    for (const UOp& bop : b.ops) {
      switch (bop.type) {
        case UOpType::InIter: in_iter(bop, b, prefix); break;
        case UOpType::OutAccum: out_accum(bop, b, prefix); break;
        case UOpType::Thread:
          for (const UOp& top : g_.threads[idx(bop.body)].ops) batched(top, prefix);
          break;
        case UOpType::Matmul:
        case UOpType::ConcatMatmul:
        case UOpType::Sum:
        case UOpType::Add:
        case UOpType::Mul:
        case UOpType::Div:
        case UOpType::Exp:
        case UOpType::Repeat:
        case UOpType::Reshape:
        case UOpType::Transpose:
        case UOpType::Scale:
        case UOpType::Block: batched(bop, prefix); break;
      }
    }
  }

  void batched(const UOp& op, const ir::Dims& prefix) {
    std::vector<ValueId> in;
    for (TensorId t : op.inputs) in.push_back(value_[idx(t)]);
    TensorId o = op.outputs[0];
    value_[idx(o)] = compute(op, in, prefix.size(), type_of(o, prefix), g_.tensor(o).name);
  }

  // The grid dims that partition data dim j, outermost first, and their number of blocks.
  static std::vector<size_t> grid_dims_of(const DimMap& map, size_t j) {
    std::vector<size_t> out;
    for (size_t gd = 0; gd < map.grid.size(); ++gd)
      if (map.grid[gd] == static_cast<int32_t>(j)) out.push_back(gd);
    return out;
  }

  // value[g.., l, local..] = X[index of each data dim], the block's and iteration's part.
  void in_iter(const UOp& op, const BlockGraph& b, const ir::Dims& prefix) {
    const ir::Dims& whole = g_.shape(op.inputs[0]);
    const ir::Dims& part = g_.shape(op.outputs[0]);
    size_t np = prefix.size();
    std::vector<Expr> idx(whole.size());
    for (size_t j = 0; j < whole.size(); ++j) {
      Expr block_index;  // the block's position among those splitting dim j
      int64_t blocks = 1;
      for (size_t gd : grid_dims_of(op.map, j)) {
        Expr i = ir::dvar(static_cast<int32_t>(gd));
        block_index = block_index.defined() ? times(block_index, b.grid[gd]) + i : i;
        blocks *= b.grid[gd];
      }
      Expr at;
      if (block_index.defined()) at = times(block_index, whole[j] / blocks);
      if (op.map.loop == static_cast<int32_t>(j)) at = plus(at, times(ir::dvar(static_cast<int32_t>(np - 1)), part[j]));
      idx[j] = plus(at, ir::dvar(static_cast<int32_t>(np + j)));
    }
    ir::Primitive p;
    p.op = ir::PrimOp::Layout;
    p.inputs = {value_[this->idx(op.inputs[0])]};
    ir::TensorType t = type_of(op.outputs[0], prefix);
    p.bodies = {ir::load(0, t.dtype, idx)};
    value_[this->idx(op.outputs[0])] = emit(std::move(p), t, g_.tensor(op.outputs[0]).name);
  }

  // out[i..] = X[grid indices, iteration, local indices] decoded from each data dim's index;
  // summed over the iterations where the fmap replicates.
  void out_accum(const UOp& op, const BlockGraph& b, const ir::Dims& prefix) {
    const ir::Dims& part = g_.shape(op.inputs[0]);
    size_t np = prefix.size();
    bool summed = op.map.loop == kReplica;
    std::vector<Expr> idx(np + part.size(), ir::const_i64(0));
    idx[np - 1] = summed ? ir::rvar(0) : ir::const_i64(0);
    for (size_t j = 0; j < part.size(); ++j) {
      Expr i = ir::dvar(static_cast<int32_t>(j));
      bool looped = op.map.loop == static_cast<int32_t>(j);
      int64_t span = looped ? part[j] * b.loop : part[j];  // one block's part of dim j
      std::vector<size_t> gds = grid_dims_of(op.map, j);
      if (!gds.empty()) {
        Expr block_index = div_by(i, span);
        int64_t inner = 1;  // blocks of the grid dims inside the current one
        for (size_t k = gds.size(); k-- > 0;) {
          idx[gds[k]] = mod_by(div_by(block_index, inner), b.grid[gds[k]]);
          if (k == 0) idx[gds[k]] = div_by(block_index, inner);
          inner *= b.grid[gds[k]];
        }
        i = mod_by(i, span);
      }
      if (looped) {
        idx[np - 1] = div_by(i, part[j]);
        i = mod_by(i, part[j]);
      }
      idx[np + j] = i;
    }
    ir::Primitive p;
    TensorId o = op.outputs[0];
    ir::TensorType t = type_of(o, {});
    p.inputs = {value_[this->idx(op.inputs[0])]};
    p.bodies = {ir::load(0, t.dtype, idx)};
    p.op = ir::PrimOp::Layout;
    if (summed) {
      p.op = ir::PrimOp::Reduce;
      p.reduce = ir::ReduceOp::Sum;
      p.reduce_domain = {b.loop};
    }
    value_[this->idx(o)] = emit(std::move(p), t, g_.tensor(o).name);
  }

  const UGraph& g_;
  std::vector<ValueId> value_;
  ir::Graph out_;
};

}  // namespace

ir::Graph lower(const UGraph& g) { return Lowering(g).run(); }

}  // namespace orchid::superopt
