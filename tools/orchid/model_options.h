// Options shared by the commands that read an ONNX model: the file, --shape and --bind fixes,
// the node limit.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "frontend/onnx_loader.h"
#include "frontend/op_graph.h"
#include "ir/graph.h"

namespace orchid::cli {

struct ModelOptions {
  std::string file;
  std::vector<std::string> shapes;  // name=1x3x224x224
  std::vector<std::string> binds;   // name=file.npy
  int64_t max_nodes = frontend::ImportOptions{}.max_nodes;
};

void add_model_options(CLI::App* cmd, ModelOptions& m);
// The --shape and --bind fixes as import options.
frontend::ImportOptions import_options(const ModelOptions& m);
// Loads the model with the --shape fixes applied.
frontend::OpGraph load_model(const ModelOptions& m);

}  // namespace orchid::cli
