// Fission rules of CumSum, TopK and Det: each is one opaque primitive calling the library routine
// of the same name (opaque.def, docs/ir.md "Opaque routines"); scans, sorts and pivoting
// eliminations do not decompose into Orchid's primitives. The routines take their parameters at compile time:
// CumSum's axis and TopK's K (an input from opset 10) must be constants — a K known only at
// run time would give the outputs a data-dependent shape.
#include "fission/builders.h"
#include "fission/linear_common.h"
#include "fission/rules.h"
#include "support/error.h"

namespace orchid::fission {

namespace {

using ir::DType;

// One opaque primitive of `routine` over x with the given parameters.
std::vector<ValueId> opaque(RuleContext& ctx, ValueId x, ir::OpaqueRoutine routine,
                            std::map<std::string, int64_t> params,
                            const std::vector<ir::TensorType>& outs) {
  ir::Primitive p;
  p.op = ir::PrimOp::Opaque;
  p.inputs = {x};
  p.domain = outs[0].shape;
  p.attrs = ir::OpaqueAttrs{routine, std::move(params)};
  return ctx.emit(std::move(p), outs);
}

// A 0/1 attribute (UserError for any other value).
int64_t flag(const RuleContext& ctx, const std::string& name, int64_t dflt) {
  int64_t v = ctx.attr_int(name, dflt);
  ORCHID_USER_CHECK(v == 0 || v == 1) << ctx.where() << "attribute '" << name << "' = " << v
                                      << " must be 0 or 1";
  return v;
}

// The single integer of input k (a scalar, or a 1-D tensor of one element), which must be a
// constant; `what` names it in messages.
int64_t scalar_input(const RuleContext& ctx, size_t k, const std::string& what) {
  ctx.input(k);  // UserError when absent
  if (!ctx.constant(k))
    ctx.unsupported(what + " computed at run time (input " + std::to_string(k) + " '" +
                    ctx.node().inputs[k] + "' must be a constant)");
  ir::Dims s = ctx.shape(k);
  ORCHID_USER_CHECK(s.size() <= 1 && ctx.type(k).numel() == 1)
      << ctx.where() << what << " (input " << k << ") has shape " << ir::dims_str(s)
      << "; expected a single value";
  return ctx.const_ints(k)[0];
}

}  // namespace

std::vector<ValueId> rule_Det(RuleContext& ctx) {
  ir::TensorType xt = ctx.type(0);
  ORCHID_USER_CHECK(xt.rank() >= 2 && xt.shape[xt.shape.size() - 1] == xt.shape[xt.shape.size() - 2])
      << ctx.where() << "X " << ir::dims_str(xt.shape) << " should be square matrices [.., M, M]";
  ir::TensorType out{xt.dtype, ir::Dims(xt.shape.begin(), xt.shape.end() - 2)};
  return opaque(ctx, ctx.input(0), ir::OpaqueRoutine::Det, {}, {out});
}

std::vector<ValueId> rule_CumSum(RuleContext& ctx) {
  using D = DType;
  std::string op = "CumSum-" + std::to_string(ctx.version());
  if (ctx.version() < 14) require_dtype(ctx, 0, {D::U32, D::U64, D::I32, D::I64, D::F32, D::F64}, op);
  else require_dtype(ctx, 0, {D::U32, D::U64, D::I32, D::I64, D::F16, D::F32, D::F64, D::BF16}, op);
  ctx.input(1);
  require_dtype(ctx, 1, {D::I32, D::I64}, op);
  ir::TensorType xt = ctx.type(0);
  int64_t axis = ctx.normalize_axis(scalar_input(ctx, 1, "axis"), xt.rank());
  return opaque(ctx, ctx.input(0), ir::OpaqueRoutine::CumSum,
                {{"axis", axis}, {"exclusive", flag(ctx, "exclusive", 0)}, {"reverse", flag(ctx, "reverse", 0)}},
                {xt});
}

std::vector<ValueId> rule_TopK(RuleContext& ctx) {
  using D = DType;
  std::string op = "TopK-" + std::to_string(ctx.version());
  if (ctx.version() < 11) require_dtype(ctx, 0, {D::F16, D::F32, D::F64}, op);
  else
    require_dtype(ctx, 0, {D::U8, D::U16, D::U32, D::U64, D::I8, D::I16, D::I32, D::I64, D::F16, D::F32, D::F64},
                  op);
  require_attr_since(ctx, "largest", 11);
  require_attr_since(ctx, "sorted", 11);
  ir::TensorType xt = ctx.type(0);
  int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", -1), xt.rank());
  int64_t k = 0;
  if (ctx.version() < 10) {
    k = ctx.required_attr_int("k");
  } else {
    ctx.input(1);
    require_dtype(ctx, 1, {D::I64}, op);
    k = scalar_input(ctx, 1, "K");
  }
  int64_t dim = xt.shape[static_cast<size_t>(axis)];
  ORCHID_USER_CHECK(k >= 0 && k <= dim) << ctx.where() << "K = " << k << " is out of range for axis " << axis
                                        << " of " << ir::type_str(xt) << " (0 <= K <= " << dim << ")";
  ir::TensorType values = xt;
  values.shape[static_cast<size_t>(axis)] = k;
  ir::TensorType indices{DType::I64, values.shape};
  int64_t largest = flag(ctx, "largest", 1), sorted = flag(ctx, "sorted", 1);
  if (k == 0)  // no elements: both outputs are empty constants
    return {ctx.add_constant(ir::Tensor(values), "values"), ctx.add_constant(ir::Tensor(indices), "indices")};
  return opaque(ctx, ctx.input(0), ir::OpaqueRoutine::TopK,
                {{"axis", axis}, {"k", k}, {"largest", largest}, {"sorted", sorted}}, {values, indices});
}

}  // namespace orchid::fission
