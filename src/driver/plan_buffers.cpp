#include "driver/plan_buffers.h"

#include <algorithm>

#include "ir/stats.h"
#include "support/error.h"

namespace orchid::driver {

using ir::ValueId;

PlanBuffers::PlanBuffers(const ir::Graph& g, runtime::Plan& plan, std::vector<ir::Tensor>& weights,
                         std::vector<int32_t>& weight_buffers)
    : g_(g), plan_(plan), weights_(weights), weight_buffers_(weight_buffers) {
  for (ValueId v : g.outputs()) outputs_.insert(v);
  for (ValueId v : g.inputs()) plan_.inputs.push_back(add(v, runtime::BufferKind::Input));
}

int32_t PlanBuffers::read(ValueId v) {
  auto it = ids_.find(v);
  if (it != ids_.end()) return it->second;
  const ir::Value& val = g_.value(v);
  ORCHID_CHECK(val.origin == ir::ValueOrigin::Constant) << "value " << val.name << " is read before it is written";
  int32_t b = add(v, runtime::BufferKind::Constant);
  weights_.push_back(g_.constant(v));
  weight_buffers_.push_back(b);
  return b;
}

int32_t PlanBuffers::write(ValueId v, int32_t alias) {
  int32_t b = add(v, outputs_.count(v) ? runtime::BufferKind::Output : runtime::BufferKind::Intermediate);
  plan_.buffers[static_cast<size_t>(b)].alias = alias;
  return b;
}

int32_t PlanBuffers::internal(const std::string& name, const ir::TensorType& type, int32_t alias) {
  runtime::PlanBuffer b;
  b.name = name;
  b.type = type;
  b.kind = runtime::BufferKind::Intermediate;
  b.alias = alias;
  plan_.buffers.push_back(b);
  return static_cast<int32_t>(plan_.buffers.size() - 1);
}

int32_t PlanBuffers::add(ValueId v, runtime::BufferKind kind) {
  runtime::PlanBuffer b;
  b.name = g_.value(v).name;
  b.type = g_.type(v);
  b.kind = kind;
  plan_.buffers.push_back(b);
  int32_t id = static_cast<int32_t>(plan_.buffers.size() - 1);
  ids_[v] = id;
  return id;
}

std::vector<std::string> kernel_source_ops(const ir::Graph& g, const tile::Kernel& k) {
  std::vector<std::string> ops;
  for (ir::NodeId n : k.nodes) {
    const std::string& name = g.node(n).name;
    if (!name.empty() && std::find(ops.begin(), ops.end(), name) == ops.end()) ops.push_back(name);
  }
  return ops;
}

void add_kernel_work(const ir::Graph& g, const tile::Kernel& k, const std::vector<ValueId>& inputs,
                     runtime::PlanStep& step) {
  for (ir::NodeId n : k.nodes) step.flops += ir::primitive_flops(g.node(n));
  for (ValueId v : inputs) step.bytes += g.type(v).numel() * ir::dtype_bytes(g.type(v).dtype);
  for (ValueId v : k.outputs) step.bytes += g.type(v).numel() * ir::dtype_bytes(g.type(v).dtype);
}

runtime::PlanStep base_step(const ir::Graph& g, const tile::Kernel& k, const std::vector<ValueId>& inputs,
                            PlanBuffers& buffers, size_t index) {
  runtime::PlanStep step;
  step.name = "k" + std::to_string(index);
  for (ValueId v : inputs) step.args.push_back(buffers.read(v));
  step.num_inputs = static_cast<int32_t>(inputs.size());
  for (ValueId v : k.outputs) step.args.push_back(buffers.write(v));
  step.source_ops = kernel_source_ops(g, k);
  add_kernel_work(g, k, inputs, step);
  return step;
}

}  // namespace orchid::driver
