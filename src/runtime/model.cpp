#include "runtime/model.h"

#include <algorithm>
#include <filesystem>

#include "ir/parser.h"
#include "runtime/checksum.h"
#include "runtime/weights.h"
#include "support/error.h"
#include "target/detect.h"

namespace orchid::runtime {

namespace {

std::string join(const std::string& dir, const std::string& file) {
  return (std::filesystem::path(dir) / file).string();
}

std::string step_where(const std::string& source, size_t i, const PlanStep& s) {
  return source + ": steps[" + std::to_string(i) + "] ('" + s.name + "')";
}

void check_isa(const Plan& plan, const std::string& source) {
  std::vector<std::string> missing = missing_isa(plan.isa, target::host_isa());
  if (missing.empty()) return;
  std::string list;
  for (const std::string& f : missing) list += (list.empty() ? "" : ", ") + f;
  ORCHID_USER_ERROR() << source << ": this machine lacks ISA flags the kernels need: " << list
                      << " (the artifact was built for target '" << plan.target << "')";
}

}  // namespace

std::vector<std::string> missing_isa(const std::vector<std::string>& required,
                                     const std::vector<std::string>& host) {
  std::vector<std::string> missing;
  for (const std::string& f : required)
    if (std::find(host.begin(), host.end(), f) == host.end()) missing.push_back(f);
  return missing;
}

std::shared_ptr<const Model> Model::load(const std::string& dir) {
  std::shared_ptr<Model> m(new Model());
  m->dir_ = std::filesystem::absolute(dir).lexically_normal().string();
  std::string source = join(m->dir_, kPlanFileName);
  m->plan_ = read_plan(m->dir_);
  ORCHID_USER_CHECK(m->plan_.device == PlanDevice::Cpu)
      << source << ": the artifact is built for an NVIDIA GPU (device cuda); the CUDA runtime runs it";
  // Before anything is loaded: a library's code may not even map on a machine without its ISA.
  check_isa(m->plan_, source);
  for (const PlanLibrary& l : m->plan_.libraries) {
    std::string path = join(m->dir_, l.file);
    check_checksum(path, checksum_file(path), l.checksum);
  }
  const PlanWeights& w = m->plan_.weights;
  m->weights_ = read_weights(join(m->dir_, w.file), w.bytes, w.checksum);
  m->load_libraries();
  m->load_steps(source);
  return m;
}

void Model::load_libraries() {
  for (const PlanLibrary& l : plan_.libraries) libraries_.push_back(KernelLibrary::open(join(dir_, l.file)));
}

void Model::load_steps(const std::string& source) {
  for (size_t i = 0; i < plan_.steps.size(); ++i) {
    const PlanStep& s = plan_.steps[i];
    LoadedStep loaded;
    if (s.impl == StepImpl::Generated) {
      loaded.kernel = &kernel_for_step(libraries_[static_cast<size_t>(s.library)], plan_, s, i, source);
      steps_.push_back(std::move(loaded));
      continue;
    }
    std::string where = step_where(source, i, s);
    ir::Graph g = ir::parse_graph(s.ir, where + ".ir");
    check_step_graph(plan_, s, g, where);
    std::vector<const void*> constants;
    std::vector<BufferLayout> layouts;
    for (int32_t arg : s.args) layouts.push_back(plan_.buffers[static_cast<size_t>(alias_root(plan_, arg))].layout);
    for (int32_t k = 0; k < s.num_inputs; ++k) {
      const PlanBuffer& root =
          plan_.buffers[static_cast<size_t>(alias_root(plan_, s.args[static_cast<size_t>(k)]))];
      constants.push_back(root.kind == BufferKind::Constant ? weights_.data() + root.weights_offset
                                                            : nullptr);
    }
    try {
      loaded.library = make_library_step(step_impl_name(s.impl), g, constants, layouts);
    } catch (const UnsupportedError& e) {
      ORCHID_SUPPORTED(false) << where << ": " << e.what();
    } catch (const UserError& e) {
      ORCHID_USER_ERROR() << where << ": " << e.what();
    }
    ORCHID_CHECK(loaded.library != nullptr) << where;
    steps_.push_back(std::move(loaded));
  }
}

int64_t Model::max_scratch_bytes() const {
  int64_t most = 0;
  for (const PlanStep& s : plan_.steps) most = std::max(most, s.scratch_bytes);
  return most;
}

}  // namespace orchid::runtime
