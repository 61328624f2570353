// Compiles primitive bodies to lane programs (program.h).
#include <map>
#include <tuple>

#include "interp/program.h"
#include "support/error.h"

namespace orchid::interp::detail {

using ir::Expr;
using ir::ExprCategory;
using ir::ExprOp;

namespace {

class Compiler {
 public:
  explicit Compiler(const CompileInfo& info) : info_(info) {}

  Program finish(const std::vector<Expr>& bodies) {
    for (const Expr& b : bodies) prog_.bodies.push_back(full(emit(b, -1)));
    return std::move(prog_);
  }

 private:
  int32_t new_reg(bool is_float, bool uniform) {
    prog_.regs.push_back({is_float, uniform});
    return static_cast<int32_t>(prog_.regs.size() - 1);
  }
  bool uniform(int32_t reg) const { return reg < 0 || prog_.regs[reg].uniform; }

  bool has_load(const Expr& e) {
    auto it = has_load_.find(e.get());
    if (it != has_load_.end()) return it->second;
    bool any = e.op() == ExprOp::Load;
    for (const Expr& a : e->args) any = has_load(a) || any;
    has_load_[e.get()] = any;
    return any;
  }

  // The register of e evaluated on the lanes of `mask` (-1: all lanes).
  int32_t emit(const Expr& e, int32_t mask) {
    if (!has_load(e)) mask = -1;  // without loads, inactive lanes cannot fail
    auto key = std::make_pair(e.get(), mask);
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
    int32_t r = emit_new(e, mask);
    memo_[key] = r;
    return r;
  }

  int32_t emit_new(const Expr& e, int32_t mask) {
    switch (ir::expr_op_category(e.op())) {
      case ExprCategory::Leaf: return e.op() == ExprOp::Var ? emit_var(e) : emit_const(e->value);
      case ExprCategory::Load: return emit_load(e, mask);
      case ExprCategory::Select: return emit_select(e, mask);
      case ExprCategory::Unary:
      case ExprCategory::Binary:
      case ExprCategory::Compare:
      case ExprCategory::Cast: {
        std::vector<int32_t> args;
        for (const Expr& a : e->args) args.push_back(emit(a, mask));
        return emit_op(e.op(), e.dtype(), e.arg(0).dtype(), args);
      }
    }
    ORCHID_CHECK(false) << "unknown expression category";
    return -1;
  }

  int32_t emit_const(const ir::Scalar& s) {
    Instr in;
    in.kind = InstrKind::Const;
    in.dtype = s.dtype;
    in.value = s;
    in.dst = new_reg(ir::is_float(s.dtype), true);
    prog_.init.push_back(in);
    return in.dst;
  }

  int32_t emit_var(const Expr& e) {
    ORCHID_CHECK(e.dtype() == ir::DType::I64) << "variable of dtype " << ir::dtype_name(e.dtype());
    auto key = std::make_pair(e->var_kind, e->index);
    auto it = var_memo_.find(key);
    if (it != var_memo_.end()) return it->second;
    bool varies = e->var_kind == ir::VarKind::Domain ? info_.domain_varies : info_.reduce_varies;
    int32_t r = new_reg(false, !varies);
    prog_.vars.push_back({e->var_kind, e->index, r});
    var_memo_[key] = r;
    return r;
  }

  int32_t emit_op(ExprOp op, ir::DType dtype, ir::DType arg_dtype, std::vector<int32_t> args) {
    auto key = std::make_tuple(op, dtype, args);
    auto it = op_memo_.find(key);
    if (it != op_memo_.end()) return it->second;
    bool uni = true;
    for (int32_t a : args) uni = uni && uniform(a);
    if (!uni)
      for (int32_t& a : args) a = full(a);
    Instr in;
    in.kind = InstrKind::Op;
    in.op = op;
    in.dtype = dtype;
    in.arg_dtype = arg_dtype;
    for (size_t k = 0; k < args.size(); ++k) in.args[k] = args[k];
    in.dst = new_reg(ir::is_float(dtype), uni);
    prog_.code.push_back(in);
    op_memo_[key] = in.dst;
    return in.dst;
  }

  // A varying copy of a uniform register (the register itself when varying).
  int32_t full(int32_t reg) {
    if (!uniform(reg)) return reg;
    auto it = full_.find(reg);
    if (it != full_.end()) return it->second;
    Instr in;
    in.kind = InstrKind::Broadcast;
    in.args[0] = reg;
    in.dst = new_reg(prog_.regs[reg].is_float, false);
    prog_.code.push_back(in);
    full_[reg] = in.dst;
    return in.dst;
  }

  // Lanes of `mask` (all when -1) where the bool register c holds (or fails, when negate).
  int32_t and_mask(int32_t mask, int32_t c, bool negate) {
    using ir::DType;
    if (negate) c = emit_op(ExprOp::Not, DType::Bool, DType::Bool, {c});
    if (mask < 0) return c;
    return emit_op(ExprOp::And, DType::Bool, DType::Bool, {mask, c});
  }

  int32_t emit_select(const Expr& e, int32_t mask) {
    int32_t c = emit(e.arg(0), mask);
    int32_t a = emit(e.arg(1), has_load(e.arg(1)) ? and_mask(mask, c, false) : -1);
    int32_t b = emit(e.arg(2), has_load(e.arg(2)) ? and_mask(mask, c, true) : -1);
    return emit_op(ExprOp::Select, e.dtype(), ir::DType::Bool, {c, a, b});
  }

  // Whether the load reads input element (flat domain point) for every domain point.
  bool is_contiguous(const Expr& e, size_t rank) const {
    auto slot = static_cast<size_t>(e->index);
    if (!info_.domain_varies || slot >= info_.input_shapes.size() ||
        info_.input_shapes[slot] != info_.domain || rank != info_.domain.size())
      return false;
    for (size_t d = 0; d < rank; ++d) {
      const Expr& i = e.arg(d);
      if (i.op() != ExprOp::Var || i->var_kind != ir::VarKind::Domain ||
          i->index != static_cast<int32_t>(d))
        return false;
    }
    return true;
  }

  int32_t emit_load(const Expr& e, int32_t mask) {
    size_t rank = e->args.size() - (e->predicated ? 1 : 0);
    if (e->predicated) mask = and_mask(mask, emit(e->args.back(), mask), false);
    Instr in;
    in.kind = InstrKind::Load;
    in.dtype = e.dtype();
    in.slot = e->index;
    in.value = e->value;
    if (is_contiguous(e, rank)) {
      in.contiguous = true;
      in.mask = e->predicated ? full(mask) : -1;  // in bounds anyway: only a fill needs it
      in.dst = new_reg(ir::is_float(e.dtype()), false);
      prog_.code.push_back(in);
      return in.dst;
    }
    bool uni = uniform(mask);
    for (size_t d = 0; d < rank; ++d) {
      in.index.push_back(emit(e.arg(d), mask));
      uni = uni && uniform(in.index.back());
    }
    in.mask = (mask >= 0 && !uni) ? full(mask) : mask;
    in.dst = new_reg(ir::is_float(e.dtype()), uni);
    prog_.code.push_back(in);
    return in.dst;
  }

  const CompileInfo& info_;
  Program prog_;
  std::map<const ir::ExprNode*, bool> has_load_;
  std::map<std::pair<const ir::ExprNode*, int32_t>, int32_t> memo_;
  std::map<std::tuple<ExprOp, ir::DType, std::vector<int32_t>>, int32_t> op_memo_;
  std::map<int32_t, int32_t> full_;
  std::map<std::pair<ir::VarKind, int32_t>, int32_t> var_memo_;
};

}  // namespace

Program compile_bodies(const std::vector<Expr>& bodies, const CompileInfo& info) {
  Compiler c(info);
  return c.finish(bodies);
}

}  // namespace orchid::interp::detail
