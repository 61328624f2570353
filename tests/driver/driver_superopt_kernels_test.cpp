// μGraph kernels in a model's plan (driver/superopt_kernels.h): a verified μGraph placed at its
// LAX site among the orchestrated kernels, built into the model's artifact and checked
// against the interpreter; sites that cannot be placed are left with a note; and
// `compile --superopt` end to end — search, instantiation, measurement, placement.
#include <gtest/gtest.h>

#include <regex>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <set>
#include <sstream>

#include "driver/artifact.h"
#include "driver/optimal_costs.h"
#include "driver/ugraph_test_options.h"
#include "driver/superopt_kernels.h"
#include "driver/superopt_search.h"
#include "ir/parser.h"
#include "orchestrate/optimal.h"
#include "orchestrate/strategies.h"
#include "superopt/lax_programs.h"
#include "superopt/text.h"
#include "testlib/temp_dir.h"
#include "testlib/tile_fixtures.h"
#include "driver/compile_options.h"
#include "tune/db.h"

namespace orchid::driver {
namespace {

namespace fs = std::filesystem;

const std::string kDir = "tests/data/superopt/";

// The model's one LAX site with the μGraph of `ugraph_file` for it.
UGraphSite site_of(const ir::Graph& g, const std::string& ugraph_file) {
  std::vector<superopt::LaxProgram> programs = superopt::lax_programs(g, 4);
  EXPECT_EQ(programs.size(), 1u);
  EXPECT_EQ(programs.at(0).sites.size(), 1u);
  const superopt::LaxSite& s = programs.at(0).sites.at(0);
  auto step = std::make_shared<UGraphStep>(UGraphStep{superopt::parse_ugraph_file(kDir + ugraph_file), s.inputs, "k"});
  return {tile::Kernel{s.nodes, {s.output}}, step};
}

bool straddles(const tile::Kernel& k, const std::set<ir::NodeId>& site) {
  size_t in = static_cast<size_t>(std::count_if(k.nodes.begin(), k.nodes.end(), [&](ir::NodeId n) { return site.count(n) > 0; }));
  return in > 0 && in < k.nodes.size();
}

TEST(SuperoptKernels, TheGqaMuGraphIsPlacedInAModelAndMatchesTheInterpreter) {
  ir::Graph g = ir::parse_graph_file(kDir + "gqa_model.oir");
  UGraphSite site = site_of(g, "gqa_found.ugraph");
  EXPECT_EQ(site.kernel.nodes.size(), 5u);
  std::vector<tile::Kernel> kernels = orchestrate::orchestrate(g, orchestrate::Strategy::Greedy);
  std::set<ir::NodeId> in_site(site.kernel.nodes.begin(), site.kernel.nodes.end());
  // The greedy strategy fuses the division with the tanh after it: placing the μGraph must
  // cut that kernel.
  ASSERT_TRUE(std::any_of(kernels.begin(), kernels.end(), [&](const tile::Kernel& k) { return straddles(k, in_site); }));
  std::vector<std::string> notes;
  PlacedKernels p = place_ugraph_kernels(g, kernels, {site}, &notes);
  EXPECT_TRUE(notes.empty()) << notes.front();
  EXPECT_EQ(p.placed, 1);
  EXPECT_TRUE(orchestrate::plan_problems(g, p.kernels).empty());
  ASSERT_EQ(std::count_if(p.ugraphs.begin(), p.ugraphs.end(), [](const auto& u) { return u != nullptr; }), 1);
  for (size_t i = 0; i < p.kernels.size(); ++i)
    if (!p.ugraphs[i]) {
      EXPECT_FALSE(straddles(p.kernels[i], in_site));
    }

  std::vector<StepChoice> steps = joined(implement_placed(g, p));
  testlib::TempDir dir("orchid_superopt_kernels");
  // One generated kernel per library as well: the μGraph's library comes after all of theirs.
  for (int per_library : {16, 1}) {
    SCOPED_TRACE(per_library);
    BuildOptions build = ugraph_build_options();
    build.kernels_per_library = per_library;
    BuiltArtifact a = build_artifact(g, steps, build);
    int ugraph_steps = 0;
    for (const StepInfo& s : a.steps) ugraph_steps += s.kind == StepKind::UGraph;
    EXPECT_EQ(ugraph_steps, 4);  // the block graph, two sums and the division (the reshape is a view)
    std::string out = dir.file("a" + std::to_string(per_library));
    write_artifact(a, out);
    for (uint64_t seed : {1, 2, 3}) {
      VerifyReport r = verify_artifact(out, g, seed, 1e-4);
      EXPECT_TRUE(r.ok()) << r.summary();
    }
  }
}

// A kernel holding what feeds the site and what reads its result (here the whole model as one
// kernel: the ReLU before the attention, the tanh after it) is cut in two around the μGraph.
TEST(SuperoptKernels, AKernelAroundTheSiteIsCutInTwo) {
  ir::Graph g = ir::parse_graph_file(kDir + "gqa_model.oir");
  UGraphSite site = site_of(g, "gqa_found.ugraph");
  tile::Kernel whole;
  for (int32_t n = 0; n < g.num_nodes(); ++n) whole.nodes.push_back(ir::NodeId{n});
  whole.outputs = g.outputs();
  std::vector<std::string> notes;
  PlacedKernels p = place_ugraph_kernels(g, {whole}, {site}, &notes);
  EXPECT_TRUE(notes.empty()) << notes.front();
  ASSERT_EQ(p.kernels.size(), 3u);
  EXPECT_EQ(p.kernels[0].nodes, std::vector<ir::NodeId>{ir::NodeId{0}});  // the ReLU
  EXPECT_EQ(p.kernels[0].outputs, std::vector<ir::ValueId>{*g.find_value("Q")});
  EXPECT_NE(p.ugraphs[1], nullptr);
  EXPECT_EQ(p.kernels[2].outputs, g.outputs());
  EXPECT_TRUE(orchestrate::plan_problems(g, p.kernels).empty());
  testlib::TempDir dir("orchid_superopt_cut_in_two");
  BuiltArtifact a = build_artifact(g, joined(implement_placed(g, p)), ugraph_build_options());
  write_artifact(a, dir.file("a"));
  VerifyReport r = verify_artifact(dir.file("a"), g, 1, 1e-4);
  EXPECT_TRUE(r.ok()) << r.summary();
}

TEST(SuperoptKernels, ASiteOverlappingAPlacedOneIsLeftWithANote) {
  ir::Graph g = ir::parse_graph_file(kDir + "gqa_model.oir");
  UGraphSite site = site_of(g, "gqa_found.ugraph");
  std::vector<tile::Kernel> kernels = orchestrate::orchestrate(g, orchestrate::Strategy::Greedy);
  std::vector<std::string> notes;
  PlacedKernels p = place_ugraph_kernels(g, kernels, {site, site}, &notes);
  EXPECT_EQ(p.placed, 1);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("%O is not placed: it overlaps another μGraph kernel"), std::string::npos) << notes[0];
  EXPECT_TRUE(orchestrate::plan_problems(g, p.kernels).empty());
}

TEST(SuperoptKernels, APlanWithoutSitesIsUnchanged) {
  ir::Graph g = ir::parse_graph_file(kDir + "gqa_model.oir");
  std::vector<tile::Kernel> kernels = orchestrate::orchestrate(g, orchestrate::Strategy::Greedy);
  PlacedKernels p = place_ugraph_kernels(g, kernels, {}, nullptr);
  EXPECT_EQ(p.placed, 0);
  ASSERT_EQ(p.kernels.size(), kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i) {
    EXPECT_EQ(p.kernels[i].nodes, kernels[i].nodes);
    EXPECT_EQ(p.kernels[i].outputs, kernels[i].outputs);
  }
}

MeasureOptions quick_measure(const testlib::TempDir& dir) {
  MeasureOptions m;
  m.orchid_exe = ORCHID_BIN;
  m.work_dir = dir.file("candidates");
  m.min_seconds = 0.01;
  m.min_runs = 2;
  m.rounds = 1;
  return m;
}

// Under --orchestrate optimal a site is a candidate of the BLP at its measured time (here
// nearly nothing, so the BLP takes it), and the plans are built and timed whole with it as a
// μGraph.
TEST(SuperoptKernels, OptimalOrchestrationTakesSitesAsCandidates) {
  testlib::TempDir dir("orchid_superopt_optimal");
  ir::Graph g = ir::parse_graph_file(kDir + "lora_model.oir");
  UGraphSite site = site_of(g, "lora.ugraph");
  site.seconds = 1e-9;
  OptimalPlan p = orchestrate_measured(g, testlib::toy_cpu_target(), ugraph_build_options(), quick_measure(dir), 12, {site});
  EXPECT_EQ(mark_ugraph_kernels(p.last.kernels, {site}).placed, 1);
  std::string notes;
  for (const std::string& n : p.notes) notes += n + "\n";
  EXPECT_NE(notes.find("μGraph kernels of the superoptimizer: 1 candidates (0 across subgraphs, left out), 1 chosen"),
            std::string::npos) << notes;
  // Built and timed: 9 rounds, or 18 where the first 9 leaned one way without significance.
  std::smatch whole;
  ASSERT_TRUE(std::regex_search(notes, whole, std::regex("whole plans, (9|18) alternating rounds, Welch's test: optimal's [0-9]")))
      << notes;
}

// With a plan to beat that neither the BLP's plan nor greedy's comes under (kernels alone),
// nothing is timed whole and greedy's plan is kept (pipeline.cpp: the graph without rewrites).
TEST(SuperoptKernels, PlansThatCannotBeatTheCallersAreNotTimedWhole) {
  testlib::TempDir dir("orchid_superopt_beat");
  ir::Graph g = ir::parse_graph_file(kDir + "lora_model.oir");
  UGraphSite site = site_of(g, "lora.ugraph");
  site.seconds = 1e-9;
  OptimalPlan p =
      orchestrate_measured(g, testlib::toy_cpu_target(), ugraph_build_options(), quick_measure(dir), 12, {site}, 1e-12);
  std::string notes;
  for (const std::string& n : p.notes) notes += n + "\n";
  EXPECT_EQ(notes.find("whole plans, "), std::string::npos) << notes;
  EXPECT_NE(notes.find("whole plans not timed: neither plan's kernels sum to less than the 0.0000 ms to beat → greedy's kept"),
            std::string::npos) << notes;
  EXPECT_TRUE(p.greedy_kept);
  EXPECT_TRUE(same_plan(p.kernels, orchestrate::orchestrate(g, orchestrate::Strategy::Greedy)));
  EXPECT_GT(p.measured_seconds, 1e-12);
  EXPECT_GT(p.untimed_below, 1e-12);

  // Kept in the tuning database, that decision holds for a plan to beat as fast or faster, and
  // not for a slower one, which the plans might beat: they are then orchestrated and timed.
  tune::TuningDb db(dir.file("tuning.db"));
  MeasureOptions m = quick_measure(dir);
  m.db = &db;
  m.target = "test-target";
  auto compile = [&](double beat) {
    return orchestrate_measured(g, testlib::toy_cpu_target(), ugraph_build_options(), m, 12, {site}, beat);
  };
  OptimalPlan first = compile(1e-12);
  ASSERT_GT(first.untimed_below, 0);
  OptimalPlan again = compile(first.untimed_below / 2);
  EXPECT_NE(again.notes[0].find("the plan an earlier compile of this graph settled on"), std::string::npos) << again.notes[0];
  EXPECT_TRUE(again.greedy_kept);
  OptimalPlan slower_beat = compile(first.untimed_below * 2);
  EXPECT_EQ(slower_beat.notes[0].find("the plan an earlier compile of this graph settled on"), std::string::npos);
  std::string slower_notes;
  for (const std::string& n : slower_beat.notes) slower_notes += n + "\n";
  EXPECT_NE(slower_notes.find("whole plans, "), std::string::npos) << slower_notes;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The whole of `compile --superopt`: the search (cached in the tuning database the second
// time), the μGraphs timed against the compiled program, and — with no speed-up asked of it —
// the fastest placed in the model (greedy) or offered to the BLP (optimal, the second time);
// the pipeline verifies the artifact.
TEST(SuperoptKernels, CompileSearchesMeasuresAndPlacesAMuGraph) {
  testlib::TempDir dir("orchid_superopt_compile");
  ir::Graph g = ir::parse_graph_file(kDir + "lora_model.oir");
  tune::TuningDb db(dir.file("tuning.db"));
  for (int compile = 0; compile < 2; ++compile) {
    SCOPED_TRACE(compile == 0 ? "searched, greedy" : "from the database, optimal");
    CompileOptions o = test_compile_options("lora_model.oir", dir.file("out" + std::to_string(compile)));
    o.target = testlib::toy_cpu_target();  // its L2 bounds blocks: a key of the cached search
    if (compile == 1) o.strategy = orchestrate::Strategy::Optimal;
    o.build.cores = 2;
    o.measure.orchid_exe = ORCHID_BIN;
    o.measure.work_dir = dir.file("candidates");
    o.measure.db = &db;
    o.measure.target = "test-target";
    o.measure.min_seconds = 0.01;
    o.measure.min_runs = 2;
    o.measure.rounds = 1;
    o.superopt.enabled = true;
    o.superopt.searches = {lora_search_options()};
    o.superopt.budget_s = 120;
    o.superopt.rounds = 1;
    o.superopt.min_speedup = 0;  // use the fastest μGraph whatever it measures
    CompileResult r = compile_graph(g, o);
    EXPECT_TRUE(r.verified);
    ASSERT_EQ(r.superopt.size(), 1u);
    const std::string& line = r.superopt[0];
    EXPECT_NE(line.find("%O (4 primitives, 1 in the model)"), std::string::npos) << line;
    EXPECT_EQ(line.find("(cached)") != std::string::npos, compile == 1) << line;
    EXPECT_NE(line.find("compiled without the superoptimizer"), std::string::npos) << line;
    EXPECT_NE(line.find(" used ("), std::string::npos) << line;
    std::string report = read_text(fs::path(r.out_dir) / "report.md");
    EXPECT_NE(report.find("## Superoptimizer"), std::string::npos);
    if (compile == 0) {
      EXPECT_NE(report.find(", steps of the superoptimizer's μGraphs "), std::string::npos) << report;
      EXPECT_NE(report.find("| μgraph |"), std::string::npos) << report;
    } else {
      EXPECT_NE(report.find("- μGraph kernels of the superoptimizer: 1 candidates"), std::string::npos) << report;
    }
  }
}

// A search cut at its time limit is cached apart: taken again with the same limit, searched
// again with a much longer one.
TEST(SuperoptSearch, ACutSearchIsCachedForLimitsNoLonger) {
  testlib::TempDir dir("orchid_superopt_cut");
  tune::TuningDb db(dir.file("tuning.db"));
  ir::Graph program = ir::parse_graph_file(kDir + "gqa.oir");
  superopt::SearchOptions o;  // GQA's search takes minutes at these limits
  o.time_limit_s = 0.5;
  CachedSearch first = superopt_search(program, o, &db, "test-target");
  EXPECT_TRUE(first.cut);
  EXPECT_FALSE(first.from_cache);
  CachedSearch again = superopt_search(program, o, &db, "test-target");
  EXPECT_TRUE(again.cut);
  EXPECT_TRUE(again.from_cache);
  EXPECT_EQ(again.stats, first.stats);
  o.time_limit_s = 1.5;
  CachedSearch longer = superopt_search(program, o, &db, "test-target");
  EXPECT_TRUE(longer.cut);
  EXPECT_FALSE(longer.from_cache);
  EXPECT_TRUE(superopt_search(program, o, &db, "test-target").from_cache);
}

TEST(SuperoptKernels, CompileWithoutMeasuringSearchesNothing) {
  testlib::TempDir dir("orchid_superopt_unmeasured");
  ir::Graph g = ir::parse_graph_file(kDir + "lora_model.oir");
  CompileOptions o = test_compile_options("lora_model.oir", dir.file("out"));
  o.superopt.enabled = true;
  CompileResult r = compile_graph(g, o);
  EXPECT_TRUE(r.verified);
  ASSERT_EQ(r.superopt.size(), 1u);
  EXPECT_NE(r.superopt[0].find("not run: choosing μGraphs needs measuring"), std::string::npos) << r.superopt[0];
}

}  // namespace
}  // namespace orchid::driver
