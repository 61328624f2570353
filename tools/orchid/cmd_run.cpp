// `orchid run model.onnx`: import -> fission -> reference interpreter, on given .npy inputs
// or seeded random ones; prints or writes the outputs.
#include "commands.h"
#include "fission/fission.h"
#include "model_options.h"
#include "run_io.h"

namespace orchid::cli {

Command add_run(CLI::App& app) {
  struct Options {
    ModelOptions model;
    RunIo io;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("run", "Run an ONNX model through the reference interpreter");
  add_model_options(cmd, opts->model);
  add_run_io_options(cmd, opts->io);
  return {cmd, [opts] { return run_and_report(fission::fission(load_model(opts->model)), opts->io); }};
}

}  // namespace orchid::cli
