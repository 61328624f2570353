// `orchid equiv a.oir b.oir`: probabilistic equivalence of two primitive graphs over finite
// fields (src/verify). Exit code 0 when equivalent, 3 when different, 4 when undecided.
#include <cstdio>

#include "commands.h"
#include "ir/parser.h"
#include "verify/check.h"

namespace orchid::cli {

Command add_equiv(CLI::App& app) {
  struct Options {
    std::string a, b;
    verify::CheckOptions check;
  };
  auto opts = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "equiv",
      "Check that two primitive graphs (.oir) compute the same function, by random tests over "
      "finite fields; exit code 0 equivalent, 3 different, 4 undecided");
  cmd->add_option("a", opts->a, "the first .oir file")->required();
  cmd->add_option("b", opts->b, "the second .oir file")->required();
  cmd->add_option("--delta", opts->check.delta,
                  "accepted probability of calling different graphs equivalent")
      ->check(CLI::Range(1e-300, 0.5))
      ->capture_default_str();
  cmd->add_option("--seed", opts->check.seed, "seed of the random tests")->capture_default_str();
  cmd->add_option("--max-tests", opts->check.max_tests, "more tests needed: undecided")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  return {cmd, [opts] {
            verify::Verdict v = verify::check_equivalence(ir::parse_graph_file(opts->a),
                                                          ir::parse_graph_file(opts->b), opts->check);
            std::printf("%s\n", verify::describe(v).c_str());
            switch (v.outcome) {
              case verify::Outcome::Equivalent: return 0;
              case verify::Outcome::Different: return 3;
              case verify::Outcome::Undecided: return 4;
            }
            return 4;
          }};
}

}  // namespace orchid::cli
