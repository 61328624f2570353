// The memory planner on hand-made and seeded random plans. The oracle is a simulated run:
// every step stamps the bytes it writes with a tag and checks that the bytes it reads carry
// the tag of their last writer, so any overlap of memory that is still needed shows up.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "runtime/memory_plan.h"
#include "support/random.h"
#include "artifact_util.h"

namespace orchid::runtime {
namespace {

using testutil::buffer;
using testutil::generated_step;

ir::TensorType bytes_type(int64_t n) { return {ir::DType::U8, {n}}; }

// x -> a -> b -> c -> d: a and c can share memory, d is the caller's.
Plan chain_plan(int64_t size) {
  Plan p;
  p.buffers = {buffer("x", bytes_type(size), BufferKind::Input),
               buffer("a", bytes_type(size), BufferKind::Intermediate),
               buffer("b", bytes_type(size), BufferKind::Intermediate),
               buffer("c", bytes_type(size), BufferKind::Intermediate),
               buffer("d", bytes_type(size), BufferKind::Output)};
  p.inputs = {0};
  p.outputs = {4};
  p.libraries = {PlanLibrary{"k.so", 0, ""}};
  for (int32_t s = 0; s < 4; ++s) p.steps.push_back(generated_step("s", {s, s + 1}, 1, 0, 0, 1));
  validate_plan(p);
  return p;
}

TEST(RuntimeMemoryPlan, ChainReusesMemory) {
  Plan p = chain_plan(1000);
  MemoryPlan m = plan_memory(p);
  EXPECT_EQ(m.arena_bytes, 2 * 1024);
  EXPECT_EQ(m.home[1].offset, m.home[3].offset);
  EXPECT_NE(m.home[1].offset, m.home[2].offset);
  EXPECT_EQ(m.home[0], (BufferHome{Storage::CallerInput, 0, 0}));
  EXPECT_EQ(m.home[4], (BufferHome{Storage::CallerOutput, 0, 0}));
  EXPECT_TRUE(m.copy_in.empty());
  EXPECT_TRUE(m.copy_out.empty());
  EXPECT_EQ(m.live[1], (LiveRange{0, 1}));
  EXPECT_EQ(m.live[3], (LiveRange{2, 3}));
}

TEST(RuntimeMemoryPlan, MisalignedCallerMemoryMovesIntoTheArena) {
  Plan p = chain_plan(100);
  MemoryPlan m = plan_memory(p, CallerAlignment{{true}, {true}});
  EXPECT_EQ(m.copy_in, std::vector<int32_t>{0});
  EXPECT_EQ(m.home[0].storage, Storage::Arena);
  EXPECT_EQ(m.live[0], (LiveRange{0, 0}));
  EXPECT_EQ(m.home[4].storage, Storage::Arena);
  EXPECT_EQ(m.live[4], (LiveRange{3, 4}));  // until copied out after the last step
  ASSERT_EQ(m.copy_out.size(), 1u);
  EXPECT_EQ(m.copy_out[0], (OutputCopy{0, m.home[4]}));
}

// A view of an intermediate as an output keeps the intermediate alive to the end; an output
// listed twice is copied twice; an input and a constant are copied from where they are.
TEST(RuntimeMemoryPlan, OutputsThatCannotBeBound) {
  Plan p;
  p.buffers = {buffer("x", bytes_type(64), BufferKind::Input),
               buffer("w", bytes_type(64), BufferKind::Constant),
               buffer("t", bytes_type(64), BufferKind::Intermediate),
               buffer("y", bytes_type(64), BufferKind::Output),
               buffer("t_view", {ir::DType::F32, {16}}, BufferKind::Output, 2),
               buffer("u", bytes_type(64), BufferKind::Intermediate)};
  p.weights.bytes = 64;
  p.inputs = {0};
  p.outputs = {4, 3, 3, 0, 1};
  p.libraries = {PlanLibrary{"k.so", 0, ""}};
  p.steps = {generated_step("t", {0, 1, 2}, 2, 0, 0, 1), generated_step("y", {2, 3}, 1, 0, 0, 1),
             generated_step("u", {3, 5}, 1, 0, 0, 1)};
  validate_plan(p);
  EXPECT_EQ(outputs_bound_in_place(p), (std::vector<bool>{false, false, false, false, false}));
  MemoryPlan m = plan_memory(p);
  EXPECT_EQ(m.live[2], (LiveRange{0, 3}));
  EXPECT_EQ(m.live[4], (LiveRange{0, 3}));
  EXPECT_EQ(m.home[4], m.home[2]);
  EXPECT_EQ(m.home[3].storage, Storage::Arena);
  ASSERT_EQ(m.copy_out.size(), 5u);
  EXPECT_EQ(m.copy_out[0], (OutputCopy{0, m.home[2]}));
  EXPECT_EQ(m.copy_out[1], (OutputCopy{1, m.home[3]}));
  EXPECT_EQ(m.copy_out[2], (OutputCopy{2, m.home[3]}));
  EXPECT_EQ(m.copy_out[3], (OutputCopy{3, BufferHome{Storage::CallerInput, 0, 0}}));
  EXPECT_EQ(m.copy_out[4], (OutputCopy{4, BufferHome{Storage::Weights, 0, -1}}));
  // u is live only at step 2, when t and y still are: three blocks.
  EXPECT_EQ(m.arena_bytes, 3 * 64);
}

// ---- Random plans ----

// Inputs, constants, then steps reading defined buffers and writing new ones (sometimes
// through a view of a new buffer); views of defined buffers; outputs of every sort.
Plan random_plan(Rng& rng) {
  Plan p;
  p.libraries = {PlanLibrary{"k.so", 0, ""}};
  std::vector<int32_t> defined;
  auto add = [&](PlanBuffer b) {
    p.buffers.push_back(std::move(b));
    return static_cast<int32_t>(p.buffers.size() - 1);
  };
  const int64_t sizes[] = {0, 4, 60, 64, 100, 256, 1000};
  auto size = [&] { return sizes[rng.range(0, 7)]; };
  for (int64_t i = 0, n = rng.range(1, 4); i < n; ++i) {
    p.inputs.push_back(add(buffer("in" + std::to_string(i), bytes_type(size()), BufferKind::Input)));
    defined.push_back(p.inputs.back());
  }
  for (int64_t i = 0, n = rng.range(0, 3); i < n; ++i) {
    int32_t c = add(buffer("c", bytes_type(size()), BufferKind::Constant));
    p.buffers[static_cast<size_t>(c)].weights_offset = p.weights.bytes;
    p.weights.bytes += round_up(p.buffers[static_cast<size_t>(c)].type.bytes(), 64);
    defined.push_back(c);
  }
  for (int64_t s = 0, n = rng.range(1, 12); s < n; ++s) {
    std::vector<int32_t> args;
    for (int64_t k = 0, nin = rng.range(1, 4); k < nin; ++k)
      args.push_back(defined[static_cast<size_t>(rng.range(0, static_cast<int64_t>(defined.size())))]);
    int32_t num_inputs = static_cast<int32_t>(args.size());
    for (int64_t k = 0, nout = rng.range(1, 3); k < nout; ++k) {
      int32_t b = add(buffer("t", bytes_type(size()), BufferKind::Intermediate));
      defined.push_back(b);
      if (rng.coin(0.3)) b = add(buffer("tv", bytes_type(p.buffers.back().type.bytes()), BufferKind::Intermediate, b));
      args.push_back(b);
    }
    p.steps.push_back(generated_step("s" + std::to_string(s), args, num_inputs, 0, 0, 1));
    if (rng.coin(0.3)) {
      int32_t of = defined[static_cast<size_t>(rng.range(0, static_cast<int64_t>(defined.size())))];
      defined.push_back(add(buffer("v", bytes_type(p.buffers[static_cast<size_t>(of)].type.bytes()),
                                   BufferKind::Intermediate, of)));
    }
  }
  for (int64_t k = 0, n = rng.range(1, 5); k < n; ++k) {
    int32_t b = static_cast<int32_t>(rng.range(0, static_cast<int64_t>(p.buffers.size())));
    if (p.buffers[static_cast<size_t>(b)].kind == BufferKind::Intermediate)
      p.buffers[static_cast<size_t>(b)].kind = BufferKind::Output;
    p.outputs.push_back(b);
    if (rng.coin(0.2)) p.outputs.push_back(b);
  }
  for (size_t b = 0; b < p.buffers.size(); ++b)
    if (p.buffers[b].kind == BufferKind::Intermediate && std::count(p.outputs.begin(), p.outputs.end(), static_cast<int32_t>(b)))
      p.buffers[b].kind = BufferKind::Output;
  validate_plan(p);
  return p;
}

// Memory of a simulated run: one tag per byte, per storage.
struct SimMemory {
  std::map<std::pair<Storage, int32_t>, std::vector<int64_t>> regions;

  int64_t* at(const BufferHome& h, int64_t bytes) {
    auto key = std::pair(h.storage, h.storage == Storage::Arena || h.storage == Storage::Weights ? -1 : h.slot);
    std::vector<int64_t>& r = regions[key];
    int64_t end = (key.second == -1 ? h.offset : 0) + bytes;
    if (static_cast<int64_t>(r.size()) < end) r.resize(static_cast<size_t>(end), -999);
    return r.data() + (key.second == -1 ? h.offset : 0);
  }
};

// Runs the plan on tags: checks reads see their writer's tag and outputs end up right.
void simulate(const Plan& p, const MemoryPlan& m) {
  SimMemory mem;
  std::vector<int64_t> want(p.buffers.size(), -1);  // per root: the tag its bytes must carry
  auto stamp = [&](const BufferHome& h, int64_t bytes, int64_t tag) {
    std::fill_n(mem.at(h, bytes), bytes, tag);
  };
  auto check = [&](const BufferHome& h, int64_t bytes, int64_t tag, const std::string& what) {
    int64_t* d = mem.at(h, bytes);
    for (int64_t i = 0; i < bytes; ++i) ASSERT_EQ(d[i], tag) << what << " byte " << i;
  };
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    int32_t b = p.inputs[i];
    int64_t n = p.buffers[static_cast<size_t>(b)].type.bytes();
    stamp(BufferHome{Storage::CallerInput, 0, static_cast<int32_t>(i)}, n, 1000 + b);
    want[static_cast<size_t>(b)] = 1000 + b;
  }
  for (size_t b = 0; b < p.buffers.size(); ++b)
    if (p.buffers[b].kind == BufferKind::Constant) {
      stamp(m.home[b], p.buffers[b].type.bytes(), 2000 + static_cast<int64_t>(b));
      want[b] = 2000 + static_cast<int64_t>(b);
    }
  for (int32_t i : m.copy_in) {
    int32_t b = p.inputs[static_cast<size_t>(i)];
    stamp(m.home[static_cast<size_t>(b)], p.buffers[static_cast<size_t>(b)].type.bytes(), 1000 + b);
  }
  for (size_t s = 0; s < p.steps.size(); ++s) {
    const PlanStep& st = p.steps[s];
    for (size_t a = 0; a < st.args.size(); ++a) {
      size_t b = static_cast<size_t>(st.args[a]);
      int64_t n = p.buffers[b].type.bytes();
      int64_t tag = static_cast<int64_t>(s * 100 + a);
      if (a < static_cast<size_t>(st.num_inputs)) {
        check(m.home[b], n, want[static_cast<size_t>(m.root[b])], "step " + std::to_string(s) + " arg " + std::to_string(a));
      } else {
        stamp(m.home[b], n, tag);
        want[static_cast<size_t>(m.root[b])] = tag;
      }
    }
  }
  std::vector<bool> done(p.outputs.size());
  for (const OutputCopy& c : m.copy_out) {
    int32_t b = p.outputs[static_cast<size_t>(c.output)];
    check(c.from, p.buffers[static_cast<size_t>(b)].type.bytes(), want[static_cast<size_t>(m.root[static_cast<size_t>(b)])],
          "copy of output " + std::to_string(c.output));
    ASSERT_FALSE(done[static_cast<size_t>(c.output)]);
    done[static_cast<size_t>(c.output)] = true;
  }
  for (size_t j = 0; j < p.outputs.size(); ++j) {
    if (done[j]) continue;
    int32_t b = p.outputs[j];
    EXPECT_EQ(m.home[static_cast<size_t>(b)], (BufferHome{Storage::CallerOutput, 0, static_cast<int32_t>(j)}));
    check(m.home[static_cast<size_t>(b)], p.buffers[static_cast<size_t>(b)].type.bytes(),
          want[static_cast<size_t>(b)], "output " + std::to_string(j));
  }
}

// Arena blocks of groups live at once never overlap; offsets are aligned; the arena is no
// larger than all blocks side by side.
void check_arena(const Plan& p, const MemoryPlan& m) {
  int64_t total = 0;
  std::vector<size_t> roots;
  for (size_t b = 0; b < p.buffers.size(); ++b) {
    EXPECT_EQ(m.home[b], m.home[static_cast<size_t>(m.root[b])]);
    if (m.root[b] != static_cast<int32_t>(b) || m.home[b].storage != Storage::Arena) continue;
    roots.push_back(b);
    int64_t size = round_up(p.buffers[b].type.bytes(), 64);
    total += size;
    EXPECT_EQ(m.home[b].offset % 64, 0);
    EXPECT_LE(m.home[b].offset + size, m.arena_bytes);
  }
  EXPECT_LE(m.arena_bytes, total);
  for (size_t x : roots)
    for (size_t y : roots) {
      if (x >= y || !m.live[x].overlaps(m.live[y])) continue;
      int64_t xs = p.buffers[x].type.bytes(), ys = p.buffers[y].type.bytes();
      if (xs == 0 || ys == 0) continue;
      bool disjoint = m.home[x].offset + xs <= m.home[y].offset || m.home[y].offset + ys <= m.home[x].offset;
      EXPECT_TRUE(disjoint) << "buffers " << x << " and " << y;
    }
}

TEST(RuntimeMemoryPlan, RandomPlans) {
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Rng rng(seed);
    Plan p = random_plan(rng);
    CallerAlignment caller;
    for (size_t i = 0; i < p.inputs.size(); ++i) caller.misaligned_inputs.push_back(rng.coin(0.3));
    for (size_t j = 0; j < p.outputs.size(); ++j) caller.misaligned_outputs.push_back(rng.coin(0.3));
    for (const CallerAlignment& c : {CallerAlignment{}, caller}) {
      MemoryPlan m = plan_memory(p, c);
      check_arena(p, m);
      simulate(p, m);
      EXPECT_EQ(plan_memory(p, c).home, m.home);  // deterministic
      if (::testing::Test::HasFailure()) return;
    }
  }
}

}  // namespace
}  // namespace orchid::runtime
