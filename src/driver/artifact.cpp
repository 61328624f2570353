// Writing, checking and publishing artifacts (artifact.h).
#include "driver/artifact.h"

#include <filesystem>
#include <fstream>
#include <map>

#include "interp/compare.h"
#include "interp/interp.h"
#include "interp/random_inputs.h"
#include "runtime/checksum.h"
#include "runtime/model.h"
#include "runtime/session.h"
#include "runtime/weights.h"
#include "support/error.h"

#ifdef ORCHID_HAVE_CUDA
#include "runtime/cuda/model.h"
#endif

namespace orchid::driver {

namespace fs = std::filesystem;

namespace {

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  ORCHID_USER_CHECK(out.good()) << "cannot write " << path.string();
}

}  // namespace

void write_artifact(BuiltArtifact& a, const std::string& dir) {
  fs::create_directories(dir);
  runtime::WeightsLayout w = runtime::write_weights((fs::path(dir) / a.plan.weights.file).string(), a.weights);
  for (size_t i = 0; i < a.weight_buffers.size(); ++i) a.plan.buffers[a.weight_buffers[i]].weights_offset = w.offsets[i];
  a.plan.weights.bytes = w.bytes;
  a.plan.weights.checksum = w.checksum;
  for (size_t j = 0; j < a.libraries.size(); ++j) {
    fs::path to = fs::path(dir) / a.plan.libraries[j].file;
    fs::copy_file(a.libraries[j], to, fs::copy_options::overwrite_existing);
    a.plan.libraries[j].checksum = runtime::checksum_file(to.string());
  }
  write_text(fs::path(dir) / kGraphFileName, a.graph_oir);
  for (const auto& [file, text] : a.sources) write_text(fs::path(dir) / file, text);
  runtime::write_plan(a.plan, dir);
}

bool VerifyReport::ok() const {
  for (const OutputCheck& o : outputs)
    if (!o.ok) return false;
  return true;
}

std::string VerifyReport::summary() const {
  std::string s;
  for (const OutputCheck& o : outputs) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3g", o.rel_l2);
    s += "  output " + o.name + ": relative L2 error " + buf + (o.ok ? "" : " (exceeds " + std::to_string(tolerance) + ")") +
         (o.detail.empty() ? "" : ": " + o.detail) + "\n";
  }
  return s;
}

namespace {

// The artifact's outputs on `by_name` inputs: the CPU runtime's, or the GPU's for a CUDA
// artifact.
std::vector<ir::Tensor> run_artifact_outputs(const std::string& dir,
                                             const std::map<std::string, ir::Tensor, std::less<>>& by_name) {
  if (runtime::read_plan(dir).device == runtime::PlanDevice::Cuda) {
#ifdef ORCHID_HAVE_CUDA
    std::unique_ptr<runtime::cuda::CudaModel> m = runtime::cuda::CudaModel::load(dir);
    std::vector<ir::Tensor> inputs;
    for (int32_t b : m->plan().inputs) inputs.push_back(by_name.at(m->plan().buffers[static_cast<size_t>(b)].name));
    return m->run(inputs);
#else
    ORCHID_USER_ERROR() << dir << ": a CUDA artifact, and this build of Orchid has no CUDA runtime";
#endif
  }
  runtime::Session session(runtime::Model::load(dir));
  return session.run(by_name);
}

}  // namespace

VerifyReport verify_artifact(const std::string& dir, const ir::Graph& reference, uint64_t seed, double tolerance) {
  VerifyReport r;
  r.seed = seed;
  r.tolerance = tolerance;
  std::vector<ir::Tensor> inputs = interp::random_inputs(reference, seed);
  std::vector<ir::Tensor> want = interp::run(reference, inputs, {interp::Precision::F64});
  std::map<std::string, ir::Tensor, std::less<>> by_name;
  for (size_t i = 0; i < inputs.size(); ++i) by_name[reference.value(reference.inputs()[i]).name] = inputs[i];
  std::vector<ir::Tensor> got = run_artifact_outputs(dir, by_name);
  ORCHID_CHECK(got.size() == want.size()) << "artifact has " << got.size() << " outputs, graph " << want.size();
  for (size_t o = 0; o < want.size(); ++o) {
    OutputCheck c;
    c.name = reference.value(reference.outputs()[o]).name;
    c.rel_l2 = interp::relative_l2(got[o], want[o], &c.detail);
    c.ok = c.rel_l2 <= tolerance;
    r.outputs.push_back(c);
  }
  return r;
}

void check_publishable(const std::string& dir) {
  if (!fs::exists(dir)) return;
  ORCHID_USER_CHECK(fs::is_directory(dir) && (fs::exists(fs::path(dir) / runtime::kPlanFileName) || fs::is_empty(dir)))
      << dir << " exists and is not an Orchid artifact; not replacing it";
}

void publish_artifact(const std::string& staging, const std::string& dir) {
  check_publishable(dir);
  fs::remove_all(dir);
  fs::rename(staging, dir);
}

std::string directory_name(const std::string& dir) {
  fs::path p = fs::path(dir).lexically_normal();
  if (!p.has_filename() && p.has_relative_path()) p = p.parent_path();
  return p.string();
}

}  // namespace orchid::driver
