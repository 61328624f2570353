// Building blocks shared by fission rules: numpy broadcasting, and the common shapes of
// primitives (broadcast elementwise maps, reductions over axes, casts, views, transposes,
// general index remappings, constants). Rules compose these instead of writing loops.
#pragma once

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
// a @ b (b read transposed with trans_b), a matmul primitive of their dtype.
ValueId matmul_of(RuleContext& ctx, ValueId a, ValueId b, bool trans_b, const std::string& suffix = "");
ValueId view(RuleContext& ctx, ValueId x, const ir::Dims& shape, const std::string& suffix = "");
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
ValueId int_vector_constant(RuleContext& ctx, const std::vector<int64_t>& v,
                            const std::string& suffix = "");

// Domain variables i0..i(n-1) as expressions.
std::vector<Expr> domain_vars(size_t n);

}  // namespace orchid::fission
