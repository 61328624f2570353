#include "driver/layouts.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "ir/parser.h"
#include "runtime/library_step.h"
#include "support/error.h"

namespace orchid::driver {

namespace {

using runtime::BufferLayout;

// Which inputs of step s are weights (constant buffers), as the runtime tells the step.
std::vector<bool> constant_inputs(const runtime::Plan& plan, const runtime::PlanStep& s) {
  std::vector<bool> out;
  for (int32_t k = 0; k < s.num_inputs; ++k) {
    int32_t root = runtime::alias_root(plan, s.args[static_cast<size_t>(k)]);
    out.push_back(plan.buffers[static_cast<size_t>(root)].kind == runtime::BufferKind::Constant);
  }
  return out;
}

// The layout each argument of step s is best kept in; plain for generated steps.
std::vector<BufferLayout> step_preferences(const runtime::Plan& plan, const runtime::PlanStep& s) {
  std::vector<BufferLayout> plain(s.args.size(), BufferLayout::Plain);
  if (s.impl == runtime::StepImpl::Generated) return plain;
  ir::Graph g = ir::parse_graph(s.ir, s.name + ".ir");
  try {
    return runtime::preferred_layouts(runtime::step_impl_name(s.impl), g, constant_inputs(plan, s));
  } catch (const UnsupportedError&) {
    return plain;
  }
}

// Buffers that may hold another layout at all: intermediates that own their bytes and that no
// view reinterprets.
std::vector<bool> layout_candidates(const runtime::Plan& plan) {
  std::vector<bool> ok(plan.buffers.size());
  for (size_t b = 0; b < plan.buffers.size(); ++b)
    ok[b] = plan.buffers[b].kind == runtime::BufferKind::Intermediate && plan.buffers[b].alias < 0;
  for (const runtime::PlanBuffer& b : plan.buffers)
    if (b.alias >= 0) ok[static_cast<size_t>(b.alias)] = false;
  return ok;
}

}  // namespace

LayoutSummary assign_layouts(runtime::Plan& plan) {
  std::vector<bool> candidate = layout_candidates(plan);
  std::vector<int> uses(plan.buffers.size(), 0);
  // The one activation layout every use of a buffer wants; plain once two uses differ or
  // one wants plain.
  std::vector<std::optional<BufferLayout>> agreed(plan.buffers.size());
  for (const runtime::PlanStep& s : plan.steps) {
    std::vector<BufferLayout> want = step_preferences(plan, s);
    ORCHID_CHECK(want.size() == s.args.size()) << s.name << ": " << want.size() << " layouts for " << s.args.size() << " args";
    for (size_t a = 0; a < s.args.size(); ++a) {
      auto b = static_cast<size_t>(s.args[a]);
      ++uses[b];
      bool same = !agreed[b] || *agreed[b] == want[a];
      agreed[b] = same && runtime::is_activation_layout(want[a]) ? want[a] : BufferLayout::Plain;
    }
  }
  LayoutSummary summary;
  for (size_t b = 0; b < plan.buffers.size(); ++b) {
    runtime::PlanBuffer& buf = plan.buffers[b];
    BufferLayout l = agreed[b].value_or(BufferLayout::Plain);
    if (!candidate[b] || !runtime::is_activation_layout(l) || !runtime::layout_fits(l, buf.type)) continue;
    buf.layout = l;
    if (std::find(summary.blocked_layouts.begin(), summary.blocked_layouts.end(), l) == summary.blocked_layouts.end())
      summary.blocked_layouts.push_back(l);
    ++summary.blocked_buffers;
    summary.reorders_avoided += uses[b];
  }
  return summary;
}

}  // namespace orchid::driver
