// The optimal orchestration's plan as a tuning-database decision (plan_decision.h).
#include "driver/plan_decision.h"

#include <charconv>
#include <cstdio>
#include <string_view>

#include "ir/canonical.h"
#include "orchestrate/optimal.h"
#include "support/sha256.h"

namespace orchid::driver {

namespace {

std::string ids_text(const std::vector<int32_t>& ids) {
  std::string out;
  for (int32_t v : ids) out += (out.empty() ? "" : ",") + std::to_string(v);
  return out;
}

std::string kernel_text(const tile::Kernel& k) {
  std::vector<int32_t> nodes, outputs;
  for (ir::NodeId n : k.nodes) nodes.push_back(n.v);
  for (ir::ValueId v : k.outputs) outputs.push_back(v.v);
  return ids_text(nodes) + "|" + ids_text(outputs);
}

// "1,2,3" as ids; none where a part is not a non-negative number.
std::optional<std::vector<int32_t>> parse_ids(std::string_view text) {
  std::vector<int32_t> out;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view part = text.substr(0, comma);
    int32_t v = -1;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (ec != std::errc() || end != part.data() + part.size() || v < 0) return std::nullopt;
    out.push_back(v);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
  }
  return out;
}

}  // namespace

std::string plan_decision_key(const ir::Graph& g, const std::vector<tile::Kernel>& sites, const BuildOptions& build,
                              const MeasureOptions& measure, int max_rounds) {
  std::string text = ir::canonical_signature(g).text;
  text += "\nsites:";
  for (const tile::Kernel& k : sites) text += " " + kernel_text(tile::sorted(k));
  text += "\nlayouts: " + std::to_string(build.layouts) + "\nthreads: " + std::to_string(measure.threads) +
          "\nmin_seconds: " + std::to_string(measure.min_seconds) + "\nmin_runs: " + std::to_string(measure.min_runs) +
          (measure.flush_bytes > 0 ? "\nflush_bytes: " + std::to_string(measure.flush_bytes) : std::string()) +
          "\nrounds: " + std::to_string(measure.rounds) + "\ntuned: " + std::to_string(measure.tuned) +
          "\nmax_rounds: " + std::to_string(max_rounds) + "\nversions: " + std::to_string(kPlanDecisionVersion) + " " +
          measured_versions();
  return "optimal plan " + sha256_hex(text);
}

std::string plan_decision_text(const PlanDecision& d) {
  std::string out = d.greedy_kept ? "greedy" : "optimal";
  if (d.untimed_below > 0) {
    char limit[40];
    std::snprintf(limit, sizeof limit, " untimed %.17g", d.untimed_below);
    out += limit;
  }
  for (const tile::Kernel& k : d.kernels) out += ";" + kernel_text(k);
  return out;
}

std::optional<PlanDecision> parse_plan_decision(const ir::Graph& g, const std::string& text, double measured_seconds) {
  PlanDecision d;
  d.measured_seconds = measured_seconds;
  std::string_view rest = text;
  size_t semi = rest.find(';');
  std::string_view head = rest.substr(0, semi);
  constexpr std::string_view kUntimed = "greedy untimed ";
  if (head.starts_with(kUntimed)) {
    std::string_view limit = head.substr(kUntimed.size());
    auto [end, ec] = std::from_chars(limit.data(), limit.data() + limit.size(), d.untimed_below);
    if (ec != std::errc() || end != limit.data() + limit.size() || !(d.untimed_below > 0)) return std::nullopt;
    head = "greedy";
  }
  if (head != "greedy" && head != "optimal") return std::nullopt;
  d.greedy_kept = head == "greedy";
  while (semi != std::string_view::npos) {
    rest = rest.substr(semi + 1);
    semi = rest.find(';');
    std::string_view kernel = rest.substr(0, semi);
    size_t bar = kernel.find('|');
    if (bar == std::string_view::npos) return std::nullopt;
    std::optional<std::vector<int32_t>> nodes = parse_ids(kernel.substr(0, bar));
    std::optional<std::vector<int32_t>> outputs = parse_ids(kernel.substr(bar + 1));
    if (!nodes || !outputs) return std::nullopt;
    tile::Kernel k;
    for (int32_t n : *nodes) k.nodes.push_back(ir::NodeId(n));
    for (int32_t v : *outputs) k.outputs.push_back(ir::ValueId(v));
    d.kernels.push_back(std::move(k));
  }
  if (d.kernels.empty() || !orchestrate::plan_problems(g, d.kernels).empty()) return std::nullopt;
  return d;
}

}  // namespace orchid::driver
