// Running a compiled artifact from the command line (`orchid run out/`).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "ir/graph.h"
#include "ir/tensor.h"
#include "runtime/aligned_buffer.h"
#include "runtime/model.h"
#include "runtime/session.h"
#include "run_io.h"

namespace orchid::cli {

struct BenchOptions {
  bool bench = false;
  double min_time = 1.0;
  int min_runs = 10;
  bool json = false;
  std::string profile;  // Chrome trace path
  int threads = 0;
  int64_t flush_bytes = 0;  // CPU: Session::evict_caches before each timed run (not timed)
};

// Registers --bench, --min-time, --min-runs, --json, --profile, --threads and --flush-bytes.
void add_bench_options(CLI::App* cmd, BenchOptions& b);

int run_artifact(const std::string& dir, const RunIo& io, const BenchOptions& b);

// Times of runs (ms each, by `run_ms`) after two warm-up runs, until both min_runs and
// min_time are met.
std::vector<double> bench_times(const std::function<double()>& run_ms, const BenchOptions& b);

// A CPU artifact loaded to run: its session, and its inputs (from `io`, else seeded random)
// and outputs in ORCHID_ALIGN-aligned memory, as a caller that wants no copies passes them.
class CpuArtifactRun {
 public:
  CpuArtifactRun(const std::string& dir, const RunIo& io, int threads);
  ~CpuArtifactRun();
  void run(std::vector<runtime::StepSpan>* spans = nullptr);
  double run_ms(int64_t flush_bytes = 0);  // one run, timed (after evict_caches, untimed, where > 0)
  const runtime::Plan& plan() const { return model_->plan(); }
  const ir::Graph& graph() const { return graph_; }
  const std::vector<ir::Tensor>& outputs();  // of the last run

 private:
  std::shared_ptr<const runtime::Model> model_;
  ir::Graph graph_;
  std::vector<runtime::AlignedBuffer> in_bufs_, out_bufs_;
  std::vector<const void*> in_;
  std::vector<void*> out_;
  std::vector<ir::Tensor> outs_;
  std::unique_ptr<runtime::Session> session_;
};

}  // namespace orchid::cli
