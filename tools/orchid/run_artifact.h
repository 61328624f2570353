// Running a compiled artifact from the command line (`orchid run out/`).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "run_io.h"

namespace orchid::cli {

struct BenchOptions {
  bool bench = false;
  double min_time = 1.0;
  int min_runs = 10;
  bool json = false;
  std::string profile;  // Chrome trace path
  int threads = 0;
};

// Registers --bench, --min-time, --min-runs, --json, --profile and --threads.
void add_bench_options(CLI::App* cmd, BenchOptions& b);

int run_artifact(const std::string& dir, const RunIo& io, const BenchOptions& b);

}  // namespace orchid::cli
