#include "superopt/abstract_program.h"

#include <string>
#include <variant>

#include "support/error.h"

namespace orchid::superopt {
namespace {

// What a value or a scalar expression abstracts to: a term; something that depends on no
// tensor (a constant, a loop variable); or nothing, with the reason.
struct Abs {
  enum class Kind : uint8_t { Term, Constant, Unsupported };
  Kind kind = Kind::Constant;
  AbsId id = -1;       // Term only
  std::string reason;  // Unsupported only

  static Abs term(AbsId id) { return Abs{Kind::Term, id, {}}; }
  static Abs constant() { return Abs{}; }
  static Abs unsupported(std::string why) { return Abs{Kind::Unsupported, -1, std::move(why)}; }
  bool is_term() const { return kind == Kind::Term; }
  bool is_constant() const { return kind == Kind::Constant; }
  bool failed() const { return kind == Kind::Unsupported; }
};

// "node 3 (%y = reduce max)".
std::string describe_node(const ir::Graph& g, int32_t index) {
  const ir::Primitive& p = g.node(ir::NodeId(index));
  std::string op(ir::prim_op_name(p.op));
  if (p.op == ir::PrimOp::Reduce) op += " " + std::string(ir::reduce_op_name(p.reduce));
  if (const auto* o = std::get_if<ir::OpaqueAttrs>(&p.attrs); o && p.op == ir::PrimOp::Opaque)
    op += " " + std::string(ir::opaque_routine_name(o->routine));
  std::string out = p.outputs.empty() ? "?" : g.value(p.outputs[0]).name;
  return "node " + std::to_string(index) + " (%" + out + " = " + op + ")";
}

bool has_load(const ir::Expr& e) {
  bool found = false;
  ir::visit_post(e, [&](const ir::Expr& n) { found = found || n.op() == ir::ExprOp::Load; });
  return found;
}

// Translates the scalar bodies of one primitive.
class BodyTranslator {
 public:
  BodyTranslator(const std::vector<Abs>& inputs, AbsPool& pool) : inputs_(inputs), pool_(pool) {}

  Abs expr(const ir::Expr& e) {
    switch (ir::expr_op_category(e.op())) {
      case ir::ExprCategory::Leaf:
        return Abs::constant();
      case ir::ExprCategory::Load:
        return inputs_[static_cast<size_t>(e->index)];
      case ir::ExprCategory::Unary:
        return unary(e);
      case ir::ExprCategory::Binary:
        return binary(e);
      case ir::ExprCategory::Select:
        return select(e);
      case ir::ExprCategory::Cast:
        return cast(e);
      case ir::ExprCategory::Compare:
        return outside(e);
    }
    return outside(e);
  }

 private:
  static Abs outside(const ir::Expr& e) {
    return Abs::unsupported("operator '" + std::string(ir::expr_op_name(e.op())) +
                            "' has no abstract expression");
  }

  Abs unary(const ir::Expr& e) {
    if (e.op() != ir::ExprOp::Neg && e.op() != ir::ExprOp::Exp) return outside(e);
    Abs a = expr(e.arg(0));
    if (!a.is_term() || e.op() == ir::ExprOp::Neg) return a;
    return Abs::term(pool_.exp(a.id));
  }

  Abs binary(const ir::Expr& e) {
    ir::ExprOp op = e.op();
    if (op != ir::ExprOp::Add && op != ir::ExprOp::Sub && op != ir::ExprOp::Mul && op != ir::ExprOp::Div)
      return outside(e);
    Abs a = expr(e.arg(0));
    if (a.failed()) return a;
    Abs b = expr(e.arg(1));
    if (b.failed()) return b;
    if (b.is_constant()) return a;  // x op c is x; c op c is a constant
    if (a.is_constant()) {
      if (op == ir::ExprOp::Div)
        return Abs::unsupported("'div' of a constant by a tensor (a reciprocal) has no abstract expression");
      return b;
    }
    if (op == ir::ExprOp::Mul) return Abs::term(pool_.mul(a.id, b.id));
    if (op == ir::ExprOp::Div) return Abs::term(pool_.div(a.id, b.id));
    return Abs::term(pool_.add(a.id, b.id));
  }

  Abs select(const ir::Expr& e) {
    if (has_load(e.arg(0)))
      return Abs::unsupported("'select' on tensor data has no abstract expression");
    Abs a = expr(e.arg(1));
    if (a.failed()) return a;
    Abs b = expr(e.arg(2));
    if (b.failed() || a.is_constant()) return b;
    if (b.is_constant() || a.id == b.id) return a;
    return Abs::unsupported("'select' between two different tensors has no abstract expression");
  }

  Abs cast(const ir::Expr& e) {
    Abs a = expr(e.arg(0));
    if (!a.is_term()) return a;
    if (ir::is_float(e.dtype()) && ir::is_float(e.arg(0).dtype())) return a;
    return Abs::unsupported("'cast' to " + std::string(ir::dtype_name(e.dtype())) +
                            " has no abstract expression");
  }

  const std::vector<Abs>& inputs_;
  AbsPool& pool_;
};

// sum(k, mul(A, B)) with k the contracted extent.
Abs matmul_term(const ir::Graph& g, const ir::Primitive& p, const std::vector<Abs>& in, AbsPool& pool) {
  const auto& attrs = std::get<ir::MatMulAttrs>(p.attrs);
  const ir::Dims& a_shape = g.type(p.inputs[0]).shape;
  ORCHID_CHECK(a_shape.size() >= 2) << "matmul operand of rank " << a_shape.size();
  int64_t k = a_shape[a_shape.size() - (attrs.trans_a ? 2 : 1)];
  if (k < 1) return Abs::unsupported("an empty contraction has no abstract expression");
  if (in[0].failed()) return in[0];
  if (in[1].failed()) return in[1];
  if (in[0].is_constant() && in[1].is_constant()) return Abs::constant();
  // A constant operand drops out of the product, as in bodies.
  AbsId product = in[0].is_constant()   ? in[1].id
                  : in[1].is_constant() ? in[0].id
                                        : pool.mul(in[0].id, in[1].id);
  return Abs::term(pool.sum(k, product));
}

// The abstraction of each output of node `index`.
std::vector<Abs> node_terms(const ir::Graph& g, int32_t index, const std::vector<Abs>& values,
                            AbsPool& pool) {
  const ir::Primitive& p = g.node(ir::NodeId(index));
  std::vector<Abs> in;
  for (ir::ValueId v : p.inputs) in.push_back(values[static_cast<size_t>(v.v)]);
  auto all = [&](Abs a) { return std::vector<Abs>(p.outputs.size(), a); };
  auto outside = [&](const std::string& why) { return all(Abs::unsupported(describe_node(g, index) + ": " + why)); };
  switch (p.op) {
    case ir::PrimOp::View:
      return all(in[0]);
    case ir::PrimOp::MatMul:
      return all(matmul_term(g, p, in, pool));
    case ir::PrimOp::Conv:
      return outside("'conv' has no abstract expression");
    case ir::PrimOp::Opaque:
      return outside("opaque routines have no abstract expression");
    case ir::PrimOp::Reduce:
      if (p.reduce != ir::ReduceOp::Sum)
        return outside("combiner '" + std::string(ir::reduce_op_name(p.reduce)) + "' has no abstract expression");
      if (ir::numel(p.reduce_domain) < 1) return outside("an empty reduction has no abstract expression");
      break;
    case ir::PrimOp::Elementwise:
    case ir::PrimOp::Broadcast:
    case ir::PrimOp::Layout:
      break;
  }
  BodyTranslator tr(in, pool);
  std::vector<Abs> out;
  for (const ir::Expr& body : p.bodies) {
    Abs a = tr.expr(body);
    if (a.failed() && a.reason.rfind("node ", 0) != 0) a.reason = describe_node(g, index) + ": " + a.reason;
    if (a.is_term() && p.op == ir::PrimOp::Reduce) a = Abs::term(pool.sum(ir::numel(p.reduce_domain), a.id));
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace

AbstractProgram abstract_program(const ir::Graph& g, AbsPool& pool) {
  std::vector<Abs> values(static_cast<size_t>(g.num_values()));
  const auto& inputs = g.inputs();
  for (size_t i = 0; i < inputs.size(); ++i)
    values[static_cast<size_t>(inputs[i].v)] = Abs::term(pool.input(static_cast<int64_t>(i)));
  for (int32_t v = 0; v < g.num_values(); ++v) {
    const ir::Value& val = g.value(ir::ValueId(v));
    if (val.origin == ir::ValueOrigin::Constant)
      values[static_cast<size_t>(v)] =
          Abs::term(pool.input(static_cast<int64_t>(inputs.size()) + val.constant));
  }
  for (int32_t n = 0; n < g.num_nodes(); ++n) {
    std::vector<Abs> outs = node_terms(g, n, values, pool);
    const ir::Primitive& p = g.node(ir::NodeId(n));
    for (size_t k = 0; k < p.outputs.size(); ++k) values[static_cast<size_t>(p.outputs[k].v)] = outs[k];
  }
  AbstractProgram result;
  for (ir::ValueId o : g.outputs()) {
    const Abs& a = values[static_cast<size_t>(o.v)];
    if (a.is_term()) {
      result.outputs.push_back(a.id);
      continue;
    }
    result.outputs.clear();
    result.unsupported = a.failed() ? a.reason : "output %" + g.value(o).name + " depends on no input tensor";
    break;
  }
  return result;
}

}  // namespace orchid::superopt
