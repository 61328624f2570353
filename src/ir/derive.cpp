// Tensor expressions of derived operators: views, matmul and conv (see graph.h).
#include <algorithm>

#include "support/error.h"
#include "ir/graph.h"

namespace orchid::ir {

namespace {

// A run of the input's dims and of the output's (dims of 1 left out) that hold the same
// elements: their products are equal, and no shorter runs from the same starts are.
struct ViewGroup {
  std::vector<size_t> in, out;
};

std::vector<ViewGroup> view_groups(const Dims& in, const Dims& out) {
  std::vector<ViewGroup> groups;
  size_t i = 0, o = 0;
  auto skip_ones = [](const Dims& d, size_t& k) {
    while (k < d.size() && d[k] == 1) ++k;
  };
  skip_ones(in, i);
  skip_ones(out, o);
  while (i < in.size() && o < out.size()) {
    ViewGroup g;
    int64_t pin = in[i], pout = out[o];
    g.in.push_back(i++);
    g.out.push_back(o++);
    while (pin != pout) {
      if (pin < pout) {
        skip_ones(in, i);
        pin *= in[i];
        g.in.push_back(i++);
      } else {
        skip_ones(out, o);
        pout *= out[o];
        g.out.push_back(o++);
      }
    }
    groups.push_back(std::move(g));
    skip_ones(in, i);
    skip_ones(out, o);
  }
  return groups;
}

// The index of a view of no elements (never read): the domain variable of one of the
// output's dims of size 0 for every input dim but those of 1. Its range is empty, so every
// index stays within bounds as the verifier sees them; a quotient by a stride would divide by
// 0 where a later dim is 0 (found by fuzzing: an LSTM's view of an empty sequence).
std::vector<Expr> empty_view_index(const Dims& in, const Dims& out) {
  auto zero = std::find(out.begin(), out.end(), 0);
  ORCHID_CHECK(zero != out.end()) << "a view of no elements as " << dims_str(out);
  std::vector<Expr> idx;
  for (int64_t d : in) idx.push_back(d == 1 ? const_i64(0) : dvar(static_cast<int32_t>(zero - out.begin())));
  return idx;
}

// The view's load index: dims of 1 read index 0; in each group of dims that hold the same
// elements, every input dim is taken from the group's row-major offset, by a quotient and a
// remainder (neither where the group is one dim on each side: that dim reads its domain
// variable). Offsets local to a group keep the indices free of division wherever the view
// only inserts or removes dims of 1, and small where it merges or splits dims.
std::vector<Expr> view_index(const Dims& in, const Dims& out) {
  if (numel(in) == 0) return empty_view_index(in, out);
  std::vector<Expr> idx(in.size(), const_i64(0));
  for (const ViewGroup& g : view_groups(in, out)) {
    Expr flat = const_i64(0);
    int64_t stride = 1;
    for (size_t k = g.out.size(); k-- > 0;) {
      Expr v = dvar(static_cast<int32_t>(g.out[k]));
      Expr term = stride == 1 ? v : v * stride;
      flat = k + 1 == g.out.size() ? term : term + flat;
      stride *= out[g.out[k]];
    }
    stride = 1;
    for (size_t k = g.in.size(); k-- > 0;) {
      size_t m = g.in[k];
      Expr e = stride == 1 ? flat : floordiv(flat, stride);
      if (k > 0) e = mod(e, in[m]);
      idx[m] = e;
      stride *= in[m];
    }
  }
  return idx;
}

void derive_view(const std::vector<TensorType>& in, const TensorType& out, Primitive& p) {
  ORCHID_CHECK(in.size() == 1) << "view takes one input, given " << in.size();
  ORCHID_CHECK(in[0].numel() == out.numel())
      << "view of " << type_str(in[0]) << " as " << type_str(out) << " changes the size";
  ORCHID_CHECK(in[0].dtype == out.dtype) << "view changes the dtype";
  p.bodies = {load(0, out.dtype, view_index(in[0].shape, out.shape))};
  p.reduce = ReduceOp::None;
  p.reduce_domain.clear();
}

// Index list of a matmul operand: batch dims aligned right with the output's, then the two
// matrix dims (row_var, col_var given as expressions).
std::vector<Expr> matmul_operand_index(const Dims& shape, size_t out_rank, Expr row, Expr col) {
  std::vector<Expr> idx;
  size_t batch = shape.size() - 2;
  size_t offset = (out_rank - 2) - batch;
  for (size_t j = 0; j < batch; ++j)
    idx.push_back(shape[j] == 1 ? const_i64(0) : dvar(static_cast<int32_t>(offset + j)));
  idx.push_back(std::move(row));
  idx.push_back(std::move(col));
  return idx;
}

void derive_matmul(const std::vector<TensorType>& in, const TensorType& out, Primitive& p) {
  ORCHID_CHECK(in.size() == 2) << "matmul takes two inputs, given " << in.size();
  ORCHID_CHECK(std::holds_alternative<MatMulAttrs>(p.attrs)) << "matmul without MatMulAttrs";
  const auto& attrs = std::get<MatMulAttrs>(p.attrs);
  ORCHID_CHECK(matmul_result_type(in[0], in[1], attrs) == out)
      << "matmul of " << type_str(in[0]) << " and " << type_str(in[1]) << " declared "
      << type_str(out);
  size_t R = out.shape.size();
  const Dims& a = in[0].shape;
  int64_t K = attrs.trans_a ? a[a.size() - 2] : a[a.size() - 1];
  Expr m = dvar(static_cast<int32_t>(R - 2)), n = dvar(static_cast<int32_t>(R - 1)), k = rvar(0);
  auto ia = attrs.trans_a ? matmul_operand_index(a, R, k, m) : matmul_operand_index(a, R, m, k);
  auto ib = attrs.trans_b ? matmul_operand_index(in[1].shape, R, n, k)
                          : matmul_operand_index(in[1].shape, R, k, n);
  p.reduce_domain = {K};
  p.reduce = ReduceOp::Sum;
  p.bodies = {load(0, out.dtype, std::move(ia)) * load(1, out.dtype, std::move(ib))};
}

void derive_conv(const std::vector<TensorType>& in, const TensorType& out, Primitive& p) {
  ORCHID_CHECK(in.size() == 2) << "conv takes two inputs, given " << in.size();
  ORCHID_CHECK(std::holds_alternative<ConvAttrs>(p.attrs)) << "conv without ConvAttrs";
  const auto& attrs = std::get<ConvAttrs>(p.attrs);
  ORCHID_CHECK(conv_result_type(in[0], in[1], attrs) == out)
      << "conv of " << type_str(in[0]) << " and " << type_str(in[1]) << " declared "
      << type_str(out);
  const Dims& x = in[0].shape;
  const Dims& w = in[1].shape;
  size_t S = x.size() - 2;
  int64_t cg = w[1];
  int64_t kg = w[0] / attrs.groups;
  Expr channel = attrs.groups == 1 ? rvar(0) : floordiv(dvar(1), kg) * cg + rvar(0);
  std::vector<Expr> ix = {dvar(0), channel};
  std::vector<Expr> iw = {dvar(1), rvar(0)};
  Expr pred;
  for (size_t d = 0; d < S; ++d) {
    auto od = static_cast<int32_t>(2 + d), rd = static_cast<int32_t>(1 + d);
    Expr pos = dvar(od) * attrs.strides[d] + rvar(rd) * attrs.dilations[d];
    if (attrs.pads_begin[d] != 0) pos = pos - attrs.pads_begin[d];
    int64_t max_pos = (out.shape[2 + d] - 1) * attrs.strides[d] +
                      (w[2 + d] - 1) * attrs.dilations[d] - attrs.pads_begin[d];
    std::vector<Expr> conds;
    if (attrs.pads_begin[d] > 0) conds.push_back(binary(ExprOp::Ge, pos, const_i64(0)));
    if (max_pos >= x[2 + d]) conds.push_back(binary(ExprOp::Lt, pos, const_i64(x[2 + d])));
    for (Expr& c : conds) pred = pred.defined() ? binary(ExprOp::And, pred, c) : c;
    ix.push_back(pos);
    iw.push_back(rvar(rd));
  }
  Expr lx = pred.defined() ? load_pred(0, out.dtype, std::move(ix), pred, Scalar::of(out.dtype, 0))
                           : load(0, out.dtype, std::move(ix));
  p.reduce_domain = {cg};
  for (size_t d = 0; d < S; ++d) p.reduce_domain.push_back(w[2 + d]);
  p.reduce = ReduceOp::Sum;
  p.bodies = {lx * load(1, out.dtype, std::move(iw))};
}

}  // namespace

void derive_tensor_expr(const std::vector<TensorType>& in_types, const TensorType& out_type,
                        Primitive& p) {
  p.domain = out_type.shape;
  switch (p.op) {
    case PrimOp::View: derive_view(in_types, out_type, p); return;
    case PrimOp::MatMul: derive_matmul(in_types, out_type, p); return;
    case PrimOp::Conv: derive_conv(in_types, out_type, p); return;
    case PrimOp::Elementwise:
    case PrimOp::Reduce:
    case PrimOp::Broadcast:
    case PrimOp::Layout:
    case PrimOp::Opaque: break;
  }
  ORCHID_CHECK(false) << prim_op_name(p.op) << " has no derived expression";
}

TensorType matmul_result_type(const TensorType& a, const TensorType& b, const MatMulAttrs& attrs) {
  ORCHID_USER_CHECK(a.rank() >= 2 && b.rank() >= 2)
      << "matmul needs operands of rank >= 2, given " << type_str(a) << " and " << type_str(b);
  ORCHID_USER_CHECK(a.dtype == b.dtype)
      << "matmul of different dtypes: " << type_str(a) << " and " << type_str(b);
  int64_t ra = a.rank(), rb = b.rank();
  int64_t M = attrs.trans_a ? a.shape[ra - 1] : a.shape[ra - 2];
  int64_t Ka = attrs.trans_a ? a.shape[ra - 2] : a.shape[ra - 1];
  int64_t Kb = attrs.trans_b ? b.shape[rb - 1] : b.shape[rb - 2];
  int64_t N = attrs.trans_b ? b.shape[rb - 2] : b.shape[rb - 1];
  ORCHID_USER_CHECK(Ka == Kb) << "matmul inner dimensions differ (" << Ka << " vs " << Kb
                              << "): " << type_str(a) << " and " << type_str(b);
  int64_t R = std::max(ra, rb);
  Dims shape(static_cast<size_t>(R));
  for (int64_t j = 0; j < R - 2; ++j) {
    int64_t ja = j - (R - ra), jb = j - (R - rb);
    int64_t da = ja >= 0 ? a.shape[ja] : 1, db = jb >= 0 ? b.shape[jb] : 1;
    ORCHID_USER_CHECK(da == db || da == 1 || db == 1)
        << "matmul batch dimensions do not broadcast: " << type_str(a) << " and " << type_str(b);
    shape[j] = da == 1 ? db : da;
  }
  shape[R - 2] = M;
  shape[R - 1] = N;
  return {a.dtype, shape};
}

TensorType conv_result_type(const TensorType& x, const TensorType& w, const ConvAttrs& attrs) {
  ORCHID_USER_CHECK(x.rank() >= 3 && x.rank() == w.rank())
      << "conv needs input and weight of one rank >= 3, given " << type_str(x) << " and "
      << type_str(w);
  ORCHID_USER_CHECK(x.dtype == w.dtype)
      << "conv of different dtypes: " << type_str(x) << " and " << type_str(w);
  auto S = static_cast<size_t>(x.rank() - 2);
  ORCHID_USER_CHECK(attrs.strides.size() == S && attrs.dilations.size() == S &&
                    attrs.pads_begin.size() == S && attrs.pads_end.size() == S)
      << "conv attributes need one entry per spatial dimension (" << S << ")";
  ORCHID_USER_CHECK(attrs.groups >= 1 && w.shape[0] % attrs.groups == 0 &&
                    x.shape[1] % attrs.groups == 0 && x.shape[1] / attrs.groups == w.shape[1])
      << "conv channels do not match groups=" << attrs.groups << ": " << type_str(x) << " and "
      << type_str(w);
  Dims shape = {x.shape[0], w.shape[0]};
  for (size_t d = 0; d < S; ++d) {
    ORCHID_USER_CHECK(attrs.strides[d] >= 1 && attrs.dilations[d] >= 1 &&
                      attrs.pads_begin[d] >= 0 && attrs.pads_end[d] >= 0)
        << "conv strides and dilations must be >= 1 and pads >= 0";
    int64_t span = 0, padded = 0;  // attributes come from models: overflow is a user error
    bool overflow = __builtin_mul_overflow(attrs.dilations[d], w.shape[2 + d] - 1, &span) ||
                    __builtin_add_overflow(span, 1, &span) ||
                    __builtin_add_overflow(x.shape[2 + d], attrs.pads_begin[d], &padded) ||
                    __builtin_add_overflow(padded, attrs.pads_end[d], &padded);
    ORCHID_USER_CHECK(!overflow) << "conv attributes overflow for " << type_str(x) << " and " << type_str(w);
    ORCHID_USER_CHECK(padded >= span)
        << "conv kernel " << type_str(w) << " larger than the padded input " << type_str(x);
    shape.push_back((padded - span) / attrs.strides[d] + 1);
  }
  return {x.dtype, shape};
}

}  // namespace orchid::ir
