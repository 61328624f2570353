// Whole models on the GPU: each CUDA artifact (`orchid compile --target cuda`) loaded, run on
// seeded random inputs and checked against the reference interpreter on its own graph
// (graph.oir with the weights bound), then timed as one CUDA graph launch per run (CUDA
// events; 5 warm-ups, median of 50), and its three slowest steps named (each launched alone).
// A model with library steps (cuBLASLt, cuDNN) is timed a second time, loaded with each
// library's heuristic choice of algorithm rather than the fastest timed at load ("kept" where
// the load found the model faster with the heuristic's and kept them).
// A slim artifact (slim_weights.h) has its weights regenerated first. The tolerance is the
// plan's precision's (runtime::default_tolerance). Needs only the CUDA driver: no oneDNN,
// ONNX or solver, so it runs from a slim build. Prints a markdown table; exits 77 where there is no GPU, 1
// where an artifact does not match.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "interp/compare.h"
#include "interp/interp.h"
#include "interp/random_inputs.h"
#include "ir/parser.h"
#include "runtime/cuda/model.h"
#include "runtime/weights.h"
#include "slim_weights.h"
#include "support/error.h"

namespace {

using namespace orchid;
namespace fs = std::filesystem;

// The artifact's directory name ("x/" names x).
std::string name_of(const std::string& dir) {
  fs::path p(dir);
  if (p.filename().empty()) p = p.parent_path();
  return p.filename().string();
}

struct Row {
  std::string name;
  size_t steps = 0;
  double load_s = 0, worst = 0, ms = 0;
  double heuristic_ms = -1;  // with the libraries' heuristic algorithms; -1: no library step
  bool heuristic_kept = false;  // the model ran faster with the heuristic's algorithms at load
  double tolerance = 0;  // the plan's precision's
  std::string why;
  std::string slowest;  // the slowest steps alone: "k3 (MatMul_1) 0.210 ms; ..."
};

// The `count` slowest steps, each launched alone.
std::string slowest_steps(runtime::cuda::CudaModel& m, size_t count) {
  std::vector<double> t = m.step_times_ms(10);
  std::vector<size_t> order(t.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return t[a] > t[b]; });
  std::string out;
  for (size_t j = 0; j < order.size() && j < count; ++j) {
    const runtime::PlanStep& s = m.plan().steps[order[j]];
    std::string ops;
    for (size_t k = 0; k < s.source_ops.size() && k < 2; ++k) ops += (k ? ", " : "") + s.source_ops[k];
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.3f", t[order[j]]);
    out += (out.empty() ? "" : "; ") + s.name + " (" + ops + (s.source_ops.size() > 2 ? ", ..." : "") + ") " + ms + " ms";
  }
  return out;
}

Row check_and_time(const std::string& dir) {
  Row r;
  r.name = name_of(dir);
  auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<runtime::cuda::CudaModel> m = runtime::cuda::CudaModel::load(dir);
  r.load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const runtime::Plan& plan = m->plan();
  r.steps = plan.steps.size();
  r.tolerance = runtime::default_tolerance(plan.precision);
  ir::Graph g = ir::parse_graph_file((fs::path(dir) / "graph.oir").string());
  runtime::AlignedBuffer weights =
      runtime::read_weights((fs::path(dir) / plan.weights.file).string(), plan.weights.bytes, plan.weights.checksum);
  std::vector<ir::Tensor> inputs = interp::random_inputs(g, 1);
  runtime::bind_constants(plan, weights, g, inputs);
  std::vector<ir::Tensor> want = interp::run(g, inputs, {interp::Precision::F64});
  inputs.resize(plan.inputs.size());
  auto check = [&](const std::vector<ir::Tensor>& got) {
    for (size_t o = 0; o < got.size(); ++o) {
      std::string why;
      double e = interp::relative_l2(got[o], want[o], &why);
      if (e > r.worst) r.worst = e, r.why = why;
    }
    if (r.worst > r.tolerance && r.why.empty()) r.why = "relative L2 error above the tolerance";
  };
  check(m->run(inputs));
  r.ms = m->time_ms(5, 50);
  r.heuristic_kept = m->library_algorithms() == runtime::cuda::AlgorithmChoice::Heuristic;
  r.slowest = slowest_steps(*m, 3);
  bool library = std::any_of(plan.steps.begin(), plan.steps.end(), [](const runtime::PlanStep& s) {
    return s.impl == runtime::StepImpl::CublasLt || s.impl == runtime::StepImpl::Cudnn;
  });
  if (library) {
    m.reset();
    std::unique_ptr<runtime::cuda::CudaModel> h = runtime::cuda::CudaModel::load(dir, {.time_library_algorithms = false});
    check(h->run(inputs));
    r.heuristic_ms = h->time_ms(5, 50);
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::string why;
  if (!runtime::cuda::Device::available(&why)) {
    std::fprintf(stderr, "no GPU: %s\n", why.c_str());
    return 77;
  }
  const runtime::cuda::Device& dev = runtime::cuda::Device::get();
  std::printf("GPU: %s (%d SMs)\n\n| model | steps | load s | rel. L2 error | matches | ms per run | ms, heuristic "
              "algorithms | slowest steps alone |\n|---|---:|---:|---:|---|---:|---:|---|\n",
              dev.name().c_str(), dev.multiprocessors());
  int status = 0;
  for (int i = 1; i < argc; ++i) {
    try {
      bench::expand_weights(argv[i]);
      Row r = check_and_time(argv[i]);
      bool ok = r.worst <= r.tolerance;
      status |= ok ? 0 : 1;
      char heuristic[32] = "-";
      if (r.heuristic_ms >= 0)
        std::snprintf(heuristic, sizeof heuristic, "%.3f%s", r.heuristic_ms, r.heuristic_kept ? " (kept)" : "");
      std::printf("| %s | %zu | %.2f | %.2e | %s | %.3f | %s | %s |\n", r.name.c_str(), r.steps, r.load_s, r.worst,
                  ok ? "yes" : ("NO: " + r.why).c_str(), r.ms, heuristic, r.slowest.c_str());
    } catch (const std::exception& e) {
      status = 1;
      std::printf("| %s | | | | error: %s | | | |\n", name_of(argv[i]).c_str(), e.what());
    }
    std::fflush(stdout);
  }
  return status;
}
