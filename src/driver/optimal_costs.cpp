// The cost loop of the optimal orchestration (optimal_costs.h).
#include "driver/optimal_costs.h"

#include <cmath>
#include <cstdio>
#include <map>

#include "codegen/cpu/schedule.h"
#include "driver/implement.h"
#include "orchestrate/strategies.h"
#include "tune/estimate.h"

namespace orchid::driver {

namespace {

std::string identity(const tile::Kernel& k) {
  std::vector<ir::NodeId> nodes = k.nodes;
  std::vector<ir::ValueId> outs = k.outputs;
  std::sort(nodes.begin(), nodes.end());
  std::sort(outs.begin(), outs.end());
  std::string s;
  for (ir::NodeId n : nodes) s += std::to_string(n.v) + ",";
  s += "|";
  for (ir::ValueId v : outs) s += std::to_string(v.v) + ",";
  return s;
}

// Seconds of the kernel as it would run (the steps implement() makes of it): aliases are
// free; a failed candidate never runs.
double measure_kernel(const ir::Graph& g, const tile::Kernel& k, const BuildOptions& build, const MeasureOptions& m) {
  double total = 0;
  for (const StepChoice& s : implement(g, {k})) {
    if (s.kind == StepKind::Alias) continue;
    CandidateTime t = measure_candidate(g, s, build, m);
    if (!t.ms) return INFINITY;
    total += *t.ms * 1e-3;
  }
  return total;
}

// Measures every kernel of a plan not measured yet; returns how many were new.
int measure_plan(const ir::Graph& g, const std::vector<tile::Kernel>& plan, const BuildOptions& build,
                 const MeasureOptions& m, std::map<std::string, double>& measured) {
  int fresh = 0;
  for (const tile::Kernel& k : plan)
    if (!measured.count(identity(k))) {
      measured[identity(k)] = measure_kernel(g, k, build, m);
      ++fresh;
    }
  return fresh;
}

double measured_cost(const std::vector<tile::Kernel>& plan, const std::map<std::string, double>& measured) {
  double total = 0;
  for (const tile::Kernel& k : plan) total += measured.at(identity(k));
  return total;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

void describe(const OptimalPlan& p, std::vector<std::string>& notes) {
  const orchestrate::OptimalResult& r = p.last;
  notes.push_back("optimal: " + std::to_string(p.rounds) + " rounds, " + std::to_string(p.measured) +
                  " kernels measured; plan cost " + fmt("%.4f", r.cost * 1e3) + " ms, " +
                  (r.optimal ? "proven optimal" : "gap " + fmt("%.2f", r.gap() * 100) + " %") + ", " +
                  std::to_string(r.cuts.size()) + " cuts, solve " + fmt("%.2f", r.seconds) + " s");
  const orchestrate::SubgraphStats* largest = nullptr;
  for (const orchestrate::SubgraphStats& s : r.subgraphs)
    if (largest == nullptr || s.states > largest->states) largest = &s;
  if (largest != nullptr)
    notes.push_back("largest subgraph: " + std::to_string(largest->nodes) + " primitives, " +
                    std::to_string(largest->states) + " states, " + std::to_string(largest->candidates) +
                    " candidates, " + fmt("%.3f", largest->solve_seconds) + " s to solve");
  for (const orchestrate::PruneRow& row : r.pruning)
    notes.push_back("pruning rule " + row.rule + ": " + std::to_string(row.before) + " → " + std::to_string(row.after));
}

}  // namespace

orchestrate::CostOracle analytic_cost(const ir::Graph& g, const target::Target& t, int cores,
                                      double launch_seconds) {
  orchestrate::CostOracle roofline = orchestrate::roofline_cost(g, t, launch_seconds);
  return [&g, t, cores, launch_seconds, roofline](const tile::Kernel& k) {
    for (ir::NodeId n : k.nodes) {
      ir::PrimKind kind = g.node(n).kind();
      if (kind == ir::PrimKind::Linear || kind == ir::PrimKind::Opaque) return roofline(k);
    }
    codegen::cpu::Schedule s = codegen::cpu::default_schedule(g, k, cores);
    return launch_seconds + tune::estimate_cpu_schedule(g, k, s, t).seconds;
  };
}

OptimalPlan orchestrate_measured(const ir::Graph& g, const target::Target& target, const BuildOptions& build,
                                 const MeasureOptions& measure, int max_rounds) {
  orchestrate::CostOracle analytic = analytic_cost(g, target, std::max(1, build.cores));
  std::map<std::string, double> measured, estimated;
  orchestrate::CostOracle cost = [&](const tile::Kernel& k) {
    std::string id = identity(k);
    if (auto it = measured.find(id); it != measured.end()) return it->second;
    auto [it, fresh] = estimated.try_emplace(id, 0.0);
    if (fresh) it->second = analytic(k);
    return it->second;
  };
  OptimalPlan p;
  bool measuring = !measure.orchid_exe.empty();
  for (p.rounds = 1;; ++p.rounds) {
    p.last = orchestrate::orchestrate_optimal(g, cost, {});
    int fresh = measuring ? measure_plan(g, p.last.kernels, build, measure, measured) : 0;
    p.measured += fresh;
    if (fresh == 0 || p.rounds >= max_rounds) break;
  }
  p.kernels = p.last.kernels;
  describe(p, p.notes);
  if (!measuring) return p;
  // The rounds may stop before every chosen kernel has a measured cost: the plan kept is the
  // better, by measured time, of the last solve's and greedy's.
  std::vector<tile::Kernel> greedy = orchestrate::orchestrate(g, orchestrate::Strategy::Greedy);
  p.measured += measure_plan(g, greedy, build, measure, measured);
  double t_opt = measured_cost(p.kernels, measured), t_greedy = measured_cost(greedy, measured);
  p.notes.push_back("measured: optimal's plan " + fmt("%.4f", t_opt * 1e3) + " ms, greedy's " +
                    fmt("%.4f", t_greedy * 1e3) + " ms" + (t_greedy < t_opt ? ": greedy's plan kept" : ""));
  if (t_greedy < t_opt) p.kernels = greedy;
  p.measured_seconds = std::min(t_opt, t_greedy);
  return p;
}

}  // namespace orchid::driver
