#include "tile/kernel.h"

#include <algorithm>
#include <set>

#include "ir/stats.h"
#include "support/error.h"
#include "tile/grid.h"
#include "tile/propagate.h"

namespace orchid::tile {

namespace {

// FLOPs of one point of domain × reduction domain: primitive_flops of a one-point copy.
int64_t flops_per_point(const ir::Primitive& p) {
  ir::Primitive one = p;
  one.domain.clear();
  one.reduce_domain.assign(p.reduce_domain.size(), 1);
  return ir::primitive_flops(one);
}

std::string value_str(const ir::Graph& g, ir::ValueId v) { return "%" + g.value(v).name; }

}  // namespace

Kernel sorted(Kernel k) {
  std::sort(k.nodes.begin(), k.nodes.end());
  std::sort(k.outputs.begin(), k.outputs.end());
  return k;
}

std::vector<ir::ValueId> kernel_inputs(const ir::Graph& g, const Kernel& k) {
  std::set<ir::ValueId> produced, inputs;
  for (ir::NodeId n : k.nodes)
    for (ir::ValueId v : g.node(n).outputs) produced.insert(v);
  for (ir::NodeId n : k.nodes)
    for (ir::ValueId v : g.node(n).inputs)
      if (!produced.count(v)) inputs.insert(v);
  return {inputs.begin(), inputs.end()};
}

TileStats propagate_kernel(const ir::Graph& g, const Kernel& k, const KernelTile& tile) {
  ORCHID_CHECK(tile.outputs.size() == k.outputs.size())
      << tile.outputs.size() << " output tiles for a kernel of " << k.outputs.size() << " outputs";
  auto nv = static_cast<size_t>(g.num_values());
  std::vector<bool> in_kernel(static_cast<size_t>(g.num_nodes()), false);
  std::vector<bool> produced(nv, false), is_output(nv, false);
  for (ir::NodeId n : k.nodes) {
    ORCHID_CHECK(n.valid() && n.v < g.num_nodes()) << "node id " << n.v;
    ORCHID_CHECK(!in_kernel[static_cast<size_t>(n.v)]) << "node " << n.v << " twice in a kernel";
    in_kernel[static_cast<size_t>(n.v)] = true;
    for (ir::ValueId v : g.node(n).outputs) produced[static_cast<size_t>(v.v)] = true;
  }
  for (const auto& [n, box] : tile.reduce)
    ORCHID_CHECK(n.valid() && n.v < g.num_nodes() && in_kernel[static_cast<size_t>(n.v)])
        << "reduction split of node " << n.v << ", which is not in the kernel";

  TileStats s;
  std::vector<std::optional<Region>> need(nv);
  for (size_t j = 0; j < k.outputs.size(); ++j) {
    ir::ValueId v = k.outputs[j];
    auto vi = static_cast<size_t>(v.v);
    ORCHID_CHECK(v.valid() && vi < nv && produced[vi]) << "kernel output " << v.v << " is not computed by the kernel";
    ORCHID_CHECK(!is_output[vi]) << "kernel output " << value_str(g, v) << " listed twice";
    is_output[vi] = true;
    const Region& t = tile.outputs[j];
    const ir::TensorType& type = g.type(v);
    ORCHID_CHECK(t.rank() == type.shape.size() && Region::whole(type.shape).contains(t))
        << "tile " << region_str(t) << " of " << value_str(g, v) << " : " << ir::type_str(type);
    unite(need[vi], t);
    s.store_bytes += t.numel() * ir::dtype_bytes(type.dtype);
  }

  std::vector<ir::NodeId> order = k.nodes;
  std::sort(order.begin(), order.end(), [](ir::NodeId a, ir::NodeId b) { return a > b; });
  for (ir::NodeId n : order) {
    const ir::Primitive& p = g.node(n);
    std::optional<Region> dom;
    for (ir::ValueId o : p.outputs)
      if (need[static_cast<size_t>(o.v)]) unite(dom, *need[static_cast<size_t>(o.v)]);
    if (!dom) continue;
    for (ir::ValueId o : p.outputs) need[static_cast<size_t>(o.v)] = dom;  // computed together
    auto split = tile.reduce.find(n);
    std::optional<Region> reduce;
    if (split != tile.reduce.end()) reduce = split->second;
    auto slots = propagate_primitive(g, p, *dom, reduce);
    for (size_t slot = 0; slot < slots.size(); ++slot)
      if (slots[slot]) unite(need[static_cast<size_t>(p.inputs[slot].v)], *slots[slot]);
    int64_t points = dom->numel() * (reduce ? reduce->numel() : ir::numel(p.reduce_domain));
    s.node_points[n] = points;
    s.flops += flops_per_point(p) * points;
  }

  for (size_t vi = 0; vi < nv; ++vi) {
    if (!need[vi]) continue;
    ir::ValueId v(static_cast<int32_t>(vi));
    int64_t bytes = need[vi]->numel() * ir::dtype_bytes(g.type(v).dtype);
    s.regions.emplace(v, *need[vi]);
    if (!produced[vi]) {
      s.input_bytes.emplace(v, bytes);
      s.load_bytes += bytes;
    } else if (is_output[vi]) {
      s.footprint_bytes += bytes;
    } else {
      s.intermediate_bytes += bytes;
    }
  }
  s.footprint_bytes += s.load_bytes + s.intermediate_bytes;
  return s;
}

GridStats propagate_grid(const ir::Graph& g, const Kernel& k, const std::vector<ir::Dims>& tile_shapes) {
  TaskGrid tg = uniform_grid(g, k, tile_shapes);
  GridStats s;
  s.tasks = tg.tasks();
  for (int64_t t = 0; t < s.tasks; ++t) {
    TileStats ts = propagate_kernel(g, k, task_tile(g, k, tg, grid_coords(t, tg.grid)));
    s.load_bytes += ts.load_bytes;
    s.store_bytes += ts.store_bytes;
    s.flops += ts.flops;
    s.max_footprint_bytes = std::max(s.max_footprint_bytes, ts.footprint_bytes);
    s.max_intermediate_bytes = std::max(s.max_intermediate_bytes, ts.intermediate_bytes);
  }
  return s;
}

}  // namespace orchid::tile
