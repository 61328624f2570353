// `orchid superopt program.oir|model.onnx`: Mirage's μGraph search (src/superopt) on a LAX
// program, or on each LAX subprogram of a model; prints the verified μGraphs, their estimated
// cost and the search statistics.
#include <cstdio>

#include "cache_root.h"
#include "commands.h"
#include "driver/superopt_search.h"
#include "fission/fission.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "model_options.h"
#include "superopt/generator.h"
#include "superopt/lax_programs.h"
#include "superopt/text.h"
#include "superopt/threads.h"
#include "support/error.h"
#include "target/detect.h"

namespace orchid::cli {

namespace {

struct SuperoptOptions {
  ModelOptions model;
  superopt::SearchOptions search;
  std::vector<std::string> grids;  // "2x2"
  bool no_prune = false;
  bool no_canonical = false;
  size_t max_programs = 4;
  bool show_program = false;
  std::string db;
  bool no_cache = false;
};

// Where a search runs: the host's fingerprint keys cached results, one core's L2 bounds a
// block's memory.
struct Where {
  std::string target;
  tune::TuningDb* db = nullptr;
};

ir::Dims parse_grid(const std::string& text) {
  ir::Dims out;
  size_t at = 0;
  while (at <= text.size()) {
    size_t x = text.find('x', at);
    std::string part = text.substr(at, x == std::string::npos ? std::string::npos : x - at);
    try {
      size_t used = 0;
      int64_t v = std::stoll(part, &used);
      ORCHID_USER_CHECK(used == part.size() && v >= 1) << "--grid '" << text << "': expected sizes such as 4x2";
      out.push_back(v);
    } catch (const std::logic_error&) {
      ORCHID_USER_ERROR() << "--grid '" << text << "': expected sizes such as 4x2";
    }
    if (x == std::string::npos) break;
    at = x + 1;
  }
  ORCHID_USER_CHECK(out.size() <= 3) << "--grid '" << text << "': a grid has at most 3 dims";
  return out;
}

void search_one(const ir::Graph& program, const superopt::SearchOptions& o, bool show_program, const Where& where) {
  if (show_program) std::printf("%s", ir::print_graph(program).c_str());
  driver::CachedSearch c = driver::superopt_search(program, o, where.db, where.target);
  const superopt::SearchResult& r = c.result;
  if (!r.unsupported.empty()) {
    std::printf("not searched: %s\n", r.unsupported.c_str());
    return;
  }
  std::printf("search%s: %s\n", c.from_cache ? " (cached)" : "", c.stats.c_str());
  for (size_t i = 0; i < r.found.size(); ++i) {
    std::printf("\n# μgraph %zu of %zu, estimated %.3g µs, verified\n", i + 1, r.found.size(), r.cost[i] * 1e6);
    std::printf("%s", superopt::print_ugraph(superopt::with_thread_graphs(r.found[i])).c_str());
  }
  if (r.found.empty()) std::printf("no μgraph found within the limits\n");
  if (!r.unverified.empty())
    std::printf("\n%zu more μgraphs passed the screening tests (not verified in full; --max-results)\n", r.unverified.size());
}

int run(SuperoptOptions& opts) {
  superopt::SearchOptions o = opts.search;
  if (!opts.grids.empty()) {
    o.grids.clear();
    for (const std::string& g : opts.grids) o.grids.push_back(parse_grid(g));
  }
  o.prune_abstract = !opts.no_prune;
  o.canonical = !opts.no_canonical;
  target::Target host = target::detect_host();
  if (std::optional<size_t> l2 = target::level_index(host, "L2")) o.block_memory_bytes = host.levels[*l2].capacity_bytes;
  Where where{host.fingerprint() + "/superopt", nullptr};
  std::optional<tune::TuningDb> db;
  if (!opts.no_cache) {
    db.emplace(cli_tuning_db(opts.db));
    if (!db->note().empty()) std::fprintf(stderr, "%s\n", db->note().c_str());
    where.db = &*db;
  }
  const std::string& file = opts.model.file;
  if (file.size() > 4 && file.substr(file.size() - 4) == ".oir") {
    search_one(ir::parse_graph_file(file), o, false, where);
    return 0;
  }
  ir::Graph g = fission::fission(load_model(opts.model));
  std::vector<superopt::LaxProgram> programs = superopt::lax_programs(g, opts.max_programs);
  std::printf("%s: %zu LAX subprogram%s searched\n", file.c_str(), programs.size(), programs.size() == 1 ? "" : "s");
  for (const superopt::LaxProgram& p : programs) {
    std::printf("\n## subprogram computing %%%s (%d primitives, %lld in the model)\n", p.output.c_str(),
                p.graph.num_nodes(), static_cast<long long>(p.occurrences));
    search_one(p.graph, o, opts.show_program, where);
  }
  return 0;
}

}  // namespace

Command add_superopt(CLI::App& app) {
  auto opts = std::make_shared<SuperoptOptions>();
  CLI::App* cmd = app.add_subcommand(
      "superopt",
      "Search μGraphs (Mirage) computing a LAX program (.oir), or each LAX subprogram of an ONNX "
      "model; print the verified ones with their estimated cost");
  add_model_options(cmd, opts->model);
  cmd->get_option("model")->description("a LAX program (.oir) or an ONNX model (.onnx)");
  superopt::SearchOptions& s = opts->search;
  cmd->add_option("--max-kernel-ops", s.max_kernel_ops, "kernel operators, a graph-defined one counting as one")
      ->check(CLI::Range(1, 8))->capture_default_str();
  cmd->add_option("--max-block-ops", s.max_block_ops, "block operators besides in_iter and out_accum")
      ->check(CLI::Range(1, 10))->capture_default_str();
  cmd->add_option("--time-limit", s.time_limit_s, "seconds of search")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--grid", opts->grids, "a grid to try, such as 2x2 (repeatable; default 2 and 2x2)");
  cmd->add_option("--loop", s.loops, "a for-loop extent to try (repeatable)")->capture_default_str();
  cmd->add_option("--threads", s.threads, "search threads")->check(CLI::Range(1, 64))->capture_default_str();
  cmd->add_option("--max-results", s.max_results, "μGraphs verified and printed")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--max-programs", opts->max_programs, "subprograms of a model searched")->capture_default_str();
  cmd->add_flag("--no-prune", opts->no_prune, "no abstract-expression pruning (ablation)");
  cmd->add_flag("--no-canonical", opts->no_canonical, "no canonical form (ablation)");
  cmd->add_flag("--show-program", opts->show_program, "print each subprogram of a model");
  cmd->add_option("--db", opts->db, "tuning database where results are cached (default ~/.cache/orchid/tuning.db)");
  cmd->add_flag("--no-cache", opts->no_cache, "search afresh and store nothing");
  return {cmd, [opts] { return run(*opts); }};
}

}  // namespace orchid::cli
