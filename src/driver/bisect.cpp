// `orchid verify --bisect`: the artifact re-run with every buffer exposed as an output, each
// step's outputs compared with the interpreter's values of the same names, in plan order.
#include <filesystem>
#include <map>

#include "driver/artifact.h"
#include "interp/compare.h"
#include "interp/interp.h"
#include "interp/random_inputs.h"
#include "ir/parser.h"
#include "runtime/model.h"
#include "runtime/session.h"
#include "runtime/weights.h"
#include "support/error.h"

namespace orchid::driver {

namespace fs = std::filesystem;

namespace {

// A copy of the artifact (files linked, not copied) whose plan lists every intermediate buffer
// as an output, all plain (the steps reorder where they compute in another layout; constants
// keep theirs: the kernels were compiled for it).
std::string exposed_copy(const std::string& dir, const runtime::Plan& plan) {
  fs::path tmp = fs::path(dir).string() + ".bisect";
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  runtime::Plan p = plan;
  for (size_t b = 0; b < p.buffers.size(); ++b)
    if (p.buffers[b].kind == runtime::BufferKind::Intermediate) {
      p.buffers[b].layout = runtime::BufferLayout::Plain;
      p.buffers[b].kind = runtime::BufferKind::Output;
      p.outputs.push_back(static_cast<int32_t>(b));
    }
  for (const fs::directory_entry& e : fs::directory_iterator(dir))
    if (e.path().filename() != runtime::kPlanFileName) fs::create_symlink(fs::absolute(e.path()), tmp / e.path().filename());
  runtime::write_plan(p, tmp.string());
  return tmp.string();
}

}  // namespace

std::string bisect_artifact(const std::string& dir, uint64_t seed, double tolerance) {
  runtime::Plan plan = runtime::read_plan(dir);
  ir::Graph g = ir::parse_graph_file((fs::path(dir) / kGraphFileName).string());
  runtime::AlignedBuffer weights = runtime::read_weights((fs::path(dir) / plan.weights.file).string(),
                                                          plan.weights.bytes, plan.weights.checksum);
  std::vector<ir::Tensor> inputs = interp::random_inputs(g, seed);
  runtime::bind_constants(plan, weights, g, inputs);
  std::map<std::string, ir::Tensor, std::less<>> real;
  for (size_t i = 0; i < plan.inputs.size(); ++i) real[g.value(g.inputs()[i]).name] = inputs[i];
  std::vector<ir::Tensor> want = interp::run_all(g, inputs, {interp::Precision::F64});
  std::string copy = exposed_copy(dir, plan);
  runtime::Plan exposed = runtime::read_plan(copy);
  runtime::Session session(runtime::Model::load(copy));
  std::vector<ir::Tensor> got = session.run(real);
  fs::remove_all(copy);
  std::map<int32_t, size_t> output_of;
  for (size_t o = 0; o < exposed.outputs.size(); ++o) output_of.emplace(exposed.outputs[o], o);
  for (const runtime::PlanStep& step : plan.steps)
    for (int32_t k = step.num_inputs; k < static_cast<int32_t>(step.args.size()); ++k) {
      const runtime::PlanBuffer& b = plan.buffers[step.args[k]];
      auto v = g.find_value(b.name);
      ORCHID_CHECK(v.has_value()) << "buffer " << b.name << " is not a value of " << kGraphFileName;
      std::string why;
      double err = interp::relative_l2(got[output_of.at(step.args[k])], want[v->v], &why);
      if (err > tolerance)
        return "step " + step.name + " (" + std::string(runtime::step_impl_name(step.impl)) + ") writes " + b.name +
               " with relative L2 error " + std::to_string(err) + (why.empty() ? "" : " (" + why + ")");
    }
  return "";
}

}  // namespace orchid::driver
