#include "superopt/dim_classes.h"

#include <map>
#include <numeric>

namespace orchid::superopt {

namespace {

class Classes {
 public:
  explicit Classes(const ir::Graph& g) {
    for (int32_t v = 0; v < g.num_values(); ++v) {
      first_.push_back(static_cast<int32_t>(parent_.size()));
      for (size_t d = 0; d < g.type(ir::ValueId{v}).shape.size(); ++d) add();
    }
  }
  int32_t axis(ir::ValueId v, size_t d) const { return first_[static_cast<size_t>(v.v)] + static_cast<int32_t>(d); }
  int32_t add() {
    parent_.push_back(static_cast<int32_t>(parent_.size()));
    return parent_.back();
  }
  int32_t find(int32_t x) {
    while (parent_[static_cast<size_t>(x)] != x) x = parent_[static_cast<size_t>(x)] = parent_[static_cast<size_t>(parent_[static_cast<size_t>(x)])];
    return x;
  }
  void join(int32_t a, int32_t b) {
    a = find(a), b = find(b);
    if (a != b) parent_[static_cast<size_t>(std::max(a, b))] = std::min(a, b);
  }

 private:
  std::vector<int32_t> first_;
  std::vector<int32_t> parent_;
};

// The one loop variable an index expression uses, as (kind, number), or none.
bool single_variable(const ir::Expr& e, ir::VarKind* kind, int32_t* index) {
  int count = 0;
  bool load = false;
  ir::visit_post(e, [&](const ir::Expr& x) {
    if (x.op() == ir::ExprOp::Load) load = true;
    if (x.op() != ir::ExprOp::Var) return;
    if (count == 0 || x->var_kind != *kind || x->index != *index) ++count;
    *kind = x->var_kind;
    *index = x->index;
  });
  return count == 1 && !load;
}

// Joins the node's axes; `reduce_vars` receives the classes of its reduction variables.
void join_node(const ir::Graph& g, const ir::Primitive& p, Classes& c, std::vector<int32_t>& reduce_vars) {
  std::map<std::pair<int, int32_t>, int32_t> var;  // (kind, index) -> axis class
  for (size_t j = 0; j < p.domain.size(); ++j) {
    int32_t a = c.add();
    var[{0, static_cast<int32_t>(j)}] = a;
    for (ir::ValueId out : p.outputs) c.join(a, c.axis(out, j));
  }
  for (size_t j = 0; j < p.reduce_domain.size(); ++j) {
    var[{1, static_cast<int32_t>(j)}] = c.add();
    reduce_vars.push_back(var[{1, static_cast<int32_t>(j)}]);
  }
  for (const ir::Expr& body : p.bodies)
    ir::visit_post(body, [&](const ir::Expr& x) {
      if (x.op() != ir::ExprOp::Load) return;
      ir::ValueId in = p.inputs[static_cast<size_t>(x->index)];
      size_t rank = g.type(in).shape.size();
      for (size_t k = 0; k < rank && k < x->args.size(); ++k) {
        ir::VarKind kind = ir::VarKind::Domain;
        int32_t index = 0;
        if (!single_variable(x->args[k], &kind, &index)) continue;
        auto it = var.find({kind == ir::VarKind::Domain ? 0 : 1, index});
        if (it != var.end()) c.join(it->second, c.axis(in, k));
      }
    });
}

}  // namespace

AxisClasses axis_classes(const ir::Graph& g) {
  Classes c(g);
  std::vector<std::vector<int32_t>> per_node(static_cast<size_t>(g.num_nodes()));
  for (int32_t n = 0; n < g.num_nodes(); ++n) {
    const ir::Primitive& p = g.node(ir::NodeId{n});
    if (p.op != ir::PrimOp::View) join_node(g, p, c, per_node[static_cast<size_t>(n)]);
  }
  std::map<int32_t, int32_t> dense;
  auto id = [&](int32_t axis) { return dense.emplace(c.find(axis), static_cast<int32_t>(dense.size())).first->second; };
  AxisClasses out;
  for (int32_t v = 0; v < g.num_values(); ++v) {
    out.values.emplace_back();
    for (size_t d = 0; d < g.type(ir::ValueId{v}).shape.size(); ++d) out.values.back().push_back(id(c.axis(ir::ValueId{v}, d)));
  }
  for (const std::vector<int32_t>& r : per_node) {
    out.reduce.emplace_back();
    for (int32_t a : r) out.reduce.back().push_back(id(a));
  }
  out.count = static_cast<int32_t>(dense.size());
  return out;
}

DimClasses input_dim_classes(const ir::Graph& g) {
  AxisClasses a = axis_classes(g);
  std::map<int32_t, int32_t> dense;  // axis class -> input class, in order of first appearance
  DimClasses out;
  for (ir::ValueId v : g.inputs()) {
    out.inputs.emplace_back();
    for (int32_t k : a.values[static_cast<size_t>(v.v)])
      out.inputs.back().push_back(dense.emplace(k, static_cast<int32_t>(dense.size())).first->second);
  }
  out.reduced.assign(dense.size(), false);
  for (const std::vector<int32_t>& r : a.reduce)
    for (int32_t k : r)
      if (auto it = dense.find(k); it != dense.end()) out.reduced[static_cast<size_t>(it->second)] = true;
  return out;
}

}  // namespace orchid::superopt
