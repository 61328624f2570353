#include "rewrite/check_rewrite.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "interp/compare.h"
#include "interp/interp.h"
#include "interp/random_inputs.h"
#include "ir/subgraph.h"
#include "support/error.h"

namespace orchid::rewrite {

namespace {

using ir::Graph;
using ir::NodeId;
using ir::ValueId;

bool same_definition(const Graph& a, const ir::Primitive& p, const Graph& b, const ir::Primitive& q) {
  if (p.op != q.op || !(p.attrs == q.attrs) || p.domain != q.domain || p.reduce_domain != q.reduce_domain ||
      p.reduce != q.reduce || p.bodies.size() != q.bodies.size() || p.inputs.size() != q.inputs.size() ||
      p.outputs.size() != q.outputs.size())
    return false;
  for (size_t k = 0; k < p.bodies.size(); ++k)
    if (!ir::equal(p.bodies[k], q.bodies[k])) return false;
  for (size_t k = 0; k < p.inputs.size(); ++k)
    if (a.value(p.inputs[k]).name != b.value(q.inputs[k]).name) return false;
  for (size_t k = 0; k < p.outputs.size(); ++k)
    if (a.value(p.outputs[k]).name != b.value(q.outputs[k]).name || a.type(p.outputs[k]) != b.type(q.outputs[k]))
      return false;
  return true;
}

// Per node of `g`: whether `other` has an identical one.
std::vector<bool> kept_nodes(const Graph& g, const Graph& other) {
  std::vector<bool> kept(static_cast<size_t>(g.num_nodes()), false);
  for (int32_t n = 0; n < g.num_nodes(); ++n) {
    const ir::Primitive& p = g.node(NodeId(n));
    std::optional<ValueId> v = other.find_value(g.value(p.outputs[0]).name);
    if (!v || other.value(*v).origin != ir::ValueOrigin::Node) continue;
    kept[static_cast<size_t>(n)] = same_definition(g, p, other, other.node(other.value(*v).node));
  }
  return kept;
}

struct Side {
  std::vector<NodeId> changed;
  std::set<std::string> reads;    // non-constant values the changed nodes read from outside
  std::set<std::string> exports;  // values of changed nodes the rest or the outputs read
};

Side side_of(const Graph& g, const std::vector<bool>& kept) {
  Side s;
  std::vector<bool> inside(static_cast<size_t>(g.num_values()), false);
  for (int32_t n = 0; n < g.num_nodes(); ++n)
    if (!kept[static_cast<size_t>(n)]) {
      s.changed.push_back(NodeId(n));
      for (ValueId o : g.node(NodeId(n)).outputs) inside[static_cast<size_t>(o.v)] = true;
    }
  for (NodeId n : s.changed)
    for (ValueId i : g.node(n).inputs)
      if (!inside[static_cast<size_t>(i.v)] && g.value(i).origin != ir::ValueOrigin::Constant)
        s.reads.insert(g.value(i).name);
  for (int32_t n = 0; n < g.num_nodes(); ++n)
    if (kept[static_cast<size_t>(n)])
      for (ValueId i : g.node(NodeId(n)).inputs)
        if (inside[static_cast<size_t>(i.v)]) s.exports.insert(g.value(i).name);
  for (ValueId o : g.outputs())
    if (inside[static_cast<size_t>(o.v)]) s.exports.insert(g.value(o).name);
  return s;
}

Graph region(const Graph& g, const Side& s, const std::set<std::string>& inputs, const std::set<std::string>& outputs) {
  std::vector<ValueId> ins, outs;
  for (const std::string& name : inputs) ins.push_back(*g.find_value(name));
  for (const std::string& name : outputs) outs.push_back(*g.find_value(name));
  return ir::extract_subgraph_with_constants(g, s.changed, ins, outs);
}

// The f32 differential test: `after` in f32 against `before` in f64, on seeded random inputs.
// An output may differ by the tolerance, or by ten times what `before` itself loses in f32
// (a graph that cancels badly is not the rewrite's doing).
std::string differential(const Graph& before, const Graph& after, const CheckRewriteOptions& o) {
  std::vector<ir::Tensor> in = interp::random_inputs(before, o.seed);
  std::vector<ir::Tensor> want = interp::run(before, in, {interp::Precision::F64, true});
  std::vector<ir::Tensor> own = interp::run(before, in, {interp::Precision::Own, true});
  std::vector<ir::Tensor> got = interp::run(after, in, {interp::Precision::Own, true});
  for (size_t k = 0; k < want.size(); ++k) {
    std::string why;
    double err = interp::relative_l2(got[k], want[k], &why);
    double allowed = std::max(o.tolerance, 10 * interp::relative_l2(own[k], want[k], nullptr));
    if (!(err <= allowed)) {
      std::ostringstream s;
      s << "output " << before.value(before.outputs()[k]).name << " differs in f32 by " << err
        << " (relative L2 > " << allowed << ")" << (why.empty() ? "" : ": " + why);
      return s.str();
    }
  }
  return "";
}

// The node of g computing the value named `name`, if any.
std::optional<NodeId> producer_named(const Graph& g, const std::string& name) {
  std::optional<ValueId> v = g.find_value(name);
  if (!v || g.value(*v).origin != ir::ValueOrigin::Node) return std::nullopt;
  return g.value(*v).node;
}

}  // namespace

ChangedRegions changed_regions(const Graph& before, const Graph& after) {
  ChangedRegions r;
  std::vector<bool> kept_b = kept_nodes(before, after), kept_a = kept_nodes(after, before);
  Side b = side_of(before, kept_b), a = side_of(after, kept_a);
  // Both sides should read the same values, or values the verifier takes as independent may
  // be related (one computed from the other by an unchanged primitive). While they do not,
  // the unchanged primitives computing what either side reads join both sides.
  while (b.reads != a.reads) {
    bool grew = false;
    std::set<std::string> all = b.reads;
    all.insert(a.reads.begin(), a.reads.end());
    for (const std::string& name : all) {
      std::optional<NodeId> pb = producer_named(before, name), pa = producer_named(after, name);
      if (pb && pa && kept_b[static_cast<size_t>(pb->v)] && kept_a[static_cast<size_t>(pa->v)]) {
        kept_b[static_cast<size_t>(pb->v)] = kept_a[static_cast<size_t>(pa->v)] = false;
        grew = true;
      }
    }
    if (!grew) break;
    b = side_of(before, kept_b);
    a = side_of(after, kept_a);
  }
  std::set<std::string> inputs = b.reads;
  inputs.insert(a.reads.begin(), a.reads.end());
  for (const std::string& name : inputs)
    if (!before.find_value(name) || !after.find_value(name)) {
      r.problem = "value " + name + " is read by one side only";
      return r;
    }
  for (const std::string& name : b.exports)
    if (!a.exports.count(name)) {
      r.problem = "the rewrite no longer computes " + name;
      return r;
    }
  r.before = region(before, b, inputs, b.exports);
  r.after = region(after, a, inputs, b.exports);
  return r;
}

RewriteCheck check_rewrite(const Graph& before, const Graph& after, const CheckRewriteOptions& o) {
  return check_rewrite(before, after, changed_regions(before, after), o);
}

RewriteCheck check_rewrite(const Graph& before, const Graph& after, const ChangedRegions& regions,
                           const CheckRewriteOptions& o) {
  RewriteCheck c;
  if (!regions.problem.empty()) {
    c.verdict = "rejected: " + regions.problem;
    return c;
  }
  verify::Verdict v = verify::check_equivalence(regions.before, regions.after, o.field);
  if (v.outcome == verify::Outcome::Different) {
    c.verdict = "rejected: the finite-field check found the rewrite different: " + v.detail;
    return c;
  }
  std::string diff = differential(before, after, o);
  if (!diff.empty()) {
    c.verdict = "rejected by the f32 differential test: " + diff;
    return c;
  }
  c.accepted = true;
  c.proven = v.outcome == verify::Outcome::Equivalent;
  std::ostringstream s;
  if (c.proven) s << "equivalent (finite field, " << v.tests_run << " test" << (v.tests_run == 1 ? "" : "s") << ")";
  else s << "finite field undecided (" << v.detail << ")";
  s << "; f32 differential passed";
  c.verdict = s.str();
  return c;
}

}  // namespace orchid::rewrite
