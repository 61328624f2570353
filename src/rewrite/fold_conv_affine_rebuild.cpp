// The rewrite of fold_conv_affine: a copy of the graph with each chain replaced by the
// folded conv and its bias add, and with what only the removed nodes read dropped.
#include <algorithm>
#include <set>

#include "rewrite/fold_conv_affine_internal.h"
#include "support/error.h"

namespace orchid::rewrite::detail {

namespace {

using ir::Expr;
using ir::Graph;
using ir::NodeId;
using ir::Primitive;
using ir::ValueId;

// `base`, or base.1, base.2, ...: a name neither g nor an earlier new value has.
std::string fresh_name(const Graph& g, std::set<std::string>& taken, const std::string& base) {
  std::string name = base;
  for (int k = 1; g.find_value(name) || taken.count(name); ++k) name = base + "." + std::to_string(k);
  taken.insert(name);
  return name;
}

// W'[o, ..] = W[o, ..] · A[o], rounded once to W's dtype.
ir::Tensor scaled_weights(const ir::Tensor& w, const std::vector<double>& scale) {
  ir::Tensor r(w.type());
  int64_t per_channel = w.shape()[0] == 0 ? 0 : w.numel() / w.shape()[0];
  for (int64_t i = 0; i < w.numel(); ++i) r.set_f64(i, w.get_f64(i) * scale[static_cast<size_t>(i / per_channel)]);
  return r;
}

struct Rebuild {
  const Graph& g;
  ConstValues& consts;
  Graph out;
  std::vector<ValueId> map;   // old value -> new value
  std::set<std::string> taken;  // names of new constants

  Rebuild(const Graph& graph, ConstValues& c) : g(graph), consts(c), map(static_cast<size_t>(graph.num_values())) {
    out.name = g.name;
  }

  ValueId at(ValueId v) const { return map[static_cast<size_t>(v.v)]; }

  void copy_node(int32_t n) {
    Primitive p = g.node(NodeId(n));
    std::vector<ir::TensorType> types;
    std::vector<std::string> names;
    for (ValueId o : p.outputs) {
      types.push_back(g.type(o));
      names.push_back(g.value(o).name);
    }
    for (ValueId& i : p.inputs) i = at(i);
    std::vector<ValueId> old = p.outputs;
    NodeId id = out.add_node(std::move(p), types, names);
    for (size_t k = 0; k < old.size(); ++k) map[static_cast<size_t>(old[k].v)] = out.node(id).outputs[k];
  }

  // The new conv and, unless B is 0, the add of the per-channel bias, in place of zk.
  void emit_fold(const Fold& f) {
    const Primitive& conv = g.node(NodeId(f.conv));
    ValueId y = conv.outputs[0], w = conv.inputs[1];
    ValueId zk = g.node(NodeId(f.links.back())).outputs[0];
    const ir::TensorType& yt = g.type(y);
    bool has_bias = std::any_of(f.shift.begin(), f.shift.end(), [](double b) { return b != 0; });
    ValueId w2 = out.add_constant(fresh_name(g, taken, g.value(w).name + "/folded"),
                                  scaled_weights(consts.data(w), f.scale));
    Primitive q = conv;
    q.inputs = {at(conv.inputs[0]), w2};
    q.outputs.clear();
    std::string conv_name = has_bias ? g.value(y).name : g.value(zk).name;
    ValueId c = out.node(out.add_node(std::move(q), {yt}, {conv_name})).outputs[0];
    map[static_cast<size_t>(zk.v)] = c;
    if (!has_bias) return;
    ir::Dims bias_shape(yt.shape.size() - 1, 1);
    bias_shape[0] = yt.shape[1];
    ir::Tensor bias({yt.dtype, bias_shape});
    for (int64_t k = 0; k < bias.numel(); ++k) bias.set_f64(k, f.shift[static_cast<size_t>(k)]);
    ValueId b = out.add_constant(fresh_name(g, taken, g.value(y).name + "/bias"), std::move(bias));
    std::vector<Expr> zi, bi = {ir::dvar(1)};
    for (size_t j = 0; j < yt.shape.size(); ++j) zi.push_back(ir::dvar(static_cast<int32_t>(j)));
    for (size_t j = 2; j < yt.shape.size(); ++j) bi.push_back(ir::const_i64(0));
    Primitive add;
    add.op = ir::PrimOp::Elementwise;
    add.inputs = {c, b};
    add.domain = yt.shape;
    add.bodies = {ir::load(0, yt.dtype, zi) + ir::load(1, yt.dtype, bi)};
    add.name = conv.name;
    map[static_cast<size_t>(zk.v)] = out.node(out.add_node(std::move(add), {yt}, {g.value(zk).name})).outputs[0];
  }
};

// Marks, besides the folded nodes, the constant-valued nodes that only removed nodes read
// (views of weights, BatchNormalization's gain); returns the constants only removed nodes
// read. Values nothing read before are kept as they were.
std::vector<bool> sweep_removed(const Graph& g, const ConstValues& consts, std::vector<bool>& removed) {
  std::vector<std::vector<NodeId>> users = g.users();
  std::vector<bool> kept(static_cast<size_t>(g.num_values()), false);  // a graph output or read by a kept node
  for (ValueId o : g.outputs()) kept[static_cast<size_t>(o.v)] = true;
  auto still_needed = [&](ValueId v) {
    if (kept[static_cast<size_t>(v.v)] || users[static_cast<size_t>(v.v)].empty()) return true;
    for (NodeId u : users[static_cast<size_t>(v.v)])
      if (!removed[static_cast<size_t>(u.v)]) return true;
    return false;
  };
  for (int32_t n = g.num_nodes(); n-- > 0;) {
    const Primitive& p = g.node(NodeId(n));
    if (removed[static_cast<size_t>(n)] || !std::all_of(p.outputs.begin(), p.outputs.end(), [&](ValueId o) {
          return consts.is_const(o) && !still_needed(o);
        }))
      continue;
    removed[static_cast<size_t>(n)] = true;
  }
  std::vector<bool> dropped(static_cast<size_t>(g.num_values()), false);
  for (int32_t v = 0; v < g.num_values(); ++v)
    dropped[static_cast<size_t>(v)] = g.value(ValueId(v)).origin == ir::ValueOrigin::Constant && !still_needed(ValueId(v));
  return dropped;
}

}  // namespace

Graph rebuild_with_folds(const Graph& g, ConstValues& consts, const std::vector<Fold>& folds) {
  std::vector<bool> removed(static_cast<size_t>(g.num_nodes()), false);
  std::vector<int32_t> fold_at(static_cast<size_t>(g.num_nodes()), -1);  // last link -> its fold
  for (size_t f = 0; f < folds.size(); ++f) {
    removed[static_cast<size_t>(folds[f].conv)] = true;
    for (int32_t n : folds[f].links) removed[static_cast<size_t>(n)] = true;
    fold_at[static_cast<size_t>(folds[f].links.back())] = static_cast<int32_t>(f);
  }
  Rebuild r(g, consts);
  std::vector<bool> dropped = sweep_removed(g, consts, removed);
  for (ValueId in : g.inputs()) r.map[static_cast<size_t>(in.v)] = r.out.add_input(g.value(in).name, g.type(in));
  for (int32_t v = 0; v < g.num_values(); ++v) {
    const ir::Value& val = g.value(ValueId(v));
    if (val.origin == ir::ValueOrigin::Constant && !dropped[static_cast<size_t>(v)])
      r.map[static_cast<size_t>(v)] = r.out.add_constant(val.name, g.constant(ValueId(v)));
  }
  for (int32_t n = 0; n < g.num_nodes(); ++n) {
    if (fold_at[static_cast<size_t>(n)] >= 0) r.emit_fold(folds[static_cast<size_t>(fold_at[static_cast<size_t>(n)])]);
    else if (!removed[static_cast<size_t>(n)]) r.copy_node(n);
  }
  std::vector<ValueId> outs;
  for (ValueId o : g.outputs()) outs.push_back(r.at(o));
  r.out.set_outputs(outs);
  return std::move(r.out);
}

}  // namespace orchid::rewrite::detail
