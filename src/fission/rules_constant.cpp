// Fission rules of the ONNX operators whose outputs are known at compile time: Shape and Size
// (shapes are static), Constant, ConstantOfShape and Range (their inputs must be constants).
// Each adds a constant to the graph; no primitive is built.
#include <algorithm>
#include <cmath>

#include "fission/rules.h"
#include "fission/rules_layout_common.h"
#include "support/error.h"

namespace orchid::fission {

namespace {

ir::Tensor i64_vector(const std::vector<int64_t>& v) {
  ir::Tensor t(ir::TensorType{ir::DType::I64, {static_cast<int64_t>(v.size())}});
  for (size_t k = 0; k < v.size(); ++k) t.set_i64(static_cast<int64_t>(k), v[k]);
  return t;
}

ir::Tensor f32_tensor(const std::vector<double>& v, const ir::Dims& shape) {
  ir::Tensor t(ir::TensorType{ir::DType::F32, shape});
  for (size_t k = 0; k < v.size(); ++k) t.set_f64(static_cast<int64_t>(k), v[k]);
  return t;
}

// The value of a Constant node from whichever of its attributes is set (exactly one may be).
ir::Tensor constant_value(const RuleContext& ctx) {
  std::vector<std::string> set;
  for (const char* name : {"value", "value_float", "value_floats", "value_int", "value_ints",
                           "value_string", "value_strings"})
    if (ctx.has_attr(name)) set.push_back(name);
  ORCHID_USER_CHECK(set.size() == 1)
      << ctx.where() << "needs exactly one value attribute, found " << set.size();
  const std::string& a = set[0];
  if (a == "value_string" || a == "value_strings") ctx.unsupported("string constants");
  if (a == "value") return *ctx.attr_tensor("value");
  if (a == "value_float") return f32_tensor({ctx.attr_float(a, 0)}, {});
  if (a == "value_int") {
    ir::Tensor t(ir::TensorType{ir::DType::I64, {}});
    t.set_i64(0, ctx.attr_int(a, 0));
    return t;
  }
  if (a == "value_ints") return i64_vector(ctx.attr_ints(a, {}));
  std::vector<double> f = ctx.attr_floats(a, {});
  return f32_tensor(f, {static_cast<int64_t>(f.size())});
}

}  // namespace

std::vector<ValueId> rule_Shape(RuleContext& ctx) {
  ir::Dims s = ctx.shape(0);
  auto rank = static_cast<int64_t>(s.size());
  int64_t start = 0, end = rank;
  if (ctx.version() >= 15) {
    start = ctx.attr_int("start", 0);
    end = ctx.attr_int("end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, 0, rank);
  }
  std::vector<int64_t> dims;
  for (int64_t d = start; d < end; ++d) dims.push_back(s[static_cast<size_t>(d)]);
  return {ctx.add_constant(i64_vector(dims))};
}

std::vector<ValueId> rule_Size(RuleContext& ctx) {
  ir::Tensor t(ir::TensorType{ir::DType::I64, {}});
  t.set_i64(0, ctx.type(0).numel());
  return {ctx.add_constant(std::move(t))};
}

std::vector<ValueId> rule_Constant(RuleContext& ctx) {
  return {ctx.add_constant(constant_value(ctx))};
}

std::vector<ValueId> rule_ConstantOfShape(RuleContext& ctx) {
  std::vector<int64_t> shape = layout::static_ints(ctx, 0);
  for (int64_t d : shape)
    ORCHID_USER_CHECK(d >= 0) << ctx.where() << "shape " << ir::dims_str(shape)
                              << " has a negative dim";
  ir::Tensor value(ir::TensorType{ir::DType::F32, {1}});
  if (const ir::Tensor* v = ctx.attr_tensor("value")) value = *v;
  ORCHID_USER_CHECK(value.numel() == 1)
      << ctx.where() << "value must have one element, found " << ir::type_str(value.type());
  ctx.check_size({value.dtype(), shape});
  ir::Tensor out(ir::TensorType{value.dtype(), shape});
  int64_t bytes = ir::dtype_bytes(value.dtype());
  for (int64_t k = 0; k < out.numel(); ++k)
    std::copy(value.data(), value.data() + bytes, out.data() + k * bytes);
  return {ctx.add_constant(std::move(out))};
}

// Range(start, limit, delta): max(ceil((limit - start) / delta), 0) elements start + k * delta.
std::vector<ValueId> rule_Range(RuleContext& ctx) {
  ir::DType t = ctx.dtype(0);
  for (size_t k = 0; k < 3; ++k)
    ORCHID_USER_CHECK(ctx.dtype(k) == t && ctx.type(k).numel() == 1)
        << ctx.where() << "input " << k << " must be a scalar of dtype " << ir::dtype_name(t)
        << ", found " << ir::type_str(ctx.type(k));
  ir::Tensor out;
  if (ir::is_float(t)) {
    double start = layout::static_floats(ctx, 0)[0], limit = layout::static_floats(ctx, 1)[0];
    double delta = layout::static_floats(ctx, 2)[0];
    ORCHID_USER_CHECK(delta != 0) << ctx.where() << "delta is 0";
    double count = std::max(std::ceil((limit - start) / delta), 0.0);
    ORCHID_USER_CHECK(std::isfinite(count) && count < 0x1p53)
        << ctx.where() << "Range(" << start << ", " << limit << ", " << delta << ") has no finite size";
    auto n = static_cast<int64_t>(count);
    ctx.check_size({t, {n}});
    out = ir::Tensor(ir::TensorType{t, {n}});
    for (int64_t k = 0; k < n; ++k) out.set_f64(k, start + static_cast<double>(k) * delta);
  } else {
    int64_t start = layout::static_ints(ctx, 0)[0], limit = layout::static_ints(ctx, 1)[0];
    int64_t delta = layout::static_ints(ctx, 2)[0];
    ORCHID_USER_CHECK(delta != 0) << ctx.where() << "delta is 0";
    // Exact in 128 bits: limit - start may not fit in 64.
    __int128 span = static_cast<__int128>(limit) - start;
    __int128 q = span / delta + (span % delta != 0 && (span < 0) == (delta < 0) ? 1 : 0);
    ORCHID_USER_CHECK(q <= (__int128(1) << 40))
        << ctx.where() << "Range(" << start << ", " << limit << ", " << delta << ") is too long";
    int64_t n = std::max<int64_t>(static_cast<int64_t>(q), 0);
    ctx.check_size({t, {n}});
    out = ir::Tensor(ir::TensorType{t, {n}});
    for (int64_t k = 0; k < n; ++k)
      out.set_i64(k, static_cast<int64_t>(static_cast<__int128>(start) + static_cast<__int128>(k) * delta));
  }
  return {ctx.add_constant(std::move(out))};
}

}  // namespace orchid::fission
