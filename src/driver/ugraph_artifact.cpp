// A μGraph built into an artifact (ugraph_artifact.h).
#include "driver/ugraph_artifact.h"

#include <map>

#include "codegen/cpu/codegen.h"
#include "codegen/cpu/schedule.h"
#include "codegen/cpu/ugraph_kernel.h"
#include "ir/printer.h"
#include "superopt/lower.h"
#include "support/error.h"

namespace orchid::driver {

using superopt::TensorId;
using superopt::UGraph;
using superopt::UOp;
using superopt::UOpType;

namespace {

// One plan buffer per kernel tensor (a reshape's result a view of its operand's); the
// program's names for the inputs and outputs. Returns the buffer of each tensor (-1: none).
std::vector<int32_t> lay_out_buffers(const UGraph& u, const ir::Graph& program, runtime::Plan& plan) {
  std::map<TensorId, std::string> output_name;
  for (size_t i = 0; i < u.outputs.size(); ++i)
    output_name.emplace(u.outputs[i], program.value(program.outputs()[i]).name);
  auto add = [&](TensorId t, runtime::BufferKind kind, const std::string& name, int32_t alias) {
    runtime::PlanBuffer b;
    b.name = name;
    b.type = ir::TensorType{u.tensor(t).dtype, u.shape(t)};
    b.kind = kind;
    b.alias = alias;
    plan.buffers.push_back(std::move(b));
    return static_cast<int32_t>(plan.buffers.size() - 1);
  };
  for (size_t i = 0; i < u.inputs.size(); ++i)
    plan.inputs.push_back(add(u.inputs[i], runtime::BufferKind::Input, program.value(program.inputs()[i]).name, -1));
  std::vector<int32_t> buf = ugraph_buffers(u, plan, plan.inputs, [&](TensorId t, int32_t alias) {
    auto out = output_name.find(t);
    bool is_output = out != output_name.end();
    return add(t, is_output ? runtime::BufferKind::Output : runtime::BufferKind::Intermediate,
               is_output ? out->second : u.tensor(t).name, alias);
  });
  for (TensorId t : u.outputs) plan.outputs.push_back(buf[static_cast<size_t>(t)]);
  return buf;
}

// A pre-defined kernel operator as a one-primitive kernel; `args` receives its arguments'
// tensors (its distinct inputs in order, then its output).
codegen::cpu::GeneratedKernel predefined_kernel(const UGraph& u, const UOp& op, const std::string& symbol, int cores,
                                                std::vector<TensorId>* args) {
  UGraph one;
  std::map<TensorId, TensorId> local;
  UOp c = op;
  for (TensorId& t : c.inputs) {
    if (!local.count(t)) {
      local[t] = one.add_tensor(u.tensor(t).name, u.tensor(t).dtype, u.shape(t), superopt::Level::Kernel);
      one.inputs.push_back(local[t]);
      args->push_back(t);
    }
    t = local[t];
  }
  TensorId out = op.outputs[0];
  c.outputs = {one.add_tensor(u.tensor(out).name, u.tensor(out).dtype, u.shape(out), superopt::Level::Kernel)};
  args->push_back(out);
  one.outputs = c.outputs;
  one.ops = {c};
  ir::Graph g = superopt::lower(one);
  tile::Kernel k;
  for (int32_t n = 0; n < g.num_nodes(); ++n) k.nodes.push_back(ir::NodeId(n));
  k.outputs = g.outputs();
  return codegen::cpu::generate_kernel(g, k, codegen::cpu::default_schedule(g, k, cores), symbol);
}

std::string block_shape(const superopt::BlockGraph& b) {
  std::string s = "grid=";
  for (size_t d = 0; d < b.grid.size(); ++d) s += (d ? "x" : "") + std::to_string(b.grid[d]);
  return s + " loop=" + std::to_string(b.loop);
}

}  // namespace

std::vector<int32_t> ugraph_buffers(const UGraph& u, const runtime::Plan& plan, const std::vector<int32_t>& inputs,
                                    const std::function<int32_t(TensorId, int32_t)>& make) {
  std::vector<int32_t> buf(u.tensors.size(), -1);
  for (size_t i = 0; i < u.inputs.size(); ++i) buf[static_cast<size_t>(u.inputs[i])] = inputs[i];
  std::set<TensorId> views = superopt::buffer_views(u);
  for (const UOp& op : u.ops)
    for (TensorId t : op.outputs) {
      int32_t alias = views.count(t) ? runtime::alias_root(plan, buf[static_cast<size_t>(op.inputs[0])]) : -1;
      buf[static_cast<size_t>(t)] = make(t, alias);
    }
  return buf;
}

void append_ugraph_steps(const UGraph& u, const std::vector<int32_t>& buf, const UGraphStepNames& names, int cores,
                         BuiltArtifact& a, std::vector<codegen::cpu::GeneratedKernel>& kernels) {
  std::set<TensorId> views = superopt::buffer_views(u);
  for (const UOp& op : u.ops) {
    if (views.count(op.outputs[0])) continue;  // no step
    std::string symbol = names.symbol_prefix + std::to_string(kernels.size());
    std::vector<TensorId> args;
    StepInfo info{names.kind, 1, ""};
    if (op.type == UOpType::Block) {
      const superopt::BlockGraph& b = u.blocks[static_cast<size_t>(op.body)];
      kernels.push_back(codegen::cpu::generate_block_kernel(u, op, symbol));
      args = op.inputs;
      args.insert(args.end(), op.outputs.begin(), op.outputs.end());
      info.primitives = static_cast<int>(b.ops.size());
      info.schedule = "block " + block_shape(b);
    } else {
      kernels.push_back(predefined_kernel(u, op, symbol, cores, &args));
      info.schedule = codegen::cpu::schedule_str(kernels.back().schedule);
    }
    runtime::PlanStep s;
    s.name = names.step_prefix + std::string(superopt::uop_name(op.type)) + " " + u.tensor(op.outputs[0]).name;
    s.impl = runtime::StepImpl::Generated;
    for (TensorId t : args) s.args.push_back(buf[static_cast<size_t>(t)]);
    s.num_inputs = static_cast<int32_t>(args.size() - op.outputs.size());
    s.library = names.library;
    s.kernel = static_cast<int32_t>(kernels.size() - 1);
    s.tasks = kernels.back().tasks;
    s.scratch_bytes = kernels.back().scratch_bytes;
    s.checks = kernels.back().checks;
    s.source_ops = names.source_ops.empty() ? std::vector<std::string>{std::string(superopt::uop_name(op.type))}
                                            : names.source_ops;
    a.plan.steps.push_back(std::move(s));
    a.steps.push_back(info);
  }
}

BuiltArtifact build_ugraph_artifact(const UGraph& u, const ir::Graph& program, const BuildOptions& o) {
  ORCHID_CHECK(u.inputs.size() == program.inputs().size() && u.outputs.size() == program.outputs().size())
      << "the μGraph's inputs and outputs are not the program's";
  for (int32_t v = 0; v < program.num_values(); ++v)
    ORCHID_SUPPORTED(program.value(ir::ValueId(v)).origin != ir::ValueOrigin::Constant)
        << "a μGraph artifact takes its program's constants as inputs; " << program.value(ir::ValueId(v)).name
        << " is a constant";
  BuiltArtifact a;
  a.plan.isa = o.isa;
  a.plan.target = o.target;
  a.plan.flush_denormals = o.flush_denormals;
  a.plan.graph_name = program.name;
  std::vector<int32_t> buf = lay_out_buffers(u, program, a.plan);
  std::vector<codegen::cpu::GeneratedKernel> kernels;
  append_ugraph_steps(u, buf, UGraphStepNames{"orc_u", "", 0, StepKind::Generated, {}}, o.cores, a, kernels);
  if (!kernels.empty()) compile_libraries({kernels}, o, a);
  a.graph_oir = ir::print_graph(program);
  return a;
}

}  // namespace orchid::driver
