// `orchid time-kernels LIB.so`: times every kernel of one shared object of generated kernels
// on synthetic data (runtime/kernel_timing.h), in alternating rounds. The schedule tuner runs
// it on the variants of a kernel it compiled together, in a helper process: a crashing or
// hanging variant costs that process, not the compile. `--json` prints
// {"kernels": [{"times_ms": [...], "index_error": false}, ...]}.
#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "runtime/kernel_timing.h"

namespace orchid::cli {

namespace {

struct TimeKernelsOptions {
  std::string library;
  runtime::KernelTimingOptions timing;
  bool json = false;
};

int time_kernels(const TimeKernelsOptions& o) {
  runtime::KernelLibrary lib = runtime::KernelLibrary::open(o.library);
  std::vector<runtime::KernelTiming> t = runtime::time_kernels(lib, o.timing);
  if (o.json) {
    nlohmann::json kernels = nlohmann::json::array();
    for (const runtime::KernelTiming& k : t) kernels.push_back({{"times_ms", k.ms}, {"index_error", k.index_error}});
    std::printf("%s\n", nlohmann::json{{"kernels", kernels}}.dump().c_str());
    return 0;
  }
  for (size_t i = 0; i < t.size(); ++i) {
    double best = t[i].ms.empty() ? 0 : *std::min_element(t[i].ms.begin(), t[i].ms.end());
    std::printf("kernel %zu: fastest %.4f ms over %zu runs%s\n", i, best, t[i].ms.size(),
                t[i].index_error ? " (an index check failed on the synthetic data)" : "");
  }
  return 0;
}

}  // namespace

Command add_time_kernels(CLI::App& app) {
  auto o = std::make_shared<TimeKernelsOptions>();
  CLI::App* cmd = app.add_subcommand("time-kernels", "Time every kernel of a shared object of generated kernels");
  cmd->add_option("library", o->library, "the shared object")->required()->check(CLI::ExistingFile);
  cmd->add_option("--threads", o->timing.threads, "threads each kernel runs on (default 1)")->check(CLI::Range(1, 1024));
  cmd->add_option("--rounds", o->timing.rounds, "rounds over the kernels (default 3)")->check(CLI::Range(1, 1000));
  cmd->add_option("--runs", o->timing.runs_per_round, "timed runs of a kernel per round (default 3)")
      ->check(CLI::Range(1, 1000));
  cmd->add_flag("--flush-denormals", o->timing.flush_denormals,
                "run with subnormal floats read and written as zero, as a plan compiled with --flush-denormals runs");
  cmd->add_flag("--json", o->json, "print {\"kernels\": [{\"times_ms\": [...], \"index_error\": ...}]}");
  return {cmd, [o] { return time_kernels(*o); }};
}

}  // namespace orchid::cli
