#include "tile/propagate.h"

#include <algorithm>

#include "support/error.h"
#include "tile/interval_internal.h"

namespace orchid::tile {

using ir::Expr;
using ir::ExprOp;
using detail::i128;
using detail::kMax;
using detail::kMin;

namespace {

// Constant index tensors larger than this are not scanned for their value range.
constexpr int64_t kMaxConstantScan = int64_t{1} << 16;

void conjuncts(const Expr& e, std::vector<Expr>& out) {
  if (e.op() == ExprOp::And && e.dtype() == ir::DType::Bool) {
    conjuncts(e.arg(0), out);
    conjuncts(e.arg(1), out);
  } else {
    out.push_back(e);
  }
}

// The values x can take where `x op y` holds and y lies in yr.
Interval allowed_by(ExprOp op, const Interval& yr) {
  if (yr.empty()) return Interval::empty_interval();
  switch (comparison(op)) {
    case CmpOp::Lt: return detail::clamp(kMin, i128(yr.hi) - 1);
    case CmpOp::Le: return {kMin, yr.hi};
    case CmpOp::Gt: return detail::clamp(i128(yr.lo) + 1, kMax);
    case CmpOp::Ge: return {yr.lo, kMax};
    case CmpOp::Eq: return yr;
    case CmpOp::Ne: break;
  }
  return Interval::full();
}

ExprOp mirrored(ExprOp op) {  // x op y  <=>  y mirrored(op) x
  switch (comparison(op)) {
    case CmpOp::Lt: return ExprOp::Gt;
    case CmpOp::Le: return ExprOp::Ge;
    case CmpOp::Gt: return ExprOp::Lt;
    case CmpOp::Ge: return ExprOp::Le;
    case CmpOp::Eq:
    case CmpOp::Ne: break;
  }
  return op;  // Eq and Ne are symmetric
}

bool is_integer_compare(const Expr& c) {
  if (ir::expr_op_category(c.op()) != ir::ExprCategory::Compare) return false;
  ir::DType t = c.arg(0).dtype();
  return ir::is_integral(t) && t != ir::DType::U64;
}

// Walks the bodies of one primitive, collecting the region of every load slot.
class Reader {
 public:
  Reader(const ir::Graph& g, const ir::Primitive& p) : g_(g), p_(p), regions_(p.inputs.size()) {
    loads_ = [this](const Expr& load, const VarBox& box) { return load_values(load, box); };
  }
  Reader(const Reader&) = delete;  // loads_ refers to this object
  Reader& operator=(const Reader&) = delete;

  void collect(const Expr& e, const VarBox& box) {
    if (box.empty()) return;
    switch (ir::expr_op_category(e.op())) {
      case ir::ExprCategory::Load: {
        VarBox read = box;
        if (e->predicated) {
          collect(e->args.back(), box);
          read = refine(e->args.back(), true, box, loads_);
          if (read.empty()) return;
        }
        for (size_t k = 0; k < num_indices(e); ++k) collect(e.arg(k), read);
        if (auto r = load_region(e, read)) unite(regions_[static_cast<size_t>(e->index)], *r);
        return;
      }
      case ir::ExprCategory::Select:
        collect(e.arg(0), box);
        collect(e.arg(1), refine(e.arg(0), true, box, loads_));
        collect(e.arg(2), refine(e.arg(0), false, box, loads_));
        return;
      case ir::ExprCategory::Leaf:
      case ir::ExprCategory::Unary:
      case ir::ExprCategory::Binary:
      case ir::ExprCategory::Compare:
      case ir::ExprCategory::Cast:
        for (const Expr& a : e->args) collect(a, box);
        return;
    }
  }

  std::vector<std::optional<Region>> take() { return std::move(regions_); }

 private:
  static size_t num_indices(const Expr& load) { return load->args.size() - (load->predicated ? 1 : 0); }

  const ir::Dims& slot_shape(const Expr& load) const {
    auto slot = static_cast<size_t>(load->index);
    ORCHID_CHECK(slot < p_.inputs.size()) << "load of slot " << slot << " in a primitive of "
                                          << p_.inputs.size() << " inputs";
    return g_.type(p_.inputs[slot]).shape;
  }

  // The box of elements `load` reads at the points of `box` (where its predicate holds).
  std::optional<Region> load_region(const Expr& load, const VarBox& box) const {
    const ir::Dims& shape = slot_shape(load);
    std::vector<Expr> conds;
    if (load->predicated) conjuncts(load->args.back(), conds);
    Region r{ir::Dims(shape.size()), ir::Dims(shape.size())};
    for (size_t d = 0; d < shape.size(); ++d) {
      const Expr& idx = load.arg(d);
      Interval within{0, shape[d] - 1};
      for (const Expr& c : conds) {
        if (!is_integer_compare(c)) continue;
        if (ir::equal(c.arg(0), idx))
          within = intersect(within, allowed_by(c.op(), eval_interval(c.arg(1), box, loads_)));
        else if (ir::equal(c.arg(1), idx))
          within = intersect(within, allowed_by(mirrored(c.op()), eval_interval(c.arg(0), box, loads_)));
      }
      Interval v = eval_interval_within(idx, box, within, loads_);
      if (v.empty()) return std::nullopt;
      r.lo[d] = v.lo;
      r.hi[d] = v.hi + 1;
    }
    return r;
  }

  // The values an integer tensor read by an indirect load holds where it is read: a constant's
  // values in the region read (when small enough to scan), else the dtype's range.
  Interval load_values(const Expr& load, const VarBox& box) const {
    ir::ValueId v = p_.inputs[static_cast<size_t>(load->index)];
    if (g_.value(v).origin != ir::ValueOrigin::Constant) return dtype_range(load.dtype());
    std::optional<Region> r = load_region(load, box);
    if (!r) return Interval::empty_interval();
    if (r->numel() > kMaxConstantScan) return dtype_range(load.dtype());
    const ir::Tensor& data = g_.constant(v);
    ir::Dims strides = ir::row_major_strides(data.shape());
    Interval out = Interval::empty_interval();
    ir::Dims at = r->lo;
    for (int64_t n = r->numel(); n > 0; --n) {
      int64_t flat = 0;
      for (size_t d = 0; d < at.size(); ++d) flat += at[d] * strides[d];
      out = hull(out, Interval::point(data.get_i64(flat)));
      for (size_t d = at.size(); d-- > 0;) {  // row-major odometer
        if (++at[d] < r->hi[d]) break;
        at[d] = r->lo[d];
      }
    }
    return out;
  }

  const ir::Graph& g_;
  const ir::Primitive& p_;
  std::vector<std::optional<Region>> regions_;
  LoadRangeFn loads_;
};

void check_inside(const Region& r, const ir::Dims& domain, const char* what, const ir::Primitive& p) {
  ORCHID_CHECK(r.rank() == domain.size())
      << what << " " << region_str(r) << " of rank " << r.rank() << " for a primitive (" << ir::prim_op_name(p.op)
      << ") of rank " << domain.size();
  ORCHID_CHECK(Region::whole(domain).contains(r))
      << what << " " << region_str(r) << " outside the domain " << ir::dims_str(domain);
}

}  // namespace

VarBox tile_box(const ir::Primitive& p, const Region& tile, const std::optional<Region>& reduce) {
  VarBox box;
  for (size_t d = 0; d < tile.rank(); ++d) box.domain.push_back(tile.dim(d));
  for (size_t k = 0; k < p.reduce_domain.size(); ++k)
    box.reduce.push_back(reduce ? reduce->dim(k) : Interval{0, p.reduce_domain[k] - 1});
  return box;
}

std::vector<std::optional<Region>> propagate_primitive(const ir::Graph& g, const ir::Primitive& p,
                                                       const Region& tile, const std::optional<Region>& reduce) {
  check_inside(tile, p.domain, "tile", p);
  if (reduce) check_inside(*reduce, p.reduce_domain, "reduction box", p);
  std::vector<std::optional<Region>> none(p.inputs.size());
  if (tile.empty() || (reduce && reduce->empty())) return none;
  if (p.kind() == ir::PrimKind::Opaque) {
    for (size_t k = 0; k < p.inputs.size(); ++k) {
      Region whole = Region::whole(g.type(p.inputs[k]).shape);
      if (!whole.empty()) none[k] = whole;
    }
    return none;
  }
  VarBox box = tile_box(p, tile, reduce);
  if (box.empty()) return none;
  Reader reader(g, p);
  for (const Expr& body : p.bodies) reader.collect(body, box);
  return reader.take();
}

}  // namespace orchid::tile
