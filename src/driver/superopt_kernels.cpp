// μGraph kernels in a model's plan (superopt_kernels.h).
#include "driver/superopt_kernels.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "driver/pipeline.h"
#include "driver/superopt_search.h"
#include "driver/ugraph_bench.h"
#include "orchestrate/optimal.h"
#include "superopt/instantiate.h"
#include "superopt/lax_programs.h"
#include "superopt/search_form.h"
#include "superopt/shrink.h"
#include "superopt/text.h"
#include "support/error.h"
#include "support/sha256.h"

namespace orchid::driver {

std::vector<superopt::SearchOptions> default_superopt_searches() {
  superopt::SearchOptions one_kernel;
  one_kernel.max_kernel_ops = 1;
  one_kernel.max_block_ops = 3;
  return {one_kernel, superopt::SearchOptions{}};
}

namespace {

using ir::NodeId;
using ir::ValueId;

// Whether the values the site computes, other than its output, stay inside it: read by none
// of the model's other nodes and no graph output.
bool self_contained(const ir::Graph& g, const superopt::LaxSite& site, const std::vector<std::vector<NodeId>>& users) {
  std::set<NodeId> inside(site.nodes.begin(), site.nodes.end());
  std::set<ValueId> outputs(g.outputs().begin(), g.outputs().end());
  for (NodeId n : site.nodes)
    for (ValueId v : g.node(n).outputs) {
      if (v == site.output) continue;
      if (outputs.count(v)) return false;
      for (NodeId u : users[static_cast<size_t>(v.v)])
        if (!inside.count(u)) return false;
    }
  return true;
}

// What a block may hold: one core's L2.
int64_t block_memory(const CompileOptions& o) {
  std::optional<size_t> l2 = target::level_index(o.target, "L2");
  return l2 ? o.target.levels[*l2].capacity_bytes : superopt::SearchOptions{}.block_memory_bytes;
}

// The compile's searches, with its threads and block memory.
std::vector<superopt::SearchOptions> search_ladder(const CompileOptions& o) {
  std::vector<superopt::SearchOptions> out = o.superopt.searches;
  for (superopt::SearchOptions& s : out) {
    s.threads = std::max(1, o.build.cores);
    s.block_memory_bytes = block_memory(o);
  }
  return out;
}

// The searches of the ladder that fit in `seconds`, their results merged (found, then
// unverified, each in search order); `line` receives their summaries.
superopt::SearchResult search_ladder_of(const ir::Graph& searched, const CompileOptions& o, double seconds,
                                        std::string* line) {
  superopt::SearchResult merged;
  std::set<std::string> seen;  // μGraphs' texts
  auto start = std::chrono::steady_clock::now();
  for (superopt::SearchOptions so : search_ladder(o)) {
    double left = seconds - std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (left < 1) {
      *line += "; the rest of the searches skipped: the time budget is spent";
      break;
    }
    so.time_limit_s = left;
    CachedSearch c = superopt_search(searched, so, o.measure.db, o.measure.target + "/superopt");
    *line += "; search (" + std::to_string(so.max_kernel_ops) + " kernel, " + std::to_string(so.max_block_ops) +
             " block operators)" + (c.from_cache ? " (cached)" : "") + ": " + c.stats;
    if (!c.result.unsupported.empty()) {
      merged.unsupported = c.result.unsupported;
      break;
    }
    // A larger search finds the smaller one's μGraphs again: each is kept once.
    for (size_t i = 0; i < c.result.found.size(); ++i)
      if (seen.insert(superopt::print_ugraph(c.result.found[i])).second) {
        merged.found.push_back(c.result.found[i]);
        merged.cost.push_back(c.result.cost[i]);
      }
    for (const superopt::UGraph& u : c.result.unverified)
      if (seen.insert(superopt::print_ugraph(u)).second) merged.unverified.push_back(u);
  }
  return merged;
}

// The μGraphs worth timing for the program at its own sizes, with labels: those of a shrunk
// copy instantiated, or (where it has no shrunk copy) the program's own. `line` receives the
// search's summary.
std::vector<superopt::UGraph> search_program(const ir::Graph& program, const CompileOptions& o, double seconds,
                                             std::vector<std::string>* labels, std::string* line) {
  std::string why;
  std::optional<ir::Graph> small = superopt::shrink(program, &why);
  *line += small ? "a shrunk copy searched" : "searched at its own sizes (" + why + ")";
  superopt::SearchResult r = search_ladder_of(small ? *small : program, o, seconds, line);
  if (!r.unsupported.empty()) {
    *line += "; not searched: " + r.unsupported;
    return {};
  }
  std::vector<superopt::UGraph> out;
  if (!small) {
    // The cheapest by estimate, over every search of the ladder.
    std::vector<size_t> order(r.found.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return r.cost[a] < r.cost[b]; });
    for (size_t i = 0; i < order.size() && out.size() < o.superopt.max_ugraphs; ++i) {
      out.push_back(r.found[order[i]]);
      labels->push_back("μgraph " + std::to_string(order[i] + 1));
    }
    return out;
  }
  std::vector<std::string> notes;
  std::vector<superopt::Instantiated> in = superopt::instantiate_results(
      r, *small, program, std::max(1, o.build.cores), block_memory(o), o.superopt.max_ugraphs, o.superopt.tilings,
      &notes);
  for (superopt::Instantiated& x : in) {
    labels->push_back(superopt::instance_label(x));
    out.push_back(std::move(x.ugraph));
  }
  return out;
}

UGraphBenchOptions bench_options(const CompileOptions& o) {
  UGraphBenchOptions b;
  b.build = o.build;
  b.measure = o.measure;
  b.measure.work_dir = o.measure.work_dir / "superopt";
  b.baseline = o;
  b.baseline.superopt.enabled = false;
  b.baseline.measure_seconds = 0;
  b.baseline.progress = nullptr;
  b.rounds = o.superopt.rounds;
  b.seed = o.verify_seed;
  b.tolerance = o.verify_tolerance();
  return b;
}

// Times the μGraphs against the compiled program; the fastest when it wins by the margin,
// with its time in `seconds`.
std::optional<size_t> measure_program(const ir::Graph& program, const std::vector<superopt::UGraph>& found,
                                      const std::vector<std::string>& labels, const CompileOptions& o,
                                      std::string* line, double* seconds) {
  UGraphBench r = bench_ugraphs(program, found, bench_options(o));
  std::optional<size_t> best = fastest_ugraph(r);
  for (size_t i = 0; i < found.size(); ++i) *line += "; " + labels[i] + " " + show(r.times[i]);
  *line += "; compiled without the superoptimizer " + show(r.baseline);
  if (!best || !r.baseline.ms || *r.times[*best].ms * o.superopt.min_speedup > *r.baseline.ms) {
    *line += " → not used";
    return std::nullopt;
  }
  char ratio[64];
  std::snprintf(ratio, sizeof ratio, " → %s used (%.2fx)", labels[*best].c_str(), *r.baseline.ms / *r.times[*best].ms);
  *line += ratio;
  *seconds = *r.times[*best].ms * 1e-3;
  return best;
}

}  // namespace

SuperoptKernels find_superopt_kernels(const ir::Graph& g, const CompileOptions& o) {
  SuperoptKernels out;
  if (o.measure.orchid_exe.empty()) {
    out.notes.push_back("not run: choosing μGraphs needs measuring, and this compile measures nothing");
    return out;
  }
  std::vector<superopt::LaxProgram> programs = superopt::lax_programs(g, o.superopt.max_programs);
  if (programs.empty()) out.notes.push_back("no LAX subprogram with a matmul or a sum in the model");
  std::vector<std::vector<NodeId>> users = g.users();
  auto start = std::chrono::steady_clock::now();
  for (size_t p = 0; p < programs.size(); ++p) {
    const superopt::LaxProgram& prog = programs[p];
    std::string line = "%" + prog.output + " (" + std::to_string(prog.graph.num_nodes()) + " primitives, " +
                       std::to_string(prog.sites.size()) + " in the model): ";
    std::vector<const superopt::LaxSite*> sites;
    for (const superopt::LaxSite& s : prog.sites)
      if (self_contained(g, s, users)) sites.push_back(&s);
    if (sites.empty()) {
      out.notes.push_back(line + "not searched: its intermediate values are read elsewhere in the model");
      continue;
    }
    double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double share = (o.superopt.budget_s - spent) / static_cast<double>(programs.size() - p);
    if (share < 1) {
      out.notes.push_back(line + "not searched: the time budget is spent");
      continue;
    }
    std::vector<std::string> labels;
    std::string search_line;
    std::vector<superopt::UGraph> found;
    double seconds = 0;
    std::optional<size_t> best;
    // A program whose μGraphs cannot be built or timed here (a dtype the μGraph kernels do not
    // take, say) is left to the orchestration, with the reason.
    try {
      // Searched in its search form (views, transposes and a constant scale at the boundary),
      // the μGraphs found computing the program itself once the boundary is put back.
      superopt::SearchForm form = superopt::search_form(prog.graph);
      if (form.changed) line += "its search form: " + superopt::describe(form) + "; ";
      found = search_program(form.program, o, share, &labels, &search_line);
      for (superopt::UGraph& u : found) u = superopt::attach(form, prog.graph, u);
      line += search_line;
      if (found.empty()) {
        out.notes.push_back(line + "; no μgraph to time");
        continue;
      }
      best = measure_program(prog.graph, found, labels, o, &line, &seconds);
    } catch (const UserError& e) {
      out.notes.push_back(line + "; not used: " + e.what());
      continue;
    }
    out.notes.push_back(line);
    if (!best) continue;
    std::string key = sha256_hex(superopt::print_ugraph(found[*best]));
    for (const superopt::LaxSite* s : sites) {
      auto step = std::make_shared<UGraphStep>(UGraphStep{found[*best], s->inputs, key});
      out.sites.push_back({tile::Kernel{s->nodes, {s->output}}, std::move(step), seconds});
    }
  }
  return out;
}

namespace {

// Per node of g: whether it depends on the value v (reads it, or what depends on it).
std::vector<bool> depends_on(const ir::Graph& g, ValueId v) {
  std::vector<bool> dep(static_cast<size_t>(g.num_nodes()), false);
  std::set<ValueId> tainted{v};
  for (int32_t n = 0; n < g.num_nodes(); ++n) {
    const ir::Primitive& p = g.node(NodeId{n});
    if (std::none_of(p.inputs.begin(), p.inputs.end(), [&](ValueId x) { return tainted.count(x) > 0; })) continue;
    dep[static_cast<size_t>(n)] = true;
    tainted.insert(p.outputs.begin(), p.outputs.end());
  }
  return dep;
}

// What is left of kernel k without the site's nodes: those that do not depend on the site's
// output, then those that do — a kernel each, where it has nodes, so that what fed the site
// and what reads its result (a residual add fused around it) need not run together. Each part
// writes k's outputs it computes, what the other part reads of it, and what the site reads
// that no kernel wrote.
std::vector<tile::Kernel> leftovers(const ir::Graph& g, const tile::Kernel& k, const std::set<NodeId>& in_site,
                                    const std::vector<bool>& downstream, const std::vector<ValueId>& site_reads,
                                    const std::set<ValueId>& written) {
  std::vector<NodeId> nodes = k.nodes;
  std::sort(nodes.begin(), nodes.end());
  tile::Kernel parts[2];  // before the site, after it
  for (NodeId n : nodes)
    if (!in_site.count(n)) parts[downstream[static_cast<size_t>(n.v)] ? 1 : 0].nodes.push_back(n);
  std::set<ValueId> k_outputs(k.outputs.begin(), k.outputs.end());
  std::set<ValueId> site_needs(site_reads.begin(), site_reads.end());
  std::vector<tile::Kernel> out;
  for (int side = 0; side < 2; ++side) {
    tile::Kernel& part = parts[side];
    if (part.nodes.empty()) continue;
    std::set<ValueId> other_reads;
    for (NodeId n : parts[1 - side].nodes) other_reads.insert(g.node(n).inputs.begin(), g.node(n).inputs.end());
    for (NodeId n : part.nodes)
      for (ValueId v : g.node(n).outputs)
        if (k_outputs.count(v) || other_reads.count(v) || (site_needs.count(v) && !written.count(v)))
          part.outputs.push_back(v);
    std::sort(part.outputs.begin(), part.outputs.end());
    out.push_back(std::move(part));
  }
  return out;
}

// The plan with one more site placed (see the header); its problems, if any, in `problems`.
PlacedKernels with_site(const ir::Graph& g, const PlacedKernels& p, const UGraphSite& site,
                        std::vector<std::string>* problems) {
  std::set<NodeId> in_site(site.kernel.nodes.begin(), site.kernel.nodes.end());
  std::vector<ValueId> reads = tile::kernel_inputs(g, site.kernel);
  std::vector<bool> downstream = depends_on(g, site.kernel.outputs[0]);
  std::set<ValueId> written;
  for (size_t i = 0; i < p.kernels.size(); ++i)
    for (ValueId v : p.kernels[i].outputs) written.insert(v);
  struct Item {
    tile::Kernel kernel;
    std::shared_ptr<const UGraphStep> ugraph;
    std::pair<size_t, int> priority;  // its place, then the site before what remains of a kernel
  };
  std::vector<Item> items;
  std::optional<size_t> first_touch;
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    const tile::Kernel& k = p.kernels[i];
    if (std::none_of(k.nodes.begin(), k.nodes.end(), [&](NodeId n) { return in_site.count(n) > 0; })) {
      items.push_back({k, p.ugraphs[i], {i, 1}});
      continue;
    }
    if (p.ugraphs[i]) {
      problems->push_back("it overlaps another μGraph kernel");
      return p;
    }
    if (!first_touch) first_touch = i;
    for (tile::Kernel& part : leftovers(g, k, in_site, downstream, reads, written)) items.push_back({part, nullptr, {i, 1}});
  }
  items.push_back({site.kernel, site.step, {first_touch.value_or(p.kernels.size()), 0}});
  // An execution order: repeatedly the ready item of the smallest priority.
  std::map<ValueId, size_t> writer;
  for (size_t i = 0; i < items.size(); ++i)
    for (ValueId v : items[i].kernel.outputs) writer[v] = i;
  std::vector<std::vector<size_t>> needs(items.size());
  for (size_t i = 0; i < items.size(); ++i)
    for (ValueId v : tile::kernel_inputs(g, items[i].kernel)) {
      auto w = writer.find(v);
      if (w != writer.end() && w->second != i) needs[i].push_back(w->second);
    }
  PlacedKernels next;
  next.placed = p.placed + 1;
  std::vector<bool> done(items.size(), false);
  for (size_t round = 0; round < items.size(); ++round) {
    std::optional<size_t> pick;
    for (size_t i = 0; i < items.size(); ++i) {
      if (done[i]) continue;
      bool ready = std::all_of(needs[i].begin(), needs[i].end(), [&](size_t j) { return done[j]; });
      if (ready && (!pick || items[i].priority < items[*pick].priority)) pick = i;
    }
    if (!pick) {
      problems->push_back("its kernels would need each other's outputs in a cycle");
      return p;
    }
    done[*pick] = true;
    next.kernels.push_back(items[*pick].kernel);
    next.ugraphs.push_back(items[*pick].ugraph);
  }
  *problems = orchestrate::plan_problems(g, next.kernels);
  return problems->empty() ? next : p;
}

}  // namespace

PlacedKernels place_ugraph_kernels(const ir::Graph& g, const std::vector<tile::Kernel>& kernels,
                                   const std::vector<UGraphSite>& sites, std::vector<std::string>* notes) {
  PlacedKernels p;
  p.kernels = kernels;
  p.ugraphs.assign(kernels.size(), nullptr);
  for (const UGraphSite& site : sites) {
    std::vector<std::string> problems;
    p = with_site(g, p, site, &problems);
    if (!problems.empty() && notes != nullptr)
      notes->push_back("the μGraph computing %" + g.value(site.kernel.outputs[0]).name +
                       " is not placed: " + problems.front());
  }
  return p;
}

PlacedKernels mark_ugraph_kernels(const std::vector<tile::Kernel>& kernels, const std::vector<UGraphSite>& sites) {
  PlacedKernels p;
  p.kernels = kernels;
  p.ugraphs.assign(kernels.size(), nullptr);
  for (size_t i = 0; i < kernels.size(); ++i) {
    tile::Kernel k = tile::sorted(kernels[i]);
    for (const UGraphSite& s : sites) {
      tile::Kernel site = tile::sorted(s.kernel);
      if (site.nodes == k.nodes && site.outputs == k.outputs) {
        p.ugraphs[i] = s.step;
        ++p.placed;
        break;
      }
    }
  }
  return p;
}

std::vector<std::vector<StepChoice>> implement_placed(const ir::Graph& g, const PlacedKernels& p) {
  std::vector<std::vector<StepChoice>> out;
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    if (!p.ugraphs[i]) {
      out.push_back(implement_each(g, {p.kernels[i]}).front());
      continue;
    }
    StepChoice s;
    s.kernel = p.kernels[i];
    s.kind = StepKind::UGraph;
    s.inputs = tile::kernel_inputs(g, s.kernel);
    s.ugraph = p.ugraphs[i];
    out.push_back({s});
  }
  return out;
}

}  // namespace orchid::driver
