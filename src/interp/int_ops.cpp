#include "interp/int_ops.h"

#include "support/error.h"

namespace orchid::interp {

int64_t int_unary(ir::ExprOp op, int64_t a, ir::DType t) {
  bool u64 = t == ir::DType::U64;
  switch (op) {
    case ir::ExprOp::Neg: return wneg(a);
    case ir::ExprOp::Abs: return u64 ? a : sabs(a);
    case ir::ExprOp::Sign: return u64 ? a != 0 : ssign(a);
    case ir::ExprOp::Not: return t == ir::DType::Bool ? !a : ~a;
    default: break;
  }
  ORCHID_CHECK(false) << ir::expr_op_name(op) << " is not a unary integer operator";
  return 0;
}

int64_t int_binary(ir::ExprOp op, int64_t a, int64_t b, ir::DType t) {
  bool u64 = t == ir::DType::U64;
  auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  auto s = [](uint64_t v) { return static_cast<int64_t>(v); };
  switch (op) {
    case ir::ExprOp::Add: return wrap_add(a, b);
    case ir::ExprOp::Sub: return wsub(a, b);
    case ir::ExprOp::Mul: return wrap_mul(a, b);
    case ir::ExprOp::Div: return u64 ? s(udiv(ua, ub)) : sdiv(a, b);
    case ir::ExprOp::FloorDiv: return u64 ? s(udiv(ua, ub)) : sfloordiv(a, b);
    case ir::ExprOp::Mod: return u64 ? s(umod(ua, ub)) : smod(a, b);
    case ir::ExprOp::Rem: return u64 ? s(umod(ua, ub)) : srem(a, b);
    case ir::ExprOp::Max: return int_less(a, b, u64) ? b : a;
    case ir::ExprOp::Min: return int_less(b, a, u64) ? b : a;
    case ir::ExprOp::And: return a & b;
    case ir::ExprOp::Or: return a | b;
    case ir::ExprOp::Xor: return a ^ b;
    case ir::ExprOp::Shl: return u64 ? s(shl_unsigned(ua, ub)) : shl_signed(a, b);
    case ir::ExprOp::Shr: return u64 ? s(shr_unsigned(ua, ub)) : shr_signed(a, b);
    default: break;
  }
  ORCHID_CHECK(false) << ir::expr_op_name(op) << " is not a binary integer operator";
  return 0;
}

bool int_compare(ir::CmpOp c, int64_t a, int64_t b, ir::DType t) {
  bool u64 = t == ir::DType::U64;
  bool less = int_less(a, b, u64), greater = int_less(b, a, u64);
  switch (c) {
    case ir::CmpOp::Eq: return !less && !greater;
    case ir::CmpOp::Ne: return less || greater;
    case ir::CmpOp::Lt: return less;
    case ir::CmpOp::Le: return !greater;
    case ir::CmpOp::Gt: return greater;
    case ir::CmpOp::Ge: return !less;
  }
  return false;
}

}  // namespace orchid::interp
