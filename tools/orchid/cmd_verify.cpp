// `orchid verify out/`: runs an artifact against the reference interpreter on its own graph
// (graph.oir, the weights bound from weights.bin); `--bisect` names the first step whose
// output diverges.
#include <cstdio>

#include "commands.h"
#include "driver/artifact.h"

namespace orchid::cli {

Command add_verify(CLI::App& app) {
  struct Flags {
    std::string dir;
    uint64_t seed = 1;
    double tolerance = 1e-4;
    bool bisect = false;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand("verify", "Check a compiled artifact against the reference interpreter");
  cmd->add_option("artifact", f->dir, "the artifact directory")->required();
  cmd->add_option("--seed", f->seed, "seed of the random inputs (default 1)");
  cmd->add_option("--tolerance", f->tolerance, "largest relative L2 error (default 1e-4)");
  cmd->add_flag("--bisect", f->bisect, "compare every step's outputs and name the first that diverges");
  return {cmd, [f] {
            std::string first = driver::bisect_artifact(f->dir, f->seed, f->tolerance);
            if (first.empty()) {
              std::printf("%s: every step matches the interpreter (seed %llu)\n", f->dir.c_str(),
                          static_cast<unsigned long long>(f->seed));
              return 0;
            }
            std::printf("%s: first divergence: %s\n", f->dir.c_str(), first.c_str());
            return 3;
          }};
}

}  // namespace orchid::cli
