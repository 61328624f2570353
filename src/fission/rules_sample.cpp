// GridSample (ONNX 16): out[n, c, h, w] samples X[n, c] at the point grid[n, h, w] = (x, y) in
// [-1, 1] (beyond reads padding). One elementwise primitive per output element: the grid
// point, unnormalised to pixel coordinates, then loads of X at computed (indirect) indices.
//   unnormalise   align_corners: (g + 1) / 2 · (size − 1); else ((g + 1) · size − 1) / 2
//   padding       zeros: pixels outside read 0 (predicated loads); border: the coordinate and
//                 every pixel index clamped into [0, size − 1]; reflection: reflected into
//                 [0, size − 1] (align_corners) or [−0.5, size − 0.5], indices too, as the
//                 reference's _gs_reflect does
//   modes         nearest (round half to even), bilinear (2 × 2 pixels), bicubic (4 × 4,
//                 Keys' kernel with a = −0.75)
#include <string>

#include "fission/builders.h"
#include "fission/rules.h"
#include "support/error.h"

namespace orchid::fission {

namespace {

using ir::DType;
using ir::Dims;
using ir::ExprOp;

enum class Padding { Zeros, Border, Reflection };

struct Sampler {
  DType t;
  Padding padding;
  bool align;

  Expr c(double v) const { return ir::constant(ir::Scalar::of(t, v)); }
  static Expr min(Expr a, Expr e) { return ir::binary(ExprOp::Min, a, e); }
  static Expr max(Expr a, Expr e) { return ir::binary(ExprOp::Max, a, e); }

  Expr unnormalise(Expr g, int64_t size) const {
    auto n = static_cast<double>(size);
    if (align) return (g + c(1)) / c(2) * c(n - 1);
    return ((g + c(1)) * c(n) - c(1)) / c(2);
  }
  // Reflected into [lo, hi] with period 2 (hi − lo), as _gs_reflect (lo < hi).
  Expr reflect(Expr v, double lo, double hi) const {
    double range = hi - lo;
    Expr m = ir::binary(ExprOp::Mod, v - c(lo), c(2 * range));
    return c(lo) + ir::select(ir::binary(ExprOp::Le, m, c(range)), m, c(2 * range) - m);
  }
  Expr reflected(Expr v, int64_t size) const {
    auto n = static_cast<double>(size);
    return size == 1 ? c(0) : align ? reflect(v, 0, n - 1) : reflect(v, -0.5, n - 0.5);
  }
  // The coordinate after padding (border: clamped; reflection: reflected, then clamped).
  Expr pad_coord(Expr v, int64_t size) const {
    auto n = static_cast<double>(size);
    if (padding == Padding::Border) return min(max(v, c(0)), c(n - 1));
    if (padding == Padding::Reflection) return min(max(reflected(v, size), c(0)), c(n - 1));
    return v;
  }
  // The i64 index a pixel position (a float holding an integer) reads: clamped (zeros pads
  // out-of-range positions through `inside` instead), reflected under reflection.
  Expr index(Expr v, int64_t size) const {
    auto n = static_cast<double>(size);
    Expr r = padding == Padding::Reflection ? reflected(v, size) : v;
    return ir::cast(DType::I64, min(max(r, c(0)), c(n - 1)));
  }
  Expr inside(Expr v, int64_t size) const {
    return ir::binary(ExprOp::And, ir::binary(ExprOp::Ge, v, c(0)), ir::binary(ExprOp::Le, v, c(static_cast<double>(size - 1))));
  }
};

// Keys' cubic kernel (a = −0.75) at the four taps around a point whose fraction is f.
Expr cubic_weight(const Sampler& s, Expr f, int64_t tap) {
  auto c = [&](double v) { return s.c(v); };
  double a = -0.75;
  Expr p = f + c(1), q = c(1) - f, r = c(2) - f;
  switch (tap) {
    case 0: return ((c(a) * p - c(5 * a)) * p + c(8 * a)) * p - c(4 * a);
    case 1: return ((c(a + 2) * f - c(a + 3)) * f) * f + c(1);
    case 2: return ((c(a + 2) * q - c(a + 3)) * q) * q + c(1);
    default: return ((c(a) * r - c(5 * a)) * r + c(8 * a)) * r - c(4 * a);
  }
}

// One axis's taps over the grid's points [N, H_out, W_out]: per tap, the index it reads, its
// weight (none for nearest) and, with zeros padding, whether it lies inside.
struct AxisTaps {
  std::vector<ValueId> index, weight, inside;
};

AxisTaps axis_taps(RuleContext& ctx, const Sampler& s, ValueId coord, int64_t size, const std::string& mode,
                   const std::string& name) {
  AxisTaps a;
  int64_t taps = mode == "nearest" ? 1 : mode == "bilinear" ? 2 : 4, first = mode == "bicubic" ? -1 : 0;
  for (int64_t k = 0; k < taps; ++k) {
    std::string n = name + std::to_string(k);
    auto position = [&s, &mode, k, first](Expr v) {
      Expr base = ir::unary(mode == "nearest" ? ExprOp::Round : ExprOp::Floor, v);
      return base + s.c(static_cast<double>(first + k));
    };
    a.index.push_back(ew_unary(ctx, coord, [&](Expr v) { return s.index(position(v), size); }, n + "/index"));
    if (s.padding == Padding::Zeros)
      a.inside.push_back(ew_unary(ctx, coord, [&](Expr v) { return s.inside(position(v), size); }, n + "/inside"));
    if (mode == "nearest") continue;
    a.weight.push_back(ew_unary(ctx, coord, [&](Expr v) {
      Expr f = v - ir::unary(ExprOp::Floor, v);
      if (mode == "bilinear") return k == 0 ? s.c(1) - f : f;
      return cubic_weight(s, f, k);
    }, n + "/weight"));
  }
  return a;
}

}  // namespace

std::vector<ValueId> rule_GridSample(RuleContext& ctx) {
  require_same_dtype(ctx, 0, 1);
  Dims xs = ctx.shape(0), gs = ctx.shape(1);
  ORCHID_USER_CHECK(xs.size() == 4 && gs.size() == 4 && gs[0] == xs[0] && gs[3] == 2)
      << ctx.where() << "X " << ir::dims_str(xs) << " and grid " << ir::dims_str(gs)
      << " should be [N, C, H, W] and [N, H_out, W_out, 2]";
  std::string mode = ctx.attr_string("mode", "bilinear"), pad = ctx.attr_string("padding_mode", "zeros");
  ORCHID_USER_CHECK(mode == "bilinear" || mode == "nearest" || mode == "bicubic")
      << ctx.where() << "unknown mode '" << mode << "'";
  ORCHID_USER_CHECK(pad == "zeros" || pad == "border" || pad == "reflection")
      << ctx.where() << "unknown padding_mode '" << pad << "'";
  DType t = ctx.dtype(0);
  Sampler s{t, pad == "zeros" ? Padding::Zeros : pad == "border" ? Padding::Border : Padding::Reflection,
            ctx.attr_int("align_corners", 0) != 0};
  Dims points(gs.begin(), gs.end() - 1);
  // The pixel coordinates of the grid's points along x (grid[.., 0], width) and y.
  auto coord = [&](int64_t k, int64_t size, const std::string& name) {
    ValueId g = remap(ctx, ctx.input(1), points, [k](const std::vector<Expr>& i) {
      return std::vector<Expr>{i[0], i[1], i[2], ir::const_i64(k)};
    }, name + "/grid");
    return ew_unary(ctx, g, [&](Expr v) { return s.pad_coord(s.unnormalise(v, size), size); }, name);
  };
  AxisTaps ax = axis_taps(ctx, s, coord(0, xs[3], "x"), xs[3], mode, "x"),
           ay = axis_taps(ctx, s, coord(1, xs[2], "y"), xs[2], mode, "y");
  // Every (y, x) tap gathered from X, then the weighted sum.
  Dims out = {xs[0], xs[1], gs[1], gs[2]};
  std::vector<ValueId> ins;
  struct Term {
    size_t gather;
    size_t ty, tx;
  };
  std::vector<Term> terms;
  for (size_t ty = 0; ty < ay.index.size(); ++ty)
    for (size_t tx = 0; tx < ax.index.size(); ++tx) {
      PrimBuilder b(ctx.graph());
      std::vector<Expr> point = {ir::dvar(0), ir::dvar(2), ir::dvar(3)};
      Expr iy = b.load(ay.index[ty], point), ix = b.load(ax.index[tx], point);
      Expr body = b.load(ctx.input(0), {ir::dvar(0), ir::dvar(1), iy, ix});
      ir::Primitive p = b.make(ir::PrimOp::Layout);
      p.domain = out;
      p.bodies = {body};
      ins.push_back(ctx.emit1(std::move(p), {t, out}, "tap"));
      terms.push_back({ins.size() - 1, ty, tx});
    }
  auto add_all = [&](const std::vector<ValueId>& vs) {
    size_t first = ins.size();
    for (ValueId v : vs) ins.push_back(view(ctx, v, {xs[0], 1, gs[1], gs[2]}, "aligned"));
    return first;
  };
  size_t wy = add_all(ay.weight), wx = add_all(ax.weight), vy = add_all(ay.inside), vx = add_all(ax.inside);
  bool weighted = mode != "nearest", zeros = s.padding == Padding::Zeros;
  return {ew_map(ctx, ins, t, [&](const std::vector<Expr>& v) {
    Expr sum;
    for (const Term& term : terms) {
      Expr e = v[term.gather];
      if (weighted) e = e * v[wy + term.ty] * v[wx + term.tx];
      if (zeros) e = ir::select(ir::binary(ExprOp::And, v[vy + term.ty], v[vx + term.tx]), e, s.c(0));
      sum = sum.defined() ? sum + e : e;
    }
    return sum;
  })};
}

}  // namespace orchid::fission
