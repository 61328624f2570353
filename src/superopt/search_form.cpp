// The search form of a LAX program (search_form.h).
#include "superopt/search_form.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "support/error.h"

namespace orchid::superopt {

namespace {

using ir::Expr;
using ir::NodeId;
using ir::ValueId;

// The constant factor of an elementwise x·c, c·x or x/c over one input, or none.
std::optional<double> constant_scale(const ir::Graph& g, const ir::Primitive& p) {
  if (p.op != ir::PrimOp::Elementwise || p.inputs.size() != 1 || p.outputs.size() != 1 || p.bodies.size() != 1 ||
      g.type(p.inputs[0]).shape != p.domain || !ir::is_float(g.type(p.inputs[0]).dtype))
    return std::nullopt;
  const Expr& b = p.bodies[0];
  if (b.op() != ir::ExprOp::Mul && b.op() != ir::ExprOp::Div) return std::nullopt;
  size_t r = p.domain.size();
  for (size_t side = 0; side < 2; ++side) {
    if (side == 1 && b.op() == ir::ExprOp::Div) break;
    const Expr& x = b.arg(side);
    const Expr& c = b.arg(1 - side);
    if (!ir::is_identity_load(x, 0, r) || c.op() != ir::ExprOp::Const) continue;
    double f = c->value.as_double();
    if (b.op() == ir::ExprOp::Div) f = 1.0 / f;
    if (std::isfinite(f) && f != 0) return f;
  }
  return std::nullopt;
}

UOp step_of(UOpType t) {
  UOp s;
  s.type = t;
  return s;
}

class Former {
 public:
  explicit Former(const ir::Graph& p) : p_(p), users_(p.users()) {}

  SearchForm run() {
    SearchForm f;
    if (p_.outputs().size() != 1) {  // the search refuses it, saying why
      f.program = p_;
      f.input_steps.resize(p_.inputs().size());
      return f;
    }
    f.output_shape = p_.type(p_.outputs()[0]).shape;
    f.input_steps.resize(p_.inputs().size());
    for (size_t i = 0; i < p_.inputs().size(); ++i) boundary_.push_back(views_of(i, f.input_steps[i]));
    for (size_t i = 0; i < p_.inputs().size(); ++i) transpose(i, f.input_steps[i]);
    for (int32_t n = 0; n < p_.num_nodes(); ++n) move_scale(NodeId(n), f.input_steps);
    ValueId out = output_view();
    f.program = rebuild(f.input_steps, out);
    f.changed = out != p_.outputs()[0];
    for (const std::vector<UOp>& s : f.input_steps) f.changed = f.changed || !s.empty();
    return f;
  }

 private:
  // The node that alone reads v, where v is no output.
  std::optional<NodeId> only_reader(ValueId v) const {
    const std::vector<NodeId>& u = users_[static_cast<size_t>(v.v)];
    if (u.size() != 1 || v == p_.outputs()[0]) return std::nullopt;
    return u[0];
  }
  bool is_boundary(ValueId v) const { return std::find(boundary_.begin(), boundary_.end(), v) != boundary_.end(); }

  // Input i's chain of views, dropped; the value at its end.
  ValueId views_of(size_t i, std::vector<UOp>& steps) {
    ValueId v = p_.inputs()[i];
    for (std::optional<NodeId> n = only_reader(v); n && p_.node(*n).op == ir::PrimOp::View; n = only_reader(v)) {
      dropped_.insert(*n);
      v = p_.node(*n).outputs[0];
      UOp s = step_of(UOpType::Reshape);
      s.shape = p_.type(v).shape;
      steps.push_back(s);
    }
    return v;
  }

  // Input i read transposed by its one matmul: the transpose moves to the boundary.
  void transpose(size_t i, std::vector<UOp>& steps) {
    ValueId v = boundary_[i];
    std::optional<NodeId> n = only_reader(v);
    if (!n || p_.node(*n).op != ir::PrimOp::MatMul) return;  // (a matmul of v by itself reads it twice)
    const ir::Primitive& m = p_.node(*n);
    ir::MatMulAttrs& a = matmul_attrs(*n);
    bool& flag = m.inputs[0] == v ? a.trans_a : a.trans_b;
    size_t r = p_.type(v).shape.size();
    if (!flag || r < 2) return;
    flag = false;
    UOp s = step_of(UOpType::Transpose);
    for (size_t d = 0; d < r; ++d) s.shape.push_back(static_cast<int64_t>(d));
    std::swap(s.shape[r - 1], s.shape[r - 2]);
    steps.push_back(s);
  }

  ir::MatMulAttrs& matmul_attrs(NodeId n) {
    auto at = attrs_.find(n);
    if (at == attrs_.end()) at = attrs_.emplace(n, std::get<ir::MatMulAttrs>(p_.node(n).attrs)).first;
    return at->second;
  }

  // A constant scale of a matmul's result, which nothing else reads, onto the smaller operand
  // that is a boundary value the matmul alone reads.
  void move_scale(NodeId e, std::vector<std::vector<UOp>>& steps) {
    const ir::Primitive& p = p_.node(e);
    std::optional<double> c = constant_scale(p_, p);
    if (!c || dropped_.count(e)) return;
    ValueId s = p.inputs[0];
    const ir::Value& sv = p_.value(s);
    if (sv.origin != ir::ValueOrigin::Node || only_reader(s) != e) return;
    const ir::Primitive& m = p_.node(sv.node);
    if (m.op != ir::PrimOp::MatMul) return;
    std::optional<size_t> best;
    for (size_t k = 0; k < 2; ++k) {
      auto at = std::find(boundary_.begin(), boundary_.end(), m.inputs[k]);
      if (at == boundary_.end() || only_reader(m.inputs[k]) != sv.node) continue;
      auto i = static_cast<size_t>(at - boundary_.begin());
      if (!best || ir::numel(p_.type(m.inputs[k]).shape) < ir::numel(p_.type(boundary_[*best]).shape)) best = i;
    }
    if (!best) return;
    UOp step = step_of(UOpType::Scale);
    step.factor = *c;
    steps[*best].push_back(step);
    dropped_.insert(e);
    same_as_.emplace(p.outputs[0], s);
  }

  // The output's chain of views, dropped; the value at its start.
  ValueId output_view() {
    ValueId v = p_.outputs()[0];
    for (;;) {
      const ir::Value& val = p_.value(v);
      if (val.origin != ir::ValueOrigin::Node) return v;
      const ir::Primitive& n = p_.node(val.node);
      ValueId from = n.op == ir::PrimOp::View ? n.inputs[0] : v;
      if (from == v || is_boundary(from) || dropped_.count(val.node) || users_[static_cast<size_t>(from.v)].size() != 1)
        return v;
      dropped_.insert(val.node);
      v = from;
    }
  }

  ValueId mapped(ValueId v) const {
    auto s = same_as_.find(v);
    return nv_.at(s == same_as_.end() ? v : s->second);
  }

  ir::Graph rebuild(const std::vector<std::vector<UOp>>& steps, ValueId out) {
    ir::Graph q;
    q.name = p_.name;
    for (size_t i = 0; i < p_.inputs().size(); ++i) {
      ir::TensorType t = p_.type(p_.inputs()[i]);
      for (const UOp& s : steps[i]) t.shape = infer_shapes(s, {t.shape}, nullptr).out.at(0);
      nv_[boundary_[i]] = q.add_input(p_.value(boundary_[i]).name, t);
    }
    for (int32_t v = 0; v < p_.num_values(); ++v)
      if (p_.value(ValueId(v)).origin == ir::ValueOrigin::Constant)
        nv_[ValueId(v)] = q.add_constant(p_.value(ValueId(v)).name, p_.constant(ValueId(v)));
    for (int32_t n = 0; n < p_.num_nodes(); ++n) {
      if (dropped_.count(NodeId(n))) continue;
      ir::Primitive c = p_.node(NodeId(n));
      for (ValueId& v : c.inputs) v = mapped(v);
      auto a = attrs_.find(NodeId(n));
      if (a != attrs_.end()) c.attrs = a->second;
      std::vector<ir::TensorType> types;
      std::vector<std::string> names;
      std::vector<ValueId> outs = c.outputs;
      for (ValueId v : outs) {
        types.push_back(p_.type(v));
        names.push_back(p_.value(v).name);
      }
      NodeId made = q.add_node(std::move(c), types, names);
      for (size_t k = 0; k < outs.size(); ++k) nv_[outs[k]] = q.node(made).outputs[k];
    }
    q.set_outputs({mapped(out)});
    return q;
  }

  const ir::Graph& p_;
  std::vector<std::vector<NodeId>> users_;
  std::vector<ValueId> boundary_;  // per input: the value its searched input stands for
  std::set<NodeId> dropped_;       // nodes moved to the boundary
  std::map<NodeId, ir::MatMulAttrs> attrs_;  // matmuls that read an input as it is now
  std::map<ValueId, ValueId> same_as_;       // a moved scale's result: its operand
  std::map<ValueId, ValueId> nv_;            // value of the program -> of the search form
};

// A name for a new tensor of u: `want`, else `want`.1, .2, ...
std::string fresh(const UGraph& u, const std::string& want) {
  std::string n = want;
  for (int k = 1; u.find(n); ++k) n = want + "." + std::to_string(k);
  return n;
}

// The tensor that will be named `name`: whatever holds the name now is renamed.
TensorId add_named(UGraph& u, const std::string& name, ir::DType dtype, const ir::Dims& shape) {
  if (std::optional<TensorId> held = u.find(name)) u.tensors[static_cast<size_t>(*held)].name = fresh(u, name + ".s");
  return u.add_tensor(name, dtype, shape, Level::Kernel);
}

}  // namespace

SearchForm search_form(const ir::Graph& program) { return Former(program).run(); }

std::string describe(const SearchForm& f) {
  std::string s;
  for (size_t i = 0; i < f.input_steps.size(); ++i) {
    if (f.input_steps[i].empty()) continue;
    s += std::string(s.empty() ? "" : ", ") + "input " + std::to_string(i + 1) + " by";
    for (const UOp& step : f.input_steps[i]) s += " " + std::string(uop_name(step.type));
  }
  if (f.program.type(f.program.outputs()[0]).shape != f.output_shape)
    s += std::string(s.empty() ? "" : ", ") + "output by reshape";
  return s;
}

UGraph attach(const SearchForm& form, const ir::Graph& program, const UGraph& found) {
  ORCHID_CHECK(found.inputs.size() == form.input_steps.size() && found.outputs.size() == 1)
      << "the μGraph does not compute the search form";
  if (!form.changed) return found;
  UGraph u = found;
  std::vector<UOp> front;
  for (size_t i = 0; i < form.input_steps.size(); ++i) {
    const std::vector<UOp>& steps = form.input_steps[i];
    if (steps.empty()) continue;
    TensorId searched = u.inputs[i];
    const ir::Value& in = program.value(program.inputs()[i]);
    TensorId t = add_named(u, in.name, u.tensor(searched).dtype, in.type.shape);
    u.inputs[i] = t;
    for (size_t k = 0; k < steps.size(); ++k) {
      UOp op = steps[k];
      Shapes s = infer_shapes(op, {u.shape(t)}, nullptr);
      ORCHID_CHECK(s.error.empty()) << s.error;
      TensorId r = k + 1 == steps.size()
                       ? searched
                       : u.add_tensor(fresh(u, in.name + "." + std::string(uop_name(op.type))), u.tensor(t).dtype,
                                      s.out[0], Level::Kernel);
      ORCHID_CHECK(u.shape(r) == s.out[0]) << "the boundary of input " << in.name << " gives " << ir::dims_str(s.out[0])
                                           << ", the μGraph reads " << ir::dims_str(u.shape(r));
      op.inputs = {t};
      op.outputs = {r};
      front.push_back(op);
      t = r;
    }
  }
  u.ops.insert(u.ops.begin(), front.begin(), front.end());
  TensorId out = u.outputs[0];
  if (u.shape(out) != form.output_shape) {
    const ir::Value& o = program.value(program.outputs()[0]);
    UOp view;
    view.type = UOpType::Reshape;
    view.shape = form.output_shape;
    view.inputs = {out};
    view.outputs = {add_named(u, o.name, u.tensor(out).dtype, form.output_shape)};
    u.ops.push_back(view);
    u.outputs = view.outputs;
  }
  return u;
}

}  // namespace orchid::superopt
