// A small copy of a LAX program (shrink.h).
#include "superopt/shrink.h"

#include <algorithm>
#include <map>

#include "ir/movement.h"
#include "ir/verifier.h"
#include "superopt/dim_classes.h"
#include "support/union_find.h"
#include "support/error.h"

namespace orchid::superopt {

namespace {

// Classes as a view joins them: a dim the view carries across one to one has one class on
// both sides (a view has no index expression, so axis_classes keeps them apart); dims the view
// splits or merges keep their classes whole, so that it keeps its element count.
struct ViewJoins {
  std::vector<size_t> rep;  // per class: its representative
  std::vector<bool> whole;  // per representative
};

ViewJoins view_joins(const ir::Graph& g, const AxisClasses& c) {
  UnionFind joined(static_cast<size_t>(c.count));
  std::vector<int32_t> whole;
  for (int32_t n = 0; n < g.num_nodes(); ++n) {
    const ir::Primitive& p = g.node(ir::NodeId{n});
    if (p.op != ir::PrimOp::View) continue;
    const std::vector<int32_t>& in = c.values[static_cast<size_t>(p.inputs[0].v)];
    const std::vector<int32_t>& res = c.values[static_cast<size_t>(p.outputs[0].v)];
    for (const ir::ReshapeGroup& grp : ir::reshape_groups(g.type(p.inputs[0]).shape, g.type(p.outputs[0]).shape)) {
      if (grp.from.size() == 1 && grp.to.size() == 1) {
        joined.join(static_cast<size_t>(in[grp.from[0]]), static_cast<size_t>(res[grp.to[0]]));
        continue;
      }
      for (size_t d : grp.from) whole.push_back(in[d]);
      for (size_t d : grp.to) whole.push_back(res[d]);
    }
  }
  ViewJoins out;
  for (size_t k = 0; k < static_cast<size_t>(c.count); ++k) out.rep.push_back(joined.find(k));
  out.whole.assign(static_cast<size_t>(c.count), false);
  for (int32_t k : whole) out.whole[out.rep[static_cast<size_t>(k)]] = true;
  return out;
}

// Per class: the power of two its extents are divided by.
std::vector<int64_t> divisors(const ir::Graph& g, const AxisClasses& c, const ViewJoins& joins, const ShrinkOptions& o) {
  std::vector<std::vector<int64_t>> extents(static_cast<size_t>(c.count));
  auto at = [&](int32_t k) -> std::vector<int64_t>& { return extents[static_cast<size_t>(joins.rep[static_cast<size_t>(k)])]; };
  for (int32_t v = 0; v < g.num_values(); ++v)
    for (size_t d = 0; d < c.values[static_cast<size_t>(v)].size(); ++d)
      at(c.values[static_cast<size_t>(v)][d]).push_back(g.type(ir::ValueId{v}).shape[d]);
  for (int32_t n = 0; n < g.num_nodes(); ++n)
    for (size_t j = 0; j < c.reduce[static_cast<size_t>(n)].size(); ++j)
      at(c.reduce[static_cast<size_t>(n)][j]).push_back(g.node(ir::NodeId{n}).reduce_domain[j]);
  std::vector<int64_t> f(extents.size(), 1);
  for (size_t k = 0; k < extents.size(); ++k) {
    if (joins.whole[k]) continue;
    std::vector<int64_t> e;
    for (int64_t x : extents[k])
      if (x != 1) e.push_back(x);
    if (e.empty()) continue;
    int64_t lo = *std::min_element(e.begin(), e.end()), hi = *std::max_element(e.begin(), e.end());
    auto divides = [&](int64_t q) { return std::all_of(e.begin(), e.end(), [&](int64_t x) { return x % q == 0; }); };
    while (divides(f[k] * 2) && hi / (f[k] * 2) >= o.largest && lo / (f[k] * 2) >= o.smallest) f[k] *= 2;
  }
  for (size_t k = 0; k < f.size(); ++k) f[k] = f[static_cast<size_t>(joins.rep[k])];
  return f;
}

ir::Dims divided(const ir::Dims& s, const std::vector<int32_t>& classes, const std::vector<int64_t>& f) {
  ir::Dims out = s;
  for (size_t d = 0; d < out.size(); ++d)
    if (out[d] != 1) out[d] /= f[static_cast<size_t>(classes[d])];
  return out;
}

}  // namespace

std::optional<ir::Graph> shrink(const ir::Graph& program, std::string* why, const ShrinkOptions& o) {
  if (!program.constants().empty()) {
    *why = "the program has constants";
    return std::nullopt;
  }
  AxisClasses c = axis_classes(program);
  std::vector<int64_t> f = divisors(program, c, view_joins(program, c), o);
  auto type = [&](ir::ValueId v) {
    return ir::TensorType{program.type(v).dtype, divided(program.type(v).shape, c.values[static_cast<size_t>(v.v)], f)};
  };
  for (int32_t n = 0; n < program.num_nodes(); ++n) {
    const ir::Primitive& p = program.node(ir::NodeId{n});
    if (p.op == ir::PrimOp::View && type(p.inputs[0]).numel() != type(p.outputs[0]).numel()) {
      *why = "a view (" + program.value(p.outputs[0]).name + ") would not keep its size";
      return std::nullopt;
    }
  }
  ir::Graph out;
  out.name = program.name;
  std::map<int32_t, ir::ValueId> value;  // program value -> small value
  for (ir::ValueId v : program.inputs()) value[v.v] = out.add_input(program.value(v).name, type(v));
  for (int32_t n = 0; n < program.num_nodes(); ++n) {
    ir::Primitive p = program.node(ir::NodeId{n});
    for (ir::ValueId& v : p.inputs) v = value.at(v.v);
    std::vector<ir::TensorType> types;
    std::vector<std::string> names;
    for (ir::ValueId v : p.outputs) {
      types.push_back(type(v));
      names.push_back(program.value(v).name);
    }
    p.domain = types[0].shape;
    for (size_t j = 0; j < p.reduce_domain.size(); ++j) p.reduce_domain[j] /= f[static_cast<size_t>(c.reduce[static_cast<size_t>(n)][j])];
    std::vector<ir::ValueId> old_outputs = p.outputs;
    p.outputs.clear();
    ir::NodeId id = out.add_node(std::move(p), types, names);
    for (size_t k = 0; k < old_outputs.size(); ++k) value[old_outputs[k].v] = out.node(id).outputs[k];
  }
  std::vector<ir::ValueId> outs;
  for (ir::ValueId v : program.outputs()) outs.push_back(value.at(v.v));
  out.set_outputs(outs);
  std::vector<std::string> errors = ir::verify(out);
  if (!errors.empty()) {
    *why = "the shrunk program does not verify: " + errors[0];
    return std::nullopt;
  }
  return out;
}

}  // namespace orchid::superopt
