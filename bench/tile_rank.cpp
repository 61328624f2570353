// Rank agreement of the analytic cost model (tile/cost.h, tune/estimate.h) with measured time:
// for each kernel of a set drawn from the benchmark models' shapes, random schedules are
// generated, compiled into one shared object per kernel, timed on this machine (the tasks cut
// in contiguous ranges over the threads, as the runtime does) and priced by the model; the
// Spearman correlation of the two rankings is reported per kernel, with the median, and how
// much slower the model's pick is than the fastest schedule measured.
//
// Second table: alternative plans of the same primitives (every way of cutting a kernel's
// primitives, in topological order, into consecutive kernels under default schedules),
// measured and priced as sums over their kernels. Third: Welder §2's matmul + softmax fused
// under the tile the search picks, against the unfused pair.
//
// Usage: tile_rank_bench [--schedules N] [--threads T] [--min-time S] [--only NAME]
//                        [--target-cache FILE] [--sources DIR] [--schedule TEXT]... [--markdown FILE]
// --schedule (repeated) times the given schedules after the default one instead of random ones
// (with --only, of one kernel); --sources writes each shared object's source to DIR.
#include <omp.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "codegen/cpu/codegen.h"
#include "codegen/cpu/compiler.h"
#include "codegen/cpu/lower.h"
#include "codegen/kernel_graphs.h"
#include "interp/random_inputs.h"
#include "ir/parser.h"
#include "kernel_cases.h"
#include "micro_common.h"
#include "orchid/kernel_abi.h"
#include "runtime/kernel_library.h"
#include "support/random.h"
#include "target/host.h"
#include "testlib/tile_fixtures.h"
#include "tile/search.h"
#include "tune/estimate.h"
#include "tune/seeds.h"

namespace orchid::bench {
namespace {

using codegen::cpu::Schedule;

constexpr auto whole = testlib::whole_graph_kernel;

// A random schedule: per anchor dim a power of two up to the dim, or the whole dim (the
// innermost more often whole), with at most 16384 tasks; random vector width, unroll and
// inlining. The default schedule comes first.
std::vector<Schedule> schedules(const ir::Graph& g, const tile::Kernel& k, int count, int threads, Rng& rng) {
  std::vector<Schedule> out{codegen::cpu::default_schedule(g, k, threads)};
  std::set<std::string> seen{codegen::cpu::schedule_str(out[0])};
  const ir::Dims& shape = g.type(k.outputs[codegen::cpu::anchor_output(g, k)]).shape;
  for (int tries = 0; static_cast<int>(out.size()) < count && tries < 100 * count; ++tries) {
    Schedule s = out[0];
    int64_t tasks = 1;
    for (size_t d = 0; d < shape.size(); ++d) {
      bool whole_dim = rng.next() % (d + 1 == shape.size() ? 2 : 4) == 0;
      int64_t t = shape[d];
      if (!whole_dim) {
        int bits = 0;
        while ((int64_t{2} << bits) <= shape[d]) ++bits;
        t = int64_t{1} << (rng.next() % (bits + 1));
      }
      s.tile[d] = t;
      tasks *= (shape[d] + t - 1) / t;
    }
    if (tasks > 16384) continue;
    const int widths[] = {1, 4, 8, 16}, unrolls[] = {1, 2, 4};
    s.vector_width = widths[rng.next() % 4];
    s.unroll = unrolls[rng.next() % 3];
    s.inline_single_use = rng.next() % 4 != 0;
    if (seen.insert(codegen::cpu::schedule_str(s)).second) out.push_back(s);
  }
  return out;
}

// Where --sources DIR writes each shared object's source ("": nowhere).
struct Context {
  const target::Target& target;
  const codegen::cpu::Compiler& compiler;
  int threads;
  double min_time;
  std::string sources;
  std::vector<Schedule> given;  // --schedule TEXT: these after the default, instead of random ones
};

// The kernels compiled into one shared object, loaded by the runtime's loader.
runtime::KernelLibrary compile_and_load(const std::vector<codegen::cpu::GeneratedKernel>& gen, const Context& cx,
                                        const std::string& name) {
  std::string source = codegen::cpu::library_source(gen);
  if (!cx.sources.empty()) {
    std::string file = name;
    for (char& ch : file)
      if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    std::ofstream(fs::path(cx.sources) / (file + ".cpp")) << source;
  }
  return runtime::KernelLibrary::open(cx.compiler.compile(source).path.string());
}

// Buffers of every value a set of kernels reads or writes, by value id.
struct Buffers {
  std::map<ir::ValueId, Aligned> by_value;
  void* at(ir::ValueId v) { return by_value.at(v).get(); }
};

Buffers buffers(const ir::Graph& g) {
  Buffers b;
  std::vector<ir::Tensor> inputs = interp::random_inputs(g, 7);
  for (int32_t i = 0; i < g.num_values(); ++i) {
    ir::ValueId v(i);
    int64_t bytes = g.type(v).numel() * ir::dtype_bytes(g.type(v).dtype);
    b.by_value.emplace(v, Aligned(static_cast<size_t>(std::max<int64_t>(bytes, 64))));
  }
  for (size_t i = 0; i < g.inputs().size(); ++i)
    std::memcpy(b.at(g.inputs()[i]), inputs[i].data(), inputs[i].bytes().size());
  return b;
}

// Runs kernel i of lib (generated as gk) over its tasks, cut into `threads` contiguous ranges.
std::function<void()> runner(const runtime::KernelLibrary& lib, size_t i, const codegen::cpu::GeneratedKernel& gk,
                             Buffers& b, int threads, std::vector<Aligned>& scratch) {
  const orchid_kernel_desc* d = &lib.kernel(static_cast<int64_t>(i));
  std::vector<void*> ptrs;
  for (ir::ValueId v : gk.inputs) ptrs.push_back(b.at(v));
  for (ir::ValueId v : gk.outputs) ptrs.push_back(b.at(v));
  scratch.clear();
  for (int t = 0; t < threads; ++t) scratch.emplace_back(static_cast<size_t>(std::max<int64_t>(d->scratch_bytes, 64)));
  std::vector<void*> scr;
  for (Aligned& a : scratch) scr.push_back(a.get());
  return [d, ptrs, scr, threads] {
    int64_t err = 0;
    orchid_args args{const_cast<void**>(ptrs.data()), static_cast<int64_t>(ptrs.size()), &err};
    int64_t n = d->task_count;
#pragma omp parallel num_threads(threads)
    {
      int t = omp_get_thread_num();
      int64_t begin = n * t / threads, end = n * (t + 1) / threads;
      if (begin < end) d->fn(&args, begin, end, scr[static_cast<size_t>(t)]);
    }
  };
}

std::vector<double> ranks(const std::vector<double>& x) {
  std::vector<size_t> idx(x.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return x[a] < x[b]; });
  std::vector<double> r(x.size());
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j + 1 < idx.size() && x[idx[j + 1]] == x[idx[i]]) ++j;
    for (size_t q = i; q <= j; ++q) r[idx[q]] = (double(i) + double(j)) / 2;
    i = j + 1;
  }
  return r;
}

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> ra = ranks(a), rb = ranks(b);
  double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / double(ra.size());
  double mb = std::accumulate(rb.begin(), rb.end(), 0.0) / double(rb.size());
  double num = 0, da = 0, db = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    num += (ra[i] - ma) * (rb[i] - mb);
    da += (ra[i] - ma) * (ra[i] - ma);
    db += (rb[i] - mb) * (rb[i] - mb);
  }
  return da == 0 || db == 0 ? 0.0 : num / std::sqrt(da * db);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

struct Row {
  std::string name;
  size_t count = 0;
  double rho = 0;
  double best_ms = 0, default_ms = 0, pick_ms = 0;
};

// The agreement of the model's times with the measured ones; the first is the default's.
Row summarize(const std::string& name, const std::vector<double>& model, const std::vector<double>& ms) {
  size_t pick = static_cast<size_t>(std::min_element(model.begin(), model.end()) - model.begin());
  return Row{name, ms.size(), spearman(model, ms), *std::min_element(ms.begin(), ms.end()), ms[0], ms[pick]};
}

Row rank_schedules(const KernelCase& kc, int count, const Context& cx) {
  const target::Target& t = cx.target;
  int threads = cx.threads;
  ir::Graph g = ir::parse_graph(kc.text);
  tile::Kernel k = whole(g);
  Rng rng(std::hash<std::string>{}(kc.name));
  std::vector<Schedule> ss = schedules(g, k, cx.given.empty() ? count : 1, threads, rng);
  ss.insert(ss.end(), cx.given.begin(), cx.given.end());
  std::vector<codegen::cpu::GeneratedKernel> gen;
  std::vector<double> model;
  for (size_t i = 0; i < ss.size(); ++i) {
    gen.push_back(codegen::cpu::generate_kernel(g, k, ss[i], "k" + std::to_string(i)));
    model.push_back(tune::estimate_cpu_schedule(g, k, ss[i], t).seconds * 1e3);
  }
  runtime::KernelLibrary lib = compile_and_load(gen, cx, kc.name);
  Buffers b = buffers(g);
  std::vector<std::vector<Aligned>> scratch(ss.size());
  std::vector<std::function<void()>> runs;
  for (size_t i = 0; i < ss.size(); ++i) runs.push_back(runner(lib, i, gen[i], b, threads, scratch[i]));
  std::vector<double> ms = rounds_of(runs, cx.min_time);
  Row r = summarize(kc.name, model, ms);
  for (size_t i = 0; i < ss.size(); ++i)
    std::fprintf(stderr, "  %-28s %-60s model %9.4f ms  measured %9.4f ms\n", kc.name.c_str(),
                 codegen::cpu::schedule_str(ss[i]).c_str(), model[i], ms[i]);
  return r;
}

// Every way of cutting the nodes (in topological order) into consecutive kernels; each kernel
// writes what later kernels or the graph's outputs read.
std::vector<std::vector<tile::Kernel>> consecutive_plans(const ir::Graph& g) {
  int n = g.num_nodes();
  auto users = g.users();
  std::set<ir::ValueId> graph_out(g.outputs().begin(), g.outputs().end());
  std::vector<std::vector<tile::Kernel>> plans;
  for (uint32_t cuts = 0; cuts < (1u << (n - 1)); ++cuts) {
    std::vector<tile::Kernel> plan(1);
    for (int i = 0; i < n; ++i) {
      if (i > 0 && (cuts >> (i - 1) & 1u)) plan.emplace_back();
      plan.back().nodes.push_back(ir::NodeId(i));
    }
    for (tile::Kernel& k : plan) {
      std::set<ir::NodeId> in(k.nodes.begin(), k.nodes.end());
      for (ir::NodeId nd : k.nodes)
        for (ir::ValueId v : g.node(nd).outputs) {
          bool outside = graph_out.count(v) > 0;
          for (ir::NodeId u : users[static_cast<size_t>(v.v)]) outside = outside || !in.count(u);
          if (outside) k.outputs.push_back(v);
        }
    }
    plans.push_back(plan);
  }
  return plans;
}

Row rank_plans(const KernelCase& kc, const Context& cx) {
  const target::Target& t = cx.target;
  int threads = cx.threads;
  ir::Graph g = ir::parse_graph(kc.text);
  std::vector<std::vector<tile::Kernel>> plans = consecutive_plans(g);
  std::vector<codegen::cpu::GeneratedKernel> gen;
  std::vector<std::vector<size_t>> plan_kernels;
  std::vector<double> model;
  for (const auto& plan : plans) {
    plan_kernels.emplace_back();
    double sum = 0;
    for (const tile::Kernel& k : plan) {
      Schedule s = codegen::cpu::default_schedule(g, k, threads);
      plan_kernels.back().push_back(gen.size());
      gen.push_back(codegen::cpu::generate_kernel(g, k, s, "k" + std::to_string(gen.size())));
      sum += tune::estimate_cpu_schedule(g, k, s, t).seconds * 1e3;
    }
    model.push_back(sum);
  }
  runtime::KernelLibrary lib = compile_and_load(gen, cx, kc.name + " plans");
  Buffers b = buffers(g);
  std::vector<std::vector<Aligned>> scratch(gen.size());
  std::vector<std::function<void()>> runs;
  for (const auto& ks : plan_kernels) {
    std::vector<std::function<void()>> steps;
    for (size_t i : ks) steps.push_back(runner(lib, i, gen[i], b, threads, scratch[i]));
    runs.push_back([steps] {
      for (const auto& s : steps) s();
    });
  }
  std::vector<double> ms = rounds_of(runs, cx.min_time);
  Row r = summarize(kc.name, model, ms);
  for (size_t i = 0; i < plans.size(); ++i)
    std::fprintf(stderr, "  %-28s plan %2zu (%zu kernels) model %9.4f ms  measured %9.4f ms\n", kc.name.c_str(), i,
                 plans[i].size(), model[i], ms[i]);
  return r;
}

// Welder §2's example on this machine: A [98304×64]·B [64×128] then a softmax over rows, as
// one fused kernel with the tile the search picks (with the default schedule's, and with the
// cheapest two-level tiling of the hierarchical search), against the unfused pair (the
// matmul, then the softmax).
std::string welder_example(const Context& cx) {
  ir::Graph g = ir::parse_graph(testlib::matmul_softmax(98304));
  tile::Kernel fused = whole(g);
  tile::Kernel mm{{ir::NodeId(0)}, {g.node(ir::NodeId(0)).outputs[0]}};
  tile::Kernel soft{{ir::NodeId(1), ir::NodeId(2), ir::NodeId(3), ir::NodeId(4)}, g.outputs()};
  Schedule base = codegen::cpu::default_schedule(g, fused, cx.threads);
  tile::CostConfig cfg = tune::cpu_cost_config(g, fused, base);
  auto config = [&](const ir::Dims& tile) {
    tile::CostConfig c = cfg;
    c.grid = tile::anchor_grid(g, fused, 0, tile);
    return c;
  };
  std::vector<tile::TileChoice> found = tile::search_tiles(g, fused, 0, config, cx.target);
  Schedule searched = base;
  searched.tile = found.front().tile;
  // The cheapest two-level tiling the hierarchical search finds (its overall pick may be one level).
  tile::HierarchySearchOptions ho;
  ho.top_k = 1000;
  std::vector<Schedule> seeds = tune::tile_search_seeds(g, fused, base, cx.target, ho);
  auto two = std::find_if(seeds.begin(), seeds.end(), [](const Schedule& s) { return !s.inner.empty(); });
  const bool any_two = two != seeds.end();
  const Schedule two_level = any_two ? *two : searched;
  std::vector<std::pair<tile::Kernel, Schedule>> ks = {{fused, searched}, {fused, base},
      {mm, codegen::cpu::default_schedule(g, mm, cx.threads)}, {soft, codegen::cpu::default_schedule(g, soft, cx.threads)},
      {fused, two_level}};
  std::vector<codegen::cpu::GeneratedKernel> gen;
  std::vector<double> model;
  for (size_t i = 0; i < ks.size(); ++i) {
    gen.push_back(codegen::cpu::generate_kernel(g, ks[i].first, ks[i].second, "k" + std::to_string(i)));
    model.push_back(tune::estimate_cpu_schedule(g, ks[i].first, ks[i].second, cx.target).seconds * 1e3);
  }
  runtime::KernelLibrary lib = compile_and_load(gen, cx, "welder example");
  Buffers b = buffers(g);
  std::vector<std::vector<Aligned>> scratch(gen.size());
  std::vector<std::function<void()>> steps;
  for (size_t i = 0; i < gen.size(); ++i) steps.push_back(runner(lib, i, gen[i], b, cx.threads, scratch[i]));
  std::vector<double> ms = rounds_of({steps[0], steps[1], [&] { steps[2](); steps[3](); }, steps[4]}, cx.min_time);
  tile::GridStats small = tile::propagate_grid(g, fused, {{4, 128}}), big = tile::propagate_grid(g, fused, {{16, 128}});
  std::string t = "### Welder's example: matmul [98304×64]·[64×128] + softmax\n\n"
                  "Global traffic of the fused kernel: tiles [4×128] " + std::to_string(small.traffic_bytes()) +
                  " bytes, [16×128] " + std::to_string(big.traffic_bytes()) + " bytes.\n\n"
                  "| plan | schedule | model (ms) | measured (ms) |\n|---|---|---:|---:|\n";
  t += "| fused, searched tile | " + codegen::cpu::schedule_str(searched) + " | " + fmt("%.3f", model[0]) + " | " +
       fmt("%.3f", ms[0]) + " |\n";
  t += "| fused, default schedule | " + codegen::cpu::schedule_str(base) + " | " + fmt("%.3f", model[1]) + " | " +
       fmt("%.3f", ms[1]) + " |\n";
  t += std::string("| fused, two levels (the hierarchical search's cheapest") +
       (any_two ? "" : ": none found, the searched tile") + ") | " + codegen::cpu::schedule_str(two_level) + " | " +
       fmt("%.3f", model[4]) + " | " + fmt("%.3f", ms[3]) + " |\n";
  t += "| matmul, then softmax | defaults | " + fmt("%.3f", model[2] + model[3]) + " | " + fmt("%.3f", ms[2]) + " |\n\n";
  return t;
}

std::string table(const std::string& title, const std::string& what, const std::vector<Row>& rows) {
  std::string s = "### " + title + "\n\n| kernel | " + what +
                  " | Spearman ρ | fastest (ms) | default (ms) | model's pick (ms) | pick / fastest |\n"
                  "|---|---:|---:|---:|---:|---:|---:|\n";
  std::vector<double> rhos;
  for (const Row& r : rows) {
    rhos.push_back(r.rho);
    s += "| " + r.name + " | " + std::to_string(r.count) + " | " + fmt("%.2f", r.rho) + " | " + fmt("%.4f", r.best_ms) +
         " | " + fmt("%.4f", r.default_ms) + " | " + fmt("%.4f", r.pick_ms) + " | " + fmt("%.2f", r.pick_ms / r.best_ms) +
         " |\n";
  }
  return s + "\nMedian Spearman ρ over " + std::to_string(rows.size()) + " kernels: " + fmt("%.2f", median(rhos)) + "\n\n";
}

int run(int argc, char** argv) {
  Options opt;
  opt.min_time = 0.05;
  int count = 20;
  std::vector<Schedule> given;
  std::string only, sources, cache = (fs::temp_directory_path() / "orchid-bench-target.json").string();
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--schedules") count = std::stoi(next());
    else if (a == "--threads") opt.threads = std::stoi(next());
    else if (a == "--min-time") opt.min_time = std::stod(next());
    else if (a == "--only") only = next();
    else if (a == "--target-cache") cache = next();
    else if (a == "--sources") sources = next();
    else if (a == "--schedule") given.push_back(codegen::cpu::parse_schedule(next()));
    else if (a == "--markdown") opt.markdown = next();
    else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  target::Target t = target::host_target(target::ProbeOptions{}, cache).target;
  t.cores = opt.threads;
  codegen::cpu::CompilerOptions co;
  co.cache_dir = fs::temp_directory_path() / "orchid-bench-objects";
  co.extra_flags = codegen::cpu::codegen_flags();
  codegen::cpu::Compiler cc(co);
  Context cx{t, cc, opt.threads, opt.min_time, sources, given};
  std::vector<Row> sched, plans;
  for (const KernelCase& kc : kernel_cases()) {
    if (!only.empty() && kc.name.find(only) == std::string::npos) continue;
    std::fprintf(stderr, "%s\n", kc.name.c_str());
    sched.push_back(rank_schedules(kc, count, cx));
    if (ir::parse_graph(kc.text).num_nodes() >= 3) plans.push_back(rank_plans(kc, cx));
  }
  std::string text = "## Analytic cost against measured time (" + t.name + ", " + std::to_string(opt.threads) +
                     " threads)\n\n";
  text += table("Schedules of one kernel", "schedules", sched);
  text += table("Plans of the same primitives (consecutive kernels, default schedules)", "plans", plans);
  if (only.empty() || std::string("welder example").find(only) != std::string::npos) text += welder_example(cx);
  publish(text, opt);
  return 0;
}

}  // namespace
}  // namespace orchid::bench

int main(int argc, char** argv) { return orchid::bench::run(argc, argv); }
