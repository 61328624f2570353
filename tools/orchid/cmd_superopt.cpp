// `orchid superopt program.oir|model.onnx`: Mirage's μGraph search (src/superopt) on a LAX
// program, or on each LAX subprogram of a model; prints the verified μGraphs, their estimated
// cost and the search statistics. With --bench, the μGraphs are built into kernels for this
// CPU, checked against the interpreter and timed against the program compiled without them;
// --out writes the fastest (or, without --bench, the cheapest) as an artifact. --ugraph takes
// a μGraph from a file instead of searching.
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "cache_root.h"
#include "commands.h"
#include "driver/host_options.h"
#include "driver/pipeline.h"
#include "driver/superopt_search.h"
#include "driver/ugraph_artifact.h"
#include "driver/ugraph_bench.h"
#include "fission/fission.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "model_options.h"
#include "superopt/check_ugraph.h"
#include "superopt/generator.h"
#include "superopt/instantiate.h"
#include "superopt/lax_programs.h"
#include "superopt/search_form.h"
#include "superopt/shrink.h"
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
  bool bench = false;
  int rounds = 3;
  std::string out;
  std::string ugraph;  // a μGraph file: checked and used instead of a search
  std::string search_at;  // a small program of the same structure: searched, then instantiated
  bool shrink = false;    // search_at made from the program (superopt/shrink.h)
  size_t tilings = 3;     // per μGraph instantiated
};

// Where a search runs: the host's fingerprint keys cached results, one core's L2 bounds a
// block's memory.
struct Where {
  std::string target;
  tune::TuningDb* db = nullptr;
  const SuperoptOptions* opts = nullptr;
  std::string file;  // the program or model, for messages and compile options
  int cores = 1;
  int64_t block_memory = 0;
};

// The compile options of this machine (as `orchid compile` makes them) and the helper that
// times artifacts, for --bench and --out.
driver::UGraphBenchOptions bench_options(const Where& w) {
  driver::UGraphBenchOptions b;
  b.baseline = driver::host_compile_options(w.file, "", false, orchestrate::Strategy::Greedy, true,
                                            cli_cache_root("--db"));
  b.baseline.measure_seconds = 0;
  b.build = b.baseline.build;
  b.measure.orchid_exe = std::filesystem::read_symlink("/proc/self/exe").string();
  b.measure.work_dir = std::filesystem::temp_directory_path() / ("orchid-superopt-" + std::to_string(::getpid()));
  b.measure.target = b.build.target;
  b.measure.threads = b.build.cores;
  b.measure.db = w.db;
  b.rounds = w.opts->rounds;
  return b;
}

// Times the μGraphs (named by `labels`) against the compiled program; returns the fastest's
// index.
std::optional<size_t> bench(const ir::Graph& program, const std::vector<superopt::UGraph>& found,
                            const std::vector<std::string>& labels, const Where& w) {
  driver::UGraphBenchOptions o = bench_options(w);
  driver::UGraphBench b = driver::bench_ugraphs(program, found, o);
  std::printf("\nmeasured on this machine (fastest run of %d alternating rounds):\n", o.rounds);
  for (size_t i = 0; i < found.size(); ++i) {
    std::string vs;
    if (b.times[i].ms && b.baseline.ms)
      vs = " (" + std::to_string(*b.baseline.ms / *b.times[i].ms).substr(0, 5) + "x the compiled program's speed)";
    std::printf("  %s: %s%s\n", labels[i].c_str(), driver::show(b.times[i]).c_str(), vs.c_str());
    if (!b.checks[i].ok()) std::printf("%s", b.checks[i].summary().c_str());
  }
  std::printf("  the program compiled without the superoptimizer: %s\n", driver::show(b.baseline).c_str());
  return driver::fastest_ugraph(b);
}

// Builds u into a verified artifact at `dir` (staged beside it, published when it matches the
// interpreter).
void write_ugraph(const ir::Graph& program, const superopt::UGraph& u, const std::string& dir, const Where& w) {
  driver::UGraphBenchOptions o = bench_options(w);
  std::string out = driver::directory_name(dir);
  driver::check_publishable(out);
  std::string staging = out + ".staging";
  std::filesystem::remove_all(staging);
  driver::BuiltArtifact a = driver::build_ugraph_artifact(u, program, o.build);
  driver::write_artifact(a, staging);
  driver::VerifyReport r = driver::verify_artifact(staging, program, o.seed, o.tolerance);
  if (!r.ok()) {
    std::filesystem::remove_all(staging);
    ORCHID_USER_ERROR() << "the μGraph's artifact does not match the interpreter; nothing written:\n" << r.summary();
  }
  driver::publish_artifact(staging, out);
  std::printf("wrote %s\n", out.c_str());
}

// A program searched in its search form (superopt/search_form.h): the program and the form.
struct Boundary {
  const ir::Graph* program;
  const superopt::SearchForm* form;
};

// --bench and --out on the μGraphs found for `searched`: the fastest (or, without --bench,
// the first) written. Where `searched` is a search form, they are timed and written as the
// program runs them: on its own inputs, the boundary attached.
void bench_and_write(const ir::Graph& searched, std::vector<superopt::UGraph> found,
                     const std::vector<std::string>& labels, const Where& w, const Boundary* boundary) {
  const ir::Graph& program = boundary ? *boundary->program : searched;
  if (boundary)
    for (superopt::UGraph& u : found) u = superopt::attach(*boundary->form, program, u);
  size_t best = 0;
  if (w.opts->bench)
    if (std::optional<size_t> f = bench(program, found, labels, w)) best = *f;
  if (!w.opts->out.empty()) write_ugraph(program, found[best], w.opts->out, w);
}

// The μGraph of --ugraph, checked against the program over finite fields.
superopt::UGraph given_ugraph(const ir::Graph& program, const std::string& file) {
  superopt::UGraph u = superopt::parse_ugraph_file(file);
  verify::Verdict v = superopt::check_ugraph(program, u);
  ORCHID_USER_CHECK(v.outcome != verify::Outcome::Different)
      << file << ": the μGraph does not compute the program (a finite-field test found a difference)";
  if (v.outcome == verify::Outcome::Equivalent)
    std::printf("%s: verified (%lld finite-field tests)\n", file.c_str(), static_cast<long long>(v.tests_run));
  else
    std::printf("%s: not verified over finite fields (%s); checked against the interpreter only\n", file.c_str(),
                v.detail.c_str());
  return u;
}

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

// --search-at: the μGraphs of the small program, instantiated at the program's sizes with the
// tilings worth timing there.
void search_small(const ir::Graph& program, const superopt::SearchOptions& o, const Where& w,
                  const Boundary* boundary) {
  std::string small_name = w.opts->search_at;
  ir::Graph small;
  if (w.opts->shrink) {
    std::string why;
    std::optional<ir::Graph> s = superopt::shrink(program, &why);
    ORCHID_USER_CHECK(s) << w.file << ": no small copy to search: " << why;
    small = std::move(*s);
    small_name = "the shrunk program";
    std::printf("searching a shrunk copy:\n%s", ir::print_graph(small).c_str());
  } else {
    small = ir::parse_graph_file(small_name);
    if (boundary) small = superopt::search_form(small).program;
  }
  ORCHID_USER_CHECK(small.inputs().size() == program.inputs().size() && small.outputs().size() == 1 &&
                    program.outputs().size() == 1)
      << small_name << ": the small program must have " << program.inputs().size()
      << " inputs and one output, as " << w.file << " has";
  driver::CachedSearch c = driver::superopt_search(small, o, w.db, w.target);
  const superopt::SearchResult& r = c.result;
  ORCHID_USER_CHECK(r.unsupported.empty()) << small_name << ": not searched: " << r.unsupported;
  std::printf("search of %s%s: %s\n", small_name.c_str(), c.from_cache ? " (cached)" : "", c.stats.c_str());
  std::vector<std::string> notes;
  std::vector<superopt::Instantiated> in = superopt::instantiate_results(
      r, small, program, w.cores, w.block_memory, static_cast<size_t>(o.max_results), w.opts->tilings, &notes);
  for (const std::string& n : notes) std::printf("%s\n", n.c_str());
  std::vector<superopt::UGraph> found;
  std::vector<std::string> labels;
  for (superopt::Instantiated& x : in) {
    labels.push_back(superopt::instance_label(x));
    std::printf("\n# %s, estimated %.3g µs at these sizes\n%s", labels.back().c_str(), x.cost * 1e6,
                superopt::print_ugraph(superopt::with_thread_graphs(x.ugraph)).c_str());
    found.push_back(std::move(x.ugraph));
  }
  if (found.empty()) {
    std::printf("no μgraph of one graph-defined kernel instantiates at %s's sizes\n", w.file.c_str());
    return;
  }
  bench_and_write(program, std::move(found), labels, w, boundary);
}

// Searches `searched` (the program, or its search form) as the options say.
void search_one(const ir::Graph& searched, const superopt::SearchOptions& o, const Where& where,
                const Boundary* boundary) {
  if (!where.opts->search_at.empty() || where.opts->shrink) {
    search_small(searched, o, where, boundary);
    return;
  }
  driver::CachedSearch c = driver::superopt_search(searched, o, where.db, where.target);
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
  if (r.found.empty()) return;
  std::vector<std::string> labels;
  for (size_t i = 0; i < r.found.size(); ++i) labels.push_back("μgraph " + std::to_string(i + 1));
  bench_and_write(searched, r.found, labels, where, boundary);
}

// A program: the μGraph of --ugraph for it, or a search of its search form.
void search_program(const ir::Graph& program, const superopt::SearchOptions& o, bool show_program, const Where& where) {
  if (show_program) std::printf("%s", ir::print_graph(program).c_str());
  if (!where.opts->ugraph.empty()) {
    bench_and_write(program, {given_ugraph(program, where.opts->ugraph)}, {"the μgraph"}, where, nullptr);
    return;
  }
  superopt::SearchForm form = superopt::search_form(program);
  if (!form.changed) {
    search_one(program, o, where, nullptr);
    return;
  }
  std::printf("searched in its search form: %s\n", superopt::describe(form).c_str());
  if (show_program) std::printf("%s", ir::print_graph(form.program).c_str());
  Boundary boundary{&program, &form};
  search_one(form.program, o, where, &boundary);
}

int run(SuperoptOptions& opts) {
  superopt::SearchOptions o = opts.search;
  if (!opts.grids.empty()) {
    o.grids.clear();
    for (const std::string& g : opts.grids) o.grids.push_back(parse_grid(g));
  }
  ORCHID_USER_CHECK(opts.ugraph.empty() || opts.search_at.empty()) << "--ugraph and --search-at exclude each other";
  ORCHID_USER_CHECK(!opts.shrink || (opts.ugraph.empty() && opts.search_at.empty()))
      << "--shrink makes the small program itself: it excludes --search-at and --ugraph";
  o.prune_abstract = !opts.no_prune;
  o.canonical = !opts.no_canonical;
  target::Target host = target::detect_host();
  if (std::optional<size_t> l2 = target::level_index(host, "L2")) o.block_memory_bytes = host.levels[*l2].capacity_bytes;
  Where where{host.fingerprint() + "/superopt", nullptr, &opts, opts.model.file, std::max(1, host.cores),
              o.block_memory_bytes};
  std::optional<tune::TuningDb> db;
  if (!opts.no_cache) {
    db.emplace(cli_tuning_db(opts.db));
    if (!db->note().empty()) std::fprintf(stderr, "%s\n", db->note().c_str());
    where.db = &*db;
  }
  const std::string& file = opts.model.file;
  if (file.size() > 4 && file.substr(file.size() - 4) == ".oir") {
    search_program(ir::parse_graph_file(file), o, false, where);
    return 0;
  }
  ORCHID_USER_CHECK(opts.out.empty() && opts.ugraph.empty() && opts.search_at.empty() && !opts.shrink)
      << "--out, --ugraph, --search-at and --shrink take one LAX program (.oir), not a model's subprograms";
  // The programs `orchid compile --superopt` searches: those of the cleaned-up graph.
  ir::Graph g = driver::clean_up(fission::fission(load_model(opts.model)));
  std::vector<superopt::LaxProgram> programs = superopt::lax_programs(g, opts.max_programs);
  std::printf("%s: %zu LAX subprogram%s searched\n", file.c_str(), programs.size(), programs.size() == 1 ? "" : "s");
  for (const superopt::LaxProgram& p : programs) {
    std::printf("\n## subprogram computing %%%s (%d primitives, %lld in the model)\n", p.output.c_str(),
                p.graph.num_nodes(), static_cast<long long>(p.occurrences));
    search_program(p.graph, o, opts.show_program, where);
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
  cmd->add_flag("--bench", opts->bench,
                "build the verified μGraphs into kernels for this CPU, check them against the interpreter and "
                "time them against the program compiled without the superoptimizer");
  cmd->add_option("--rounds", opts->rounds, "alternating timing rounds of --bench")->check(CLI::Range(1, 20))->capture_default_str();
  cmd->add_option("--out", opts->out, "write the fastest μGraph (--bench; else the cheapest by estimate) as an artifact");
  cmd->add_option("--ugraph", opts->ugraph, "a μGraph file (.ugraph) to check and use instead of searching")
      ->check(CLI::ExistingFile);
  cmd->add_option("--search-at", opts->search_at,
                  "a small program of the same structure (.oir): search it, then instantiate its μGraphs at the "
                  "program's sizes")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--shrink", opts->shrink,
                "search a small copy of the program (each dim class divided by a power of two), then "
                "instantiate its μGraphs at the program's sizes");
  cmd->add_option("--tilings", opts->tilings, "grids and for-loops tried per μGraph instantiated (--search-at)")
      ->check(CLI::Range(1, 64))->capture_default_str();
  return {cmd, [opts] { return run(*opts); }};
}

}  // namespace orchid::cli
