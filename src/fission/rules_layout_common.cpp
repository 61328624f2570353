#include "fission/rules_layout_common.h"

#include <algorithm>

#include "support/error.h"

namespace orchid::fission::layout {

std::vector<int64_t> normalize_axes(const RuleContext& ctx, const std::vector<int64_t>& axes,
                                    int64_t rank, const std::string& what) {
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    ORCHID_USER_CHECK(a >= -rank && a < rank)
        << ctx.where() << what << " entry " << a << " is out of range for rank " << rank;
    int64_t n = a < 0 ? a + rank : a;
    ORCHID_USER_CHECK(std::find(out.begin(), out.end(), n) == out.end())
        << ctx.where() << what << " names axis " << n << " twice";
    out.push_back(n);
  }
  return out;
}

std::vector<int64_t> static_ints(const RuleContext& ctx, size_t k) {
  ctx.input(k);  // UserError when absent (const_ints would read past the node's inputs)
  return ctx.const_ints(k);
}

std::vector<double> static_floats(const RuleContext& ctx, size_t k) {
  ctx.input(k);
  return ctx.const_floats(k);
}

std::optional<std::vector<int64_t>> optional_ints(const RuleContext& ctx, size_t k) {
  if (!ctx.has_input(k)) return std::nullopt;
  return static_ints(ctx, k);
}

Expr affine(Expr i, int64_t mul, int64_t add) {
  if (mul != 1) i = i * mul;
  if (add > 0) i = i + add;
  if (add < 0) i = i - (-add);
  return i;
}

ValueId strided_slice(RuleContext& ctx, ValueId x, const std::vector<int64_t>& starts,
                      const ir::Dims& lens, const std::vector<int64_t>& steps,
                      const std::string& suffix) {
  ir::Dims s = ctx.graph().type(x).shape;
  ORCHID_CHECK(starts.size() == s.size() && lens.size() == s.size() && steps.size() == s.size())
      << "strided_slice of rank " << s.size();
  bool identity = true;
  for (size_t d = 0; d < s.size(); ++d)
    identity &= lens[d] == s[d] && (lens[d] <= 1 || (starts[d] == 0 && steps[d] == 1)) &&
                (lens[d] == 0 || starts[d] == 0);
  if (identity) return x;
  return remap(
      ctx, x, lens,
      [&](const std::vector<Expr>& i) {
        std::vector<Expr> idx;
        for (size_t d = 0; d < s.size(); ++d)
          idx.push_back(lens[d] == 1 ? ir::const_i64(starts[d])
                                     : affine(i[d], steps[d], starts[d]));
        return idx;
      },
      suffix);
}

std::vector<int64_t> required_attr_ints(const RuleContext& ctx, const std::string& name) {
  ORCHID_USER_CHECK(ctx.has_attr(name)) << ctx.where() << "attribute '" << name << "' is required";
  return ctx.attr_ints(name, {});
}

}  // namespace orchid::fission::layout
