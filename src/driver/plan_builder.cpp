// Building an artifact's plan (plan_builder.h).
#include "driver/plan_builder.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "codegen/cpu/codegen.h"
#include "codegen/cpu/lower.h"
#include "codegen/cpu/schedule.h"
#include "ir/printer.h"
#include "ir/stats.h"
#include "ir/subgraph.h"
#include "driver/plan_buffers.h"
#include "driver/superopt_kernels.h"
#include "driver/ugraph_artifact.h"
#include "runtime/layout.h"
#include "support/error.h"

namespace orchid::driver {

using ir::ValueId;

namespace {

// The schedule of each generated step: the tuned one where there is one, else the default
// (other steps: a default value).
std::vector<codegen::cpu::Schedule> schedules(const ir::Graph& g, const std::vector<StepChoice>& steps, int cores,
                                              const std::vector<std::optional<codegen::cpu::Schedule>>& tuned) {
  std::vector<codegen::cpu::Schedule> out(steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].kind != StepKind::Generated) continue;
    out[i] = i < tuned.size() && tuned[i] ? *tuned[i] : codegen::cpu::default_schedule(g, steps[i].kernel, cores);
  }
  return out;
}

// Constant weights that every step reading them multiplies by in the GEMM micro-kernel, whole,
// as B (codegen/cpu/lower.h, packable_weights), all reading them the same way: stored as their
// panels in the artifact (panels16, or panels16t where they are read transposed), so no run
// packs them. Not a graph output (callers get plain bytes).
std::map<ValueId, runtime::BufferLayout> panel_weights(const ir::Graph& g, const std::vector<StepChoice>& steps,
                                                       const std::vector<codegen::cpu::Schedule>& sched) {
  std::map<ValueId, std::optional<runtime::BufferLayout>> ok;  // nullopt: not packable
  for (size_t i = 0; i < steps.size(); ++i) {
    std::vector<ValueId> packable;
    if (steps[i].kind == StepKind::Generated) packable = codegen::cpu::packable_weights(g, steps[i].kernel, sched[i]);
    for (ValueId v : steps[i].inputs) {
      if (g.value(v).origin != ir::ValueOrigin::Constant) continue;
      std::optional<runtime::BufferLayout> here;
      if (std::find(packable.begin(), packable.end(), v) != packable.end())
        here = codegen::cpu::transposed_panels(g, steps[i].kernel, v) ? runtime::BufferLayout::Panels16T
                                                                       : runtime::BufferLayout::Panels16;
      auto [it, fresh] = ok.try_emplace(v, here);
      if (!fresh && it->second != here) it->second = std::nullopt;
    }
  }
  for (ValueId v : g.outputs()) ok[v] = std::nullopt;
  std::map<ValueId, runtime::BufferLayout> out;
  for (const auto& [v, layout] : ok)
    if (layout) out[v] = *layout;
  return out;
}

// Stores the weights of `panels` as B panels in the artifact.
void pack_panel_weights(const std::map<ValueId, runtime::BufferLayout>& panels, PlanBuffers& buffers, BuiltArtifact& a) {
  for (const auto& [v, layout] : panels) {
    int32_t b = buffers.read(v);
    auto at = std::find(a.weight_buffers.begin(), a.weight_buffers.end(), b) - a.weight_buffers.begin();
    a.weights[static_cast<size_t>(at)] = runtime::to_layout(a.weights[static_cast<size_t>(at)], layout);
    a.plan.buffers[static_cast<size_t>(b)].layout = layout;
    ++a.layouts.packed_weights;
  }
}

// Compiles the generated kernels, several to a shared object, and fills in their steps.
void compile_generated(const ir::Graph& g, const std::vector<StepChoice>& steps,
                       const std::vector<codegen::cpu::Schedule>& sched,
                       const std::map<ValueId, runtime::BufferLayout>& panels,
                       const std::vector<size_t>& plan_step, const BuildOptions& o, BuiltArtifact& a) {
  std::vector<std::vector<codegen::cpu::GeneratedKernel>> libs;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].kind != StepKind::Generated) continue;
    if (libs.empty() || static_cast<int>(libs.back().size()) >= o.kernels_per_library) libs.emplace_back();
    std::string symbol = "orc_k" + std::to_string(plan_step[i]);
    std::vector<ValueId> packed;
    for (ValueId v : steps[i].inputs)
      if (panels.count(v)) packed.push_back(v);
    libs.back().push_back(codegen::cpu::generate_kernel(g, steps[i].kernel, sched[i], symbol, packed));
    runtime::PlanStep& ps = a.plan.steps[plan_step[i]];
    ps.library = static_cast<int32_t>(libs.size() - 1);
    ps.kernel = static_cast<int32_t>(libs.back().size() - 1);
    ps.tasks = libs.back().back().tasks;
    ps.scratch_bytes = libs.back().back().scratch_bytes;
    ps.checks = libs.back().back().checks;
    a.steps[plan_step[i]].schedule = codegen::cpu::schedule_str(sched[i]);
  }
  compile_libraries(libs, o, a);
}

// The buffers and plan steps of a μGraph step (ugraph_artifact.h, append_ugraph_steps): its
// inputs read from the graph's values, its output written to the kernel's, the other tensors
// in buffers of their own (views where they are reshapes). The site's FLOPs and bytes are
// counted on its first step. Their library is set once the generated steps' are compiled.
void lay_out_ugraph(const ir::Graph& g, const StepChoice& s, int cores, PlanBuffers& buffers, BuiltArtifact& a,
                    std::vector<codegen::cpu::GeneratedKernel>& kernels) {
  const superopt::UGraph& u = s.ugraph->ugraph;
  ORCHID_CHECK(u.inputs.size() == s.ugraph->inputs.size() && u.outputs.size() == 1 && s.kernel.outputs.size() == 1)
      << "a μGraph step's inputs or output are not its kernel's";
  std::vector<int32_t> inputs;
  for (ValueId v : s.ugraph->inputs) inputs.push_back(buffers.read(v));
  std::string site = "g" + std::to_string(a.plan.steps.size());
  std::vector<int32_t> buf = ugraph_buffers(u, a.plan, inputs, [&](superopt::TensorId t, int32_t alias) {
    if (t == u.outputs[0]) return buffers.write(s.kernel.outputs[0], alias);
    return buffers.internal(site + "/" + u.tensor(t).name, ir::TensorType{u.tensor(t).dtype, u.shape(t)}, alias);
  });
  size_t first = a.plan.steps.size();
  append_ugraph_steps(u, buf, UGraphStepNames{"orc_g", site + " ", -1, StepKind::UGraph, kernel_source_ops(g, s.kernel)},
                      cores, a, kernels);
  ORCHID_CHECK(a.plan.steps.size() > first) << "a μGraph with no kernel operator";
  add_kernel_work(g, s.kernel, s.inputs, a.plan.steps[first]);
}

// The runtime implementation of a step kind the CPU runs as a library step, or none.
std::optional<runtime::StepImpl> cpu_library_impl(StepKind k) {
  switch (k) {
    case StepKind::OneDnn: return runtime::StepImpl::OneDnn;
    case StepKind::OneDnnWinograd: return runtime::StepImpl::OneDnnWinograd;
    case StepKind::Reference: return runtime::StepImpl::Reference;
    case StepKind::Generated:
    case StepKind::Alias:
    case StepKind::CublasLt:
    case StepKind::Cudnn:
    case StepKind::UGraph: return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

void compile_libraries(const std::vector<std::vector<codegen::cpu::GeneratedKernel>>& libs, const BuildOptions& o,
                       BuiltArtifact& a) {
  std::vector<std::string> sources;
  for (const auto& lib : libs) sources.push_back(codegen::cpu::library_source(lib));
  codegen::cpu::CompilerOptions copts = o.compiler;
  for (const std::string& f : codegen::cpu::codegen_flags()) copts.extra_flags.push_back(f);
  std::vector<std::filesystem::path> objects = codegen::cpu::compile_many(sources, copts);
  for (size_t j = 0; j < objects.size(); ++j) {
    // Named by content (the object cache's key): a process never confuses two libraries that
    // were written at the same path (dlopen returns a path it has loaded already).
    a.plan.libraries.push_back({"kernels_" + std::to_string(a.libraries.size()) + "_" +
                                    objects[j].stem().string().substr(0, 16) + ".so",
                                0, ""});
    a.libraries.push_back(objects[j]);
  }
}

ir::Graph constants_as_inputs(const ir::Graph& g) {
  std::vector<ValueId> inputs = g.inputs();
  std::vector<ir::NodeId> nodes;
  for (int32_t v = 0; v < g.num_values(); ++v)
    if (g.value(ValueId(v)).origin == ir::ValueOrigin::Constant) inputs.push_back(ValueId(v));
  for (int32_t n = 0; n < g.num_nodes(); ++n) nodes.push_back(ir::NodeId(n));
  return ir::extract_subgraph(g, nodes, inputs, g.outputs());
}

void lay_out_plan(const ir::Graph& g, const std::vector<StepChoice>& steps, PlanBuffers& buffers, BuiltArtifact& a,
                  const std::function<std::string(const StepChoice&, runtime::PlanStep&)>& implement_step,
                  const std::function<void(const StepChoice&)>& ugraph_steps) {
  a.choice_steps.assign(steps.size(), SIZE_MAX);
  for (size_t i = 0; i < steps.size(); ++i) {
    const StepChoice& s = steps[i];
    if (s.kind == StepKind::Alias) {
      buffers.write(s.kernel.outputs[0], buffers.read(s.inputs[0]));
      continue;
    }
    a.choice_steps[i] = a.plan.steps.size();
    if (s.kind == StepKind::UGraph) {
      ORCHID_CHECK(ugraph_steps && s.ugraph) << "a μGraph step in a plan that has none";
      ugraph_steps(s);
      continue;
    }
    runtime::PlanStep step = base_step(g, s.kernel, s.inputs, buffers, a.plan.steps.size());
    std::string schedule = implement_step(s, step);
    a.plan.steps.push_back(std::move(step));
    a.steps.push_back({s.kind, static_cast<int>(s.kernel.nodes.size()), schedule});
  }
  for (ValueId v : g.outputs()) a.plan.outputs.push_back(buffers.read(v));
}

BuiltArtifact build_artifact(const ir::Graph& g, const std::vector<StepChoice>& steps, const BuildOptions& o,
                             const std::vector<std::optional<codegen::cpu::Schedule>>& tuned) {
  BuiltArtifact a;
  a.plan.isa = o.isa;
  a.plan.target = o.target;
  a.plan.flush_denormals = o.flush_denormals;
  a.plan.graph_name = g.name;
  PlanBuffers buffers(g, a.plan, a.weights, a.weight_buffers);
  std::vector<codegen::cpu::GeneratedKernel> ugraph_kernels;
  // Library steps are complete here; generated ones get their code from compile_generated.
  lay_out_plan(
      g, steps, buffers, a,
      [&](const StepChoice& s, runtime::PlanStep& step) {
        if (std::optional<runtime::StepImpl> impl = cpu_library_impl(s.kind)) {
          step.impl = *impl;
          step.ir = ir::print_graph(kernel_graph(g, s));
        }
        return std::string();
      },
      [&](const StepChoice& s) { lay_out_ugraph(g, s, o.cores, buffers, a, ugraph_kernels); });
  std::vector<codegen::cpu::Schedule> sched = schedules(g, steps, o.cores, tuned);
  std::map<ValueId, runtime::BufferLayout> panels =
      o.layouts ? panel_weights(g, steps, sched) : std::map<ValueId, runtime::BufferLayout>{};
  compile_generated(g, steps, sched, panels, a.choice_steps, o, a);
  // μGraph kernels go into one library after those of generated steps.
  if (!ugraph_kernels.empty()) {
    for (size_t i = 0; i < a.steps.size(); ++i)
      if (a.steps[i].kind == StepKind::UGraph) a.plan.steps[i].library = static_cast<int32_t>(a.libraries.size());
    compile_libraries({ugraph_kernels}, o, a);
  }
  if (o.layouts) a.layouts = assign_layouts(a.plan);
  pack_panel_weights(panels, buffers, a);
  a.graph_oir = ir::print_graph(constants_as_inputs(g));
  return a;
}

}  // namespace orchid::driver
