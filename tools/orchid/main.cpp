// The `orchid` command line. Exit codes: 0 ok, 1 user error (bad input, flag or file),
// 2 internal error (a bug in Orchid).
#include <cstdio>
#include <exception>
#include <vector>

#include "support/error.h"
#include "commands.h"

namespace {

int run_cli(int argc, char** argv) {
  CLI::App app{"Orchid: a tensor-program optimizer for ONNX models", "orchid"};
  app.set_version_flag("--version", std::string("orchid ") + ORCHID_VERSION);
  app.require_subcommand(1);
  std::vector<orchid::cli::Command> commands = {
      orchid::cli::add_inspect(app), orchid::cli::add_run(app), orchid::cli::add_ir_run(app),
      orchid::cli::add_target(app), orchid::cli::add_compile(app),
      orchid::cli::add_verify(app), orchid::cli::add_equiv(app), orchid::cli::add_superopt(app), orchid::cli::add_time_kernels(app),
      orchid::cli::add_time_artifacts(app), orchid::cli::add_tune_db(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 1;
  }
  for (const orchid::cli::Command& c : commands)
    if (c.app->parsed()) return c.action();
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run_cli(argc, argv);
  } catch (const orchid::UserError& e) {
    std::fprintf(stderr, "orchid: error: %s\n", orchid::for_terminal(e.what()).c_str());
    return 1;
  } catch (const orchid::InternalError& e) {
    std::fprintf(stderr, "orchid: %s\n", orchid::for_terminal(e.what()).c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "orchid: internal error: %s\n", orchid::for_terminal(e.what()).c_str());
    return 2;
  }
}
