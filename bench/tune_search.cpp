// The schedule-search experiment (../shared/papers/droplet-dpansor.txt, its Figures 14–15, on
// Orchid's kernels): for each kernel, six strategies search its space of CPU schedules
// (tune/cpu_space.h), every measurement through the tuner's own path (driver/tune.h: many
// schedules to a shared object, timed by `orchid time-kernels` in a helper process):
//   (a) evolution    the evolutionary search with 10x (b)'s model trials, its 120 cheapest
//                    measured, the fastest kept;
//   (b) 300 + Droplet 300 model trials, 12 of the cheapest (each kind of schedule first:
//                    tune::diverse_top) measured with the default, Droplet Search from the
//                    fastest (48 timings at most);
//   (c) Droplet      Droplet Search from the default schedule (48 at most);
//   (d) random       48 random points measured, the fastest kept;
//   (e) grid         48 points spread over the grid of tile sizes (other knobs the default's),
//                    the fastest kept;
//   (f) (b) without the tile search's seeds (tune/seeds.h): exploration from the default alone.
// Each strategy's tuning time is its wall time (model, compiles, measurements). The final
// schedules are then timed again side by side with the default in one batch, and those times
// are the ones reported: each strategy's speedup over the default.
// Resumable kernel by kernel: each finished kernel is appended to --state FILE (JSON lines);
// kernels found there are not tuned again.
//
// Usage: tune_search_bench [--only NAME] [--threads T] [--state FILE] [--markdown FILE]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "codegen/cpu/codegen.h"
#include "driver/tune.h"
#include "ir/parser.h"
#include "kernel_cases.h"
#include "micro_common.h"
#include "target/host.h"
#include "tune/cpu_space.h"
#include "tune/estimate.h"
#include "tune/explore.h"

namespace orchid::bench {
namespace {

using codegen::cpu::Schedule;
using tune::Point;

// The ten kernels (distinct shapes and kinds from the benchmark models).
const char* const kKernels[] = {"softmax 1024x1000", "layernorm 1576x384",     "gelu 1576x1536",
                                "transpose 1024x768", "bias residual 4096x768", "rmsnorm 2048x1024",
                                "matmul relu 197x1536x384", "matmul softmax 8192x128x64", "conv3x3 relu 64@28",
                                "conv relu maxpool 32@56"};

constexpr int kBudget = 48, kTop = 12, kTrials = 300;

struct Context {
  const target::Target& target;
  driver::BuildOptions build;
  driver::MeasureOptions measure;
  driver::ScheduleTimer timer;
};

struct Outcome {
  std::string strategy;
  Schedule best;
  int measured = 0;
  double seconds = 0;
  double final_ms = 0;  // the side-by-side re-measurement
  int failures = 0;     // batches that failed to build or run
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The index of the fastest by median (the first where none measured).
size_t fastest_index(const std::vector<std::vector<double>>& t) {
  size_t best = 0;
  for (size_t i = 0; i < t.size(); ++i)
    if (!t[i].empty() && (t[best].empty() || driver::median_ms(t[i]) < driver::median_ms(t[best]))) best = i;
  return best;
}

// Measures the points (5 rounds of 3 runs, 16 to a batch) and keeps the fastest: each batch's
// fastest timed again together, as times of different batches do not compare.
Outcome fastest_of(const std::string& name, const ir::Graph& g, const tile::Kernel& k, const tune::CpuSpace& space,
                   const std::vector<Point>& points, const Context& cx) {
  std::vector<Schedule> s, winners;
  std::vector<std::string> failures;
  for (const Point& p : points) s.push_back(space.schedule(p));
  const size_t per = 16;
  int measured = static_cast<int>(s.size());
  for (size_t first = 0; first < s.size(); first += per) {
    std::vector<Schedule> batch(s.begin() + first, s.begin() + std::min(s.size(), first + per));
    winners.push_back(batch[fastest_index(cx.timer.time(g, k, batch, 5, 3, &failures))]);
  }
  if (winners.size() > 1) {
    measured += static_cast<int>(winners.size());
    winners = {winners[fastest_index(cx.timer.time(g, k, winners, 5, 3, &failures))]};
  }
  for (const std::string& f : failures) std::fprintf(stderr, "  %s: %s\n", name.c_str(), f.c_str());
  return {name, winners[0], measured, 0, 0, static_cast<int>(failures.size())};
}

Outcome evolution(const ir::Graph& g, const tile::Kernel& k, const tune::CpuSpace& space, const Context& cx) {
  auto cost = [&](const Point& p) { return tune::estimate_cpu_schedule(g, k, space.schedule(p), cx.target).seconds; };
  tune::ExploreOptions eo;
  eo.trials = 10 * kTrials;
  Rng rng(1);
  std::vector<tune::Ranked> r = tune::explore(space.space, cost, {space.point_of(space.base)}, eo, rng);
  std::vector<Point> top;
  for (size_t i = 0; i < r.size() && top.size() < 10 * kTop; ++i) top.push_back(r[i].point);
  return fastest_of("(a) evolution, 10x trials", g, k, space, top, cx);
}

Outcome tuned(const std::string& name, const ir::Graph& g, const tile::Kernel& k, const Context& cx, int trials,
              int top, int tile_seeds = driver::TuneOptions{}.tile_seeds) {
  driver::TuneOptions o;
  o.explore_trials = trials;
  o.tile_seeds = tile_seeds;
  o.measure_top = top;
  o.budget = kBudget;
  driver::TuneResult r = driver::tune_kernel(g, k, cx.target, cx.build, cx.measure, o);
  for (const std::string& f : r.failures) std::fprintf(stderr, "  %s: %s\n", name.c_str(), f.c_str());
  return {name, r.best, r.measured, 0, 0, static_cast<int>(r.failures.size())};
}

Outcome random_search(const ir::Graph& g, const tile::Kernel& k, const tune::CpuSpace& space, const Context& cx) {
  Rng rng(2);
  std::set<Point> seen;
  std::vector<Point> pts;
  for (int i = 0; i < 100 * kBudget && static_cast<int>(pts.size()) < kBudget; ++i) {
    Point p = space.space.random_point(rng);
    if (!p.empty() && seen.insert(p).second) pts.push_back(p);
  }
  return fastest_of("(d) random", g, k, space, pts, cx);
}

Outcome grid_search(const ir::Graph& g, const tile::Kernel& k, const tune::CpuSpace& space, const Context& cx) {
  Point base = space.point_of(space.base);
  int64_t total = 1;
  for (const ir::Dims& t : space.tiles) total *= static_cast<int64_t>(t.size());
  std::vector<Point> pts;
  int64_t stride = std::max<int64_t>(1, total / kBudget);
  for (int64_t i = 0; i < total && static_cast<int>(pts.size()) < kBudget; i += stride) {
    Point p = base;
    int64_t rest = i;
    for (size_t d = space.tiles.size(); d-- > 0;) {
      int64_t n = static_cast<int64_t>(space.tiles[d].size());
      p[d] = static_cast<int>(rest % n);
      rest /= n;
    }
    p = space.space.canon(p);
    if (space.space.contains(p) && std::find(pts.begin(), pts.end(), p) == pts.end()) pts.push_back(p);
  }
  return fastest_of("(e) grid", g, k, space, pts, cx);
}

nlohmann::json tune_case(const KernelCase& kc, const Context& cx) {
  ir::Graph g = ir::parse_graph(kc.text);
  tile::Kernel k = testlib::whole_graph_kernel(g);
  tune::CpuSpace space = tune::cpu_space(g, k, cx.build.cores);
  std::vector<Outcome> out;
  std::vector<std::function<Outcome()>> strategies = {
      [&] { return evolution(g, k, space, cx); },
      [&] { return tuned("(b) 300 + Droplet", g, k, cx, kTrials, kTop); },
      [&] { return tuned("(c) Droplet from the default", g, k, cx, 1, 0); },
      [&] { return random_search(g, k, space, cx); },
      [&] { return grid_search(g, k, space, cx); },
      [&] { return tuned("(f) (b) without tile seeds", g, k, cx, kTrials, kTop, 0); },
  };
  for (const auto& run : strategies) {
    auto t0 = std::chrono::steady_clock::now();
    Outcome o = run();
    o.seconds = seconds_since(t0);
    std::fprintf(stderr, "  %-30s %6.1f s  %3d measured  %s\n", o.strategy.c_str(), o.seconds, o.measured,
                 codegen::cpu::schedule_str(o.best).c_str());
    out.push_back(o);
  }
  std::vector<Schedule> finals{space.base};
  for (const Outcome& o : out) finals.push_back(o.best);
  std::vector<std::vector<double>> t = cx.timer.time(g, k, finals, 9, 3, nullptr);
  nlohmann::json row{{"kernel", kc.name}, {"default_ms", driver::median_ms(t[0])}};
  for (size_t i = 0; i < out.size(); ++i)
    row["strategies"].push_back({{"name", out[i].strategy},
                                 {"ms", driver::median_ms(t[i + 1])},
                                 {"seconds", out[i].seconds},
                                 {"measured", out[i].measured},
                                 {"failed_batches", out[i].failures},
                                 {"schedule", codegen::cpu::schedule_str(out[i].best)}});
  return row;
}

std::string fmt(const char* f, double v) {
  char b[32];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

std::string report(const std::vector<nlohmann::json>& rows, const target::Target& t, int threads) {
  std::string s = "## Schedule search on " + std::to_string(rows.size()) + " kernels (" + t.name + ", " +
                  std::to_string(threads) + " threads)\n\nSpeedup of each strategy's final schedule over the "
                  "default schedule (re-timed side by side), and its tuning time in seconds.\n\n| kernel | default (ms) |";
  if (rows.empty()) return s + "\n";
  for (const auto& st : rows[0]["strategies"]) s += " " + st["name"].get<std::string>() + " |";
  s += "\n|---|---:|";
  for (size_t i = 0; i < rows[0]["strategies"].size(); ++i) s += "---:|";
  s += "\n";
  int matches = 0, faster = 0, same = 0, seeded = 0, unseeded = 0;
  for (const auto& r : rows) {
    double d = r["default_ms"].get<double>();
    s += "| " + r["kernel"].get<std::string>() + " | " + fmt("%.4f", d) + " |";
    for (const auto& st : r["strategies"])
      s += " " + fmt("%.2f", d / st["ms"].get<double>()) + "× (" + fmt("%.0f", st["seconds"].get<double>()) + " s) |";
    s += "\n";
    const auto& a = r["strategies"][0];
    const auto& b = r["strategies"][1];
    matches += b["ms"].get<double>() <= a["ms"].get<double>() * 1.03;
    faster += b["seconds"].get<double>() <= 0.5 * a["seconds"].get<double>();
    if (r["strategies"].size() > 5) {
      const auto& f = r["strategies"][5];
      if (f["schedule"] == b["schedule"]) {
        ++same;
      } else {
        seeded += b["ms"].get<double>() * 1.03 < f["ms"].get<double>();
        unseeded += f["ms"].get<double>() * 1.03 < b["ms"].get<double>();
      }
    }
  }
  s += "\n(b) matches or beats (a) (within 3 %) on " + std::to_string(matches) + " of " + std::to_string(rows.size()) +
       " kernels; in at most half its tuning time on " + std::to_string(faster) + ".\n";
  if (rows[0]["strategies"].size() > 5)
    s += "With the tile search's seeds, (b) ends at the same schedule as without them, (f), on " + std::to_string(same) +
         " kernels; of the others, (b) is more than 3 % faster on " + std::to_string(seeded) +
         " and more than 3 % slower on " + std::to_string(unseeded) + ".\n";
  return s;
}

int run(int argc, char** argv) {
  Options opt;
  std::string only, state = (fs::temp_directory_path() / "orchid-tune-search.jsonl").string();
  std::string cache = (fs::temp_directory_path() / "orchid-bench-target.json").string();
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--only") only = next();
    else if (a == "--threads") opt.threads = std::stoi(next());
    else if (a == "--state") state = next();
    else if (a == "--markdown") opt.markdown = next();
    else if (a == "--target-cache") cache = next();
    else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  target::Target t = target::host_target(target::ProbeOptions{}, cache).target;
  t.cores = opt.threads;
  driver::BuildOptions build;
  build.compiler.cache_dir = fs::temp_directory_path() / "orchid-bench-objects";
  build.compiler.extra_flags = codegen::cpu::codegen_flags();
  build.cores = opt.threads;
  driver::MeasureOptions measure;
  measure.orchid_exe = ORCHID_BIN;
  measure.threads = opt.threads;
  Context cx{t, build, measure, driver::ScheduleTimer(build, measure)};
  std::map<std::string, nlohmann::json> done;
  if (std::ifstream in(state); in)
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) {
        nlohmann::json j = nlohmann::json::parse(line);
        done[j["kernel"].get<std::string>()] = j;
      }
  std::vector<nlohmann::json> rows;
  for (const KernelCase& kc : kernel_cases()) {
    if (std::find(std::begin(kKernels), std::end(kKernels), kc.name) == std::end(kKernels)) continue;
    if (!only.empty() && kc.name.find(only) == std::string::npos) continue;
    if (!done.count(kc.name)) {
      std::fprintf(stderr, "%s\n", kc.name.c_str());
      done[kc.name] = tune_case(kc, cx);
      std::ofstream(state, std::ios::app) << done[kc.name].dump() << "\n";
    }
    rows.push_back(done[kc.name]);
  }
  publish(report(rows, t, opt.threads), opt);
  return 0;
}

}  // namespace
}  // namespace orchid::bench

int main(int argc, char** argv) { return orchid::bench::run(argc, argv); }
