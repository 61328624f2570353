// The cost loop of the optimal orchestration (optimal_costs.h).
#include "driver/optimal_costs.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>

#include "codegen/cpu/schedule.h"
#include "driver/implement.h"
#include "driver/plan_decision.h"
#include "ir/canonical.h"
#include "ir/subgraph.h"
#include "orchestrate/strategies.h"
#include "runtime/profile.h"
#include "support/error.h"
#include "support/sha256.h"
#include "tune/estimate.h"

namespace orchid::driver {

namespace {

std::string identity(const tile::Kernel& k) {
  tile::Kernel s = tile::sorted(k);
  std::string id;
  for (ir::NodeId n : s.nodes) id += std::to_string(n.v) + ",";
  id += "|";
  for (ir::ValueId v : s.outputs) id += std::to_string(v.v) + ",";
  return id;
}

// Measures every kernel of a plan not measured yet, all together (measure_alternating, one
// round: one helper process); returns those it measured. A kernel's seconds are
// those of the steps implement() makes of it: aliases are free; a failed candidate never runs.
std::vector<const tile::Kernel*> measure_plan(const ir::Graph& g, const std::vector<tile::Kernel>& plan,
                                              const BuildOptions& build, const MeasureOptions& m,
                                              std::map<std::string, double>& measured) {
  std::vector<const tile::Kernel*> fresh;
  std::vector<StepChoice> steps;
  std::vector<double*> owner;  // per step: its kernel's seconds in `measured`
  for (const tile::Kernel& k : plan)
    if (auto [it, added] = measured.try_emplace(identity(k), 0.0); added) {
      for (StepChoice& s : implement(g, {k}))
        if (s.kind != StepKind::Alias) {
          steps.push_back(std::move(s));
          owner.push_back(&it->second);
        }
      fresh.push_back(&k);
    }
  std::vector<CandidateTime> t = measure_alternating(g, steps, build, m, 1);
  for (size_t i = 0; i < steps.size(); ++i) *owner[i] += t[i].ms ? *t[i].ms * 1e-3 : INFINITY;
  return fresh;
}

// The kernels' identities, each once.
std::set<std::string> identities(const std::vector<tile::Kernel>& plan) {
  std::set<std::string> out;
  for (const tile::Kernel& k : plan) out.insert(identity(k));
  return out;
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

// The subgraphs by execution states, most first: one line each, up to kMaxSubgraphLines.
void describe_subgraphs(const ir::Graph& g, const orchestrate::OptimalResult& r, std::vector<std::string>& notes) {
  constexpr size_t kMaxSubgraphLines = 16;
  std::vector<const orchestrate::SubgraphStats*> by_states;
  for (const orchestrate::SubgraphStats& s : r.subgraphs) by_states.push_back(&s);
  std::stable_sort(by_states.begin(), by_states.end(), [](auto* a, auto* b) { return a->states > b->states; });
  for (size_t i = 0; i < by_states.size() && i < kMaxSubgraphLines; ++i) {
    const orchestrate::SubgraphStats& s = *by_states[i];
    notes.push_back("subgraph from '" + g.node(s.first).name + "': " + std::to_string(s.nodes) + " primitives, " +
                    std::to_string(s.states) + " states, " + std::to_string(s.candidates) + " candidates, " +
                    std::to_string(s.rounds) + " solves, " + std::to_string(s.kernels) + " kernels, " +
                    (s.optimal ? "optimal" : "not proven optimal") +
                    (s.solved_before ? ", solved before" : ", solve " + fmt("%.3f", s.solve_seconds) + " s") +
                    (s.used_fallback ? ", one kernel per primitive (no solve found a plan)" : ""));
  }
  if (by_states.size() > kMaxSubgraphLines)
    notes.push_back(std::to_string(by_states.size() - kMaxSubgraphLines) + " smaller subgraphs (at most " +
                    std::to_string(by_states[kMaxSubgraphLines]->states) + " states each)");
}

void describe(const ir::Graph& g, const OptimalPlan& p, std::vector<std::string>& notes) {
  const orchestrate::OptimalResult& r = p.last;
  notes.push_back("optimal: " + std::to_string(p.rounds) + " rounds, " + std::to_string(p.measured) +
                  " kernels measured; plan cost " + fmt("%.4f", r.cost * 1e3) + " ms, " +
                  (r.optimal ? "proven optimal" : "gap " + fmt("%.2f", r.gap() * 100) + " %") + ", " +
                  std::to_string(r.cuts.size()) + " cuts, solves " + fmt("%.2f", p.solve_seconds) + " s in all");
  notes.insert(notes.end(), p.round_notes.begin(), p.round_notes.end());
  describe_subgraphs(g, r, notes);
  int failures = 0, fallbacks = 0;
  for (const orchestrate::SubgraphStats& s : r.subgraphs) failures += s.solver_failures, fallbacks += s.used_fallback;
  if (failures > 0)
    notes.push_back("the solver stopped its process " + std::to_string(failures) + " times (solved again, or " +
                    std::to_string(fallbacks) + " subgraphs left one kernel per primitive)");
  for (const orchestrate::PruneRow& row : r.pruning)
    notes.push_back("pruning rule " + row.rule + ": " + std::to_string(row.before) + " → " + std::to_string(row.after));
  if (r.chains > 0) {
    int chosen = 0;
    for (const tile::Kernel& k : r.kernels) {
      int products = 0;
      for (ir::NodeId n : k.nodes) products += g.node(n).kind() == ir::PrimKind::Linear;
      chosen += products > 1;
    }
    notes.push_back("candidates across products (two products with a row reduction between: attention's softmax, "
                    "a layernorm): " + std::to_string(r.chains) + " (" + std::to_string(r.chains_left_out) +
                    " across subgraphs, left out); kernels of several products chosen: " + std::to_string(chosen));
  }
}

// A kernel named by the model nodes its primitives come from, in graph order, at most three.
std::string kernel_label(const ir::Graph& g, const tile::Kernel& k) {
  std::vector<ir::NodeId> nodes = k.nodes;
  std::sort(nodes.begin(), nodes.end());
  std::vector<std::string> names;
  for (ir::NodeId n : nodes)
    if (std::find(names.begin(), names.end(), g.node(n).name) == names.end()) names.push_back(g.node(n).name);
  std::string out = "[";
  for (size_t i = 0; i < names.size() && i < 3; ++i) out += (i ? " + " : "") + names[i];
  if (names.size() > 3) out += " + " + std::to_string(names.size() - 3) + " more";
  return out + "]";
}

// Alternating rounds in which the BLP's plan and greedy's are timed whole; as many again where
// the BLP's is faster on average but not yet significantly (segformer_b0's plans, 50.8 against
// 53.5 ms, were not told apart in 9 rounds).
constexpr int kWholePlanRounds = 9;

// The plan an earlier compile of g kept (the database's decision under `key`), where there is
// one, it is a plan of g, and — kept without timing whole — it holds for `beat_seconds`.
std::optional<OptimalPlan> decided_plan(const ir::Graph& g, const MeasureOptions& m, const std::string& key,
                                        double beat_seconds) {
  auto d = m.db->decision(m.target, key);
  if (!d) return std::nullopt;
  std::optional<PlanDecision> kept = parse_plan_decision(g, d->first, d->second.median_ns * 1e-9);
  if (!kept || (kept->untimed_below > 0 && beat_seconds > kept->untimed_below)) return std::nullopt;
  OptimalPlan p;
  p.kernels = std::move(kept->kernels);
  p.greedy_kept = kept->greedy_kept;
  p.measured_seconds = kept->measured_seconds;
  p.untimed_below = kept->untimed_below;
  p.notes.push_back("optimal: the plan an earlier compile of this graph settled on (tuning database), " +
                    std::to_string(p.kernels.size()) + " kernels" +
                    (p.greedy_kept ? ", greedy's plan, which measured faster whole" : ""));
  return p;
}

// Keeps p as the decision under `key`, where every kernel of it was timed (a failed
// measurement, which a later compile may not repeat, decides nothing).
void record_decision(const MeasureOptions& m, const std::string& key, const OptimalPlan& p) {
  if (!std::isfinite(p.measured_seconds)) return;
  m.db->decide(m.target, key, plan_decision_text({p.kernels, p.greedy_kept, p.measured_seconds, p.untimed_below}),
               {p.measured_seconds * 1e9, 0, p.rounds, ""});
}

}  // namespace

std::vector<std::string> plan_differences(const ir::Graph& g, const std::vector<tile::Kernel>& optimal,
                                          const std::vector<tile::Kernel>& greedy,
                                          const orchestrate::CostOracle& seconds) {
  constexpr size_t kMaxLines = 12;
  struct Side { const tile::Kernel* k; bool optimal; };
  std::vector<Side> differ;
  auto only_in = [&](const std::vector<tile::Kernel>& a, const std::vector<tile::Kernel>& b, bool is_optimal) {
    std::set<std::string> other = identities(b);
    for (const tile::Kernel& k : a)
      if (!other.count(identity(k))) differ.push_back({&k, is_optimal});
  };
  only_in(optimal, greedy, true);
  only_in(greedy, optimal, false);
  // Groups: kernels joined by a shared primitive (union-find over the differing kernels).
  std::vector<size_t> parent(differ.size());
  std::iota(parent.begin(), parent.end(), size_t{0});
  auto root = [&](size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  std::map<ir::NodeId, size_t> owner;
  for (size_t i = 0; i < differ.size(); ++i)
    for (ir::NodeId n : differ[i].k->nodes)
      if (auto [it, fresh] = owner.try_emplace(n, i); !fresh) parent[root(i)] = root(it->second);
  struct Group { std::string optimal, greedy; double t_optimal = 0, t_greedy = 0; };
  std::map<size_t, Group> groups;  // by union-find root
  for (size_t i = 0; i < differ.size(); ++i) {
    Group& grp = groups[root(i)];
    std::string& names = differ[i].optimal ? grp.optimal : grp.greedy;
    names += (names.empty() ? "" : ", ") + kernel_label(g, *differ[i].k);
    (differ[i].optimal ? grp.t_optimal : grp.t_greedy) += seconds(*differ[i].k);
  }
  std::vector<Group> sorted;
  for (auto& [r, grp] : groups) sorted.push_back(grp);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Group& a, const Group& b) { return a.t_greedy - a.t_optimal > b.t_greedy - b.t_optimal; });
  auto or_none = [](const std::string& names) { return names.empty() ? std::string("no kernel") : names; };
  std::vector<std::string> lines = {"the plans differ in " + std::to_string(sorted.size()) + " places" +
                                    (sorted.empty() ? "" : " (optimal's kernels against greedy's):")};
  for (size_t i = 0; i < sorted.size() && i < kMaxLines; ++i)
    lines.push_back("optimal " + or_none(sorted[i].optimal) + " " + fmt("%.4f", sorted[i].t_optimal * 1e3) +
                    " ms; greedy " + or_none(sorted[i].greedy) + " " + fmt("%.4f", sorted[i].t_greedy * 1e3) + " ms");
  if (sorted.size() > kMaxLines) lines.push_back(std::to_string(sorted.size() - kMaxLines) + " more places");
  return lines;
}

bool same_plan(const std::vector<tile::Kernel>& a, const std::vector<tile::Kernel>& b) {
  return identities(a) == identities(b);
}

namespace {

// What the tile-graph model's estimate of a kernel depends on: its graph in canonical form
// (constants as inputs: weights do not matter), and the bytes of its integer constants (index
// tensors bound the regions a gather reads).
std::string estimate_key(const ir::Graph& g, const tile::Kernel& k) {
  std::vector<ir::ValueId> inputs = tile::kernel_inputs(g, k);
  std::string key = ir::canonical_signature(ir::extract_subgraph(g, k.nodes, inputs, k.outputs)).text;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::Value& v = g.value(inputs[i]);
    if (v.origin != ir::ValueOrigin::Constant || ir::is_float(v.type.dtype)) continue;
    const std::vector<std::byte>& bytes = g.constant(inputs[i]).bytes();
    key += "\nconstant " + std::to_string(i) + ": " +
           sha256_hex(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  }
  return key;
}

}  // namespace

orchestrate::CostOracle analytic_cost(const ir::Graph& g, const target::Target& t, int cores,
                                      double launch_seconds) {
  orchestrate::CostOracle roofline = orchestrate::roofline_cost(g, t, launch_seconds);
  auto estimated = std::make_shared<std::unordered_map<std::string, double>>();
  return [&g, t, cores, launch_seconds, roofline, estimated](const tile::Kernel& k) {
    for (ir::NodeId n : k.nodes) {
      ir::PrimKind kind = g.node(n).kind();
      if (kind == ir::PrimKind::Linear || kind == ir::PrimKind::Opaque) return roofline(k);
    }
    auto [it, fresh] = estimated->try_emplace(estimate_key(g, k), 0.0);
    if (fresh) {
      codegen::cpu::Schedule s = codegen::cpu::default_schedule(g, k, cores);
      it->second = launch_seconds + tune::estimate_cpu_schedule(g, k, s, t).seconds;
    }
    return it->second;
  };
}

double CostCalibration::scale(const std::string& cls) const {
  auto it = medians_.find(cls);
  return it == medians_.end() ? 1.0 : it->second;
}

void CostCalibration::observe(const std::string& cls, double analytic_seconds, double measured_seconds) {
  if (!(analytic_seconds > 0) || !std::isfinite(measured_seconds)) return;
  std::vector<double>& r = ratios_[cls];
  r.push_back(measured_seconds / analytic_seconds);
  medians_[cls] = runtime::timing_stats(r).median;
}

std::string CostCalibration::describe() const {
  std::string out;
  for (const auto& [cls, r] : ratios_)
    out += (out.empty() ? "" : ", ") + cls + " ×" + fmt("%.3g", scale(cls)) + " (" + std::to_string(r.size()) + ")";
  return out;
}

SettledSubgraphs::SettledSubgraphs(size_t subgraphs, double gain, int patience)
    : gain_(gain), patience_(patience), settled_(subgraphs, false), best_(subgraphs, INFINITY),
      best_plans_(subgraphs), stale_(subgraphs, 0) {}

bool SettledSubgraphs::settled(int32_t subgraph) const {
  return subgraph >= 0 && static_cast<size_t>(subgraph) < settled_.size() && settled_[static_cast<size_t>(subgraph)];
}

bool SettledSubgraphs::all() const { return std::all_of(settled_.begin(), settled_.end(), [](bool b) { return b; }); }

void SettledSubgraphs::observe(const orchestrate::OptimalResult& r,
                               const std::function<double(const tile::Kernel&)>& seconds) {
  ORCHID_CHECK(r.subgraphs.size() == settled_.size()) << "a solve of " << r.subgraphs.size() << " subgraphs, not "
                                                      << settled_.size();
  size_t next = 0;
  for (size_t i = 0; i < settled_.size(); ++i) {
    size_t first = next;
    double measured = 0;
    for (int32_t k = 0; k < r.subgraphs[i].kernels; ++k) measured += seconds(r.kernels[next++]);
    bool cheaper = !std::isfinite(best_[i]) ? std::isfinite(measured) : measured < (1 - gain_ / 4) * best_[i];
    if (measured < best_[i]) {
      best_[i] = measured;
      best_plans_[i].assign(r.kernels.begin() + static_cast<ptrdiff_t>(first), r.kernels.begin() + static_cast<ptrdiff_t>(next));
    }
    if (settled_[i]) continue;
    stale_[i] = cheaper ? 0 : stale_[i] + 1;
    bool settles = r.subgraphs[i].cost >= (1 - gain_) * best_[i] || stale_[i] >= patience_;
    if (settles && std::isfinite(best_[i])) settled_[i] = true;
  }
}

bool SettledSubgraphs::settle_all() {
  if (!std::all_of(best_.begin(), best_.end(), [](double b) { return std::isfinite(b); })) return false;
  settled_.assign(settled_.size(), true);
  return true;
}

double SettledSubgraphs::best_seconds() const { return std::accumulate(best_.begin(), best_.end(), 0.0); }

std::string SettledSubgraphs::round_line(int round, size_t measured, const orchestrate::OptimalResult& r) const {
  return "round " + std::to_string(round) + ": " + std::to_string(measured) + " kernels measured; the plan at its prices " +
         fmt("%.4f", r.cost * 1e3) + " ms, the cheapest measured " + fmt("%.4f", best_seconds() * 1e3) + " ms; " +
         std::to_string(std::count(settled_.begin(), settled_.end(), true)) + " of " + std::to_string(settled_.size()) +
         " subgraphs settled";
}

std::string cost_class(const ir::Graph& g, const tile::Kernel& k) {
  std::string out;
  for (const StepChoice& s : implement(g, {k}))
    if (s.kind != StepKind::Alias) out += (out.empty() ? "" : "+") + std::string(step_kind_name(s.kind));
  for (ir::NodeId n : k.nodes)
    if (g.node(n).kind() == ir::PrimKind::Linear) out += " " + std::string(ir::prim_op_name(g.node(n).op));
  return out.empty() ? "alias" : out;
}

// When a subgraph settles (SettledSubgraphs): its plan promises under 2 % (kernels timed alone
// move by more than that between runs on a loaded machine), or two rounds in a row measured
// nothing 0.5 % cheaper for it. On segformer_b0, rounds 6 to 12 of the loop measured 60
// kernels for 0.5 % of the plan, all in the three subgraphs the promise rule left open.
constexpr double kSettleGain = 0.02;
constexpr int kSettlePatience = 2;

OptimalPlan orchestrate_measured(const ir::Graph& g, const target::Target& target, const BuildOptions& build,
                                 const MeasureOptions& measure, int max_rounds, const std::vector<UGraphSite>& sites,
                                 double beat_seconds) {
  orchestrate::CostOracle analytic = analytic_cost(g, target, std::max(1, build.cores));
  bool measuring = !measure.orchid_exe.empty();
  struct Estimate { double seconds; std::string cls; };
  std::map<std::string, double> measured;
  // The sites' measured times: what the BLP pays for a site. A kernel of greedy's plan with a
  // site's primitives and outputs is orchestrated code there, and measured as such.
  std::map<std::string, double> site_seconds;
  orchestrate::OptimalOptions options;
  for (const UGraphSite& site : sites) {
    site_seconds[identity(site.kernel)] = site.seconds;
    options.extra.push_back(site.kernel);
  }
  std::map<std::string, Estimate> estimated;
  auto estimate = [&](const tile::Kernel& k, const std::string& id) -> const Estimate& {
    auto it = estimated.find(id);
    // The class (implement()'s steps: a oneDNN query per linear kernel) only matters once
    // something is measured.
    if (it == estimated.end()) it = estimated.emplace(id, Estimate{analytic(k), measuring ? cost_class(g, k) : ""}).first;
    return it->second;
  };
  CostCalibration calibration;
  // The plan kept is the database's decision for this graph. Not after tuning: there the BLP
  // solves again with the tuned kernels' times, which a compile may have changed since.
  std::vector<tile::Kernel> site_kernels;
  for (const UGraphSite& site : sites) site_kernels.push_back(site.kernel);
  const bool decides = measuring && measure.db != nullptr && !measure.tuned;
  const std::string decision_key = decides ? plan_decision_key(g, site_kernels, build, measure, max_rounds) : "";
  if (decides)
    if (std::optional<OptimalPlan> earlier = decided_plan(g, measure, decision_key, beat_seconds)) return *earlier;
  OptimalPlan p;
  // Measures the plan's kernels not measured yet, each calibrating its class; how many were
  // new. In the BLP's plans, sites are μGraphs with their times already measured.
  auto measure_calibrating = [&](const std::vector<tile::Kernel>& plan, bool with_sites) -> size_t {
    if (!measuring) return 0;
    std::vector<tile::Kernel> orchestrated;
    for (const tile::Kernel& k : plan)
      if (!with_sites || !site_seconds.count(identity(k))) orchestrated.push_back(k);
    std::vector<const tile::Kernel*> fresh = measure_plan(g, orchestrated, build, measure, measured);
    for (const tile::Kernel* k : fresh) {
      std::string id = identity(*k);
      const Estimate& e = estimate(*k, id);
      calibration.observe(e.cls, e.seconds, measured.at(id));
    }
    p.measured += static_cast<int>(fresh.size());
    return fresh.size();
  };
  // Greedy's plan first: a measured plan for the BLP to beat, and the classes it uses
  // calibrated before the first solve.
  std::vector<tile::Kernel> greedy = orchestrate::orchestrate(g, orchestrate::Strategy::Greedy);
  measure_calibrating(greedy, false);
  orchestrate::OptimalSolver solver(g, options);
  SettledSubgraphs settled(solver.partition().subgraphs.size(), kSettleGain, kSettlePatience);
  // A kernel's price: a site's or a measured time; else, in a subgraph not settled, its
  // analytic cost scaled by its class.
  orchestrate::CostOracle cost = [&](const tile::Kernel& k) {
    std::string id = identity(k);
    if (auto it = site_seconds.find(id); it != site_seconds.end()) return it->second;
    if (auto it = measured.find(id); it != measured.end()) return it->second;
    if (settled.settled(solver.subgraph_of(k))) return std::numeric_limits<double>::infinity();
    const Estimate& e = estimate(k, id);
    return e.seconds * calibration.scale(e.cls);
  };
  // A kernel of a measured plan (sites as μGraphs).
  auto kernel_seconds = [&](const tile::Kernel& k) {
    std::string id = identity(k);
    if (auto it = site_seconds.find(id); it != site_seconds.end()) return it->second;
    return measured.at(id);
  };
  for (p.rounds = 1;; ++p.rounds) {
    p.last = solver.solve(cost, settled.best_plans());
    p.solve_seconds += p.last.seconds;
    if (!measuring) break;
    size_t fresh = measure_calibrating(p.last.kernels, true);
    settled.observe(p.last, kernel_seconds);
    p.round_notes.push_back(settled.round_line(p.rounds, fresh, p.last));
    if (fresh == 0 || p.rounds >= max_rounds) break;
  }
  // The plan: the cheapest of the measured candidates (every subgraph settled), which the last
  // round's plan, measured whole, bounds. Where nothing changed since the last solve, it is
  // that solve again.
  if (measuring && settled.settle_all()) {
    p.last = solver.solve(cost, settled.best_plans());
    p.solve_seconds += p.last.seconds;
  }
  p.kernels = p.last.kernels;
  describe(g, p, p.notes);
  if (!sites.empty())
    p.notes.push_back("μGraph kernels of the superoptimizer: " + std::to_string(sites.size()) + " candidates (" +
                      std::to_string(p.last.extra_left_out) + " across subgraphs, left out), " +
                      std::to_string(mark_ugraph_kernels(p.kernels, sites).placed) + " chosen");
  if (!calibration.empty()) p.notes.push_back("analytic costs scaled by the median measured/analytic of their class (kernels measured): " + calibration.describe());
  if (!measuring) return p;
  // The BLP's plan at its own prices (sites as μGraphs), greedy's as measured.
  double t_opt = 0;
  for (const tile::Kernel& k : p.kernels) t_opt += kernel_seconds(k);
  double t_greedy = measured_cost(greedy, measured);
  p.notes.push_back("kernels measured alone: optimal's plan " + fmt("%.4f", t_opt * 1e3) + " ms in all, greedy's " +
                    fmt("%.4f", t_greedy * 1e3) + " ms");
  std::vector<std::string> differences = plan_differences(g, p.kernels, greedy, kernel_seconds);
  p.notes.insert(p.notes.end(), differences.begin(), differences.end());
  p.measured_seconds = t_opt;
  if (same_plan(p.kernels, greedy)) {
    if (decides) record_decision(measure, decision_key, p);
    return p;
  }
  if (std::isfinite(beat_seconds) && std::min(t_opt, t_greedy) >= beat_seconds) {
    p.notes.push_back("whole plans not timed: neither plan's kernels sum to less than the " +
                      fmt("%.4f", beat_seconds * 1e3) + " ms to beat → greedy's kept");
    p.kernels = greedy;
    p.measured_seconds = t_greedy;
    p.greedy_kept = true;
    p.untimed_below = std::min(t_opt, t_greedy);
    if (decides) record_decision(measure, decision_key, p);
    return p;
  }
  // Kernels timed alone find their inputs in cache and run no neighbours: the plans are
  // decided whole, built with the steps implement() makes (under their tuned schedules where
  // the options use them) and timed in alternating rounds. The BLP's plan is kept only where it is
  // faster with significance (Welch's test over the rounds, as the tuner decides): where the
  // two cannot be told apart (or one failed), greedy's plan stays.
  std::vector<StepChoice> ours = joined(implement_placed(g, mark_ugraph_kernels(p.kernels, sites)));
  std::vector<StepChoice> theirs = implement(g, greedy);
  ScheduleComparison whole = compare_with_greedy(g, ours, theirs, build, measure);
  p.notes.push_back("whole plans, " + (whole.rounds > 0 ? std::to_string(whole.rounds) + " alternating rounds, " : "") +
                    "Welch's test: " + comparison_line(whole, "optimal's", "greedy's"));
  if (!whole.a_faster) {
    p.kernels = greedy;
    p.measured_seconds = t_greedy;
    p.greedy_kept = true;
  }
  if (decides && whole.failure.empty()) record_decision(measure, decision_key, p);
  return p;
}

ScheduleComparison compare_with_greedy(const ir::Graph& g, const std::vector<StepChoice>& ours,
                                       const std::vector<StepChoice>& greedy, const BuildOptions& build,
                                       const MeasureOptions& measure) {
  return compare_tuned_plans(g, ours, g, greedy, build, measure, 0.05, kWholePlanRounds, kWholePlanRounds);
}

bool rewritten_plan_kept(const ir::Graph& rewritten, const OptimalPlan& p, const std::vector<UGraphSite>& sites,
                         const ir::Graph& original, const OptimalPlan& q, const BuildOptions& build,
                         const MeasureOptions& measure, std::string* line) {
  std::vector<StepChoice> ours =
      joined(implement_placed(rewritten, mark_ugraph_kernels(p.kernels, p.greedy_kept ? std::vector<UGraphSite>{} : sites)));
  std::vector<StepChoice> theirs = implement(original, q.kernels);
  // Welch's test at α = 0.5: the lower mean (t < 0) decides, over twice the rounds.
  ScheduleComparison whole =
      compare_tuned_plans(rewritten, ours, original, theirs, build, measure, 0.5, 2 * kWholePlanRounds, 0);
  bool keep = whole.failure.empty() ? whole.a_faster : p.measured_seconds <= q.measured_seconds;
  *line = "measured: kernels alone, the rewritten graph's plan " + fmt("%.4f", p.measured_seconds * 1e3) +
          " ms, without rewrites " + fmt("%.4f", q.measured_seconds * 1e3) + " ms; whole plans" +
          (whole.rounds > 0 ? ", " + std::to_string(whole.rounds) + " alternating rounds" : "") + ", the lower mean: " +
          comparison_line(whole, "the rewritten graph's", "without rewrites") + "; " +
          (keep ? "rewrites kept" : "rewrites dropped");
  return keep;
}

}  // namespace orchid::driver
