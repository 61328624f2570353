#include "verify/uniform.h"

#include <map>
#include <numeric>
#include <set>

#include "ir/verifier.h"
#include "support/error.h"

namespace orchid::verify {

namespace {

using ir::Expr;
using ir::Graph;
using ir::ValueId;

// Union-find over the axes of every value of both graphs, with a "not uniform" mark per class.
class Classes {
 public:
  Classes(const Graph& a, const Graph& b) {
    for (const Graph* g : {&a, &b}) {
      std::vector<size_t> base;
      for (const ir::Value& v : g->values()) {
        base.push_back(size_);
        size_ += v.type.shape.size();
      }
      base_.push_back(std::move(base));
    }
    parent_.resize(size_);
    std::iota(parent_.begin(), parent_.end(), 0);
    bad_.assign(size_, false);
  }
  size_t id(int g, ValueId v, size_t axis) const { return base_[static_cast<size_t>(g)][static_cast<size_t>(v.v)] + axis; }
  size_t find(size_t x) { return parent_[x] == x ? x : parent_[x] = find(parent_[x]); }
  void join(size_t x, size_t y) {
    x = find(x);
    y = find(y);
    if (x == y) return;
    parent_[x] = y;
    bad_[y] = bad_[y] || bad_[x];
  }
  void mark(size_t x) { bad_[find(x)] = true; }
  bool uniform(size_t x) { return !bad_[find(x)]; }
  size_t size() const { return size_; }

 private:
  size_t size_ = 0;
  std::vector<std::vector<size_t>> base_;
  std::vector<size_t> parent_;
  std::vector<bool> bad_;
};

// One primitive's loads: joins and marks, as uniform.h states.
class PrimitiveScan {
 public:
  PrimitiveScan(Classes& c, const Graph& g, int gi, const ir::Primitive& p)
      : c_(c), g_(g), gi_(gi), p_(p), var_bad_(p.domain.size(), false) {}

  void run() {
    if (p_.kind() == ir::PrimKind::Opaque) {
      for (ValueId v : p_.inputs) mark_all(v);
      for (ValueId v : p_.outputs) mark_all(v);
      return;
    }
    for (const Expr& b : p_.bodies) scan(b);
    for (size_t j = 0; j < var_bad_.size(); ++j)
      if (var_bad_[j]) c_.mark(c_.id(gi_, p_.outputs[0], j));
    for (size_t k = 1; k < p_.outputs.size(); ++k)
      for (size_t j = 0; j < p_.domain.size(); ++j) c_.join(c_.id(gi_, p_.outputs[0], j), c_.id(gi_, p_.outputs[k], j));
  }

 private:
  void mark_all(ValueId v) {
    for (size_t k = 0; k < g_.type(v).shape.size(); ++k) c_.mark(c_.id(gi_, v, k));
  }

  void scan(const Expr& e) {
    if (e.op() == ir::ExprOp::Var) {
      if (e->var_kind == ir::VarKind::Domain) var_bad_[static_cast<size_t>(e->index)] = true;
      return;
    }
    if (e.op() != ir::ExprOp::Load) {
      for (const Expr& a : e->args) scan(a);
      return;
    }
    ValueId v = p_.inputs[static_cast<size_t>(e->index)];
    const ir::Dims& shape = g_.type(v).shape;
    for (size_t k = 0; k < shape.size(); ++k) {
      const Expr& ix = e.arg(k);
      size_t axis = c_.id(gi_, v, k);
      if (ix.op() == ir::ExprOp::Var && ix->var_kind == ir::VarKind::Domain) {
        c_.join(axis, c_.id(gi_, p_.outputs[0], static_cast<size_t>(ix->index)));
      } else if (ix.op() == ir::ExprOp::Const && ix->value.i == 0 && shape[k] == 1) {
        // a broadcast: reads the one element
      } else {
        c_.mark(axis);
        scan(ix);
      }
    }
    if (e->predicated) scan(e->args.back());
  }

  Classes& c_;
  const Graph& g_;
  int gi_;
  const ir::Primitive& p_;
  std::vector<bool> var_bad_;
};

Graph cut(const Graph& g, int gi, Classes& c) {
  auto shape_of = [&](ValueId v) {
    ir::Dims s = g.type(v).shape;
    for (size_t k = 0; k < s.size(); ++k)
      if (c.uniform(c.id(gi, v, k))) s[k] = 1;
    return s;
  };
  Graph out;
  out.name = g.name;
  std::vector<ValueId> map(static_cast<size_t>(g.num_values()));
  for (ValueId in : g.inputs()) map[static_cast<size_t>(in.v)] = out.add_input(g.value(in).name, {g.type(in).dtype, shape_of(in)});
  for (int32_t v = 0; v < g.num_values(); ++v)
    if (g.value(ValueId(v)).origin == ir::ValueOrigin::Constant)
      map[static_cast<size_t>(v)] = out.add_constant(g.value(ValueId(v)).name, g.constant(ValueId(v)));
  for (const ir::Primitive& n : g.nodes()) {
    ir::Primitive p = n;
    std::vector<ir::TensorType> types;
    std::vector<std::string> names;
    for (ValueId o : p.outputs) {
      types.push_back({g.type(o).dtype, shape_of(o)});
      names.push_back(g.value(o).name);
    }
    p.domain = types[0].shape;
    for (ValueId& i : p.inputs) i = map[static_cast<size_t>(i.v)];
    std::vector<ValueId> old = p.outputs;
    ir::NodeId id = out.add_node(std::move(p), types, names);
    for (size_t k = 0; k < old.size(); ++k) map[static_cast<size_t>(old[k].v)] = out.node(id).outputs[k];
  }
  std::vector<ValueId> outs;
  for (ValueId o : g.outputs()) outs.push_back(map[static_cast<size_t>(o.v)]);
  out.set_outputs(outs);
  return out;
}

int64_t input_elements(const Graph& g) {
  int64_t n = 0;
  for (ValueId in : g.inputs()) n += g.type(in).numel();
  return n;
}

// r.a and r.b: a and b with their uniform classes cut to one position, verified; false where
// cutting gives a graph that does not verify.
bool cut_both(const Graph& a, const Graph& b, Classes& c, Reduced& r) {
  try {
    r.a = cut(a, 0, c);
    r.b = cut(b, 1, c);
    ir::verify_or_throw(r.a, "after cutting uniform dims");
    ir::verify_or_throw(r.b, "after cutting uniform dims");
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

Reduced reduce_uniform_dims(const Graph& a, const Graph& b) {
  Reduced r;
  r.elements_before = r.elements_after = input_elements(a);
  ORCHID_CHECK(a.inputs().size() == b.inputs().size() && a.outputs().size() == b.outputs().size())
      << "reduce_uniform_dims: graphs of different signatures";
  Classes c(a, b);
  const Graph* graphs[2] = {&a, &b};
  for (int gi = 0; gi < 2; ++gi) {
    const Graph& g = *graphs[gi];
    for (const ir::Primitive& p : g.nodes()) PrimitiveScan(c, g, gi, p).run();
    for (int32_t v = 0; v < g.num_values(); ++v)
      if (g.value(ValueId(v)).origin == ir::ValueOrigin::Constant)
        for (size_t k = 0; k < g.type(ValueId(v)).shape.size(); ++k)
          if (g.type(ValueId(v)).shape[k] > 1) c.mark(c.id(gi, ValueId(v), k));
  }
  for (size_t k = 0; k < a.inputs().size(); ++k)
    for (size_t x = 0; x < a.type(a.inputs()[k]).shape.size(); ++x) c.join(c.id(0, a.inputs()[k], x), c.id(1, b.inputs()[k], x));
  for (size_t k = 0; k < a.outputs().size(); ++k)
    for (size_t x = 0; x < a.type(a.outputs()[k]).shape.size(); ++x)
      c.join(c.id(0, a.outputs()[k], x), c.id(1, b.outputs()[k], x));
  // A class holding two axes of one value (a transpose against the identity, x·xᵀ, a
  // diagonal) would keep only the diagonal position: not uniform.
  for (int gi = 0; gi < 2; ++gi)
    for (int32_t v = 0; v < graphs[gi]->num_values(); ++v) {
      size_t rank = graphs[gi]->type(ValueId(v)).shape.size();
      std::set<size_t> roots;
      for (size_t k = 0; k < rank; ++k)
        if (!roots.insert(c.find(c.id(gi, ValueId(v), k))).second) c.mark(c.id(gi, ValueId(v), k));
    }
  // One extent per class; count the classes that shrink.
  std::map<size_t, std::set<int64_t>> extents;
  for (int gi = 0; gi < 2; ++gi)
    for (int32_t v = 0; v < graphs[gi]->num_values(); ++v) {
      const ir::Dims& s = graphs[gi]->type(ValueId(v)).shape;
      for (size_t k = 0; k < s.size(); ++k) extents[c.find(c.id(gi, ValueId(v), k))].insert(s[k]);
    }
  for (const auto& [root, sizes] : extents) {
    if (sizes.size() > 1) c.mark(root);
    else if (c.uniform(root) && *sizes.begin() > 1) ++r.classes;
  }
  if (r.classes == 0 || !cut_both(a, b, c, r)) {
    r.classes = 0;  // nothing to cut, or a form this reduction does not foresee: compare at full size
    return r;
  }
  r.elements_after = input_elements(r.a);
  return r;
}

}  // namespace orchid::verify
