// Loads: from kernel inputs and outputs (absolute row-major offsets), from scratch (offsets
// relative to the region the producer computed in this task), or through an inlined producer
// (its body, with its domain variables bound to the load's indices). Indices that depend on
// loaded data (indirect loads) are checked at run time.
#include "codegen/cpu/emit.h"
#include "support/error.h"

namespace orchid::codegen::cpu::detail {

using ir::Expr;
using ir::ValueId;

namespace {

bool contains_load(const Expr& e) {
  bool found = false;
  ir::visit_post(e, [&](const Expr& x) { found |= x.op() == ir::ExprOp::Load; });
  return found;
}

std::string offset(const std::vector<std::string>& idx, const std::vector<std::string>& base,
                   const ir::Dims& strides) {
  std::string out;
  for (size_t d = 0; d < idx.size(); ++d) {
    if (!out.empty()) out += " + ";
    std::string i = base.empty() ? idx[d] : "(" + idx[d] + " - " + base[d] + ")";
    out += strides[d] == 1 ? i : i + " * " + std::to_string(strides[d]);
  }
  return out.empty() ? "0" : out;
}

// What the run-time check of index d of a load of v in p is, for the message when it fails
// (names from the model: never part of generated code).
std::string index_check(const ir::Graph& g, const ir::Primitive& p, ValueId v, size_t d) {
  const ir::TensorType& t = g.type(v);
  std::string node = p.name.empty() ? std::string("a primitive") : "node '" + p.name + "'";
  return node + " reads '" + g.value(v).name + "' (" + ir::type_str(t) + ") along dim " + std::to_string(d) +
         " at an index taken from a tensor, which must lie in [0, " + std::to_string(t.shape[d]) + ")";
}

}  // namespace

std::string arg_name(int arg) { return "a" + std::to_string(arg); }
std::string scratch_name(ValueId v) { return "s" + std::to_string(v.v); }
std::string region_lo(ir::NodeId n, size_t d) { return "lo" + std::to_string(n.v) + "_" + std::to_string(d); }
std::string region_hi(ir::NodeId n, size_t d) { return "hi" + std::to_string(n.v) + "_" + std::to_string(d); }

std::string ExprEmitter::element(ValueId v, const std::vector<std::string>& idx) const {
  const NodeLowering* nl = producer_in_kernel(g_, kl_, v);
  if (nl == nullptr || nl->homes.at(v).global) {
    int arg = kl_.arg_of(v);
    ORCHID_CHECK(arg >= 0) << "value " << v.v << " is neither computed nor passed to the kernel";
    return arg_name(arg) + "[" + offset(idx, {}, storage_strides(g_, kl_, v)) + "]";
  }
  std::vector<std::string> base;
  for (size_t d = 0; d < idx.size(); ++d) base.push_back(region_lo(nl->node, d));
  return scratch_name(v) + "[" + offset(idx, base, storage_strides(g_, kl_, v)) + "]";
}

std::string ExprEmitter::inlined(ir::NodeId producer, const std::vector<std::string>& idx, const tile::VarBox* box) {
  const ir::Primitive& p = g_.node(producer);
  std::string id = std::to_string(fresh_++);
  Scope ps{&p, {}, {}};
  ps.box = box;
  bool gnu = dialect_ == Dialect::Gnu;
  std::string out = gnu ? "({ " : "[&]() { ";
  for (size_t d = 0; d < idx.size(); ++d) {
    std::string name = "q" + id + "_" + std::to_string(d);
    out += "const int64_t " + name + " = " + idx[d] + "; ";
    ps.dvars.push_back(name);
  }
  return out + (gnu ? "" : "return ") + expr(p.bodies[0], ps) + (gnu ? "; })" : "; }()");
}

std::string ExprEmitter::load(const Expr& e, const Scope& s) {
  ValueId v = s.prim->inputs.at(e->index);
  if (auto b = bound_.find(v); b != bound_.end()) return b->second;
  const ir::Dims& shape = g_.type(v).shape;
  // A predicate decided over the piece of the loop being emitted: the fill, or the load alone.
  bool predicated = e->predicated;
  if (predicated && s.box != nullptr && pure_index(e.arg(shape.size()))) {
    tile::Interval c = tile::eval_interval(e.arg(shape.size()), *s.box);
    if (c == tile::Interval::point(0)) return literal(e->value);
    predicated = c != tile::Interval::point(1);
  }
  std::vector<std::string> idx;
  for (size_t d = 0; d < shape.size(); ++d) {
    std::string x = expr(e.arg(d), s);
    if (contains_load(e.arg(d))) {
      checks_.push_back(index_check(g_, *s.prim, v, d));
      x = "orc_chk(" + x + ", " + std::to_string(shape[d]) + ", err, " +
          std::to_string(checks_.size()) + ")";
    }
    idx.push_back(x);
  }
  const NodeLowering* nl = producer_in_kernel(g_, kl_, v);
  std::string value;
  if (nl != nullptr && nl->inlined) {
    // The producer's variables range over the indices it is read at, as far as they are known.
    // Not narrowed to its shape: an index may be out of bounds where the load is not taken (a
    // select's other operand), and code hoisted out of the loop evaluates it there too.
    std::optional<tile::VarBox> pbox;
    if (s.box != nullptr) pbox = producer_box(e, *s.box);
    value = inlined(nl->node, idx, pbox ? &*pbox : nullptr);
  } else {
    value = to_compute(e.dtype(), element(v, idx));
  }
  if (!predicated) return value;
  return "(" + expr(e.arg(shape.size()), s) + " ? " + value + " : " + literal(e->value) + ")";
}

}  // namespace orchid::codegen::cpu::detail
