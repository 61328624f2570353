// Lowering a kernel for code generation (lower.h): the grid, inlining, the tasks' regions,
// homes and scratch, two-level kernels. What concerns the GEMM micro-kernel is in
// lower_gemm.cpp.
#include "codegen/cpu/lower.h"

#include <algorithm>
#include <set>

#include "codegen/cpu/lower_internal.h"
#include "support/error.h"
#include "tile/region.h"

namespace orchid::codegen::cpu {

namespace lower_detail {

// Loads of each value in the bodies of the kernel's nodes.
std::map<ValueId, int> uses_in_kernel(const ir::Graph& g, const std::vector<NodeId>& nodes) {
  std::map<ValueId, int> uses;
  for (NodeId n : nodes) {
    const ir::Primitive& p = g.node(n);
    for (const ir::Expr& b : p.bodies)
      ir::visit_post(b, [&](const ir::Expr& e) {
        if (e.op() == ir::ExprOp::Load) ++uses[p.inputs[e->index]];
      });
  }
  return uses;
}

// Whether e mentions domain variable d.
bool mentions(const ir::Expr& e, int32_t d) {
  bool found = false;
  ir::visit_post(e, [&](const ir::Expr& x) {
    found |= x.op() == ir::ExprOp::Var && x->var_kind == ir::VarKind::Domain && x->index == d;
  });
  return found;
}

}  // namespace lower_detail

size_t anchor_output(const ir::Graph& g, const tile::Kernel& k) {
  size_t best = 0;
  for (size_t i = 1; i < k.outputs.size(); ++i)
    if (g.type(k.outputs[i]).numel() > g.type(k.outputs[best]).numel()) best = i;
  return best;
}

int64_t reduction_lanes(const Schedule& s, int64_t extent) {
  if (s.vector_width <= 1) return 0;
  int64_t lanes = static_cast<int64_t>(s.vector_width) * s.unroll;
  while (lanes > s.vector_width && lanes > extent) lanes /= 2;
  return lanes <= extent ? lanes : 0;
}

namespace {


bool index_only(const ir::Primitive& p) {
  return p.kind() == ir::PrimKind::Layout || p.op == ir::PrimOp::Broadcast;
}

// Values some linear primitive of the kernel reads: its operand packing (emit_gemm.cpp) reads
// transposed operands in their own order, so a transpose feeding it stays inlined.
std::set<ValueId> linear_operands(const ir::Graph& g, const std::vector<NodeId>& nodes) {
  std::set<ValueId> out;
  for (NodeId n : nodes)
    if (g.node(n).kind() == ir::PrimKind::Linear) out.insert(g.node(n).inputs.begin(), g.node(n).inputs.end());
  return out;
}

double numel_f(const Dims& d) {
  double n = 1;
  for (int64_t e : d) n *= static_cast<double>(e);
  return n;
}

// Inlined into its one consumer, a primitive's body is evaluated once per element the consumer
// reads (`reads`, counted through inlined consumers); it is inlined only where that is at most
// once per element of its own, so that inlining never computes a value more often (a per-row
// value read by every element of the row is computed into scratch, once per row).
bool inlinable(const ir::Primitive& p, const std::map<ValueId, int>& uses, const std::map<ValueId, double>& reads,
               const std::vector<ValueId>& outputs, const std::set<ValueId>& linear_inputs, const Schedule& s) {
  if (p.reduce != ir::ReduceOp::None || p.bodies.size() != 1 || p.kind() == ir::PrimKind::Opaque)
    return false;
  ValueId v = p.outputs[0];
  if (std::find(outputs.begin(), outputs.end(), v) != outputs.end()) return false;
  if (index_only(p)) return transposing_dim(p) < 0 || linear_inputs.count(v);
  auto it = uses.find(v);
  auto r = reads.find(v);
  bool once = r == reads.end() || r->second <= numel_f(p.domain);
  return s.inline_single_use && it != uses.end() && it->second == 1 && once;
}

// Which of the kernel's nodes (in topological order) are inlined, decided from the last to the
// first, as reads are known once every consumer is.
std::vector<bool> inlined_nodes(const ir::Graph& g, const std::vector<NodeId>& nodes,
                                const std::vector<ValueId>& outputs, const Schedule& s) {
  std::map<ValueId, int> uses = uses_in_kernel(g, nodes);
  std::set<ValueId> linear_inputs = linear_operands(g, nodes);
  std::map<ValueId, double> reads;
  std::vector<bool> inl(nodes.size());
  for (size_t i = nodes.size(); i-- > 0;) {
    const ir::Primitive& p = g.node(nodes[i]);
    inl[i] = inlinable(p, uses, reads, outputs, linear_inputs, s);
    double evals = inl[i] ? reads[p.outputs[0]] : numel_f(p.domain) * numel_f(p.reduce_domain);
    for (const ir::Expr& b : p.bodies)
      ir::visit_post(b, [&](const ir::Expr& e) {
        if (e.op() == ir::ExprOp::Load) reads[p.inputs[e->index]] += evals;
      });
  }
  return inl;
}

bool row_combiner(ir::ReduceOp r) {
  return r == ir::ReduceOp::Sum || r == ir::ReduceOp::Prod || r == ir::ReduceOp::Max ||
         r == ir::ReduceOp::Min;
}

Region empty_region(size_t rank) { return Region{Dims(rank, 0), Dims(rank, 0)}; }

// The grid of a level: the tasks', or the inner loop's sub-tiles.
tile::TaskGrid task_grid(const KernelLowering& kl) { return tile::TaskGrid{kl.grid, kl.tilings}; }
tile::TaskGrid sub_grid(const KernelLowering& kl) { return tile::TaskGrid{kl.inner->grid, kl.inner->tilings}; }

TaskRegions task_regions(const ir::Graph& g, const tile::Kernel& k, const KernelLowering& kl,
                         const tile::TaskGrid& level) {
  TaskRegions tr;
  tr.node.resize(kl.nodes.size());
  for (int64_t t = 0; t < level.tasks(); ++t) {
    tile::KernelTile kt = tile::task_tile(g, k, level, grid_coords(t, level.grid));
    tile::TileStats st = tile::propagate_kernel(g, k, kt);
    tr.most_io_bytes = std::max(tr.most_io_bytes, st.load_bytes + st.store_bytes);
    int64_t part = 0;
    for (const auto& [v, bytes] : st.input_bytes)
      if (bytes < g.type(v).numel() * ir::dtype_bytes(g.type(v).dtype)) part += bytes;
    tr.most_part_bytes = std::max(tr.most_part_bytes, part);
    for (size_t i = 0; i < kl.nodes.size(); ++i) {
      const ir::Primitive& p = g.node(kl.nodes[i].node);
      std::optional<Region> hull;
      for (ValueId v : p.outputs) {
        auto it = st.regions.find(v);
        if (it != st.regions.end()) tile::unite(hull, it->second);
      }
      tr.node[i].push_back(hull ? *hull : empty_region(p.domain.size()));
    }
  }
  return tr;
}

// Whether clamp(c + sum step*coord, lo, hi) gives every task's value.
bool check_fit(const TaskBound& b, const std::vector<int64_t>& v, const Dims& grid) {
  for (int64_t t = 0; t < ir::numel(grid); ++t) {
    Dims c = grid_coords(t, grid);
    int64_t x = b.c;
    for (size_t d = 0; d < c.size(); ++d) x += b.step[d] * c[d];
    if (std::clamp(x, b.lo, b.hi) != v[t]) return false;
  }
  return true;
}

int64_t task_of(const Dims& coords, const Dims& grid) {
  int64_t t = 0;
  for (size_t d = 0; d < grid.size(); ++d) t = t * grid[d] + coords[d];
  return t;
}

// The bound through every task's value of a level of `grid`: affine where one fits, else a new
// column of that level's table (`columns` counts them).
TaskBound fit_bound(const std::vector<int64_t>& v, const Dims& grid, int& columns) {
  TaskBound b;
  b.lo = *std::min_element(v.begin(), v.end());
  b.hi = *std::max_element(v.begin(), v.end());
  size_t rank = grid.size();
  // From task 0 and unit steps; then from the second and third tile along each dim (where
  // the first is clamped, as by padding).
  for (int base = 0; base < 2; ++base) {
    b.step.assign(rank, 0);
    Dims origin(rank, 0);
    for (size_t d = 0; d < rank; ++d)
      if (base == 1 && grid[d] > 2) origin[d] = 1;
    int64_t at_origin = v[task_of(origin, grid)];
    for (size_t d = 0; d < rank; ++d) {
      if (grid[d] <= origin[d] + 1) continue;
      Dims next = origin;
      next[d] += 1;
      b.step[d] = v[task_of(next, grid)] - at_origin;
    }
    b.c = at_origin;
    for (size_t d = 0; d < rank; ++d) b.c -= b.step[d] * origin[d];
    if (check_fit(b, v, grid)) return b;
  }
  b.affine = false;
  b.column = columns++;
  return b;
}

std::vector<int64_t> table_of(const std::vector<std::vector<int64_t>>& cols, int64_t tasks) {
  std::vector<int64_t> table(static_cast<size_t>(tasks) * cols.size(), 0);
  for (size_t c = 0; c < cols.size(); ++c)
    for (int64_t t = 0; t < tasks; ++t) table[t * cols.size() + c] = cols[c][t];
  return table;
}

// The region bounds of the computed nodes, each level's own table of those no affine bound fits.
void fit_regions(KernelLowering& kl, const TaskRegions& tr) {
  std::vector<std::vector<int64_t>> columns[2];
  for (size_t i = 0; i < kl.nodes.size(); ++i) {
    NodeLowering& nl = kl.nodes[i];
    if (nl.inlined) continue;
    const Dims& grid = nl.inner ? kl.inner->grid : kl.grid;
    int& count = nl.inner ? kl.inner->table_columns : kl.table_columns;
    size_t rank = tr.node[i].empty() ? 0 : tr.node[i][0].rank();
    for (size_t d = 0; d < rank; ++d)
      for (int side = 0; side < 2; ++side) {
        std::vector<int64_t> v;
        for (const Region& r : tr.node[i]) v.push_back(side == 0 ? r.lo[d] : std::max(r.lo[d], r.hi[d]));
        TaskBound b = fit_bound(v, grid, count);
        if (!b.affine) columns[nl.inner].push_back(v);
        (side == 0 ? nl.lo : nl.hi).push_back(b);
      }
  }
  kl.table = table_of(columns[0], kl.tasks);
  if (kl.inner) kl.inner->table = table_of(columns[1], kl.inner->tasks);
}

// Whether a task's region of v is exactly the tile of a kernel output that it writes (then v
// is computed in place there).
bool computed_in_place(const ir::Graph& g, const KernelLowering& kl, const std::vector<Region>& regions,
                       const ir::Primitive& p, ValueId v, const tile::TaskGrid& level) {
  // A rank-0 output is written by task 0 alone, so other tasks keep their copy in scratch.
  bool exact = kl.arg_of(v) >= 0 && (!p.domain.empty() || level.tasks() == 1);
  auto oi = std::find(kl.outputs.begin(), kl.outputs.end(), v) - kl.outputs.begin();
  for (int64_t t = 0; exact && t < level.tasks(); ++t) {
    Region tile = output_tile(level.tilings[oi], g.type(v).shape, grid_coords(t, level.grid));
    const Region& r = regions[t];
    exact = tile.empty() ? r.empty() || r.numel() == 0 : r == tile;
  }
  return exact;
}

// The home of a value computed into scratch (not in place), of the node's largest region
// `most`: its own area, or a GEMM's tile where each task computes one index of every dim but
// the rows and columns (the tile is then the home and nothing is copied; a kernel output is
// copied out of its own area).
ValueHome scratch_home(const ir::Graph& g, ValueId v, const Dims& most, const std::optional<GemmFactors>& f,
                       NodeLowering& nl, int arg, int64_t& offset) {
  ValueHome h;
  h.arg = arg;
  h.copy_out = arg >= 0;
  h.scratch_strides.assign(most.size(), 1);
  bool one_tile = nl.gemm;
  for (size_t d = 0; one_tile && d < most.size(); ++d) one_tile = d == f->m || d == f->n || most[d] == 1;
  if (one_tile && !h.copy_out) {
    nl.gemm_home = true;
    h.scratch_offset = nl.gemm_c;
    h.scratch_strides[f->m] = nl.gemm_ldc;
    return h;  // the other dims' strides do not matter: their region index is 0
  }
  for (size_t d = most.size(); d-- > 1;) h.scratch_strides[d - 1] = h.scratch_strides[d] * most[d];
  h.scratch_offset = offset;
  offset += align64(ir::numel(most) * ir::dtype_bytes(g.type(v).dtype));
  return h;
}


// Whether reduction p reads an operand along its terms but across its rows: a load whose last
// index is the last term and whose other indices mention the last domain variable (a matrix
// times a transposed one, W[n, k]). Accumulated a row at a time, each lane would gather from
// another row of W; reduced over lanes of terms (emit_lanes, where the terms fill them), each
// reads W's row contiguously (a classifier's [1, 384] x [1000, 384]^T ran 22x faster).
bool reads_across_rows(const ir::Primitive& p) {
  if (p.domain.empty() || p.reduce_domain.empty()) return false;
  auto last_term = static_cast<int32_t>(p.reduce_domain.size()) - 1, last = static_cast<int32_t>(p.domain.size()) - 1;
  bool across = false;
  for (const ir::Expr& b : p.bodies)
    ir::visit_post(b, [&](const ir::Expr& e) {
      if (e.op() != ir::ExprOp::Load) return;
      size_t rank = e.num_args() - (e->predicated ? 1 : 0);
      if (rank < 2) return;
      const ir::Expr& inner = e.arg(rank - 1);
      if (inner.op() != ir::ExprOp::Var || inner->var_kind != ir::VarKind::Reduce || inner->index != last_term) return;
      for (size_t d = 0; d + 1 < rank; ++d) across |= mentions(e.arg(d), last);
    });
  return across;
}

// Homes of the computed nodes' outputs and the scratch layout.
void place_values(const ir::Graph& g, KernelLowering& kl, const TaskRegions& tr) {
  int64_t offset = 0;
  kl.inner_scratch = -1;
  for (size_t i = 0; i < kl.nodes.size(); ++i) {
    NodeLowering& nl = kl.nodes[i];
    if (nl.inlined) continue;
    // The inner loop's nodes follow the task's (split_levels), so their scratch is a suffix.
    ORCHID_CHECK(kl.inner_scratch < 0 || nl.inner) << "a node computed per task after one computed per sub-tile";
    if (nl.inner && kl.inner_scratch < 0) kl.inner_scratch = offset;
    const ir::Primitive& p = g.node(nl.node);
    Dims& most = nl.most;
    most.assign(p.domain.size(), 0);
    nl.uniform.assign(p.domain.size(), true);
    const Dims first = tr.node[i].empty() ? Dims{} : tr.node[i][0].shape();
    for (const Region& r : tr.node[i]) {
      const Dims shape = r.shape();
      for (size_t d = 0; d < most.size(); ++d) {
        most[d] = std::max(most[d], shape[d]);
        nl.uniform[d] = nl.uniform[d] && shape[d] == first[d];
      }
    }
    std::optional<GemmFactors> f = uses_gemm(g, p, kl.schedule) ? gemm_factors(g, p) : std::nullopt;
    if (f && most[f->m] > 0 && most[f->n] > 0) place_gemm(p, *f, direct_b_rows(g, kl, p, *f), most, nl, offset);
    for (ValueId v : p.outputs) {
      int arg = kl.arg_of(v);
      if (computed_in_place(g, kl, tr.node[i], p, v, nl.inner ? sub_grid(kl) : task_grid(kl))) {
        ValueHome h;
        h.global = true;
        h.arg = arg;
        nl.homes[v] = h;
      } else {
        nl.homes[v] = scratch_home(g, v, most, f, nl, arg, offset);
      }
    }
    if (!nl.gemm) nl.reduce_run = reduction_run(g, kl, p);  // its producers' homes are placed
    if (kl.schedule.row_accumulators && !nl.gemm && row_combiner(p.reduce) && !most.empty() && most.back() >= 2 &&
        !(reads_across_rows(p) && reduction_lanes(kl.schedule, run_extent(p, nl)) > 0)) {
      nl.accumulate_rows = true;
      nl.acc_row = most.back();
      nl.acc_offset = offset;
      offset += align64(nl.acc_row * 8 * static_cast<int64_t>(p.bodies.size()));
    }
  }
  kl.scratch_bytes = offset;
  if (kl.inner_scratch < 0) kl.inner_scratch = offset;
}

// Whether reduction r reads along the rows of elementwise primitive e only, each term from
// the element it reduces over: r's domain is e's but the last dim (dropped or of extent 1), its
// one reduction dim is e's last, and its bodies load e (nothing else) at [i0, .., r0].
bool reduces_rows_of(const ir::Primitive& e, const ir::Primitive& r) {
  size_t n = e.domain.size();
  if (n == 0 || r.reduce_domain.size() != 1 || r.reduce_domain[0] != e.domain[n - 1]) return false;
  bool kept = r.domain.size() == n && r.domain[n - 1] == 1;
  if (!kept && r.domain.size() + 1 != n) return false;
  for (size_t d = 0; d + 1 < n; ++d)
    if (r.domain[d] != e.domain[d]) return false;
  bool ok = true;
  for (const ir::Expr& b : r.bodies)
    ir::visit_post(b, [&](const ir::Expr& x) {
      if (x.op() != ir::ExprOp::Load) return;
      ok &= r.inputs[x->index] == e.outputs[0] && !x->predicated;
      for (size_t d = 0; ok && d < x.num_args(); ++d) {
        bool last = d + 1 == x.num_args();
        ok &= is_var(x.arg(d), last ? ir::VarKind::Reduce : ir::VarKind::Domain, last ? 0 : d);
      }
    });
  return ok;
}

// Fuses each simple reduction along the rows of a computed elementwise primitive into its
// loop, where every task computes the same rows of both, and whole ones of the elementwise
// primitive, and the reduction goes over lanes.
void fuse_row_reductions(const ir::Graph& g, KernelLowering& kl, const TaskRegions& tr) {
  for (size_t i = 0; i < kl.nodes.size(); ++i) {
    const ir::Primitive& e = g.node(kl.nodes[i].node);
    if (kl.nodes[i].inlined || e.reduce != ir::ReduceOp::None || e.bodies.size() != 1 || e.domain.empty()) continue;
    for (size_t j = i + 1; j < kl.nodes.size(); ++j) {
      const ir::Primitive& r = g.node(kl.nodes[j].node);
      bool simple = r.reduce == ir::ReduceOp::Sum || r.reduce == ir::ReduceOp::Prod ||
                    r.reduce == ir::ReduceOp::Max || r.reduce == ir::ReduceOp::Min;
      if (!simple || kl.nodes[j].fused || kl.nodes[j].accumulate_rows || kl.nodes[j].inner != kl.nodes[i].inner ||
          reduction_lanes(kl.schedule, e.domain.back()) == 0 || !reduces_rows_of(e, r))
        continue;
      size_t n = e.domain.size();
      bool same = true;
      for (size_t t = 0; same && t < tr.node[i].size(); ++t) {
        const Region& re = tr.node[i][t];
        const Region& rr = tr.node[j][t];
        same = re.lo[n - 1] == 0 && re.hi[n - 1] == e.domain[n - 1];
        for (size_t d = 0; same && d + 1 < n; ++d)
          same = re.lo[d] == rr.lo[d] && re.hi[d] == rr.hi[d];
      }
      if (!same) continue;
      kl.nodes[i].fused_reduction = static_cast<int>(j);
      kl.nodes[j].fused = true;
      break;
    }
  }
}

}  // namespace

const NodeLowering* producer_in_kernel(const ir::Graph& g, const KernelLowering& kl, ValueId v) {
  const ir::Value& val = g.value(v);
  if (val.origin != ir::ValueOrigin::Node) return nullptr;
  for (const NodeLowering& nl : kl.nodes)
    if (nl.node == val.node) return &nl;
  return nullptr;
}

ir::Dims storage_strides(const ir::Graph& g, const KernelLowering& kl, ValueId v) {
  const NodeLowering* nl = producer_in_kernel(g, kl, v);
  if (nl == nullptr || nl->homes.at(v).global) return ir::row_major_strides(g.type(v).shape);
  return nl->homes.at(v).scratch_strides;
}

const NodeLowering& KernelLowering::node(NodeId n) const {
  for (const NodeLowering& nl : nodes)
    if (nl.node == n) return nl;
  ORCHID_CHECK(false) << "node " << n.v << " is not in the kernel";
  return nodes.front();
}

int KernelLowering::arg_of(ValueId v) const {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i] == v) return static_cast<int>(i);
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i] == v) return static_cast<int>(inputs.size() + i);
  return -1;
}

std::vector<int64_t> KernelLowering::arg_bytes(const ir::Graph& g) const {
  std::vector<int64_t> out;
  for (const std::vector<ValueId>* vs : {&inputs, &outputs})
    for (ValueId v : *vs) out.push_back(g.type(v).bytes());
  return out;
}

int transposing_dim(const ir::Primitive& p) {
  if (p.kind() != ir::PrimKind::Layout || p.op == ir::PrimOp::View || p.bodies.size() != 1) return -1;
  const ir::Expr& load = p.bodies[0];
  size_t rank = p.domain.size();
  if (load.op() != ir::ExprOp::Load || rank < 2 || p.domain[rank - 1] < kTransposeBlock) return -1;
  size_t indices = load->args.size() - (load->predicated ? 1 : 0);
  if (indices == 0) return -1;
  // The last index: a domain variable, plus or minus a constant (a pad's shift).
  ir::Expr last = load.arg(indices - 1);
  if ((last.op() == ir::ExprOp::Add || last.op() == ir::ExprOp::Sub) && last.arg(1).op() == ir::ExprOp::Const)
    last = last.arg(0);
  if (last.op() != ir::ExprOp::Var || last->var_kind != ir::VarKind::Domain) return -1;
  auto k = static_cast<size_t>(last->index);
  return k + 1 < rank && p.domain[k] >= kTransposeBlock ? static_cast<int>(k) : -1;
}

namespace {

// The inner loop of a two-level schedule: per anchor dim, sub-tiles of the largest size up to
// s.inner[d] dividing the task's tile there (every output aligned to that dim has the same
// tile: they have the anchor's extent). None where every task would hold one sub-tile.
std::optional<InnerLoop> inner_loop(const ir::Graph& g, const tile::Kernel& k, const KernelLowering& kl,
                                    const Schedule& s) {
  if (s.inner.empty() || kl.tasks == 0) return std::nullopt;
  const ir::Dims& shape = g.type(k.outputs[anchor_output(g, k)]).shape;
  const OutputTiling& anchor = kl.tilings[anchor_output(g, k)];
  InnerLoop in;
  in.tilings = kl.tilings;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t whole = anchor.tile[d];
    int64_t t = d < s.inner.size() && s.inner[d] > 0 ? std::min(s.inner[d], whole) : whole;
    while (whole % t != 0) --t;
    in.ratio.push_back(whole / t);
    in.grid.push_back(ceil_div(shape[d], t));
  }
  if (ir::numel(in.ratio) == 1) return std::nullopt;
  for (OutputTiling& tl : in.tilings)
    for (size_t j = 0; j < tl.align.size(); ++j)
      if (tl.align[j] >= 0) tl.tile[j] /= in.ratio[static_cast<size_t>(tl.align[j])];
  in.tasks = ir::numel(in.grid);
  return in;
}

// The task holding sub-tile f of the inner loop.
int64_t task_of_sub(const KernelLowering& kl, int64_t f) {
  Dims c = grid_coords(f, kl.inner->grid);
  for (size_t d = 0; d < c.size(); ++d) c[d] /= kl.inner->ratio[d];
  return task_of(c, kl.grid);
}

// Whether every sub-tile's region of each node computed per task lies in its task's region:
// what the inner loop reads of them is there (tile propagation is monotone for the maps it
// bounds exactly; this makes sure of it for the rest).
bool nested(const KernelLowering& kl, const TaskRegions& tasks, const TaskRegions& subs) {
  for (size_t i = 0; i < kl.nodes.size(); ++i) {
    if (kl.nodes[i].inlined || kl.nodes[i].inner) continue;
    for (int64_t f = 0; f < kl.inner->tasks; ++f) {
      const Region& r = subs.node[i][f];
      if (r.empty() || r.numel() == 0) continue;
      const Region& outer = tasks.node[i][task_of_sub(kl, f)];
      for (size_t d = 0; d < r.rank(); ++d)
        if (r.lo[d] < outer.lo[d] || r.hi[d] > outer.hi[d]) return false;
    }
  }
  return true;
}

// Splits the computed nodes from Schedule::split on into the inner loop of s.inner, with their
// regions per sub-tile; the kernel stays one level where nothing would be computed there or
// a sub-tile would read past its task's region.
// The inner loop of the schedule and the nodes computed in it, where any is (a false return
// leaves the kernel one level).
bool mark_inner(const ir::Graph& g, const tile::Kernel& k, KernelLowering& kl) {
  std::optional<InnerLoop> in = inner_loop(g, k, kl, kl.schedule);
  if (!in) return false;
  bool any = false;
  for (size_t i = static_cast<size_t>(std::max(0, kl.schedule.split)); i < kl.nodes.size(); ++i)
    any |= kl.nodes[i].inner = !kl.nodes[i].inlined;
  if (any) kl.inner = std::move(in);
  return any;
}

void split_levels(const ir::Graph& g, const tile::Kernel& k, KernelLowering& kl, TaskRegions& tr) {
  if (!mark_inner(g, k, kl)) return;
  TaskRegions subs = task_regions(g, k, kl, sub_grid(kl));
  if (!nested(kl, tr, subs)) {
    for (NodeLowering& nl : kl.nodes) nl.inner = false;
    kl.inner.reset();
    return;
  }
  for (size_t i = 0; i < kl.nodes.size(); ++i)
    if (kl.nodes[i].inner) tr.node[i] = std::move(subs.node[i]);
}

// Lowering up to the regions, homes and fused reductions, with the regions it used.
KernelLowering lower_regions(const ir::Graph& g, const tile::Kernel& k, const Schedule& s, TaskRegions* regions);
KernelLowering lower_nodes(const ir::Graph& g, const tile::Kernel& k, const Schedule& s);

}  // namespace

KernelLowering lower_outline(const ir::Graph& g, const tile::Kernel& k, const Schedule& s) {
  KernelLowering kl = lower_nodes(g, k, s);
  if (kl.tasks == 0) return kl;
  mark_inner(g, k, kl);
  for (NodeLowering& nl : kl.nodes) nl.gemm = !nl.inlined && uses_gemm(g, g.node(nl.node), s);
  return kl;
}

std::vector<ValueId> packable_weights(const ir::Graph& g, const tile::Kernel& k, const Schedule& s) {
  TaskRegions tr;
  KernelLowering kl = lower_regions(g, k, s, &tr);
  std::vector<ValueId> out;
  if (kl.tasks == 0) return out;
  for (const auto& [v, node] : panel_inputs(g, kl, tr)) out.push_back(v);
  return out;
}

KernelLowering lower_kernel(const ir::Graph& g, const tile::Kernel& k, const Schedule& s,
                            const std::vector<ValueId>& panels) {
  TaskRegions tr;
  KernelLowering kl = lower_regions(g, k, s, &tr);
  if (panels.empty() || kl.tasks == 0) return kl;
  std::map<ValueId, size_t> ok = panel_inputs(g, kl, tr);
  for (ValueId v : panels) {
    auto it = ok.find(v);
    ORCHID_CHECK(it != ok.end()) << "kernel input '" << g.value(v).name << "' cannot be read as B panels";
    kl.nodes[it->second].gemm_b_panels = kl.arg_of(v);
  }
  return kl;
}

namespace {

// The grid and the nodes, inlined or computed: what needs no region.
KernelLowering lower_nodes(const ir::Graph& g, const tile::Kernel& k, const Schedule& s) {
  ORCHID_CHECK(!k.outputs.empty()) << "a kernel without outputs";
  KernelLowering kl;
  kl.schedule = s;
  kl.inputs = tile::kernel_inputs(g, k);
  kl.outputs = k.outputs;
  std::vector<NodeId> nodes = k.nodes;
  std::sort(nodes.begin(), nodes.end());
  tile::TaskGrid grid = tile::anchor_grid(g, k, anchor_output(g, k), s.tile);
  kl.grid = grid.grid;
  kl.tasks = grid.tasks();
  kl.tilings = std::move(grid.tilings);
  for (NodeId n : nodes)
    ORCHID_CHECK(g.node(n).kind() != ir::PrimKind::Opaque) << "opaque primitives have no generated code";
  std::vector<bool> inl = inlined_nodes(g, nodes, k.outputs, s);
  for (size_t i = 0; i < nodes.size(); ++i) {
    NodeLowering nl;
    nl.node = nodes[i];
    nl.inlined = inl[i];
    if (!nl.inlined) nl.transpose_dim = transposing_dim(g.node(nodes[i]));
    kl.nodes.push_back(nl);
  }
  return kl;
}

KernelLowering lower_regions(const ir::Graph& g, const tile::Kernel& k, const Schedule& s, TaskRegions* regions) {
  KernelLowering kl = lower_nodes(g, k, s);
  if (kl.tasks == 0) return kl;
  *regions = task_regions(g, k, kl, task_grid(kl));
  TaskRegions& tr = *regions;
  kl.task_io_bytes = tr.most_io_bytes;
  kl.task_part_bytes = tr.most_part_bytes;
  split_levels(g, k, kl, tr);
  fit_regions(kl, tr);
  place_values(g, kl, tr);
  fuse_row_reductions(g, kl, tr);
  fuse_gemm_epilogues(g, kl, tr);
  return kl;
}

}  // namespace

}  // namespace orchid::codegen::cpu
