// Fission of Resize (opsets 10-13) and Upsample (7-9), modes nearest, linear and cubic.
//
// Every output coordinate maps to input coordinates independently per axis, so the rule
// computes, per resized axis, the tables ONNX's reference (onnx/backend/test/case/node/
// resize.py) defines — in f64, exactly as it does — and builds:
//  - nearest: one layout primitive reading x at the table's index on every axis (an affine
//    or floordiv index where the table is one, an indirect load of the table otherwise);
//  - linear and cubic: per resized axis (last axis first, as the reference), a layout
//    primitive with one output per tap (linear: the lower and upper neighbour; cubic: four
//    neighbours) and an elementwise sum weighted by constant tables (linear: 1 − r and r;
//    cubic: Keys' kernel, cubic_coeff_a, exclude_outside) — separable interpolation;
// tf_crop_and_resize (linear and cubic) reads the region of interest and puts the
// extrapolation value where the source lies outside, per axis as the reference's recursion.
// Refused: tf_crop_and_resize with nearest, linear and cubic on integer tensors, and (for
// Resize-10 and Upsample, whose rounding ONNX never specified) nearest with a non-integer
// scale.
#include <algorithm>
#include <cmath>
#include <optional>

#include "fission/rules.h"
#include "fission/rules_layout_common.h"
#include "support/error.h"

namespace orchid::fission {

namespace {

using ir::DType;
using ir::ExprOp;

enum class Coord { HalfPixel, PytorchHalfPixel, AlignCorners, Asymmetric, TfHalfPixelForNN, TfCropAndResize };
enum class Nearest { RoundPreferFloor, RoundPreferCeil, Floor, Ceil };

struct ResizeSpec {
  bool linear = false;
  bool cubic = false;
  double cubic_a = -0.75;       // cubic_coeff_a
  bool exclude_outside = false;
  Coord coord = Coord::Asymmetric;
  Nearest nearest = Nearest::Floor;
  ir::Dims out;                // output shape
  std::vector<double> scales;  // per axis, as the reference uses them
  // tf_crop_and_resize: the region of interest (starts, then ends, normalised) and the value
  // of output points whose source lies outside the input.
  std::vector<double> roi;
  double extrapolation = 0;
};

// The source coordinate of output coordinate o along axis d of size `in` (ONNX's
// coordinate_transformation_mode; the reference's arithmetic, output width = scale * in).
double source(const ResizeSpec& s, size_t d, int64_t o, int64_t in) {
  auto x = static_cast<double>(o);
  double scale = s.scales[d], width = scale * static_cast<double>(in);
  auto span = static_cast<double>(in - 1);
  switch (s.coord) {
    case Coord::HalfPixel: return (x + 0.5) / scale - 0.5;
    case Coord::PytorchHalfPixel: return width == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
    case Coord::AlignCorners: return width == 1 ? 0 : x * span / (width - 1);
    case Coord::Asymmetric: return x / scale;
    case Coord::TfHalfPixelForNN: return (x + 0.5) / scale;
    case Coord::TfCropAndResize: {
      double start = s.roi[d], end = s.roi[d + s.out.size()];
      if (width == 1) return (end + start) * span / 2;
      return x * (end - start) * span / (width - 1) + start * span;
    }
  }
  return 0;
}

// Whether source coordinate x takes the extrapolation value (tf_crop_and_resize: it lies
// outside the input).
bool extrapolated(const ResizeSpec& s, double x, int64_t in) {
  return s.coord == Coord::TfCropAndResize && (x < 0 || x > static_cast<double>(in - 1));
}

// The nearest input coordinate to x, chosen by the fraction r = x - floor(x) as the
// reference does (an integer x is itself).
int64_t nearest_index(Nearest m, double x) {
  double f = std::floor(x), r = x - f;
  auto lo = static_cast<int64_t>(f);
  if (r == 0) return lo;
  switch (m) {
    case Nearest::RoundPreferFloor: return r <= 0.5 ? lo : lo + 1;
    case Nearest::RoundPreferCeil: return r < 0.5 ? lo : lo + 1;
    case Nearest::Floor: return lo;
    case Nearest::Ceil: return lo + 1;
  }
  return lo;
}

int64_t clamp_index(int64_t i, int64_t in) { return std::clamp<int64_t>(i, 0, in - 1); }

Coord parse_coord(const RuleContext& ctx) {
  std::string c = ctx.attr_string("coordinate_transformation_mode", "half_pixel");
  if (c == "half_pixel") return Coord::HalfPixel;
  if (c == "pytorch_half_pixel") return Coord::PytorchHalfPixel;
  if (c == "align_corners") return Coord::AlignCorners;
  if (c == "asymmetric") return Coord::Asymmetric;
  if (c == "tf_half_pixel_for_nn" && ctx.version() == 11) return Coord::TfHalfPixelForNN;
  if (c == "tf_crop_and_resize") return Coord::TfCropAndResize;
  ctx.unsupported("coordinate_transformation_mode '" + c + "'");
}

Nearest parse_nearest(const RuleContext& ctx) {
  std::string m = ctx.attr_string("nearest_mode", "round_prefer_floor");
  if (m == "round_prefer_floor") return Nearest::RoundPreferFloor;
  if (m == "round_prefer_ceil") return Nearest::RoundPreferCeil;
  if (m == "floor") return Nearest::Floor;
  if (m == "ceil") return Nearest::Ceil;
  ORCHID_USER_ERROR() << ctx.where() << "unknown nearest_mode '" << m << "'";
}

// Output shape and per-axis scales from `scales` (output = floor(in * scale)) or `sizes`
// (scale = size / in).
void shape_from(const RuleContext& ctx, const std::vector<double>& scales,
                const std::vector<int64_t>& sizes, ResizeSpec& s) {
  ir::Dims in = ctx.shape(0);
  ORCHID_USER_CHECK((sizes.empty() ? scales.size() : sizes.size()) == in.size())
      << ctx.where() << (sizes.empty() ? "scales" : "sizes") << " must have one entry per dim of "
      << ir::dims_str(in);
  for (size_t d = 0; d < in.size(); ++d) {
    if (in[d] == 0) ctx.unsupported("resizing an empty tensor");
    if (!sizes.empty()) {
      ORCHID_USER_CHECK(sizes[d] > 0)
          << ctx.where() << "sizes " << ir::dims_str(sizes) << " must be positive";
      s.out.push_back(sizes[d]);
      s.scales.push_back(static_cast<double>(sizes[d]) / static_cast<double>(in[d]));
    } else {
      double size = std::floor(scales[d] * static_cast<double>(in[d]));
      ORCHID_USER_CHECK(scales[d] > 0 && std::isfinite(size) && size < 0x1p40)
          << ctx.where() << "scale " << scales[d] << " must be positive and give a finite size";
      s.out.push_back(static_cast<int64_t>(size));
      s.scales.push_back(scales[d]);
    }
  }
}

// Resize-10 and Upsample: asymmetric coordinates; nearest is only defined for whole scales.
ResizeSpec legacy_spec(const RuleContext& ctx, const std::vector<double>& scales) {
  ResizeSpec s;
  std::string mode = ctx.attr_string("mode", "nearest");
  if (mode != "nearest" && mode != "linear") ctx.unsupported("mode '" + mode + "'");
  s.linear = mode != "nearest";
  shape_from(ctx, scales, {}, s);
  ctx.check_size({ctx.dtype(0), s.out});
  for (double f : scales)
    if (!s.linear && f != std::floor(f))
      ctx.unsupported("nearest mode with the non-integer scale " + std::to_string(f) +
                      " (ONNX leaves the rounding of this version unspecified)");
  return s;
}

// The nearest input pixel of an output pixel, unclamped.
int64_t nearest_source(const ResizeSpec& s, size_t d, int64_t o, int64_t in) {
  return nearest_index(s.nearest, source(s, d, o, in));
}

// With exclude_outside=1, a nearest pixel outside the input gets weight 0 and the reference
// renormalises 0 / 0; linear interpolation is unaffected (its outside neighbours are clamped
// copies of the edge), and so is nearest where every chosen pixel lies inside.
void refuse_outside(const RuleContext& ctx, const ResizeSpec& s) {
  for (size_t d = 0; d < s.out.size(); ++d)
    for (int64_t o = 0; o < s.out[d]; ++o) {
      int64_t i = nearest_source(s, d, o, ctx.shape(0)[d]);
      if (i < 0 || i >= ctx.shape(0)[d])
        ctx.unsupported("exclude_outside=1 where the nearest pixel lies outside");
    }
}

ResizeSpec resize_spec(const RuleContext& ctx) {
  if (ctx.version() < 11) return legacy_spec(ctx, layout::static_floats(ctx, 1));
  ResizeSpec s;
  std::string mode = ctx.attr_string("mode", "nearest");
  ORCHID_USER_CHECK(mode == "nearest" || mode == "linear" || mode == "cubic")
      << ctx.where() << "unknown mode '" << mode << "'";
  s.linear = mode == "linear";
  s.cubic = mode == "cubic";
  s.cubic_a = ctx.attr_float("cubic_coeff_a", -0.75);
  s.exclude_outside = ctx.attr_int("exclude_outside", 0) != 0;
  s.coord = parse_coord(ctx);
  s.nearest = parse_nearest(ctx);
  std::vector<double> scales =
      ctx.has_input(2) ? layout::static_floats(ctx, 2) : std::vector<double>{};
  std::vector<int64_t> sizes = layout::optional_ints(ctx, 3).value_or(std::vector<int64_t>{});
  ORCHID_USER_CHECK(scales.empty() != sizes.empty())
      << ctx.where() << "needs exactly one of scales and sizes (non-empty)";
  shape_from(ctx, scales, sizes, s);
  ctx.check_size({ctx.dtype(0), s.out});  // before the index tables, one entry per output coordinate
  if (s.coord == Coord::TfCropAndResize) {
    if (!s.linear && !s.cubic) ctx.unsupported("tf_crop_and_resize with nearest interpolation");
    s.roi = ctx.has_input(1) ? layout::static_floats(ctx, 1) : std::vector<double>{};
    ORCHID_USER_CHECK(s.roi.size() == 2 * s.out.size())
        << ctx.where() << "roi has " << s.roi.size() << " entries; tf_crop_and_resize needs " << 2 * s.out.size()
        << " (a start and an end per dim)";
    s.extrapolation = ctx.attr_float("extrapolation_value", 0);
  }
  if (s.exclude_outside && !s.linear && !s.cubic) refuse_outside(ctx, s);
  return s;
}

// A table of the form clamp(floordiv(o * mul + add, div), 0, in - 1), as integer scales give.
struct AffineTable {
  int64_t mul = 1, add = 0, div = 1;
  bool low = false, high = false;  // whether the clamps are needed

  int64_t raw(int64_t o) const {
    int64_t v = o * mul + add;
    return v >= 0 ? v / div : -((-v + div - 1) / div);  // floor division
  }
  bool matches(const std::vector<int64_t>& table, int64_t in) {
    for (size_t o = 0; o < table.size(); ++o) {
      int64_t v = raw(static_cast<int64_t>(o));
      low |= v < 0;
      high |= v > in - 1;
      if (std::clamp<int64_t>(v, 0, in - 1) != table[o]) return false;
    }
    return true;
  }
  Expr expr(Expr i, int64_t in) const {
    Expr e = layout::affine(std::move(i), mul, add);
    if (div != 1) e = ir::floordiv(e, div);
    if (low) e = ir::binary(ExprOp::Max, e, ir::const_i64(0));
    if (high) e = ir::binary(ExprOp::Min, e, ir::const_i64(in - 1));
    return e;
  }
};

// The affine form of a table, when it has one of the forms integer up- or downscaling give.
std::optional<AffineTable> affine_table(const std::vector<int64_t>& table, int64_t in) {
  auto n = static_cast<int64_t>(table.size());
  std::vector<AffineTable> candidates;
  if (n % in == 0)  // upscaling by n / in: o / f shifted by up to f
    for (int64_t c = -(n / in); c <= n / in; ++c) candidates.push_back({1, c, n / in});
  if (in % n == 0)  // downscaling by in / n: o * f offset by up to f
    for (int64_t c = -(in / n); c <= in / n; ++c) candidates.push_back({in / n, c, 1});
  for (AffineTable& a : candidates)
    if (a.matches(table, in)) return a;
  return std::nullopt;
}

// The index expression reading `table` at output coordinate i: a constant, an affine
// expression where the table has one, else an indirect load of the table.
Expr table_index(RuleContext& ctx, PrimBuilder& b, Expr i, const std::vector<int64_t>& table,
                 int64_t in, const std::string& suffix) {
  auto n = static_cast<int64_t>(table.size());
  if (n == 0) return i;  // an empty output dim: nothing is read
  if (n == 1) return ir::const_i64(table[0]);
  if (std::optional<AffineTable> a = affine_table(table, in)) return a->expr(i, in);
  ir::Tensor data(ir::TensorType{DType::I64, {n}});
  for (int64_t o = 0; o < n; ++o) data.set_i64(o, table[static_cast<size_t>(o)]);
  ValueId t = ctx.add_constant(std::move(data), suffix);
  return b.load(t, {i});
}

ValueId resize_nearest(RuleContext& ctx, const ResizeSpec& s) {
  ir::Dims in = ctx.shape(0);
  PrimBuilder b(ctx.graph());
  std::vector<Expr> i = domain_vars(in.size()), idx;
  for (size_t d = 0; d < in.size(); ++d) {
    std::vector<int64_t> table;
    for (int64_t o = 0; o < s.out[d]; ++o)
      table.push_back(clamp_index(nearest_source(s, d, o, in[d]), in[d]));
    idx.push_back(table_index(ctx, b, i[d], table, in[d], "index" + std::to_string(d)));
  }
  Expr body = b.load(ctx.input(0), idx);
  ir::Primitive p = b.make(ir::PrimOp::Layout);
  p.domain = s.out;
  p.bodies = {body};
  return ctx.emit1(std::move(p), {ctx.dtype(0), s.out});
}

}  // namespace

namespace {

// One axis of interpolation: per output coordinate, the input index each tap reads (clamped
// into the axis, as the reference's edge padding does) and its weight; tf_crop_and_resize
// marks the coordinates whose source lies outside the input.
struct Taps {
  explicit Taps(size_t taps) : idx(taps), w(taps) {}
  std::vector<std::vector<int64_t>> idx;  // per tap, per output coordinate
  std::vector<std::vector<double>> w;
  std::vector<bool> outside;
  bool any_outside() const { return std::any_of(outside.begin(), outside.end(), [](bool b) { return b; }); }
  // Whether every coordinate reads its first tap alone, unweighted (a gather, no arithmetic).
  bool single() const {
    for (size_t o = 0; o < w[0].size(); ++o) {
      if (w[0][o] != 1) return false;
      for (size_t k = 1; k < w.size(); ++k)
        if (w[k][o] != 0) return false;
    }
    return !any_outside();
  }
  bool identity(int64_t in) const {
    if (!single() || static_cast<int64_t>(idx[0].size()) != in) return false;
    for (size_t o = 0; o < idx[0].size(); ++o)
      if (idx[0][o] != static_cast<int64_t>(o)) return false;
    return true;
  }
};

// The taps at base + k (k < weights' count) of a point whose source coordinate is x, weights
// as given.
void add_coordinate(Taps& t, const ResizeSpec& s, double x, int64_t in, int64_t base,
                    const std::vector<double>& weights) {
  for (size_t k = 0; k < weights.size(); ++k) {
    t.idx[k].push_back(clamp_index(base + static_cast<int64_t>(k), in));
    t.w[k].push_back(weights[k]);
  }
  t.outside.push_back(extrapolated(s, x, in));
}

// Linear: the neighbours floor(x) and floor(x) + 1, weighted 1 − r and r, r = x − floor(x).
Taps linear_taps(const ResizeSpec& s, size_t d, int64_t in) {
  Taps t(2);
  for (int64_t o = 0; o < s.out[d]; ++o) {
    double x = source(s, d, o, in), f = std::floor(x);
    add_coordinate(t, s, x, in, static_cast<int64_t>(f), {1 - (x - f), x - f});
  }
  return t;
}

// Cubic, as the reference computes it: the four integers nearest the source coordinate x
// (ties to the left), Keys' kernel with a = cubic_coeff_a at ratio r = x − floor(x) (1 where x
// is an integer), the weights of neighbours outside the axis zeroed and the rest renormalised
// under exclude_outside.
Taps cubic_taps(const ResizeSpec& s, size_t d, int64_t in) {
  Taps t(4);
  for (int64_t o = 0; o < s.out[d]; ++o) {
    double x = source(s, d, o, in), f = std::floor(x);
    double r = x == f ? 1.0 : x - f;
    auto base = static_cast<int64_t>(f) - (x == f ? 2 : 1);
    std::array<double, 4> c = keys_cubic_weights(r, s.cubic_a, [](double v) { return v; });
    if (s.exclude_outside) {
      double sum = 0;
      for (int64_t k = 0; k < 4; ++k) {
        if (base + k < 0 || base + k >= in) c[static_cast<size_t>(k)] = 0;
        sum += c[static_cast<size_t>(k)];
      }
      for (double& v : c) v /= sum;
    }
    add_coordinate(t, s, x, in, base, {c.begin(), c.end()});
  }
  return t;
}

// y resized along axis d: the taps gathered by one layout primitive (one output per tap),
// then their weighted sum elementwise, computed in f32 (f64 for f64 tensors), with
// tf_crop_and_resize's extrapolation value where the source lies outside.
ValueId interpolate_axis(RuleContext& ctx, const ResizeSpec& s, ValueId y, size_t d, const Taps& t, bool last) {
  ir::TensorType yt = ctx.graph().type(y);
  ir::Dims shape = yt.shape;
  shape[d] = static_cast<int64_t>(t.idx[0].size());
  std::string axis = std::to_string(d);
  size_t taps = t.single() ? 1 : t.idx.size();
  PrimBuilder b(ctx.graph());
  std::vector<Expr> i = domain_vars(shape.size()), bodies;
  for (size_t k = 0; k < taps; ++k) {
    std::vector<Expr> at = i;
    at[d] = table_index(ctx, b, i[d], t.idx[k], yt.shape[d], "tap" + std::to_string(k) + "_" + axis);
    bodies.push_back(b.load(y, at));
  }
  ir::Primitive p = b.make(ir::PrimOp::Layout);
  p.domain = shape;
  p.bodies = bodies;
  if (taps == 1) return ctx.emit1(std::move(p), {yt.dtype, shape}, last ? "" : "axis" + axis);
  std::vector<ValueId> ins = ctx.emit(std::move(p), std::vector<ir::TensorType>(taps, {yt.dtype, shape}), "axis" + axis);
  DType c = yt.dtype == DType::F64 ? DType::F64 : DType::F32, out = yt.dtype;
  ir::Dims wshape(shape.size() - d, 1);
  wshape[0] = shape[d];
  for (size_t k = 0; k < taps; ++k)
    ins.push_back(constant_of(ctx, c, wshape, t.w[k], "weight" + std::to_string(k) + "_" + axis));
  if (t.any_outside()) {
    std::vector<double> mask(t.outside.begin(), t.outside.end());
    ins.push_back(constant_of(ctx, DType::Bool, wshape, mask, "outside" + axis));
  }
  return ew_map(ctx, ins, out, [&](const std::vector<Expr>& v) {
    Expr r;
    for (size_t k = 0; k < taps; ++k) {
      Expr term = (c == out ? v[k] : ir::cast(c, v[k])) * v[taps + k];
      r = r.defined() ? r + term : term;
    }
    if (c != out) r = ir::cast(out, r);
    if (t.any_outside()) r = ir::select(v.back(), ir::constant(ir::Scalar::of(out, s.extrapolation)), r);
    return r;
  }, last ? "" : "interpolated" + axis);
}

std::vector<ValueId> resize(RuleContext& ctx, const ResizeSpec& s) {
  if (!s.linear && !s.cubic) return {resize_nearest(ctx, s)};
  if (!ir::is_float(ctx.dtype(0)))
    ctx.unsupported(std::string(s.cubic ? "cubic" : "linear") +
                    " interpolation of integer tensors (ONNX leaves the rounding unspecified)");
  ir::Dims in = ctx.shape(0);
  std::vector<std::pair<size_t, Taps>> axes;  // the axes that change, last first
  for (size_t d = in.size(); d-- > 0;) {
    Taps t = s.cubic ? cubic_taps(s, d, in[d]) : linear_taps(s, d, in[d]);
    if (!t.identity(in[d])) axes.emplace_back(d, std::move(t));
  }
  ValueId y = ctx.input(0);
  for (size_t k = 0; k < axes.size(); ++k)
    y = interpolate_axis(ctx, s, y, axes[k].first, axes[k].second, k + 1 == axes.size());
  return {y};
}

}  // namespace

std::vector<ValueId> rule_Resize(RuleContext& ctx) { return resize(ctx, resize_spec(ctx)); }

std::vector<ValueId> rule_Upsample(RuleContext& ctx) {
  std::vector<double> scales =
      ctx.version() < 9 ? ctx.attr_floats("scales", {}) : layout::static_floats(ctx, 1);
  ORCHID_USER_CHECK(ctx.version() >= 9 || ctx.has_attr("scales"))
      << ctx.where() << "attribute 'scales' is required";
  return resize(ctx, legacy_spec(ctx, scales));
}

}  // namespace orchid::fission
