// Pieces of an elementwise primitive's innermost loop (emit_reduce.h): ranges of its variable
// over which every select, predicate and mod that moves with it is decided (tile/interval.h),
// so that each piece's loop is written with those decided (ExprEmitter::Scope::box). A
// reflecting pad by 4 along 224 columns is three loops: 4 columns read backwards, 224 copied,
// 4 read backwards; one loop computed a floored mod and a select per element.
#include "codegen/cpu/emit_reduce.h"

namespace orchid::codegen::cpu::detail {

namespace {

// More pieces than this and the loop stays whole (a mod by 2 would cut it into single points).
constexpr size_t kMaxPieces = 8;
constexpr int64_t kUndecided = INT64_MIN;

// The decisions that make the text of expression e (of primitive p) over `box`, for the
// selects, predicates and mods whose operands move with the loop (mention a variable marked
// in `moving`), appended to `out`; loads of inlined producers are followed.
void decisions(const ir::Graph& g, const KernelLowering& kl, const ir::Primitive& p, const ir::Expr& e,
               const tile::VarBox& box, const std::vector<bool>& moving, std::vector<int64_t>& out) {
  auto moves = [&](const ir::Expr& x) {
    bool m = false;
    ir::visit_post(x, [&](const ir::Expr& y) {
      m |= y.op() == ir::ExprOp::Var && y->var_kind == ir::VarKind::Domain && moving.at(static_cast<size_t>(y->index));
    });
    return m;
  };
  auto decide = [&](const ir::Expr& cond) {
    if (!pure_index(cond) || !moves(cond)) return kUndecided;
    tile::Interval v = tile::eval_interval(cond, box);
    out.push_back(v.is_point() ? v.lo : kUndecided);
    return out.back();
  };
  if (e.op() == ir::ExprOp::Select) {
    int64_t taken = decide(e.arg(0));
    if (taken != kUndecided) {  // only the operand taken is written (ExprEmitter::decided)
      decisions(g, kl, p, e.arg(0), box, moving, out);
      decisions(g, kl, p, e.arg(taken != 0 ? 1 : 2), box, moving, out);
      return;
    }
  }
  if (e.op() == ir::ExprOp::Mod && e.dtype() == ir::DType::I64 && e.arg(1).op() == ir::ExprOp::Const &&
      e.arg(1)->value.i > 0 && pure_index(e.arg(0)) && moves(e.arg(0))) {
    std::optional<int64_t> k = mod_period_start(e, box);
    out.push_back(k ? *k : kUndecided);
  }
  if (e.op() == ir::ExprOp::Load) {
    ir::ValueId v = p.inputs.at(static_cast<size_t>(e->index));
    const ir::Dims& shape = g.type(v).shape;
    if (e->predicated) decide(e.arg(shape.size()));
    const NodeLowering* nl = producer_in_kernel(g, kl, v);
    if (nl != nullptr && nl->inlined) {
      tile::VarBox pbox = producer_box(e, box);
      std::vector<bool> pmoving;
      for (size_t d = 0; d < shape.size(); ++d) pmoving.push_back(!pure_index(e.arg(d)) || moves(e.arg(d)));
      const ir::Primitive& q = g.node(nl->node);
      if (!pbox.empty())
        for (const ir::Expr& b : q.bodies) decisions(g, kl, q, b, pbox, pmoving, out);
    }
  }
  for (size_t i = 0; i < e.num_args(); ++i) decisions(g, kl, p, e.arg(i), box, moving, out);
}

}  // namespace

std::vector<LoopPiece> loop_pieces(const ir::Graph& g, const KernelLowering& kl, const ir::Primitive& p) {
  size_t n = p.domain.size();
  tile::VarBox whole;
  for (int64_t e : p.domain) whole.domain.push_back({0, e - 1});
  if (n == 0 || whole.empty()) return {};
  std::vector<bool> moving(n, false);
  moving[n - 1] = true;
  auto box_of = [&](int64_t lo, int64_t hi) {
    tile::VarBox b = whole;
    b.domain[n - 1] = {lo, hi - 1};
    return b;
  };
  auto settled = [&](int64_t lo, int64_t hi) {
    std::vector<int64_t> d;
    for (const ir::Expr& b : p.bodies) decisions(g, kl, p, b, box_of(lo, hi), moving, d);
    for (int64_t x : d)
      if (x == kUndecided) return false;
    return true;
  };
  // From the left, each piece as long as it stays settled (a prefix of a settled range is
  // settled: binary search), at least one point long (a point whose arithmetic the intervals
  // do not decide is a piece of its own).
  std::vector<LoopPiece> pieces;
  int64_t extent = p.domain[n - 1];
  for (int64_t lo = 0; lo < extent;) {
    int64_t good = lo + 1, bad = extent;  // [lo, good) settled; [lo, bad) not
    if (settled(lo, extent)) good = extent;
    while (good < bad && bad - good > 1) {
      int64_t mid = good + (bad - good) / 2;
      (settled(lo, mid) ? good : bad) = mid;
    }
    pieces.push_back({lo, good, box_of(lo, good)});
    if (pieces.size() > kMaxPieces) return {{0, extent, whole}};
    lo = good;
  }
  return pieces;
}

}  // namespace orchid::codegen::cpu::detail
