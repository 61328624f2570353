// Scalar and index expressions: the bodies of primitives.
//
// One immutable expression tree serves both purposes. An *index expression* is an i64
// expression over loop variables built from Const, Var, Add, Sub, Mul, FloorDiv, Mod, Min,
// Max, Select, comparisons, And/Or/Not, Cast to i64 and Load of an integer tensor (an
// indirect index). A *scalar body* may use every operator. Loads are leaves of a body; the
// indices of a load are index expressions. Semantics: docs/ir.md.
//
// Expr is a cheap-to-copy handle to a shared, immutable node; build with the functions below.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "ir/dtype.h"

namespace orchid::ir {

enum class ExprOp : uint8_t {
#define ORCHID_EXPR(e, text, arity, cat, dom) e,
#include "ir/expr.def"
#undef ORCHID_EXPR
};

enum class ExprCategory : uint8_t { Leaf, Load, Unary, Binary, Compare, Select, Cast };

std::string_view expr_op_name(ExprOp op);
int expr_op_arity(ExprOp op);  // -1 for Load
ExprCategory expr_op_category(ExprOp op);
// The comparison operators alone, for code that dispatches only on them (a switch over
// CmpOp lists 6 cases, not every operator).
enum class CmpOp : uint8_t { Eq, Ne, Lt, Le, Gt, Ge };
std::optional<CmpOp> compare_kind(ExprOp op);  // nullopt for other operators
ExprOp compare_expr_op(CmpOp c);
// The unary and the binary operators alone, likewise (a switch over UnaryOp or BinaryOp lists
// that category's operators); each enum is expr.def's operators of its category, in order.
#define ORCHID_UNARY_Unary(e) e,
#define ORCHID_UNARY_Leaf(e)
#define ORCHID_UNARY_Load(e)
#define ORCHID_UNARY_Binary(e)
#define ORCHID_UNARY_Compare(e)
#define ORCHID_UNARY_Select(e)
#define ORCHID_UNARY_Cast(e)
#define ORCHID_BINARY_Binary(e) e,
#define ORCHID_BINARY_Leaf(e)
#define ORCHID_BINARY_Load(e)
#define ORCHID_BINARY_Unary(e)
#define ORCHID_BINARY_Compare(e)
#define ORCHID_BINARY_Select(e)
#define ORCHID_BINARY_Cast(e)
enum class UnaryOp : uint8_t {
#define ORCHID_EXPR(e, text, arity, cat, dom) ORCHID_UNARY_##cat(e)
#include "ir/expr.def"
#undef ORCHID_EXPR
};
enum class BinaryOp : uint8_t {
#define ORCHID_EXPR(e, text, arity, cat, dom) ORCHID_BINARY_##cat(e)
#include "ir/expr.def"
#undef ORCHID_EXPR
};
#undef ORCHID_UNARY_Unary
#undef ORCHID_UNARY_Leaf
#undef ORCHID_UNARY_Load
#undef ORCHID_UNARY_Binary
#undef ORCHID_UNARY_Compare
#undef ORCHID_UNARY_Select
#undef ORCHID_UNARY_Cast
#undef ORCHID_BINARY_Binary
#undef ORCHID_BINARY_Leaf
#undef ORCHID_BINARY_Load
#undef ORCHID_BINARY_Unary
#undef ORCHID_BINARY_Compare
#undef ORCHID_BINARY_Select
#undef ORCHID_BINARY_Cast
std::optional<UnaryOp> unary_kind(ExprOp op);    // nullopt for other operators
std::optional<BinaryOp> binary_kind(ExprOp op);  // nullopt for other operators
// Looks up an operator by its text name (Const, Var and Load have no call syntax).
bool parse_expr_op(std::string_view text, ExprOp* out);

// A typed constant: float dtypes use `f`, integers and bool use `i`.
struct Scalar {
  DType dtype = DType::F32;
  double f = 0;
  int64_t i = 0;
  static Scalar of(DType t, double v);  // converts v to t (rounding / truncating / wrapping)
  static Scalar of_int(DType t, int64_t v);
  double as_double() const;
  bool operator==(const Scalar& o) const;  // bitwise on f (NaN == NaN, -0 != +0)
};

// Loop variables: domain variables i0, i1, ... index the output; reduction variables
// r0, r1, ... range over the primitive's reduction domain.
enum class VarKind : uint8_t { Domain, Reduce };

class Expr;

struct ExprNode {
  ExprOp op = ExprOp::Const;
  DType dtype = DType::I64;
  Scalar value;            // Const: the constant. Load: the fill value when predicated.
  int32_t index = 0;       // Var: variable number. Load: input slot of the primitive.
  VarKind var_kind = VarKind::Domain;  // Var only
  bool predicated = false; // Load only: the last operand is a bool predicate
  std::vector<Expr> args;  // operands; for Load the indices (then the predicate)
};

class Expr {
 public:
  Expr() = default;
  explicit Expr(std::shared_ptr<const ExprNode> n) : node_(std::move(n)) {}
  bool defined() const { return node_ != nullptr; }
  const ExprNode* operator->() const { return node_.get(); }
  const ExprNode& operator*() const { return *node_; }
  const ExprNode* get() const { return node_.get(); }
  ExprOp op() const { return node_->op; }
  DType dtype() const { return node_->dtype; }
  const Expr& arg(size_t i) const { return node_->args[i]; }
  size_t num_args() const { return node_->args.size(); }

 private:
  std::shared_ptr<const ExprNode> node_;
};

// Structural equality and a stable structural hash.
bool equal(const Expr& a, const Expr& b);
uint64_t structural_hash(const Expr& e);

// ---- Construction. Operand dtypes are checked (InternalError on misuse). ----
Expr constant(Scalar s);
Expr const_i64(int64_t v);
Expr const_f(DType t, double v);
Expr const_bool(bool v);
Expr var(int32_t index, VarKind kind = VarKind::Domain);
inline Expr dvar(int32_t index) { return var(index, VarKind::Domain); }
inline Expr rvar(int32_t index) { return var(index, VarKind::Reduce); }
// load(slot, dtype, indices): element of input `slot` (of element type dtype).
Expr load(int32_t slot, DType dtype, std::vector<Expr> indices);
// A predicated load reads the element where `pred` holds and yields `fill` elsewhere; the
// indices need be in bounds only where pred holds.
Expr load_pred(int32_t slot, DType dtype, std::vector<Expr> indices, Expr pred, Scalar fill);
// The same load of a tensor of dtype t (the fill of a predicated load converted to t).
Expr retyped_load(const Expr& load, DType t);
Expr unary(ExprOp op, Expr a);
Expr binary(ExprOp op, Expr a, Expr b);  // Binary and Compare operators
Expr select(Expr cond, Expr a, Expr b);
Expr cast(DType to, Expr a);
// Generic constructor used by the parser and by rewriters: checks arity and dtypes.
Expr make_op(ExprOp op, DType cast_to, std::vector<Expr> args);

inline Expr operator+(Expr a, Expr b) { return binary(ExprOp::Add, std::move(a), std::move(b)); }
inline Expr operator-(Expr a, Expr b) { return binary(ExprOp::Sub, std::move(a), std::move(b)); }
inline Expr operator*(Expr a, Expr b) { return binary(ExprOp::Mul, std::move(a), std::move(b)); }
inline Expr operator/(Expr a, Expr b) { return binary(ExprOp::Div, std::move(a), std::move(b)); }
inline Expr operator+(Expr a, int64_t b) { return std::move(a) + const_i64(b); }
inline Expr operator-(Expr a, int64_t b) { return std::move(a) - const_i64(b); }
inline Expr operator*(Expr a, int64_t b) { return std::move(a) * const_i64(b); }
Expr floordiv(Expr a, int64_t b);
Expr mod(Expr a, int64_t b);

// `e` is a load of input `slot` at i0, i1, .., i{rank-1}, unpredicated: the operand read as it is.
bool is_identity_load(const Expr& e, int32_t slot, size_t rank);

// Visits every node once per occurrence, operands before the node (post-order).
template <class F>
void visit_post(const Expr& e, F&& f) {
  for (const Expr& a : e->args) visit_post(a, f);
  f(e);
}

// Rewrites bottom-up: fn(node with rewritten operands) -> replacement.
template <class F>
Expr map_post(const Expr& e, F&& fn) {
  if (e->args.empty()) return fn(e);
  std::vector<Expr> args;
  args.reserve(e->args.size());
  bool changed = false;
  for (const Expr& a : e->args) {
    args.push_back(map_post(a, fn));
    changed |= args.back().get() != a.get();
  }
  if (!changed) return fn(e);
  auto n = std::make_shared<ExprNode>(*e);
  n->args = std::move(args);
  return fn(Expr(std::move(n)));
}

}  // namespace orchid::ir
