// Building blocks shared by fission rules: numpy broadcasting, and the common shapes of
// primitives (broadcast elementwise maps, reductions over axes, casts, views, transposes,
// general index remappings, constants). Rules compose these instead of writing loops.
#pragma once

#include <array>
#include <functional>
#include <vector>

#include "fission/rule_context.h"

namespace orchid::fission {

using ir::Expr;
using ir::ValueId;

// UserError naming the node when inputs a and b have different dtypes.
void require_same_dtype(const RuleContext& ctx, size_t a, size_t b);

// The numpy broadcast of shapes; UserError naming the node when they do not broadcast.
ir::Dims broadcast_shapes(const RuleContext& ctx, const std::vector<ir::Dims>& shapes);

// Collects the distinct inputs of one primitive as load slots.
class PrimBuilder {
 public:
  explicit PrimBuilder(const ir::Graph& g) : g_(g) {}
  int32_t slot(ValueId v);
  Expr load(ValueId v, std::vector<Expr> idx);
  Expr load_pred(ValueId v, std::vector<Expr> idx, Expr pred, ir::Scalar fill);
  // A numpy-broadcast read of v in a domain of shape out_shape (dims aligned right; a dim of
  // size 1 read at 0).
  Expr bload(ValueId v, const ir::Dims& out_shape);
  // A primitive of op `op` whose inputs are the collected values.
  ir::Primitive make(ir::PrimOp op) const;

 private:
  const ir::Graph& g_;
  std::vector<ValueId> inputs_;
};

using ExprFn = std::function<Expr(const std::vector<Expr>&)>;

// out = f(broadcast loads of ins...), an elementwise primitive of dtype `out`.
ValueId ew_map(RuleContext& ctx, const std::vector<ValueId>& ins, ir::DType out, const ExprFn& f,
               const std::string& suffix = "");
// Convenience for one input.
ValueId ew_unary(RuleContext& ctx, ValueId x, const std::function<Expr(Expr)>& f,
                 const std::string& suffix = "");

// Reduces x over `axes` (normalised, any order) with `op` of the body f(x element).
// keepdims keeps reduced dims as 1. Combiners with two outputs (welford, maxsum) return both;
// argmax/argmin need exactly one axis and return (value, index).
std::vector<ValueId> reduce_axes(RuleContext& ctx, ValueId x, std::vector<int64_t> axes,
                                 bool keepdims, ir::ReduceOp op,
                                 const std::function<Expr(Expr)>& body = nullptr,
                                 const std::string& suffix = "");

ValueId cast_to(RuleContext& ctx, ValueId x, ir::DType to, const std::string& suffix = "");
// a @ b, a matmul primitive of their dtype (batch dims broadcast; trans_*: the last two dims
// read swapped); a UserError naming the node where the shapes do not fit.
ValueId matmul(RuleContext& ctx, ValueId a, ValueId b, const ir::MatMulAttrs& attrs,
               const std::string& suffix = "matmul");
ValueId view(RuleContext& ctx, ValueId x, const ir::Dims& shape, const std::string& suffix = "");
// out[i] = x[index_fn(b, i)], where the indices may load other tensors through b (indirect
// loads: a gather at computed positions).
ValueId gather(RuleContext& ctx, ValueId x, const ir::Dims& out_shape,
               const std::function<std::vector<Expr>(PrimBuilder&, const std::vector<Expr>&)>& index_fn,
               const std::string& suffix = "");
// out[i] = x[index_map(i)] over out_shape (a layout primitive).
ValueId remap(RuleContext& ctx, ValueId x, const ir::Dims& out_shape,
              const std::function<std::vector<Expr>(const std::vector<Expr>&)>& index_map,
              const std::string& suffix = "");
ValueId transpose(RuleContext& ctx, ValueId x, const std::vector<int64_t>& perm,
                  const std::string& suffix = "");
// Numpy broadcast of x to `shape` (a broadcast primitive; x itself when shapes are equal).
ValueId broadcast_to(RuleContext& ctx, ValueId x, const ir::Dims& shape,
                     const std::string& suffix = "");
ValueId scalar_constant(RuleContext& ctx, ir::DType t, double v, const std::string& suffix = "");
// A constant of dtype t and `shape` holding `values` (row-major; integers truncated).
ValueId constant_of(RuleContext& ctx, ir::DType t, const ir::Dims& shape, const std::vector<double>& values,
                    const std::string& suffix = "");
// Values of one dtype and rank, equal in every dim but `axis`, side by side along it (ONNX
// Concat): layout primitives selecting by the index along the axis, each reading at most 32
// of them (a select chain over more would nest deeply).
ValueId concat(RuleContext& ctx, const std::vector<ValueId>& parts, size_t axis, const std::string& suffix = "");
// Parts of one shape stacked along a new dim of extent parts.size() at `axis` (numpy.stack).
ValueId stack(RuleContext& ctx, const std::vector<ValueId>& parts, size_t axis, const std::string& suffix = "");

// The weights of Keys' cubic convolution kernel with coefficient a at the four taps −1, 0, 1,
// 2 around a point at fraction f past tap 0. T is double (tables built at compile time) or
// Expr (weights computed in the graph); c turns a constant into a T.
template <class T, class C>
std::array<T, 4> keys_cubic_weights(T f, double a, C c) {
  T p = f + c(1), q = c(1) - f, r = c(2) - f;
  return {((c(a) * p - c(5 * a)) * p + c(8 * a)) * p - c(4 * a), ((c(a + 2) * f - c(a + 3)) * f) * f + c(1),
          ((c(a + 2) * q - c(a + 3)) * q) * q + c(1), ((c(a) * r - c(5 * a)) * r + c(8 * a)) * r - c(4 * a)};
}
ValueId int_vector_constant(RuleContext& ctx, const std::vector<int64_t>& v,
                            const std::string& suffix = "");

// Domain variables i0..i(n-1) as expressions.
std::vector<Expr> domain_vars(size_t n);

}  // namespace orchid::fission
