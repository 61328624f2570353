// Verifier rules on expressions: typing per the operator table, variables in range (rule 4),
// loads and index expressions (rule 5), and the body shapes that elementwise, broadcast and
// layout primitives allow (rule 6). See docs/ir.md, "Rules the verifier checks".
#include "ir/printer.h"
#include "ir/verifier_internal.h"

namespace orchid::ir::detail {

namespace {

enum class Domain : uint8_t { Any, Numeric, Float, Integral };
constexpr Domain kDomains[] = {
#define ORCHID_EXPR(e, text, arity, cat, dom) Domain::dom,
#include "ir/expr.def"
#undef ORCHID_EXPR
};

bool in_domain(ExprOp op, DType t) {
  switch (kDomains[static_cast<size_t>(op)]) {
    case Domain::Any: return true;
    case Domain::Numeric: return !is_bool(t);
    case Domain::Float: return is_float(t);
    case Domain::Integral: return is_integral(t);
  }
  return false;
}

std::string snippet(const Expr& e) {
  std::string s = print_expr(e);
  return s.size() <= 80 ? s : s.substr(0, 77) + "...";
}

std::string dt(DType t) { return std::string(dtype_name(t)); }

// The dtype an operator node yields from well-typed operands (Cast: its own target).
DType result_dtype(ExprOp op, const std::vector<Expr>& args, DType cast_to) {
  switch (expr_op_category(op)) {
    case ExprCategory::Unary:
      return op == ExprOp::IsNan || op == ExprOp::IsInf ? DType::Bool : args[0].dtype();
    case ExprCategory::Binary: return args[0].dtype();
    case ExprCategory::Compare: return DType::Bool;
    case ExprCategory::Select: return args[1].dtype();
    case ExprCategory::Cast:
    case ExprCategory::Leaf:
    case ExprCategory::Load: break;
  }
  return cast_to;
}

std::string input_name(const NodeCheck& c, int32_t slot) {
  return print_value_name(c.g.value(c.p.inputs[static_cast<size_t>(slot)]).name);
}

// Calls f on every node of e (operands first), skipping missing operands.
template <class F>
void walk(const Expr& e, F&& f) {
  for (const Expr& a : e->args)
    if (a.defined()) walk(a, f);
  f(e);
}

// The typing rule of one node, given its operands' dtypes ("" when it holds).
std::string typing_problem(const ExprNode& n) {
  int arity = expr_op_arity(n.op);
  std::string name(expr_op_name(n.op));
  if (arity >= 0 && static_cast<int>(n.args.size()) != arity)
    return name + " takes " + std::to_string(arity) + " operands, has " +
           std::to_string(n.args.size());
  for (const Expr& a : n.args)
    if (!a.defined()) return "an operand of " + name + " is missing";
  auto arg = [&n](size_t i) { return n.args[i].dtype(); };
  switch (expr_op_category(n.op)) {
    case ExprCategory::Leaf:
      if (n.op == ExprOp::Var)
        return n.dtype == DType::I64 && n.index >= 0 ? "" : "malformed variable";
      return n.value.dtype == n.dtype
                 ? ""
                 : "constant of " + dt(n.value.dtype) + " typed " + dt(n.dtype);
    case ExprCategory::Load: {
      if (n.predicated && n.args.empty()) return "predicated load without a predicate";
      size_t num_idx = n.args.size() - (n.predicated ? 1 : 0);
      for (size_t i = 0; i < num_idx; ++i)
        if (arg(i) != DType::I64)
          return "load index " + std::to_string(i) + " is " + dt(arg(i)) + ", not i64";
      if (n.predicated && arg(num_idx) != DType::Bool)
        return "load predicate is " + dt(arg(num_idx)) + ", not bool";
      if (n.predicated && n.value.dtype != n.dtype)
        return "fill " + dt(n.value.dtype) + " of a " + dt(n.dtype) + " load";
      return n.index >= 0 ? "" : "negative load slot";
    }
    case ExprCategory::Unary:
    case ExprCategory::Binary:
    case ExprCategory::Compare:
    case ExprCategory::Select:
    case ExprCategory::Cast: break;
  }
  if (std::string p = operand_type_problem(n.op, n.args); !p.empty()) return p;
  DType want = result_dtype(n.op, n.args, n.dtype);
  return n.dtype == want ? "" : name + " typed " + dt(n.dtype) + ", not " + dt(want);
}

// Every node of e is typed per the table; reports each violation. Missing operands stop the
// walk below them.
bool check_typing(const NodeCheck& c, const Expr& e, const std::string& where) {
  bool ok = true;
  walk(e, [&](const Expr& x) {
    std::string problem = typing_problem(*x);
    if (problem.empty()) return;
    c.fail(where + ": " + problem + " in '" + snippet(x) + "'");
    ok = false;
  });
  return ok;
}

bool is_const(const Expr& e) { return e.op() == ExprOp::Const; }

std::string binary_index_problem(const ExprNode& n);

// Why e is not an index expression (docs/ir.md, "Index expressions"), or "". A load is a
// leaf here: its own indices are checked where the walk reaches it.
std::string index_problem(const Expr& e) {
  const ExprNode& n = *e;
  std::string name(expr_op_name(n.op));
  auto args_problem = [&n]() -> std::string {
    for (const Expr& a : n.args)
      if (std::string p = index_problem(a); !p.empty()) return p;
    return "";
  };
  switch (expr_op_category(n.op)) {
    case ExprCategory::Leaf:
      return n.op == ExprOp::Var || is_integral(n.dtype) ? "" : "a " + dt(n.dtype) + " constant";
    case ExprCategory::Load:
      return is_int(n.dtype)
                 ? ""
                 : "a load of a " + dt(n.dtype) + " tensor (indirect loads read integer tensors)";
    case ExprCategory::Cast:
      if (n.dtype != DType::I64 && n.dtype != DType::Bool) return "a cast to " + dt(n.dtype);
      return args_problem();
    case ExprCategory::Unary:
      if (n.op != ExprOp::Not) return name + " (not allowed in an index expression)";
      if (n.dtype != DType::Bool) return name + " of " + dt(n.dtype);
      return args_problem();
    case ExprCategory::Binary:
      if (std::string p = binary_index_problem(n); !p.empty()) return p;
      return args_problem();
    case ExprCategory::Compare:
      if (n.args[0].dtype() != DType::I64 && n.args[0].dtype() != DType::Bool)
        return name + " of " + dt(n.args[0].dtype());
      return args_problem();
    case ExprCategory::Select:
      if (n.dtype != DType::I64 && n.dtype != DType::Bool) return "select of " + dt(n.dtype);
      return args_problem();
  }
  return "";
}

// The operator-specific restrictions of a binary operator in an index expression.
std::string binary_index_problem(const ExprNode& n) {
  std::string name(expr_op_name(n.op));
  bool i64 = n.dtype == DType::I64;
  switch (*binary_kind(n.op)) {
    case BinaryOp::Add:
    case BinaryOp::Sub: return i64 ? "" : name + " of " + dt(n.dtype);
    case BinaryOp::Min:
    case BinaryOp::Max: return i64 || n.dtype == DType::Bool ? "" : name + " of " + dt(n.dtype);
    case BinaryOp::Mul:
      if (!i64) return name + " of " + dt(n.dtype);
      return is_const(n.args[0]) || is_const(n.args[1]) ? "" : "mul without a constant operand";
    case BinaryOp::FloorDiv:
    case BinaryOp::Mod:
      if (!i64) return name + " of " + dt(n.dtype);
      return is_const(n.args[1]) && n.args[1]->value.i > 0
                 ? ""
                 : name + " whose right operand is not a positive constant";
    case BinaryOp::And:
    case BinaryOp::Or: return n.dtype == DType::Bool ? "" : name + " of " + dt(n.dtype);
    case BinaryOp::Div:
    case BinaryOp::Rem:
    case BinaryOp::Pow:
    case BinaryOp::Xor:
    case BinaryOp::Shl:
    case BinaryOp::Shr: break;
  }
  return name + " (not allowed in an index expression)";
}

void check_var(const NodeCheck& c, const ExprNode& n, const std::string& where) {
  bool domain = n.var_kind == VarKind::Domain;
  size_t rank = domain ? c.p.domain.size() : c.p.reduce_domain.size();
  if (static_cast<size_t>(n.index) < rank) return;
  c.fail(where + ": variable " + (domain ? "i" : "r") + std::to_string(n.index) +
         " out of range (the " + (domain ? "domain" : "reduction domain") + " has rank " +
         std::to_string(rank) + ")");
}

void check_load_indices(const NodeCheck& c, const Expr& load, const Dims& shape,
                        const std::string& what) {
  const ExprNode& n = *load;
  for (size_t j = 0; j < shape.size(); ++j) {
    const Expr& idx = n.args[j];
    if (std::string p = index_problem(idx); !p.empty())
      c.fail(what + ": index " + std::to_string(j) + " '" + snippet(idx) +
             "' is not an index expression: " + p);
    if (is_const(idx) && (idx->value.i < 0 || idx->value.i >= shape[j]))
      c.fail(what + ": constant index " + std::to_string(idx->value.i) + " out of bounds of dim " +
             std::to_string(j) + " (size " + std::to_string(shape[j]) + ")");
  }
  if (!n.predicated) return;
  if (std::string p = index_problem(n.args.back()); !p.empty())
    c.fail(what + ": predicate '" + snippet(n.args.back()) + "' is not an index expression: " + p);
}

void check_load(const NodeCheck& c, const Expr& load, const std::string& where) {
  const ExprNode& n = *load;
  std::string what = where + ": load '" + snippet(load) + "'";
  if (static_cast<size_t>(n.index) >= c.p.inputs.size()) {
    c.fail(what + " reads slot " + std::to_string(n.index) + " but the node has " +
           std::to_string(c.p.inputs.size()) + " inputs");
    return;
  }
  const TensorType& in = c.in_types[static_cast<size_t>(n.index)];
  what += " of " + input_name(c, n.index);
  if (n.dtype != in.dtype)
    c.fail(what + " is typed " + dt(n.dtype) + " but the input is " + type_str(in));
  size_t num_idx = n.args.size() - (n.predicated ? 1 : 0);
  if (num_idx != in.shape.size()) {
    c.fail(what + " has " + std::to_string(num_idx) + " indices for " + type_str(in));
    return;
  }
  check_load_indices(c, load, in.shape, what);
}

// Index j of a load (of an input of shape `in`) names domain variable `var` of matching extent,
// or is the constant 0 on a dim of size 1.
bool is_broadcast_index(const NodeCheck& c, const Expr& idx, const Dims& in, size_t j, size_t var) {
  if (is_const(idx)) return idx->value.i == 0 && in[j] == 1;
  return idx.op() == ExprOp::Var && idx->var_kind == VarKind::Domain &&
         static_cast<size_t>(idx->index) == var && var < c.p.domain.size() &&
         in[j] == c.p.domain[var];
}

}  // namespace

std::string operand_type_problem(ExprOp op, const std::vector<Expr>& args) {
  std::string name(expr_op_name(op));
  auto arg = [&args](size_t i) { return args[i].dtype(); };
  switch (expr_op_category(op)) {
    case ExprCategory::Unary:
      return in_domain(op, arg(0)) ? "" : name + " is not defined on " + dt(arg(0));
    case ExprCategory::Binary:
    case ExprCategory::Compare:
      if (arg(0) != arg(1)) return name + " of " + dt(arg(0)) + " and " + dt(arg(1));
      return in_domain(op, arg(0)) ? "" : name + " is not defined on " + dt(arg(0));
    case ExprCategory::Select:
      if (arg(0) != DType::Bool) return "select condition is " + dt(arg(0)) + ", not bool";
      return arg(1) == arg(2) ? "" : "select of " + dt(arg(1)) + " and " + dt(arg(2));
    case ExprCategory::Cast:
    case ExprCategory::Leaf:
    case ExprCategory::Load: return "";
  }
  return "";
}

bool check_bodies(const NodeCheck& c) {
  bool typed = true;
  for (size_t k = 0; k < c.p.bodies.size(); ++k) {
    std::string where = "body " + std::to_string(k);
    const Expr& body = c.p.bodies[k];
    if (!body.defined()) {
      c.fail(where + " is missing");
      typed = false;
      continue;
    }
    if (!check_typing(c, body, where)) {
      typed = false;
      continue;
    }
    walk(body, [&](const Expr& x) {
      if (x.op() == ExprOp::Var) check_var(c, *x, where);
      if (x.op() == ExprOp::Load && c.inputs_ok) check_load(c, x, where);
    });
  }
  return typed;
}

void check_elementwise_loads(const NodeCheck& c) {
  size_t n = c.p.domain.size();
  for (size_t k = 0; k < c.p.bodies.size(); ++k) {
    walk(c.p.bodies[k], [&](const Expr& x) {
      if (x.op() != ExprOp::Load || static_cast<size_t>(x->index) >= c.in_types.size()) return;
      const Dims& in = c.in_types[static_cast<size_t>(x->index)].shape;
      std::string what = "body " + std::to_string(k) + ": elementwise load '" + snippet(x) + "'";
      if (in.size() > n) {
        c.fail(what + " reads a tensor of higher rank than the domain");
        return;
      }
      for (size_t j = 0; j < in.size() && j < x->args.size(); ++j) {
        size_t var = n - in.size() + j;
        if (is_broadcast_index(c, x->args[j], in, j, var)) continue;
        c.fail(what + ": index " + std::to_string(j) + " must be i" + std::to_string(var) +
               " of the same extent, or 0 on a dim of size 1 (numpy-style broadcasting)");
      }
    });
  }
}

void check_broadcast_body(const NodeCheck& c) {
  if (c.p.bodies.size() != 1) {
    c.fail("broadcast has one body, found " + std::to_string(c.p.bodies.size()));
    return;
  }
  const Expr& b = c.p.bodies[0];
  if (b.op() != ExprOp::Load || b->predicated) {
    c.fail("broadcast body must be a single unpredicated load, found '" + snippet(b) + "'");
    return;
  }
  if (static_cast<size_t>(b->index) >= c.in_types.size()) return;
  const Dims& in = c.in_types[static_cast<size_t>(b->index)].shape;
  int64_t last_var = -1;
  for (size_t j = 0; j < in.size() && j < b->args.size(); ++j) {
    const Expr& idx = b->args[j];
    bool is_var = idx.op() == ExprOp::Var && idx->var_kind == VarKind::Domain;
    size_t var = is_var ? static_cast<size_t>(idx->index) : 0;
    bool ok = is_var ? idx->index > last_var && is_broadcast_index(c, idx, in, j, var)
                     : is_broadcast_index(c, idx, in, j, 0);
    if (is_var) last_var = idx->index;
    if (ok) continue;
    c.fail("broadcast index " + std::to_string(j) + " '" + snippet(idx) +
           "' must be a domain variable of the same extent (in increasing order) or 0 on a dim "
           "of size 1");
  }
}

void check_layout_bodies(const NodeCheck& c) {
  for (size_t k = 0; k < c.p.bodies.size(); ++k) {
    // The first part of the body that is not a load, a constant or a select between them.
    Expr bad;
    std::vector<Expr> todo = {c.p.bodies[k]};
    while (!todo.empty() && !bad.defined()) {
      Expr e = todo.back();
      todo.pop_back();
      if (e.op() == ExprOp::Load || e.op() == ExprOp::Const) continue;
      if (e.op() != ExprOp::Select) {
        bad = e;
        continue;
      }
      if (std::string p = index_problem(e.arg(0)); !p.empty())
        c.fail("body " + std::to_string(k) + ": layout select condition '" + snippet(e.arg(0)) +
               "' is not an index expression: " + p);
      todo.push_back(e.arg(1));
      todo.push_back(e.arg(2));
    }
    if (bad.defined())
      c.fail("body " + std::to_string(k) +
             ": layout bodies are made only of loads, constants "
             "and selects, found '" +
             snippet(bad) + "'");
  }
}

}  // namespace orchid::ir::detail
