// `orchid ir-run file.oir`: runs a primitive graph in text form through the reference
// interpreter, on given .npy inputs or seeded random ones, and prints or writes the outputs.
#include "commands.h"
#include "ir/parser.h"
#include "run_io.h"

namespace orchid::cli {

Command add_ir_run(CLI::App& app) {
  struct Options {
    std::string file;
    RunIo io;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "ir-run", "Run a primitive graph (.oir text IR) through the reference interpreter");
  cmd->add_option("file", opts->file, "the .oir file")->required();
  add_run_io_options(cmd, opts->io);
  return {cmd, [opts] { return run_and_report(ir::parse_graph_file(opts->file), opts->file, opts->io); }};
}

}  // namespace orchid::cli
