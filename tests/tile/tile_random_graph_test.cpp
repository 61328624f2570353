// Soundness of tile propagation on random graphs (tests/testlib/random_graph.h), by brute
// force: for random tiles (and reduction splits) of every primitive, and for random kernels
// (runs of consecutive nodes) with random output tiles, every element actually read —
// predicates and select branches respected, tensor values from an interpreter run on random
// inputs — must lie inside the propagated region. Indices that depend on a non-constant
// tensor (gathers) are unknown at compile time: there the region must span the axis.
// Tightness (the share of regions equal to the bounding box of what is read) is printed
// twice: against the run's reads, and against what is knowable at compile time (the oracle
// again, with the values of non-constant tensors unknown and conditions on them taken both
// ways); only the latter is what an analysis could reach.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <set>

#include "interp/interp.h"
#include "interp/random_inputs.h"
#include "ir/printer.h"
#include "support/random.h"
#include "testlib/random_graph.h"
#include "tile/kernel.h"
#include "tile/propagate.h"
#include "tile_oracle.h"

namespace orchid::tile {
namespace {

using ir::Dims;

constexpr uint64_t kSeeds = 300;
constexpr int64_t kMaxPoints = 60000;
// Every value as the interpreter's F64 precision reads it (floats never rounded), which is how
// the oracle evaluates bodies.
const interp::Options kF64Values{interp::Precision::F64, true};  // points of a tile × reduction box the oracle enumerates

Region random_box(Rng& rng, const Dims& shape) {
  Region r{Dims(shape.size()), Dims(shape.size())};
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) continue;
    double u = rng.uniform();
    if (u < 0.25) {  // whole dim
      r.hi[d] = shape[d];
    } else if (u < 0.4) {  // one element
      r.lo[d] = rng.range(0, shape[d]);
      r.hi[d] = r.lo[d] + 1;
    } else {
      r.lo[d] = rng.range(0, shape[d]);
      r.hi[d] = rng.range(r.lo[d] + 1, shape[d] + 1);
    }
  }
  return r;
}

// Halves the longest dim of r until it holds at most `limit` elements.
void shrink(Region& r, int64_t limit) {
  while (r.numel() > limit) {
    size_t best = 0;
    for (size_t d = 1; d < r.rank(); ++d)
      if (r.hi[d] - r.lo[d] > r.hi[best] - r.lo[best]) best = d;
    r.hi[best] = r.lo[best] + (r.hi[best] - r.lo[best]) / 2;
  }
}

struct Tally {
  int64_t regions = 0, exact = 0;
  void add(bool is_exact) {
    ++regions;
    exact += is_exact;
  }
  std::string str() const {
    return std::to_string(exact) + "/" + std::to_string(regions) + " (" +
           std::to_string(regions ? 100.0 * static_cast<double>(exact) / static_cast<double>(regions) : 100.0).substr(0, 5) + "%)";
  }
};

TEST(TileRandomGraphs, PrimitiveRegionsCoverEveryElementRead) {
  Tally all, knowable;
  std::map<std::string, Tally> by_op;
  int64_t checked_tiles = 0;
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    ir::Graph g = testlib::random_graph(seed);
    std::vector<ir::Tensor> values = interp::run_all(g, interp::random_inputs(g, seed), kF64Values);
    Rng rng(seed * 7919 + 17);
    for (const ir::Primitive& p : g.nodes()) {
      for (int t = 0; t < 6; ++t) {
        Region tile = random_box(rng, p.domain);
        std::optional<Region> reduce;
        int64_t rpoints = ir::numel(p.reduce_domain);
        if (!p.reduce_domain.empty() && rng.coin(0.3)) {
          reduce = random_box(rng, p.reduce_domain);
          rpoints = reduce->numel();
        }
        if (rpoints > 0) shrink(tile, std::max<int64_t>(1, kMaxPoints / rpoints));
        if (tile.numel() * std::max<int64_t>(rpoints, 1) > kMaxPoints) continue;
        ++checked_tiles;
        auto got = propagate_primitive(g, p, tile, reduce);
        auto want = oracle::brute_force_reads(g, p, tile, reduce, &values);
        auto static_want = oracle::brute_force_reads(g, p, tile, reduce);
        for (size_t k = 0; k < p.inputs.size(); ++k) {
          const Dims& shape = g.type(p.inputs[k]).shape;
          if (!want[k].any && !got[k]) continue;  // nothing read, nothing claimed
          bool sound = oracle::covers(got[k], want[k], shape);
          EXPECT_FALSE(want[k].out_of_bounds) << "seed " << seed << ": the graph reads out of bounds";
          EXPECT_TRUE(sound) << "seed " << seed << ", node %" << g.value(p.outputs[0]).name << " slot " << k
                             << ", tile " << region_str(tile) << (reduce ? " reduce " + region_str(*reduce) : "")
                             << ": region " << (got[k] ? region_str(*got[k]) : "(nothing)") << ", read "
                             << oracle::read_box_str(want[k]) << "\n"
                             << ir::print_graph(g);
          all.add(oracle::exact(got[k], want[k], shape));
          bool ex = oracle::exact(got[k], static_want[k], shape);
          knowable.add(ex);
          by_op[std::string(ir::prim_op_name(p.op))].add(ex);
        }
      }
    }
    if (HasFailure()) break;
  }
  std::cout << "[tightness] primitive regions over " << checked_tiles << " tiles: exact " << knowable.str()
            << " against compile-time knowledge, " << all.str() << " against the run's reads; by op:\n";
  for (const auto& [op, t] : by_op) std::cout << "[tightness]   " << op << ": " << t.str() << "\n";
  EXPECT_GT(checked_tiles, 6000);
}

// ---- Kernels: runs of consecutive nodes, by brute force over exact element sets. ----

struct Marks {
  std::vector<std::vector<char>> of;  // per value: one flag per element
  explicit Marks(const ir::Graph& g) : of(static_cast<size_t>(g.num_values())) {
    for (int32_t v = 0; v < g.num_values(); ++v) of[static_cast<size_t>(v)].assign(static_cast<size_t>(g.type(ir::ValueId(v)).numel()), 0);
  }
  // Marks idx of value v; indirect or unknown dims are marked whole (the region must span
  // them; the element read lies among them).
  void mark(const ir::Graph& g, ir::ValueId v, const oracle::Index& idx, const std::vector<bool>& indirect) {
    const Dims& shape = g.type(v).shape;
    Dims lo(shape.size()), hi(shape.size());
    for (size_t d = 0; d < shape.size(); ++d) {
      bool whole = !idx[d] || indirect[d];
      EXPECT_TRUE(!idx[d] || (*idx[d] >= 0 && *idx[d] < shape[d])) << "read out of bounds";
      lo[d] = whole ? 0 : *idx[d];
      hi[d] = whole ? shape[d] : *idx[d] + 1;
    }
    Dims strides = ir::row_major_strides(shape);
    oracle::for_each_point(lo, hi, [&](const oracle::Point& at) {
      int64_t flat = 0;
      for (size_t d = 0; d < at.size(); ++d) flat += at[d] * strides[d];
      of[static_cast<size_t>(v.v)].at(static_cast<size_t>(flat)) = 1;
    });
  }
  // The bounding box of the marked elements, or nullopt.
  std::optional<Region> box(const ir::Graph& g, ir::ValueId v) const {
    const Dims& shape = g.type(v).shape;
    std::optional<Region> out;
    Dims strides = ir::row_major_strides(shape);
    oracle::for_each_point(Dims(shape.size(), 0), shape, [&](const oracle::Point& at) {
      int64_t flat = 0;
      for (size_t d = 0; d < at.size(); ++d) flat += at[d] * strides[d];
      if (!of[static_cast<size_t>(v.v)][static_cast<size_t>(flat)]) return;
      Region pt{at, at};
      for (auto& h : pt.hi) ++h;
      unite(out, pt);
    });
    return out;
  }
};

// Every element a kernel task reads or computes, walking its nodes backwards; false when the
// enumeration would be too large.
// values: every value of g (interp::run_all), or nullptr for compile-time knowledge only.
bool brute_force_kernel(const ir::Graph& g, const std::vector<ir::Tensor>* values, const Kernel& k,
                        const KernelTile& tile, Marks& m) {
  for (size_t j = 0; j < k.outputs.size(); ++j) {
    oracle::for_each_point(tile.outputs[j].lo, tile.outputs[j].hi, [&](const oracle::Point& at) {
      oracle::Index idx(at.begin(), at.end());
      m.mark(g, k.outputs[j], idx, std::vector<bool>(at.size(), false));
    });
  }
  std::vector<ir::NodeId> order = k.nodes;
  std::sort(order.begin(), order.end(), [](ir::NodeId a, ir::NodeId b) { return a > b; });
  for (ir::NodeId n : order) {
    const ir::Primitive& p = g.node(n);
    std::vector<char> need(static_cast<size_t>(ir::numel(p.domain)), 0);
    bool any = false;
    for (ir::ValueId o : p.outputs)
      for (size_t e = 0; e < need.size(); ++e)
        if (m.of[static_cast<size_t>(o.v)][e]) need[e] = 1, any = true;
    if (!any) continue;
    for (ir::ValueId o : p.outputs) m.of[static_cast<size_t>(o.v)] = need;  // computed together
    if (p.kind() == ir::PrimKind::Opaque) {
      for (ir::ValueId in : p.inputs) std::fill(m.of[static_cast<size_t>(in.v)].begin(), m.of[static_cast<size_t>(in.v)].end(), 1);
      continue;
    }
    auto split = tile.reduce.find(n);
    Region red = split != tile.reduce.end() ? split->second : Region::whole(p.reduce_domain);
    int64_t needed = std::count(need.begin(), need.end(), 1);
    if (needed * red.numel() > 4 * kMaxPoints) return false;
    oracle::PointEval pe = oracle::PointEval::of(g, p, values);
    Dims strides = ir::row_major_strides(p.domain);
    oracle::for_each_point(Dims(p.domain.size(), 0), p.domain, [&](const oracle::Point& i) {
      int64_t flat = 0;
      for (size_t d = 0; d < i.size(); ++d) flat += i[d] * strides[d];
      if (!need[static_cast<size_t>(flat)]) return;
      oracle::for_each_point(red.lo, red.hi, [&](const oracle::Point& r) {
        for (const ir::Expr& b : p.bodies)
          pe.reads(b, i, r, [&](size_t slot, const oracle::Index& idx, const std::vector<bool>& indirect) {
            m.mark(g, p.inputs[slot], idx, indirect);
          });
      });
    });
  }
  return true;
}

// A random run of consecutive nodes; its outputs are the values used after it (or graph
// outputs), plus now and then a value used only inside it.
Kernel random_kernel(const ir::Graph& g, Rng& rng) {
  Kernel k;
  int32_t n = g.num_nodes();
  int32_t a = static_cast<int32_t>(rng.range(0, n));
  int32_t b = static_cast<int32_t>(rng.range(a, std::min(n, a + 6)));
  for (int32_t x = a; x <= b; ++x) k.nodes.push_back(ir::NodeId(x));
  auto users = g.users();
  std::set<ir::ValueId> graph_out(g.outputs().begin(), g.outputs().end());
  for (ir::NodeId x : k.nodes) {
    for (ir::ValueId v : g.node(x).outputs) {
      bool used_after = graph_out.count(v) > 0;
      for (ir::NodeId u : users[static_cast<size_t>(v.v)]) used_after |= u.v > b;
      if (used_after || rng.coin(0.15)) k.outputs.push_back(v);
    }
  }
  if (k.outputs.empty()) k.outputs.push_back(g.node(ir::NodeId(b)).outputs[0]);
  return k;
}

TEST(TileRandomGraphs, KernelRegionsCoverEveryElementReadOrComputed) {
  Tally all, inputs, knowable;
  int64_t kernels = 0, skipped = 0;
  for (uint64_t seed = 0; seed < kSeeds; ++seed) {
    ir::Graph g = testlib::random_graph(seed);
    std::vector<ir::Tensor> values = interp::run_all(g, interp::random_inputs(g, seed), kF64Values);
    Rng rng(seed * 104729 + 5);
    for (int rep = 0; rep < 4; ++rep) {
      Kernel k = random_kernel(g, rng);
      KernelTile tile;
      for (ir::ValueId v : k.outputs) tile.outputs.push_back(random_box(rng, g.type(v).shape));
      for (ir::NodeId n : k.nodes)
        if (!g.node(n).reduce_domain.empty() && rng.coin(0.25)) tile.reduce[n] = random_box(rng, g.node(n).reduce_domain);
      TileStats s = propagate_kernel(g, k, tile);
      Marks m(g), static_m(g);
      if (!brute_force_kernel(g, &values, k, tile, m) || !brute_force_kernel(g, nullptr, k, tile, static_m)) {
        ++skipped;
        continue;
      }
      ++kernels;
      std::vector<ir::ValueId> ins = kernel_inputs(g, k);
      for (int32_t vi = 0; vi < g.num_values(); ++vi) {
        ir::ValueId v(vi);
        std::optional<Region> want = m.box(g, v);
        auto it = s.regions.find(v);
        std::optional<Region> got = it == s.regions.end() ? std::nullopt : std::optional<Region>(it->second);
        if (!want && !got) continue;
        EXPECT_TRUE(want && got ? got->contains(*want) : !want)
            << "seed " << seed << " kernel nodes " << k.nodes.front().v << ".." << k.nodes.back().v << ": %"
            << g.value(v).name << " region " << (got ? region_str(*got) : "(none)") << ", touched "
            << (want ? region_str(*want) : "(nothing)") << "\n"
            << ir::print_graph(g);
        bool ex = want && got && *want == *got;
        std::optional<Region> static_want = static_m.box(g, v);
        bool static_ex = static_want && got && *static_want == *got;
        knowable.add(static_ex);
        all.add(ex);
        if (std::find(ins.begin(), ins.end(), v) != ins.end()) {
          inputs.add(static_ex);
          // Bytes loaded are the region's.
          EXPECT_EQ(s.input_bytes.at(v), got->numel() * ir::dtype_bytes(g.type(v).dtype));
        }
      }
      int64_t loaded = 0;
      for (const auto& [v, bytes] : s.input_bytes) loaded += bytes;
      EXPECT_EQ(loaded, s.load_bytes);
      EXPECT_GE(s.footprint_bytes, s.load_bytes + s.intermediate_bytes);
    }
    if (HasFailure()) break;
  }
  std::cout << "[tightness] kernel regions over " << kernels << " kernels (" << skipped
            << " too large to enumerate): exact " << knowable.str() << " against compile-time knowledge, "
            << all.str() << " against the run's reads; kernel inputs exact " << inputs.str() << " against compile-time knowledge\n";
  EXPECT_GT(kernels, 800);
}

}  // namespace
}  // namespace orchid::tile
