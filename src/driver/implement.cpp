#include "driver/implement.h"

#include "ir/subgraph.h"
#include "runtime/library_step.h"

namespace orchid::driver {

std::string_view step_kind_name(StepKind k) {
  switch (k) {
    case StepKind::Generated: return "generated";
    case StepKind::OneDnn: return "onednn";
    case StepKind::Reference: return "reference";
    case StepKind::Alias: return "alias";
  }
  return "?";
}

ir::Graph kernel_graph(const ir::Graph& g, const StepChoice& s) {
  return ir::extract_subgraph(g, s.kernel.nodes, s.inputs, s.kernel.outputs);
}

namespace {

StepKind choose(const ir::Graph& g, const StepChoice& s) {
  int linear = 0;
  for (ir::NodeId n : s.kernel.nodes) {
    ir::PrimKind k = g.node(n).kind();
    if (k == ir::PrimKind::Opaque) return StepKind::Reference;
    linear += k == ir::PrimKind::Linear;
  }
  if (s.kernel.nodes.size() == 1 && g.node(s.kernel.nodes[0]).op == ir::PrimOp::View) return StepKind::Alias;
  if (linear == 1 && runtime::library_step_unsupported("onednn", kernel_graph(g, s)).empty())
    return StepKind::OneDnn;
  return StepKind::Generated;
}

}  // namespace

std::vector<StepChoice> implement(const ir::Graph& g, const std::vector<tile::Kernel>& kernels) {
  std::vector<StepChoice> out;
  for (const tile::Kernel& k : kernels) {
    StepChoice s;
    s.kernel = k;
    s.inputs = tile::kernel_inputs(g, k);
    s.kind = choose(g, s);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace orchid::driver
