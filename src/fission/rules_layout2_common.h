// Helpers shared by the gather/scatter and layout-like rules (rules_gather.cpp,
// rules_scatter.cpp, rules_convtranspose.cpp, rules_layout2.cpp, Gather in
// rules_layout_slice.cpp, the losses' target classes in rules_loss.cpp): run-time indices read
// inside index expressions, negative-index normalisation, compile-time range checks of
// constant indices, and the dtype constraints that change between an operator's versions
// (with require_dtype and require_attr_since of linear_common.h). Header-only so that it
// needs no build-file entry; candidates for builders.h.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "fission/builders.h"
#include "fission/linear_common.h"
#include "ir/graph.h"
#include "support/error.h"

namespace orchid::fission::layout2 {

// "GatherND-12": the operator and the version of its schema, for messages.
inline std::string op_version(const RuleContext& ctx) {
  return ctx.node().op_type + "-" + std::to_string(ctx.version());
}

// UserError when input k is bf16 but the node's version predates `since`, the version whose
// type constraint added bfloat16.
inline void require_bf16_since(const RuleContext& ctx, size_t k, int64_t since) {
  ORCHID_USER_CHECK(ctx.dtype(k) != ir::DType::BF16 || ctx.version() >= since)
      << ctx.where() << "input " << k << " has dtype bf16, which " << ctx.node().op_type
      << " allows from version " << since << " (this node is " << op_version(ctx) << ")";
}

// An element of integer tensor v read inside an index expression (an indirect load), as i64.
inline Expr index_load(PrimBuilder& b, const ir::Graph& g, ValueId v, std::vector<Expr> idx) {
  Expr k = b.load(v, std::move(idx));
  return g.type(v).dtype == ir::DType::I64 ? k : ir::cast(ir::DType::I64, k);
}

// Index k along a dim of size n, counted from the end when negative: k < 0 ? k + n : k.
inline Expr from_end(Expr k, int64_t n) {
  return ir::select(ir::binary(ir::ExprOp::Lt, k, ir::const_i64(0)), k + n, k);
}

// The conjunction of bool index expressions (true when there are none).
inline Expr all_of(const std::vector<Expr>& terms) {
  if (terms.empty()) return ir::const_bool(true);
  Expr e = terms[0];
  for (size_t k = 1; k < terms.size(); ++k) e = ir::binary(ir::ExprOp::And, e, terms[k]);
  return e;
}

// Checks the elements of input k when it is a constant: element f must lie in
// [-dim_of(f), dim_of(f)) (UserError naming it and `dim`, the dim it indexes, otherwise). A
// u64 index of 2^63 or more is out of range, not a negative one. Returns whether any index
// may be negative (always true for a run-time input), i.e. whether from_end is needed.
inline bool check_static_indices(const RuleContext& ctx, size_t k,
                                 const std::function<int64_t(int64_t)>& dim_of,
                                 const std::string& dim = "a dim") {
  const ir::Tensor* c = ctx.constant(k);
  if (!c) return true;
  bool negative = false;
  for (int64_t f = 0; f < c->numel(); ++f) {
    int64_t v = c->get_i64(f), n = dim_of(f);
    bool u64_huge = c->dtype() == ir::DType::U64 && v < 0;
    ORCHID_USER_CHECK(!u64_huge && v >= -n && v < n)
        << ctx.where() << "index " << (u64_huge ? std::to_string(static_cast<uint64_t>(v)) : std::to_string(v))
        << " (element " << f << " of input " << k << ") is out of range for " << dim << " of size " << n;
    negative |= v < 0;
  }
  return negative;
}

}  // namespace orchid::fission::layout2
