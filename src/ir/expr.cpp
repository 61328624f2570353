#include "ir/expr.h"

#include <array>
#include <bit>
#include <cmath>

#include "ir/tensor.h"
#include "support/error.h"
#include "support/hash.h"

namespace orchid::ir {

namespace {
enum class Domain : uint8_t { Any, Numeric, Float, Integral };
struct OpInfo {
  std::string_view name;
  int arity;
  ExprCategory cat;
  Domain domain;
};
constexpr OpInfo kOps[] = {
#define ORCHID_EXPR(e, text, arity, cat, dom) {text, arity, ExprCategory::cat, Domain::dom},
#include "ir/expr.def"
#undef ORCHID_EXPR
};
const OpInfo& op_info(ExprOp op) { return kOps[static_cast<size_t>(op)]; }

Expr make(ExprNode n) { return Expr(std::make_shared<const ExprNode>(std::move(n))); }

void check_domain(ExprOp op, DType t) {
  bool ok = true;
  switch (op_info(op).domain) {
    case Domain::Any: break;
    case Domain::Numeric: ok = !is_bool(t); break;
    case Domain::Float: ok = is_float(t); break;
    case Domain::Integral: ok = is_integral(t); break;
  }
  ORCHID_CHECK(ok) << expr_op_name(op) << " is not defined on " << dtype_name(t);
}

}  // namespace

std::string_view expr_op_name(ExprOp op) { return op_info(op).name; }
int expr_op_arity(ExprOp op) { return op_info(op).arity; }
ExprCategory expr_op_category(ExprOp op) { return op_info(op).cat; }

// expr.def lists eq, ne, lt, le, gt, ge consecutively, in CmpOp's order.
static_assert(static_cast<int>(ExprOp::Ge) - static_cast<int>(ExprOp::Eq) == 5 &&
              static_cast<int>(ExprOp::Lt) - static_cast<int>(ExprOp::Eq) == 2);

std::optional<CmpOp> compare_kind(ExprOp op) {
  if (expr_op_category(op) != ExprCategory::Compare) return std::nullopt;
  return static_cast<CmpOp>(static_cast<int>(op) - static_cast<int>(ExprOp::Eq));
}

namespace {

// Each operator's place among the operators of its category, in expr.def's order: its value
// in UnaryOp or BinaryOp, which list them in that order.
constexpr std::array<uint8_t, std::size(kOps)> kPlaceInCategory = [] {
  std::array<uint8_t, std::size(kOps)> out{};
  for (size_t i = 0; i < std::size(kOps); ++i)
    for (size_t j = 0; j < i; ++j) out[i] += kOps[j].cat == kOps[i].cat ? 1 : 0;
  return out;
}();

template <typename Kind>
std::optional<Kind> kind_in(ExprOp op, ExprCategory c) {
  if (expr_op_category(op) != c) return std::nullopt;
  return static_cast<Kind>(kPlaceInCategory[static_cast<size_t>(op)]);
}

}  // namespace

std::optional<UnaryOp> unary_kind(ExprOp op) { return kind_in<UnaryOp>(op, ExprCategory::Unary); }
std::optional<BinaryOp> binary_kind(ExprOp op) { return kind_in<BinaryOp>(op, ExprCategory::Binary); }

ExprOp compare_expr_op(CmpOp c) {
  return static_cast<ExprOp>(static_cast<int>(ExprOp::Eq) + static_cast<int>(c));
}

bool parse_expr_op(std::string_view text, ExprOp* out) {
  for (size_t i = 0; i < std::size(kOps); ++i) {
    auto op = static_cast<ExprOp>(i);
    if (op == ExprOp::Const || op == ExprOp::Var || op == ExprOp::Load) continue;
    if (kOps[i].name == text) {
      *out = op;
      return true;
    }
  }
  return false;
}

Scalar Scalar::of(DType t, double v) {
  Scalar s;
  s.dtype = t;
  if (is_float(t)) {
    s.f = round_to_dtype(v, t);
  } else {
    s.i = float_to_integral(v, t);
  }
  return s;
}

Scalar Scalar::of_int(DType t, int64_t v) {
  if (is_float(t)) return of(t, static_cast<double>(v));
  Scalar s;
  s.dtype = t;
  s.i = wrap_to_dtype(v, t);
  return s;
}

double Scalar::as_double() const {
  if (is_float(dtype)) return f;
  if (dtype == DType::U64) return static_cast<double>(static_cast<uint64_t>(i));
  return static_cast<double>(i);
}

bool Scalar::operator==(const Scalar& o) const {
  return dtype == o.dtype && i == o.i &&
         std::bit_cast<uint64_t>(f) == std::bit_cast<uint64_t>(o.f);
}

bool equal(const Expr& a, const Expr& b) {
  if (a.get() == b.get()) return true;
  if (!a.defined() || !b.defined()) return false;
  const ExprNode& x = *a;
  const ExprNode& y = *b;
  if (x.op != y.op || x.dtype != y.dtype || x.index != y.index || x.var_kind != y.var_kind ||
      x.predicated != y.predicated || !(x.value == y.value) || x.args.size() != y.args.size())
    return false;
  for (size_t i = 0; i < x.args.size(); ++i)
    if (!equal(x.args[i], y.args[i])) return false;
  return true;
}

uint64_t structural_hash(const Expr& e) {
  const ExprNode& n = *e;
  uint64_t h = fnv1a64(expr_op_name(n.op));
  auto mix = [&h](uint64_t v) {
    for (int k = 0; k < 8; ++k) {
      h ^= (v >> (8 * k)) & 0xff;
      h *= 0x100000001b3ull;
    }
  };
  mix(static_cast<uint64_t>(n.dtype));
  mix(static_cast<uint64_t>(n.index));
  mix(static_cast<uint64_t>(n.var_kind) * 2 + n.predicated);
  mix(static_cast<uint64_t>(n.value.i));
  mix(std::bit_cast<uint64_t>(n.value.f));
  for (const Expr& a : n.args) mix(structural_hash(a));
  return h;
}

Expr constant(Scalar s) {
  ExprNode n;
  n.op = ExprOp::Const;
  n.dtype = s.dtype;
  n.value = s;
  return make(std::move(n));
}
Expr const_i64(int64_t v) { return constant(Scalar::of_int(DType::I64, v)); }
Expr const_f(DType t, double v) {
  ORCHID_CHECK(is_float(t)) << "const_f of " << dtype_name(t);
  return constant(Scalar::of(t, v));
}
Expr const_bool(bool v) { return constant(Scalar::of_int(DType::Bool, v)); }

Expr var(int32_t index, VarKind kind) {
  ORCHID_CHECK(index >= 0) << "var " << index;
  ExprNode n;
  n.op = ExprOp::Var;
  n.dtype = DType::I64;
  n.index = index;
  n.var_kind = kind;
  return make(std::move(n));
}

static void check_indices(const std::vector<Expr>& indices) {
  for (const Expr& i : indices)
    ORCHID_CHECK(i.defined() && i.dtype() == DType::I64)
        << "load index of dtype " << (i.defined() ? dtype_name(i.dtype()) : "none");
}

Expr load(int32_t slot, DType dtype, std::vector<Expr> indices) {
  ORCHID_CHECK(slot >= 0) << "load slot " << slot;
  check_indices(indices);
  ExprNode n;
  n.op = ExprOp::Load;
  n.dtype = dtype;
  n.index = slot;
  n.value = Scalar::of_int(dtype, 0);
  n.args = std::move(indices);
  return make(std::move(n));
}

Expr retyped_load(const Expr& load, DType t) {
  ORCHID_CHECK(load.op() == ExprOp::Load) << "retyped_load of a " << expr_op_name(load.op());
  ExprNode n = *load;
  n.dtype = t;
  n.value = n.predicated ? Scalar::of(t, n.value.as_double()) : Scalar::of_int(t, 0);
  return make(std::move(n));
}

Expr load_pred(int32_t slot, DType dtype, std::vector<Expr> indices, Expr pred, Scalar fill) {
  ORCHID_CHECK(slot >= 0) << "load slot " << slot;
  check_indices(indices);
  ORCHID_CHECK(pred.defined() && pred.dtype() == DType::Bool) << "load predicate must be bool";
  ORCHID_CHECK(fill.dtype == dtype) << "fill of dtype " << dtype_name(fill.dtype)
                                    << " for a load of " << dtype_name(dtype);
  ExprNode n;
  n.op = ExprOp::Load;
  n.dtype = dtype;
  n.index = slot;
  n.value = fill;
  n.predicated = true;
  n.args = std::move(indices);
  n.args.push_back(std::move(pred));
  return make(std::move(n));
}

Expr unary(ExprOp op, Expr a) {
  ORCHID_CHECK(expr_op_category(op) == ExprCategory::Unary) << expr_op_name(op) << " is not unary";
  ORCHID_CHECK(a.defined()) << expr_op_name(op) << " of an undefined operand";
  DType t = a.dtype();
  check_domain(op, t);
  ExprNode n;
  n.op = op;
  n.dtype = (op == ExprOp::IsNan || op == ExprOp::IsInf) ? DType::Bool : t;
  n.args = {std::move(a)};
  return make(std::move(n));
}

Expr binary(ExprOp op, Expr a, Expr b) {
  ExprCategory cat = expr_op_category(op);
  ORCHID_CHECK(cat == ExprCategory::Binary || cat == ExprCategory::Compare)
      << expr_op_name(op) << " is not binary";
  ORCHID_CHECK(a.defined() && b.defined()) << expr_op_name(op) << " of an undefined operand";
  DType t = a.dtype();
  ORCHID_CHECK(b.dtype() == t) << expr_op_name(op) << " of " << dtype_name(t) << " and "
                               << dtype_name(b.dtype());
  check_domain(op, t);
  ExprNode n;
  n.op = op;
  n.dtype = cat == ExprCategory::Compare ? DType::Bool : t;
  n.args = {std::move(a), std::move(b)};
  return make(std::move(n));
}

Expr select(Expr cond, Expr a, Expr b) {
  ORCHID_CHECK(cond.defined() && a.defined() && b.defined()) << "select of an undefined operand";
  ORCHID_CHECK(cond.dtype() == DType::Bool) << "select condition of " << dtype_name(cond.dtype());
  ORCHID_CHECK(a.dtype() == b.dtype())
      << "select of " << dtype_name(a.dtype()) << " and " << dtype_name(b.dtype());
  ExprNode n;
  n.op = ExprOp::Select;
  n.dtype = a.dtype();
  n.args = {std::move(cond), std::move(a), std::move(b)};
  return make(std::move(n));
}

Expr cast(DType to, Expr a) {
  ORCHID_CHECK(a.defined()) << "cast of an undefined operand";
  ExprNode n;
  n.op = ExprOp::Cast;
  n.dtype = to;
  n.args = {std::move(a)};
  return make(std::move(n));
}

Expr make_op(ExprOp op, DType cast_to, std::vector<Expr> args) {
  int arity = expr_op_arity(op);
  ORCHID_CHECK(arity < 0 || static_cast<int>(args.size()) == arity)
      << expr_op_name(op) << " takes " << arity << " operands, given " << args.size();
  switch (expr_op_category(op)) {
    case ExprCategory::Unary: return unary(op, std::move(args[0]));
    case ExprCategory::Binary:
    case ExprCategory::Compare: return binary(op, std::move(args[0]), std::move(args[1]));
    case ExprCategory::Select: return select(std::move(args[0]), std::move(args[1]), std::move(args[2]));
    case ExprCategory::Cast: return cast(cast_to, std::move(args[0]));
    case ExprCategory::Leaf:
    case ExprCategory::Load: break;
  }
  ORCHID_CHECK(false) << "make_op cannot build " << expr_op_name(op);
  return {};
}

Expr floordiv(Expr a, int64_t b) { return binary(ExprOp::FloorDiv, std::move(a), const_i64(b)); }
Expr mod(Expr a, int64_t b) { return binary(ExprOp::Mod, std::move(a), const_i64(b)); }

bool is_identity_load(const Expr& e, int32_t slot, size_t rank) {
  if (e.op() != ExprOp::Load || e->predicated || e->index != slot || e.num_args() != rank) return false;
  for (size_t k = 0; k < rank; ++k) {
    const Expr& a = e.arg(k);
    if (a.op() != ExprOp::Var || a->var_kind != VarKind::Domain || a->index != static_cast<int32_t>(k))
      return false;
  }
  return true;
}

}  // namespace orchid::ir
