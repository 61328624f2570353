#include "runtime/memory_plan.h"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include "runtime/aligned_buffer.h"
#include "support/error.h"

namespace orchid::runtime {

namespace {

bool flag(const std::vector<bool>& v, size_t i) { return i < v.size() && v[i]; }

// Live range of every alias group, indexed by root, from the steps that touch it.
std::vector<LiveRange> group_ranges(const Plan& plan, const std::vector<int32_t>& root) {
  std::vector<LiveRange> r(plan.buffers.size(), LiveRange{std::numeric_limits<int32_t>::max(), -1});
  for (size_t s = 0; s < plan.steps.size(); ++s)
    for (int32_t a : plan.steps[s].args) {
      LiveRange& g = r[static_cast<size_t>(root[static_cast<size_t>(a)])];
      g.first = std::min(g.first, static_cast<int32_t>(s));
      g.last = std::max(g.last, static_cast<int32_t>(s));
    }
  for (LiveRange& g : r)
    if (g.last < 0) g = LiveRange{};
  return r;
}

// Homes of root buffers: everything the arena does not hold, and which roots it does.
std::vector<bool> assign_external_homes(const Plan& plan, const CallerAlignment& caller,
                                        const std::vector<LiveRange>& ranges, MemoryPlan& m) {
  std::vector<bool> in_arena(plan.buffers.size(), false);
  std::vector<bool> bound = outputs_bound_in_place(plan);
  std::map<int32_t, int32_t> bound_slot;
  for (size_t j = 0; j < plan.outputs.size(); ++j)
    if (bound[j] && !flag(caller.misaligned_outputs, j))
      bound_slot[plan.outputs[j]] = static_cast<int32_t>(j);
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    int32_t b = plan.inputs[i];
    bool used = ranges[static_cast<size_t>(b)].last >= 0;
    if (flag(caller.misaligned_inputs, i) && used) {
      in_arena[static_cast<size_t>(b)] = true;
      m.copy_in.push_back(static_cast<int32_t>(i));
    } else {
      m.home[static_cast<size_t>(b)] = BufferHome{Storage::CallerInput, 0, static_cast<int32_t>(i)};
    }
  }
  for (size_t b = 0; b < plan.buffers.size(); ++b) {
    const PlanBuffer& pb = plan.buffers[b];
    if (pb.alias >= 0 || pb.kind == BufferKind::Input) continue;
    if (pb.kind == BufferKind::Constant) {
      m.home[b] = BufferHome{Storage::Weights, pb.weights_offset, -1};
    } else if (auto it = bound_slot.find(static_cast<int32_t>(b)); it != bound_slot.end()) {
      m.home[b] = BufferHome{Storage::CallerOutput, 0, it->second};
    } else {
      in_arena[b] = true;
    }
  }
  return in_arena;
}

struct Block {
  int64_t offset = 0;
  int64_t size = 0;
  LiveRange live;
};

// Best fit among the blocks already placed whose live ranges overlap `live`.
int64_t best_fit(const std::vector<Block>& placed, int64_t size, const LiveRange& live) {
  std::vector<const Block*> busy;
  for (const Block& b : placed)
    if (b.size > 0 && b.live.overlaps(live)) busy.push_back(&b);
  std::sort(busy.begin(), busy.end(), [](const Block* a, const Block* b) {
    return a->offset != b->offset ? a->offset < b->offset : a->size < b->size;
  });
  int64_t best = -1, best_gap = std::numeric_limits<int64_t>::max(), end = 0;
  for (const Block* b : busy) {
    int64_t gap = b->offset - end;
    if (gap >= size && gap < best_gap) best = end, best_gap = gap;
    end = std::max(end, b->offset + b->size);
  }
  return best >= 0 ? best : end;
}

// Inputs copied into the arena are live from the start; outputs copied out of it until after
// the last step.
void extend_ranges(const Plan& plan, const MemoryPlan& m, const std::vector<bool>& in_arena,
                   std::vector<LiveRange>& ranges) {
  for (int32_t i : m.copy_in) ranges[static_cast<size_t>(plan.inputs[static_cast<size_t>(i)])].first = 0;
  for (int32_t b : plan.outputs) {
    size_t r = static_cast<size_t>(m.root[static_cast<size_t>(b)]);
    if (in_arena[r] && plan.buffers[r].kind != BufferKind::Input)
      ranges[r].last = static_cast<int32_t>(plan.steps.size());
  }
}

void place_in_arena(const Plan& plan, const std::vector<bool>& in_arena,
                    const std::vector<LiveRange>& ranges, MemoryPlan& m) {
  std::vector<int32_t> order;
  std::vector<int64_t> sizes(plan.buffers.size(), 0);
  for (size_t b = 0; b < plan.buffers.size(); ++b) {
    if (!in_arena[b]) continue;
    order.push_back(static_cast<int32_t>(b));
    sizes[b] = round_up(plan.buffers[b].type.bytes(), kBufferAlign);
  }
  auto key = [&](int32_t x) {
    size_t i = static_cast<size_t>(x);
    return std::tuple(-sizes[i], ranges[i].first, x);
  };
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return key(a) < key(b); });
  std::vector<Block> placed;
  for (int32_t r : order) {
    size_t i = static_cast<size_t>(r);
    int64_t offset = sizes[i] == 0 ? 0 : best_fit(placed, sizes[i], ranges[i]);
    placed.push_back(Block{offset, sizes[i], ranges[i]});
    m.home[i] = BufferHome{Storage::Arena, offset, -1};
    m.arena_bytes = std::max(m.arena_bytes, offset + sizes[i]);
  }
}

bool computed_in_place(const MemoryPlan& m, size_t output, int32_t buffer) {
  const BufferHome& h = m.home[static_cast<size_t>(buffer)];
  return h.storage == Storage::CallerOutput && h.slot == static_cast<int32_t>(output);
}

// Outputs not computed in place, and where each is copied from: an input's own bytes (the
// caller's, even where a misaligned input was copied into the arena), else its root's home.
void plan_copies_out(const Plan& plan, MemoryPlan& m) {
  for (size_t j = 0; j < plan.outputs.size(); ++j) {
    int32_t r = m.root[static_cast<size_t>(plan.outputs[j])];
    if (computed_in_place(m, j, r)) continue;
    BufferHome from = m.home[static_cast<size_t>(r)];
    if (plan.buffers[static_cast<size_t>(r)].kind == BufferKind::Input) {
      auto pos = std::find(plan.inputs.begin(), plan.inputs.end(), r);
      from = BufferHome{Storage::CallerInput, 0, static_cast<int32_t>(pos - plan.inputs.begin())};
    }
    m.copy_out.push_back(OutputCopy{static_cast<int32_t>(j), from});
  }
}

}  // namespace

std::vector<bool> outputs_bound_in_place(const Plan& plan) {
  std::map<int32_t, int> listed;
  for (int32_t b : plan.outputs) ++listed[b];
  std::vector<bool> bound;
  for (int32_t b : plan.outputs) {
    const PlanBuffer& pb = plan.buffers[static_cast<size_t>(b)];
    bound.push_back(pb.alias < 0 && pb.kind == BufferKind::Output && listed[b] == 1);
  }
  return bound;
}

MemoryPlan plan_memory(const Plan& plan, const CallerAlignment& caller) {
  MemoryPlan m;
  size_t n = plan.buffers.size();
  for (size_t b = 0; b < n; ++b) m.root.push_back(alias_root(plan, static_cast<int32_t>(b)));
  m.home.resize(n);
  std::vector<LiveRange> ranges = group_ranges(plan, m.root);
  std::vector<bool> in_arena = assign_external_homes(plan, caller, ranges, m);
  extend_ranges(plan, m, in_arena, ranges);
  place_in_arena(plan, in_arena, ranges, m);
  plan_copies_out(plan, m);
  for (size_t b = 0; b < n; ++b) {
    m.home[b] = m.home[static_cast<size_t>(m.root[b])];
    m.live.push_back(ranges[static_cast<size_t>(m.root[b])]);
  }
  return m;
}

}  // namespace orchid::runtime
