// `orchid run model.onnx`: import -> fission -> reference interpreter, on given .npy inputs
// or seeded random ones; prints or writes the outputs.
// `orchid run out/` (an artifact directory from `orchid compile`): the same through the
// runtime, with --bench timing and a --profile timeline.
#include <filesystem>

#include "commands.h"
#include "fission/fission.h"
#include "model_options.h"
#include "run_artifact.h"
#include "run_io.h"

namespace orchid::cli {

Command add_run(CLI::App& app) {
  struct Options {
    ModelOptions model;
    RunIo io;
    BenchOptions bench;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "run", "Run an ONNX model through the reference interpreter, or a compiled artifact directory");
  add_model_options(cmd, opts->model);
  add_run_io_options(cmd, opts->io);
  add_bench_options(cmd, opts->bench);
  return {cmd, [opts] {
            if (std::filesystem::is_directory(opts->model.file))
              return run_artifact(opts->model.file, opts->io, opts->bench);
            return run_and_report(fission::fission(load_model(opts->model)), opts->model.file, opts->io);
          }};
}

}  // namespace orchid::cli
