// Subcommands of the `orchid` CLI. Each registers itself and its options on the app and
// returns the action that runs it; an action returns the process exit code.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace orchid::cli {

using Action = std::function<int()>;

struct Command {
  CLI::App* app;
  Action action;
};

Command add_inspect(CLI::App& app);
Command add_run(CLI::App& app);
Command add_ir_run(CLI::App& app);
Command add_target(CLI::App& app);
Command add_compile(CLI::App& app);
Command add_verify(CLI::App& app);
Command add_equiv(CLI::App& app);
Command add_time_kernels(CLI::App& app);
Command add_time_artifacts(CLI::App& app);
Command add_tune_db(CLI::App& app);
Command add_superopt(CLI::App& app);

}  // namespace orchid::cli
