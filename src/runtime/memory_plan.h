// Memory planning (DESIGN.md, "runtime"): where each buffer of a plan lives during a run.
//
// A view has no storage: it lives where the root of its alias chain lives, and the live range
// of an alias group is the union of its members'. Constants stay in the weights and inputs in
// the caller's memory. An output that is a root buffer written by a step and listed once in
// `outputs` is computed straight into the caller's buffer. Everything else — intermediates,
// outputs listed twice, views that are outputs of intermediates — lives in one arena, and
// graph outputs are copied out of it (or out of the inputs, or the weights) after the last
// step. A caller pointer that is not ORCHID_ALIGN-aligned cannot be handed to kernels: such an
// input is copied into the arena before the first step, such an output computed in the arena.
//
// Offsets in the arena: greedy best fit. Groups are placed in order of decreasing size (ties:
// earlier first use, then lower id); each goes into the smallest gap left by the groups placed
// before it whose live ranges overlap its own (ties: the lowest offset), or on top of them.
// Sizes are rounded up to ORCHID_ALIGN, so every offset is aligned. Live ranges are inclusive
// step ranges, so a step's inputs and outputs never share memory.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/plan.h"

namespace orchid::runtime {

enum class Storage : uint8_t { Arena, CallerInput, CallerOutput, Weights };

struct BufferHome {
  Storage storage = Storage::Arena;
  int64_t offset = 0;  // Arena: offset into the arena; Weights: offset into weights.bin
  int32_t slot = -1;   // CallerInput / CallerOutput: the position in plan.inputs / plan.outputs

  bool operator==(const BufferHome&) const = default;
};

// Steps [first, last], inclusive; last == number of steps: live until outputs are copied.
// Empty (last < first) for a group no step touches.
struct LiveRange {
  int32_t first = 0;
  int32_t last = -1;

  bool operator==(const LiveRange&) const = default;
  bool overlaps(const LiveRange& o) const {
    return first <= last && o.first <= o.last && first <= o.last && o.first <= last;
  }
};

// Output `output` (a position in plan.outputs) is copied from `from` after the last step.
struct OutputCopy {
  int32_t output = -1;
  BufferHome from;

  bool operator==(const OutputCopy&) const = default;
};

struct MemoryPlan {
  std::vector<int32_t> root;      // per buffer: the root of its alias chain
  std::vector<BufferHome> home;   // per buffer (a view has its root's home)
  std::vector<LiveRange> live;    // per buffer: its alias group's live range
  std::vector<int32_t> copy_in;   // positions in plan.inputs copied into the arena first
  std::vector<OutputCopy> copy_out;
  int64_t arena_bytes = 0;
};

// Which caller pointers are not ORCHID_ALIGN-aligned (empty vectors: all are aligned).
struct CallerAlignment {
  std::vector<bool> misaligned_inputs;   // per position in plan.inputs
  std::vector<bool> misaligned_outputs;  // per position in plan.outputs
};

// The plan must be valid (validate_plan).
MemoryPlan plan_memory(const Plan& plan, const CallerAlignment& caller = {});

// Per position in plan.outputs: whether the output is computed straight into the caller's
// buffer (when that is aligned): a root buffer written by a step, listed once.
std::vector<bool> outputs_bound_in_place(const Plan& plan);

}  // namespace orchid::runtime
