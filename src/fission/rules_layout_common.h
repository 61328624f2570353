// Helpers shared by the layout, shape and constant rules (rules_layout*.cpp, rules_resize.cpp,
// rules_constant.cpp): axis lists, optional constant inputs, and strided slices as layout
// primitives. Candidates for builders.h once another family needs them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fission/builders.h"

namespace orchid::fission::layout {

// Each axis in [-rank, rank) normalised to [0, rank); UserError naming `what` when an axis is
// out of range or repeated.
std::vector<int64_t> normalize_axes(const RuleContext& ctx, const std::vector<int64_t>& axes,
                                    int64_t rank, const std::string& what = "axes");

// Input k as numbers (RuleContext::const_ints / const_floats: Unsupported unless it is a
// constant, since it decides the output's shape), and a UserError when the input is absent.
std::vector<int64_t> static_ints(const RuleContext& ctx, size_t k);
std::vector<double> static_floats(const RuleContext& ctx, size_t k);
// static_ints of input k when it is present, nullopt when omitted.
std::optional<std::vector<int64_t>> optional_ints(const RuleContext& ctx, size_t k);

// The index expression i * mul + add, without the trivial operations.
Expr affine(Expr i, int64_t mul, int64_t add);

// A strided slice: out[.., j, ..] = x[.., starts[d] + j * steps[d], ..] with out dim d of
// size lens[d]; x itself when the slice is the identity. Every index read must be in bounds.
ValueId strided_slice(RuleContext& ctx, ValueId x, const std::vector<int64_t>& starts,
                      const ir::Dims& lens, const std::vector<int64_t>& steps,
                      const std::string& suffix = "");

// The attribute `name` as a list of ints, UserError naming it when it is absent.
std::vector<int64_t> required_attr_ints(const RuleContext& ctx, const std::string& name);

}  // namespace orchid::fission::layout
