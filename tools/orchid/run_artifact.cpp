#include "run_artifact.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>

#include "driver/artifact.h"
#include "ir/parser.h"
#include "runtime/aligned_buffer.h"
#include "runtime/model.h"
#include "runtime/profile.h"
#include "runtime/session.h"
#include "summary.h"
#include "support/error.h"

#ifdef ORCHID_HAVE_CUDA
#include "runtime/cuda/model.h"
#endif

namespace orchid::cli {

namespace {

// The artifact's graph (graph.oir: the real inputs first, then the constants as inputs).
ir::Graph artifact_graph(const std::string& dir) {
  return ir::parse_graph_file((std::filesystem::path(dir) / driver::kGraphFileName).string());
}

}  // namespace

std::vector<double> bench_times(const std::function<double()>& run_ms, const BenchOptions& b) {
  for (int i = 0; i < 2; ++i) run_ms();
  std::vector<double> ms;
  auto start = std::chrono::steady_clock::now();
  while (static_cast<int>(ms.size()) < b.min_runs ||
         std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < b.min_time)
    ms.push_back(run_ms());
  return ms;
}

namespace {

// The artifact's outputs: a summary line each, and .npy files where --output-dir asks.
void report_outputs(const std::string& dir, const std::string& device, const runtime::Plan& plan, const ir::Graph& g,
                    const std::vector<ir::Tensor>& outs, const RunIo& io) {
  std::printf("artifact %s%s: %zu steps, %zu inputs, %zu outputs\n", dir.c_str(), device.c_str(), plan.steps.size(),
              plan.inputs.size(), plan.outputs.size());
  for (size_t k = 0; k < outs.size(); ++k)
    std::printf("  %s: %s\n", plan.buffers[plan.outputs[k]].name.c_str(), summarize(outs[k]).c_str());
  if (!io.output_dir.empty()) write_outputs(g, outs, io.output_dir);
}

void print_bench(const std::vector<double>& ms, bool json) {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  double rss_mb = static_cast<double>(ru.ru_maxrss) / 1024.0;
  if (json) {
    std::printf("{\"times_ms\": [");
    for (size_t i = 0; i < ms.size(); ++i) std::printf("%s%.6f", i ? ", " : "", ms[i]);
    std::printf("], \"peak_rss_mb\": %.1f}\n", rss_mb);
    return;
  }
  runtime::TimingStats st = runtime::timing_stats(std::vector<double>(ms.begin(), ms.end()));
  std::printf("%d runs: median %.4f ms, min %.4f ms, spread %.1f%%; peak RSS %.1f MB\n", st.runs, st.median,
              st.min, st.spread * 100, rss_mb);
}

}  // namespace

void add_bench_options(CLI::App* cmd, BenchOptions& b) {
  cmd->add_flag("--bench", b.bench, "artifacts: time repeated runs (warm-up first)");
  cmd->add_option("--min-time", b.min_time, "--bench: at least this many seconds (default 1)");
  cmd->add_option("--min-runs", b.min_runs, "--bench: at least this many runs (default 10)");
  cmd->add_flag("--json", b.json, "--bench: print {\"times_ms\": [...], \"peak_rss_mb\": ...}");
  cmd->add_option("--profile", b.profile,
                  "artifacts: write a Chrome/Perfetto trace of one run here (CUDA: each step timed alone, laid end to end)");
  cmd->add_option("--threads", b.threads, "artifacts: threads (default: all the process may use)");
  cmd->add_option("--flush-bytes", b.flush_bytes,
                  "--bench, CPU: before each run, write this many bytes on each thread (not timed), so that the run "
                  "finds its data in the shared cache or memory, as a step of a whole model does (default 0)")
      ->check(CLI::NonNegativeNumber);
}

namespace {

// A CUDA artifact on the GPU: its inputs uploaded, the plan's CUDA graph launched, its outputs
// downloaded; --bench times the graph's launches alone (CUDA events).
int run_cuda_artifact(const std::string& dir, const RunIo& io, const BenchOptions& b) {
#ifdef ORCHID_HAVE_CUDA
  std::unique_ptr<runtime::cuda::CudaModel> model = runtime::cuda::CudaModel::load(dir);
  const runtime::Plan& plan = model->plan();
  ir::Graph g = artifact_graph(dir);
  std::vector<ir::Tensor> all = make_inputs(g, io);
  all.resize(plan.inputs.size());
  std::vector<ir::Tensor> outs = model->run(all);
  if (!b.profile.empty()) {
    // Each step timed alone on the GPU (the median of 10 launches), laid end to end.
    std::vector<runtime::StepSpan> spans;
    int64_t at = 0;
    for (double ms : model->step_times_ms(10)) {
      int64_t ns = static_cast<int64_t>(ms * 1e6);
      spans.push_back({at, at + ns});
      at += ns;
    }
    runtime::write_chrome_trace(b.profile, plan, spans);
  }
  if (b.bench) {
    print_bench(bench_times([&] { return model->time_ms(0, 1); }, b), b.json);
    if (b.json) return 0;
  }
  report_outputs(dir, " (CUDA)", plan, g, outs, io);
  return 0;
#else
  (void)io;
  (void)b;
  ORCHID_USER_ERROR() << dir << ": a CUDA artifact, and this build of Orchid has no CUDA runtime";
  return 1;
#endif
}

}  // namespace

CpuArtifactRun::CpuArtifactRun(const std::string& dir, const RunIo& io, int threads) {
  model_ = runtime::Model::load(dir);
  const runtime::Plan& plan = model_->plan();
  graph_ = artifact_graph(dir);
  std::vector<ir::Tensor> all = make_inputs(graph_, io);
  // Inputs and outputs in ORCHID_ALIGN-aligned memory, as a caller that wants no copies passes
  // them: a tensor's bytes are only malloc-aligned, and the session would copy misaligned
  // buffers through its arena on every run (which --bench would time).
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    in_bufs_.emplace_back(static_cast<int64_t>(all[i].bytes().size()));
    std::copy(all[i].bytes().begin(), all[i].bytes().end(), in_bufs_.back().data());
    in_.push_back(in_bufs_.back().data());
  }
  for (int32_t b_id : plan.outputs) {
    outs_.emplace_back(plan.buffers[b_id].type);
    out_bufs_.emplace_back(static_cast<int64_t>(outs_.back().bytes().size()));
    out_.push_back(out_bufs_.back().data());
  }
  runtime::SessionOptions so;
  so.threads = threads;
  session_ = std::make_unique<runtime::Session>(model_, so);
}

CpuArtifactRun::~CpuArtifactRun() = default;

void CpuArtifactRun::run(std::vector<runtime::StepSpan>* spans) { session_->run(in_, out_, spans); }

double CpuArtifactRun::run_ms(int64_t flush_bytes) {
  session_->evict_caches(flush_bytes);
  auto t0 = std::chrono::steady_clock::now();
  session_->run(in_, out_);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

const std::vector<ir::Tensor>& CpuArtifactRun::outputs() {
  for (size_t k = 0; k < outs_.size(); ++k) std::copy_n(out_bufs_[k].data(), outs_[k].bytes().size(), outs_[k].data());
  return outs_;
}

int run_artifact(const std::string& dir, const RunIo& io, const BenchOptions& b) {
  if (runtime::read_plan(dir).device == runtime::PlanDevice::Cuda) return run_cuda_artifact(dir, io, b);
  CpuArtifactRun a(dir, io, b.threads);
  std::vector<runtime::StepSpan> spans;
  a.run(nullptr);
  if (!b.profile.empty()) {
    // The first run pays one-time costs (page faults in fresh buffers, the libraries' own
    // set-up); the trace is of the second, as a model runs in steady use.
    a.run(&spans);
    runtime::write_chrome_trace(b.profile, a.plan(), spans);
  }
  if (b.bench) {
    print_bench(bench_times([&] { return a.run_ms(b.flush_bytes); }, b), b.json);
    if (b.json) return 0;
  }
  report_outputs(dir, "", a.plan(), a.graph(), a.outputs(), io);
  return 0;
}

}  // namespace orchid::cli
