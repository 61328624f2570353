#include "rewrite/fold_constants.h"

#include <algorithm>
#include <map>

#include "interp/interp.h"
#include "ir/subgraph.h"
#include "ir/verifier.h"

namespace orchid::rewrite {

namespace {

int64_t bytes_of(const ir::TensorType& t) { return t.numel() * ir::dtype_bytes(t.dtype); }

// Folded values by id, computed in node order.
std::map<ir::ValueId, ir::Tensor> fold_values(const ir::Graph& g) {
  std::map<ir::ValueId, ir::Tensor> folded;
  auto constant = [&](ir::ValueId v) { return g.value(v).origin == ir::ValueOrigin::Constant || folded.count(v); };
  auto tensor = [&](ir::ValueId v) -> const ir::Tensor& {
    return g.value(v).origin == ir::ValueOrigin::Constant ? g.constant(v) : folded.at(v);
  };
  for (int32_t n = 0; n < g.num_nodes(); ++n) {
    const ir::Primitive& p = g.node(ir::NodeId(n));
    if (p.kind() == ir::PrimKind::Opaque || p.inputs.empty()) continue;
    bool all = true;
    int64_t in_bytes = 0, out_bytes = 0;
    std::vector<ir::ValueId> distinct;
    for (ir::ValueId v : p.inputs) {
      all &= constant(v);
      if (std::find(distinct.begin(), distinct.end(), v) == distinct.end()) {
        distinct.push_back(v);
        in_bytes += bytes_of(g.type(v));
      }
    }
    for (ir::ValueId v : p.outputs) out_bytes += bytes_of(g.type(v));
    if (!all || out_bytes > in_bytes) continue;
    ir::Graph one = ir::extract_subgraph(g, {ir::NodeId(n)}, distinct, p.outputs);
    std::vector<ir::Tensor> ins;
    for (ir::ValueId v : distinct) ins.push_back(tensor(v));
    std::vector<ir::Tensor> outs = interp::run(one, ins, {interp::Precision::Own});
    for (size_t k = 0; k < p.outputs.size(); ++k) folded[p.outputs[k]] = std::move(outs[k]);
  }
  return folded;
}

}  // namespace

bool fold_constants(ir::Graph& g) {
  std::map<ir::ValueId, ir::Tensor> folded = fold_values(g);
  if (folded.empty()) return false;
  ir::Graph out;
  out.name = g.name;
  std::vector<ir::ValueId> map(static_cast<size_t>(g.num_values()));
  for (ir::ValueId in : g.inputs()) map[in.v] = out.add_input(g.value(in).name, g.type(in));
  for (int32_t v = 0; v < g.num_values(); ++v)
    if (g.value(ir::ValueId(v)).origin == ir::ValueOrigin::Constant)
      map[v] = out.add_constant(g.value(ir::ValueId(v)).name, g.constant(ir::ValueId(v)));
  for (int32_t n = 0; n < g.num_nodes(); ++n) {
    ir::Primitive p = g.node(ir::NodeId(n));
    if (folded.count(p.outputs[0])) {
      for (ir::ValueId o : p.outputs) map[o.v] = out.add_constant(g.value(o).name, folded.at(o));
      continue;
    }
    std::vector<ir::TensorType> types;
    std::vector<std::string> names;
    for (ir::ValueId o : p.outputs) {
      types.push_back(g.type(o));
      names.push_back(g.value(o).name);
    }
    for (ir::ValueId& i : p.inputs) i = map[i.v];
    std::vector<ir::ValueId> old = p.outputs;
    ir::NodeId id = out.add_node(std::move(p), types, names);
    for (size_t k = 0; k < old.size(); ++k) map[old[k].v] = out.node(id).outputs[k];
  }
  std::vector<ir::ValueId> outs;
  for (ir::ValueId o : g.outputs()) outs.push_back(map[o.v]);
  out.set_outputs(outs);
  ir::verify_or_throw(out, "after constant folding");
  g = std::move(out);
  return true;
}

}  // namespace orchid::rewrite
