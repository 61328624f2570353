// Inputs and outputs of a graph run from the command line, shared by `ir-run` and `run`.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace orchid::cli {

struct RunIo {
  std::vector<std::string> inputs;        // name=file.npy
  std::vector<std::string> input_ranges;  // name=lo:hi
  std::string output_dir;
  uint64_t seed = 0;
  std::string precision = "f64";
};

// Registers --input, --input-range, --output-dir, --seed and --precision on `cmd`.
void add_run_io_options(CLI::App* cmd, RunIo& io);

// Seeded random inputs, then those given by --input-range redrawn uniformly in [lo, hi),
// then those given by --input read from .npy files (types checked).
std::vector<ir::Tensor> make_inputs(const ir::Graph& g, const RunIo& io);

// Writes each output as <dir>/<name>.npy (names made safe for files).
void write_outputs(const ir::Graph& g, const std::vector<ir::Tensor>& outs, const std::string& dir);

// Runs the interpreter, prints a summary of each output, writes them when asked; refuses a
// graph whose values do not fit in this machine's memory (`source` names it).
int run_and_report(const ir::Graph& g, const std::string& source, const RunIo& io);

}  // namespace orchid::cli
