// Timing μGraphs against the compiled program (ugraph_bench.h).
#include "driver/ugraph_bench.h"

#include <filesystem>

#include "driver/ugraph_artifact.h"
#include "superopt/text.h"
#include "ir/printer.h"
#include "support/sha256.h"

namespace orchid::driver {

namespace fs = std::filesystem;

UGraphBench bench_ugraphs(const ir::Graph& program, const std::vector<superopt::UGraph>& ugraphs,
                          const UGraphBenchOptions& o) {
  UGraphBench b;
  MeasureOptions m = o.measure;
  m.db = nullptr;
  m.write_jobs = 1;  // the baseline's write compiles the program, measuring through the database
  fs::create_directories(m.work_dir);
  struct Removed {
    fs::path dir;
    ~Removed() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } removed{m.work_dir};  // also when a build or the baseline's compile throws
  std::vector<TimedArtifact> items;
  std::vector<size_t> item_of;  // per μGraph: its item, or SIZE_MAX where its check failed
  std::vector<BuiltArtifact> built(ugraphs.size());  // built once: checked, then written to be timed
  for (size_t i = 0; i < ugraphs.size(); ++i) {
    const superopt::UGraph& u = ugraphs[i];
    fs::path dir = m.work_dir / ("checked-" + std::to_string(i));
    fs::remove_all(dir);
    built[i] = build_ugraph_artifact(u, program, o.build);
    BuiltArtifact a = built[i];
    write_artifact(a, dir.string());
    b.checks.push_back(verify_artifact(dir.string(), program, o.seed, o.tolerance));
    fs::remove_all(dir);
    item_of.push_back(SIZE_MAX);
    if (!b.checks.back().ok()) continue;
    item_of.back() = items.size();
    items.push_back({sha256_hex(superopt::print_ugraph(u)) + "-ugraph", "ugraph", [&, i](const fs::path& d) {
                       BuiltArtifact a = built[i];
                       write_artifact(a, d.string());
                     }});
  }
  items.push_back({sha256_hex(ir::print_graph(program)) + "-program", "compiled", [&](const fs::path& d) {
                     CompileOptions c = o.baseline;
                     c.out_dir = d.string();
                     c.measure = o.measure;
                     c.measure.work_dir = m.work_dir / "baseline-candidates";
                     compile_graph(program, c);
                   }});
  std::vector<CandidateTime> t = time_alternating(items, m, o.rounds);
  for (size_t i = 0; i < ugraphs.size(); ++i) {
    CandidateTime c;
    c.failure = "does not match the interpreter";
    b.times.push_back(item_of[i] == SIZE_MAX ? c : t[item_of[i]]);
  }
  b.baseline = t.back();
  return b;
}

std::optional<size_t> fastest_ugraph(const UGraphBench& b) {
  std::optional<size_t> best;
  for (size_t i = 0; i < b.times.size(); ++i)
    if (b.times[i].ms && (!best || *b.times[i].ms < *b.times[*best].ms)) best = i;
  return best;
}

}  // namespace orchid::driver
