#include "tile/cost.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <iterator>
#include <map>

#include "support/error.h"

namespace orchid::tile {

namespace {

// A reduction folded one term at a time into one scalar accumulator uses one lane and waits
// for each fold: the latency of an add is about four times its reciprocal throughput.
constexpr double kSerialLatency = 4;

// A linear primitive's multiply-add on a row of accumulators in memory, not in registers, also
// loads and stores the accumulator: measured on AVX-512, such matmuls and convs ran 2.4-11x
// slower than on the register-blocked micro-kernel (bench/results/2026-11-27-tune-search.md,
// the schedules evolution chose with gemm=0), which the model had priced alike.
constexpr double kUnblockedCost = 4;

// Representative coordinates along a grid dim of n tasks and how many tasks each stands for.
std::vector<std::pair<int64_t, int64_t>> dim_samples(int64_t n) {
  if (n <= 4) {
    std::vector<std::pair<int64_t, int64_t>> all;
    for (int64_t i = 0; i < n; ++i) all.emplace_back(i, 1);
    return all;
  }
  return {{0, 1}, {1, n - 3}, {n - 2, 1}, {n - 1, 1}};
}

// Visits every sampled task with its weight (the tasks it stands for).
template <typename F>
void for_each_sample(const ir::Dims& grid, F&& visit) {
  std::vector<std::vector<std::pair<int64_t, int64_t>>> per_dim;
  for (int64_t n : grid) {
    if (n <= 0) return;
    per_dim.push_back(dim_samples(n));
  }
  std::vector<size_t> at(grid.size(), 0);
  ir::Dims coords(grid.size());
  while (true) {
    int64_t weight = 1;
    for (size_t d = 0; d < grid.size(); ++d) {
      coords[d] = per_dim[d][at[d]].first;
      weight *= per_dim[d][at[d]].second;
    }
    visit(coords, weight);
    size_t d = grid.size();
    while (d > 0 && ++at[d - 1] == per_dim[d - 1].size()) at[--d] = 0;
    if (d == 0) return;
  }
}

// Visits the sampled sub-tiles of the task at `coords` (InnerLevel) with their weights.
template <typename F>
void for_each_sub_sample(const InnerLevel& in, const ir::Dims& coords, F&& visit) {
  ir::Dims start(coords.size()), extent(coords.size());
  for (size_t d = 0; d < coords.size(); ++d) {
    start[d] = coords[d] * in.ratio[d];
    extent[d] = std::min(in.grid.grid[d], start[d] + in.ratio[d]) - start[d];
  }
  for_each_sample(extent, [&](const ir::Dims& local, int64_t weight) {
    ir::Dims at = start;
    for (size_t d = 0; d < at.size(); ++d) at[d] += local[d];
    visit(at, weight);
  });
}

// A best-fit allocator over one address range: returns offsets; tracks the peak.
class BestFit {
 public:
  int64_t allocate(int64_t bytes) {
    bytes = (bytes + 63) / 64 * 64;
    int64_t best = -1, best_size = 0, prev_end = 0;
    for (const auto& [offset, size] : blocks_) {
      int64_t gap = offset - prev_end;
      if (gap >= bytes && (best < 0 || gap < best_size)) best = prev_end, best_size = gap;
      prev_end = offset + size;
    }
    if (best < 0) best = prev_end;
    blocks_.emplace(best, bytes);
    peak_ = std::max(peak_, best + bytes);
    return best;
  }
  void release(int64_t offset) { blocks_.erase(offset); }
  int64_t peak() const { return peak_; }

 private:
  std::map<int64_t, int64_t> blocks_;
  int64_t peak_ = 0;
};

// Where data of a kernel lives, for the fastest level that holds it.
enum class Holder {
  OneCore,   // one task's: a private level per core, a core's share of a shared one
  EachCore,  // read by every core: a private level per core, a shared one whole
  AllCores,  // spread over the cores: private levels together, a shared one whole
};

// The fastest level below the registers that holds `bytes`; the main memory when none does.
size_t level_holding(const target::Target& t, int64_t bytes, Holder h) {
  for (size_t i = 1; i + 1 < t.levels.size(); ++i) {
    const target::MemoryLevel& l = t.levels[i];
    int64_t room = l.capacity_bytes;
    if (h == Holder::OneCore) room = core_share(t, i);
    if (h == Holder::AllCores && !l.shared_across_cores) room = l.capacity_bytes * std::max(1, t.cores);
    if (bytes <= room) return i;
  }
  return t.levels.size() - 1;
}

// What a kernel's structure says of its values, the same for every task: the nodes in
// topological order, the position of each value's last use (a use by an inlined node happens
// where that node's value is used), its readers inside the kernel, and the kernel's outputs.
struct KernelUses {
  std::vector<ir::NodeId> order;
  std::map<ir::ValueId, size_t> last_use;
  std::map<ir::ValueId, int64_t> readers;
  std::set<ir::ValueId> outputs;
};

KernelUses kernel_uses(const ir::Graph& g, const Kernel& k, const std::set<ir::NodeId>& inlined) {
  KernelUses u;
  u.order = k.nodes;
  std::sort(u.order.begin(), u.order.end());
  u.outputs.insert(k.outputs.begin(), k.outputs.end());
  std::map<ir::NodeId, size_t> position;
  for (size_t i = 0; i < u.order.size(); ++i) position[u.order[i]] = i;
  auto users = g.users();
  std::map<ir::NodeId, size_t> effective;
  for (size_t i = u.order.size(); i-- > 0;) {
    ir::NodeId n = u.order[i];
    size_t at = i;
    for (ir::ValueId v : g.node(n).outputs)
      for (ir::NodeId r : users[static_cast<size_t>(v.v)])
        if (position.count(r)) {
          ++u.readers[v];
          if (inlined.count(n)) at = std::max(at, effective.at(r));
        }
    effective[n] = at;
  }
  for (ir::NodeId n : u.order)
    for (ir::ValueId v : g.node(n).inputs) u.last_use[v] = std::max(u.last_use[v], effective.at(n));
  return u;
}

int64_t region_bytes(const ir::Graph& g, const TileStats& st, ir::ValueId v) {
  auto r = st.regions.find(v);
  return r == st.regions.end() ? 0 : r->second.numel() * ir::dtype_bytes(g.type(v).dtype);
}

bool inlined_value(const ir::Graph& g, ir::ValueId v, const std::set<ir::NodeId>& inlined) {
  return g.value(v).origin == ir::ValueOrigin::Node && inlined.count(g.value(v).node) > 0;
}

// `only`: the footprint of these nodes alone (an inner loop's), every value in memory they
// read allocated at its first use by them.
int64_t footprint(const ir::Graph& g, const KernelUses& u, const TileStats& st, const std::set<ir::NodeId>& inlined,
                  const std::set<ir::NodeId>* only = nullptr) {
  BestFit heap;
  std::map<ir::ValueId, int64_t> at;
  for (size_t i = 0; i < u.order.size(); ++i) {
    if (only && !only->count(u.order[i])) continue;
    const ir::Primitive& p = g.node(u.order[i]);
    for (ir::ValueId v : p.inputs) {
      bool held = only ? !inlined_value(g, v, inlined) && region_bytes(g, st, v) > 0 : st.input_bytes.count(v) > 0;
      if (!at.count(v) && held) at[v] = heap.allocate(region_bytes(g, st, v));
    }
    if (!inlined.count(u.order[i]))
      for (ir::ValueId v : p.outputs)
        if (region_bytes(g, st, v) > 0) at[v] = heap.allocate(region_bytes(g, st, v));
    for (auto it = at.begin(); it != at.end();) {
      auto lu = u.last_use.find(it->first);
      bool dead = !u.outputs.count(it->first) && (lu == u.last_use.end() || lu->second <= i);
      if (dead) heap.release(it->second), it = at.erase(it);
      else ++it;
    }
  }
  return heap.peak();
}

struct GridTotals {
  int64_t grid_bytes = 0, intermediate_bytes = 0, footprint = 0, flops = 0;
  int64_t sub_intermediate_bytes = 0, sub_footprint = 0;  // two-level: the inner loop's
  int64_t streamed_bytes = 0;  // grid_bytes with each run charged at least efficient_run_bytes
  double work = 0, wide_work = 0;
  double narrow_work = 0;  // at `lanes`, with the scalar remainders of its rows
  std::map<ir::ValueId, int64_t> loaded;  // per kernel input: bytes over all tasks
};

// Bytes one task moves of the values it computes into memory: each written once (a kernel
// output's store is grid traffic) and read once by each consumer inside the kernel; values of
// inlined primitives stay in registers. Nodes in `skip` are left out.
int64_t intermediate_traffic(const ir::Graph& g, const KernelUses& u, const TileStats& st,
                             const std::set<ir::NodeId>& inlined, const std::set<ir::NodeId>& skip) {
  int64_t bytes = 0;
  for (ir::NodeId n : u.order) {
    if (inlined.count(n) || skip.count(n)) continue;
    for (ir::ValueId v : g.node(n).outputs) {
      auto r = u.readers.find(v);
      int64_t reads = r == u.readers.end() ? 0 : r->second;
      bytes += region_bytes(g, st, v) * (reads + (u.outputs.count(v) ? 0 : 1));
    }
  }
  return bytes;
}

// How much longer than its vector share an elementwise primitive's rows take at `lanes`: a
// row of e elements runs floor(e / lanes) vector iterations and e mod lanes scalar ones, each
// as long as an iteration.
double remainder_factor(const ir::Graph& g, ir::NodeId n, const TileStats& st, int lanes) {
  const ir::Primitive& p = g.node(n);
  if (lanes <= 1 || p.reduce != ir::ReduceOp::None || p.outputs.empty()) return 1;
  auto r = st.regions.find(p.outputs[0]);
  if (r == st.regions.end() || r->second.rank() == 0) return 1;
  int64_t e = r->second.hi.back() - r->second.lo.back();
  if (e <= 0) return 1;
  return double(lanes) * double(e / lanes + e % lanes) / double(e);
}

// The work of whole register blocks over a task's region of n, per unit of work in the region.
double block_factor(const ir::Graph& g, ir::NodeId n, const TileStats& st, const RegisterBlock& b) {
  const ir::Primitive& p = g.node(n);
  auto r = st.regions.find(p.outputs[0]);
  if (r == st.regions.end() || b.row_dim >= r->second.rank() || b.col_dim >= r->second.rank()) return 1;
  auto padded = [](int64_t e, int64_t block) { return e <= 0 ? 1.0 : double((e + block - 1) / block * block) / double(e); };
  const Region& reg = r->second;
  return padded(reg.hi[b.row_dim] - reg.lo[b.row_dim], b.rows) * padded(reg.hi[b.col_dim] - reg.lo[b.col_dim], b.cols);
}

// The work of node n over `points` (its points × terms in a task or sub-tile whose regions
// `st` holds), counted `weight` times.
void add_work(const ir::Graph& g, const CostConfig& c, ir::NodeId n, int64_t points, const TileStats& st,
              double weight, int lanes, int full_lanes, GridTotals& tot) {
  double w = work_per_point(g.node(n)) * double(points) * weight;
  tot.work += w;
  if (auto b = c.blocks.find(n); b != c.blocks.end()) w *= block_factor(g, n, st, b->second);
  if (c.serial.count(n)) tot.wide_work += w * kSerialLatency * full_lanes;  // one lane, waiting
  else if (c.full_width.count(n)) tot.wide_work += w;
  else tot.narrow_work += w * remainder_factor(g, n, st, lanes) * (c.unblocked.count(n) ? kUnblockedCost : 1.0);
}

// The inner loop of the two-level task at `coords`, whose regions `st` holds (`outer_nodes`:
// those computed per task): the inner nodes' work and intermediates per sub-tile; the task's
// footprint, holding one sub-tile's values of the inner nodes.
void add_inner_loop(const ir::Graph& g, const Kernel& k, const CostConfig& c, const KernelUses& uses,
                    const std::set<ir::NodeId>& outer_nodes, const ir::Dims& coords, const TileStats& st,
                    int64_t weight, int lanes, int full_lanes, GridTotals& tot) {
  const InnerLevel& in = *c.inner;
  for (const auto& [n, points] : st.node_points)
    if (!in.nodes.count(n)) add_work(g, c, n, points, st, double(weight), lanes, full_lanes, tot);
  tot.intermediate_bytes += intermediate_traffic(g, uses, st, c.inlined, in.nodes) * weight;
  TileStats held = st;
  bool first = true;
  for_each_sub_sample(in, coords, [&](const ir::Dims& at, int64_t sub_weight) {
    TileStats sst = propagate_kernel(g, k, task_tile(g, k, in.grid, at));
    for (const auto& [n, points] : sst.node_points)
      if (in.nodes.count(n)) add_work(g, c, n, points, sst, double(weight * sub_weight), lanes, full_lanes, tot);
    tot.sub_intermediate_bytes += intermediate_traffic(g, uses, sst, c.inlined, outer_nodes) * weight * sub_weight;
    tot.sub_footprint = std::max(tot.sub_footprint, footprint(g, uses, sst, c.inlined, &in.nodes));
    for (ir::NodeId n : in.nodes)
      for (ir::ValueId v : g.node(n).outputs)
        if (first && sst.regions.count(v)) held.regions[v] = sst.regions.at(v);
    first = false;
  });
  tot.footprint = std::max(tot.footprint, footprint(g, uses, held, c.inlined));
}

GridTotals grid_totals(const ir::Graph& g, const Kernel& k, const CostConfig& c, const CostOptions& o,
                       int64_t transaction, int lanes, int full_lanes) {
  GridTotals tot;
  KernelUses uses = kernel_uses(g, k, c.inlined);
  std::set<ir::NodeId> outer_nodes;  // two-level kernels: those computed per task
  if (c.inner)
    for (ir::NodeId n : uses.order)
      if (!c.inner->nodes.count(n)) outer_nodes.insert(n);
  for_each_sample(c.grid.grid, [&](const ir::Dims& coords, int64_t weight) {
    KernelTile kt = task_tile(g, k, c.grid, coords);
    TileStats st = propagate_kernel(g, k, kt);
    int64_t bytes = 0;
    int64_t streamed = 0;
    auto count = [&](const Region& r, ir::ValueId v) {
      int64_t es = ir::dtype_bytes(g.type(v).dtype);
      streamed += transaction_bytes(r, g.type(v).shape, es, transaction, o.efficient_run_bytes);
      return transaction_bytes(r, g.type(v).shape, es, transaction);
    };
    for (const auto& [v, b] : st.input_bytes) {
      int64_t moved = count(st.regions.at(v), v);
      bytes += moved;
      tot.loaded[v] += moved * weight;
    }
    for (size_t j = 0; j < k.outputs.size(); ++j)
      if (!kt.outputs[j].empty()) bytes += count(kt.outputs[j], k.outputs[j]);
    tot.grid_bytes += bytes * weight;
    tot.streamed_bytes += streamed * weight;
    tot.flops += st.flops * weight;
    if (c.inner) {
      add_inner_loop(g, k, c, uses, outer_nodes, coords, st, weight, lanes, full_lanes, tot);
      return;
    }
    tot.intermediate_bytes += intermediate_traffic(g, uses, st, c.inlined, {}) * weight;
    for (const auto& [n, points] : st.node_points) add_work(g, c, n, points, st, double(weight), lanes, full_lanes, tot);
    tot.footprint = std::max(tot.footprint, footprint(g, uses, st, c.inlined));
  });
  return tot;
}

bool one_of(ir::ExprOp op, std::initializer_list<ir::ExprOp> ops) {
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

double expr_slots(const ir::Expr& e) {
  using ir::ExprOp;
  if (e.op() == ExprOp::Load) return 0;  // addressing, not work
  double n = 1;
  if (one_of(e.op(), {ExprOp::Exp, ExprOp::Log, ExprOp::Tanh, ExprOp::Erf, ExprOp::Sigmoid, ExprOp::Sin, ExprOp::Cos,
                      ExprOp::Atan, ExprOp::Pow}))
    n = 12;
  else if (one_of(e.op(), {ExprOp::Div, ExprOp::Sqrt, ExprOp::Rsqrt, ExprOp::Recip, ExprOp::FloorDiv, ExprOp::Mod,
                           ExprOp::Rem}))
    n = 4;
  else if (one_of(e.op(), {ExprOp::Const, ExprOp::Var}))
    n = 0;
  for (const ir::Expr& a : e->args) n += expr_slots(a);
  return n;
}

// Slots of folding one term into a reduction's state: an add, a compare and two selects of an
// arg-reduction, Welford's update (a division among five), the online softmax's (an exp).
double combine_slots(ir::ReduceOp r) {
  switch (r) {
    case ir::ReduceOp::None: return 0;
    case ir::ReduceOp::Sum: case ir::ReduceOp::Prod: case ir::ReduceOp::Max: case ir::ReduceOp::Min: return 1;
    case ir::ReduceOp::ArgMax: case ir::ReduceOp::ArgMin: return 3;
    case ir::ReduceOp::Welford: return 8;
    case ir::ReduceOp::MaxSum: return 16;
  }
  return 1;
}

}  // namespace

double work_per_point(const ir::Primitive& p) {
  if (p.kind() == ir::PrimKind::Opaque || p.kind() == ir::PrimKind::Layout) return 0;
  if (p.kind() == ir::PrimKind::Linear) return 1;  // one FMA per term
  double n = 0;
  for (const ir::Expr& b : p.bodies) n += expr_slots(b);
  return n + combine_slots(p.reduce);
}

int64_t transaction_bytes(const Region& r, const ir::Dims& shape, int64_t element_bytes, int64_t transaction,
                          int64_t min_run) {
  ORCHID_CHECK(r.rank() == shape.size()) << "region " << region_str(r) << " of a tensor " << ir::dims_str(shape);
  if (r.empty()) return 0;
  transaction = std::max<int64_t>(1, transaction);
  ir::Dims extent = r.shape();
  size_t rank = r.rank();
  int64_t run = 1;
  for (size_t d = rank; d-- > 0;) {  // the contiguous run: trailing whole dims and one more
    run *= extent[d];
    if (extent[d] != shape[d]) break;
  }
  int64_t rows = r.numel() / std::max<int64_t>(1, run);
  int64_t first = 0;
  for (size_t d = 0; d < rank; ++d) first = first * shape[d] + r.lo[d];
  int64_t start = (first * element_bytes) % transaction;
  int64_t per_row = (start + run * element_bytes + transaction - 1) / transaction;
  return rows * std::max(per_row * transaction, min_run);
}

int64_t task_footprint(const ir::Graph& g, const Kernel& k, const TileStats& stats,
                       const std::set<ir::NodeId>& inlined) {
  return footprint(g, kernel_uses(g, k, inlined), stats, inlined);
}

int64_t core_share(const target::Target& t, size_t level) {
  ORCHID_CHECK(level < t.levels.size()) << "target '" << t.name << "' has no level " << level;
  const target::MemoryLevel& l = t.levels[level];
  return l.shared_across_cores ? l.capacity_bytes / std::max(1, t.cores) : l.capacity_bytes;
}

Estimate estimate_kernel(const ir::Graph& g, const Kernel& k, const CostConfig& c, const target::Target& t,
                         const CostOptions& o) {
  ORCHID_CHECK(t.levels.size() >= 2) << "target '" << t.name << "' has no memory levels";
  ORCHID_CHECK(t.peak_gflops_f32 > 0) << "target '" << t.name << "' has no peak (not measured)";
  const size_t main = t.levels.size() - 1;
  ORCHID_CHECK(t.levels[main].bandwidth_gbs > 0) << "target '" << t.name << "' has no main-memory bandwidth";
  int full_lanes = std::max(1, t.simd_bits / 32);
  int lanes = c.vector_lanes <= 0 ? full_lanes : std::min(c.vector_lanes, full_lanes);
  GridTotals tot = grid_totals(g, k, c, o, t.levels[main].transaction_bytes, lanes, full_lanes);

  Estimate e;
  e.tasks = c.grid.tasks();
  e.flops = tot.flops;
  e.grid_bytes = tot.grid_bytes;
  e.intermediate_bytes = tot.intermediate_bytes;
  e.footprint_bytes = tot.footprint;
  e.sub_intermediate_bytes = tot.sub_intermediate_bytes;
  e.sub_footprint_bytes = tot.sub_footprint;
  int64_t reread_set = 0, reread_bytes = 0;
  for (const auto& [v, loaded] : tot.loaded) {
    int64_t whole = g.type(v).bytes();
    e.unique_bytes += std::min(loaded, whole);
    if (loaded > whole) reread_set += whole, reread_bytes += loaded - whole;
  }
  for (ir::ValueId v : k.outputs) e.unique_bytes += g.type(v).bytes();

  std::vector<int64_t> bytes(t.levels.size(), 0);
  size_t unique_level = level_holding(t, e.unique_bytes, Holder::AllCores);
  bytes[unique_level] += e.unique_bytes;
  // Stores to lines not in a core's caches read them first (write-allocate), unless they
  // stream past the caches: outputs served by a shared level move twice.
  if (c.write_allocate && t.levels[unique_level].shared_across_cores)
    for (ir::ValueId v : k.outputs) bytes[unique_level] += g.type(v).bytes();
  bytes[level_holding(t, reread_set, Holder::EachCore)] += reread_bytes;
  bytes[level_holding(t, e.footprint_bytes, Holder::OneCore)] += e.intermediate_bytes;
  bytes[level_holding(t, e.sub_footprint_bytes, Holder::OneCore)] += e.sub_intermediate_bytes;
  double slowest = 0;
  for (size_t i = 1; i < t.levels.size(); ++i) {
    const target::MemoryLevel& l = t.levels[i];
    double s = l.bandwidth_gbs > 0 ? double(bytes[i]) / (l.bandwidth_gbs * 1e9) : 0.0;
    if (i == unique_level && l.shared_across_cores && tot.grid_bytes > 0)
      s *= double(tot.streamed_bytes) / double(tot.grid_bytes);  // short runs stream slower
    e.levels.push_back({l.name, bytes[i], s});
    slowest = std::max(slowest, s);
  }
  e.work = tot.work;
  e.narrow_work = tot.narrow_work;
  double slots = tot.wide_work + e.narrow_work * full_lanes / lanes;
  e.compute_seconds = slots / (t.peak_gflops_f32 * 1e9 / 2);
  int cores = std::max(1, t.cores);
  if (e.tasks > 0) {
    int64_t waves = (e.tasks + cores - 1) / cores;
    e.utilization = double(e.tasks) / double(waves * cores);
  }
  int64_t entered = e.tasks;  // tasks, and the sub-tiles of two-level tasks
  if (c.inner) entered = std::max(e.tasks, c.inner->grid.tasks());
  e.seconds = std::max(slowest, e.compute_seconds) / e.utilization +
              double(entered) * o.task_overhead_seconds / cores;
  return e;
}

}  // namespace orchid::tile
