// GridSample and RoiAlign: sampling an image at positions computed from data; and
// TfIdfVectorizer, matching a sequence against a pool of n-grams.
//
// GridSample (ONNX 16): out[n, c, h, w] samples X[n, c] at the point grid[n, h, w] = (x, y) in
// [-1, 1] (beyond reads padding). Per axis, elementwise maps over the grid's points give each
// tap's pixel index, weight and (zeros padding) validity; one gather of X per (y, x) tap
// reads at those indices (indirect loads); an elementwise weighted sum combines them.
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

  Expr c(double v) const { return ir::const_f(t, v); }
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
  // The coordinate after padding, as the ONNX reference: one outside the borders (the pixel
  // centres, widened by 0.5 without align_corners) is clamped into [0, n − 1] (border) or
  // reflected between the borders (reflection); one inside stays, and the taps' indices are
  // padded one by one (`index`).
  Expr pad_coord(Expr v, int64_t size) const {
    auto n = static_cast<double>(size);
    if (padding == Padding::Reflection) return reflected(v, size);
    if (padding == Padding::Zeros) return v;
    Expr clamped = min(max(v, c(0)), c(n - 1));
    if (align) return clamped;
    Expr outside = ir::binary(ExprOp::Or, ir::binary(ExprOp::Lt, v, c(-0.5)), ir::binary(ExprOp::Gt, v, c(n - 0.5)));
    return ir::select(outside, clamped, v);
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
      return keys_cubic_weights(f, -0.75, [&s](double v) { return s.c(v); })[static_cast<size_t>(k)];
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
      ins.push_back(gather(ctx, ctx.input(0), out, [&](PrimBuilder& b, const std::vector<Expr>& i) {
        std::vector<Expr> point = {i[0], i[2], i[3]};
        return std::vector<Expr>{i[0], i[1], b.load(ay.index[ty], point), b.load(ax.index[tx], point)};
      }, "tap"));
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

// RoiAlign (ONNX 10, 16), mode avg: each output bin of region r averages a fixed
// sampling_ratio × sampling_ratio grid of bilinear samples of X[batch_indices[r]], with the
// reference's (ONNX Runtime's) border rules: a sample beyond [-1, size] on an axis is 0, one
// at or below 0 reads 0, one at or past size − 1 reads the last pixel. Per axis the samples'
// positions, low and high indices, fractions and validity are elementwise maps over
// [R, bins, samples]; four gathers of X at those (indirect) indices over
// [R, C, bins_h, samples_h, bins_w, samples_w], the weighted sum, then the mean over the
// samples. An adaptive sampling ratio (0) depends on the regions' data and is refused.
namespace {

struct RoiAxis {
  ValueId low, high, frac, valid;  // [R, bins, samples]
};

// Axis `k` (0: x, from rois[:, 0] and rois[:, 2]; 1: y) of `size` pixels in `bins` bins.
RoiAxis roi_axis(RuleContext& ctx, int k, int64_t size, int64_t bins, int64_t ratio, double scale, bool half_pixel) {
  DType t = ctx.dtype(1);
  int64_t r = ctx.shape(1)[0];
  auto c = [t](double v) { return ir::constant(ir::Scalar::of(t, v)); };
  std::string axis = k == 0 ? "x" : "y";
  auto column = [&](int64_t col) {
    return remap(ctx, ctx.input(1), {r, 1, 1}, [col](const std::vector<Expr>& i) {
      return std::vector<Expr>{i[0], ir::const_i64(col)};
    }, axis + "/roi");
  };
  ValueId lo = column(k), hi = column(k + 2);
  double offset = half_pixel ? 0.5 : 0;
  // The sample position: start + bin · bin_size + (sample + 0.5) · bin_size / ratio.
  Dims domain = {r, bins, ratio};
  PrimBuilder b(ctx.graph());
  Expr start = b.bload(lo, domain) * c(scale) - c(offset), extent = b.bload(hi, domain) * c(scale) - c(offset) - start;
  if (!half_pixel) extent = ir::binary(ExprOp::Max, extent, c(1));
  Expr bin = extent / c(static_cast<double>(bins));
  Expr p = ir::cast(t, ir::dvar(1)), q = ir::cast(t, ir::dvar(2));
  Expr body = start + p * bin + (q + c(0.5)) * bin / c(static_cast<double>(ratio));
  ir::Primitive prim = b.make(ir::PrimOp::Elementwise);
  prim.domain = domain;
  prim.bodies = {body};
  ValueId pos = ctx.emit1(std::move(prim), {t, domain}, axis + "/pos");
  auto n = static_cast<double>(size);
  auto clamped = [&](Expr v) { return ir::binary(ExprOp::Max, v, c(0)); };
  auto last = [&](Expr v) { return ir::binary(ExprOp::Ge, ir::unary(ExprOp::Floor, clamped(v)), c(n - 1)); };
  RoiAxis a;
  a.valid = ew_unary(ctx, pos, [&](Expr v) {
    return ir::unary(ExprOp::Not, ir::binary(ExprOp::Or, ir::binary(ExprOp::Lt, v, c(-1)), ir::binary(ExprOp::Gt, v, c(n))));
  }, axis + "/valid");
  a.low = ew_unary(ctx, pos, [&](Expr v) {
    return ir::select(last(v), ir::const_i64(size - 1), ir::cast(DType::I64, ir::unary(ExprOp::Floor, clamped(v))));
  }, axis + "/low");
  a.high = ew_unary(ctx, pos, [&](Expr v) {
    return ir::select(last(v), ir::const_i64(size - 1), ir::cast(DType::I64, ir::unary(ExprOp::Floor, clamped(v))) + 1);
  }, axis + "/high");
  a.frac = ew_unary(ctx, pos, [&](Expr v) {
    Expr cv = clamped(v);
    return ir::select(last(v), c(0), cv - ir::unary(ExprOp::Floor, cv));
  }, axis + "/frac");
  return a;
}

}  // namespace

std::vector<ValueId> rule_RoiAlign(RuleContext& ctx) {
  require_same_dtype(ctx, 0, 1);
  Dims xs = ctx.shape(0), rs = ctx.shape(1), bs = ctx.shape(2);
  ORCHID_USER_CHECK(xs.size() == 4 && rs.size() == 2 && rs[1] == 4 && bs == Dims{rs[0]})
      << ctx.where() << "X " << ir::dims_str(xs) << ", rois " << ir::dims_str(rs) << " and batch_indices "
      << ir::dims_str(bs) << " should be [N, C, H, W], [R, 4] and [R]";
  ORCHID_USER_CHECK(ir::is_int(ctx.dtype(2))) << ctx.where() << "batch_indices must be integers";
  std::string mode = ctx.attr_string("mode", "avg");
  if (mode != "avg") ctx.unsupported("mode '" + mode + "' (only avg)");
  int64_t oh = ctx.attr_int("output_height", 1), ow = ctx.attr_int("output_width", 1), ratio = ctx.attr_int("sampling_ratio", 0);
  ORCHID_USER_CHECK(oh >= 1 && ow >= 1) << ctx.where() << "output_height and output_width must be positive";
  if (ratio <= 0) ctx.unsupported("sampling_ratio 0 (an adaptive sample count depends on the regions' data)");
  double scale = ctx.attr_float("spatial_scale", 1.0);
  bool half_pixel = ctx.version() >= 16 && ctx.attr_string("coordinate_transformation_mode", "half_pixel") == "half_pixel";
  DType t = ctx.dtype(0);
  int64_t r = rs[0];
  RoiAxis ay = roi_axis(ctx, 1, xs[2], oh, ratio, scale, half_pixel), ax = roi_axis(ctx, 0, xs[3], ow, ratio, scale, half_pixel);
  Dims samples = {r, xs[1], oh, ratio, ow, ratio};
  // The four corners gathered: X[batch[r], c, y, x] over [R, C, bins_h, samples_h, bins_w, samples_w].
  std::vector<ValueId> ins;
  for (ValueId yv : {ay.low, ay.high})
    for (ValueId xv : {ax.low, ax.high}) {
      ins.push_back(gather(ctx, ctx.input(0), samples, [&](PrimBuilder& b, const std::vector<Expr>& i) {
        return std::vector<Expr>{b.load(ctx.input(2), {i[0]}), i[1], b.load(yv, {i[0], i[2], i[3]}), b.load(xv, {i[0], i[4], i[5]})};
      }, "corner"));
    }
  auto y_shaped = [&](ValueId v) { return view(ctx, v, {r, 1, oh, ratio, 1, 1}, "y"); };
  auto x_shaped = [&](ValueId v) { return view(ctx, v, {r, 1, 1, 1, ow, ratio}, "x"); };
  ins.push_back(y_shaped(ay.frac));
  ins.push_back(x_shaped(ax.frac));
  ins.push_back(y_shaped(ay.valid));
  ins.push_back(x_shaped(ax.valid));
  ValueId value = ew_map(ctx, ins, t, [&](const std::vector<Expr>& v) {
    Expr one = ir::constant(ir::Scalar::of(t, 1)), ly = v[4], lx = v[5], hy = one - ly, hx = one - lx;
    Expr s = hy * hx * v[0] + hy * lx * v[1] + ly * hx * v[2] + ly * lx * v[3];
    return ir::select(ir::binary(ExprOp::And, v[6], v[7]), s, ir::constant(ir::Scalar::of(t, 0)));
  }, "sample");
  ValueId sum = reduce_axes(ctx, value, {3, 5}, false, ir::ReduceOp::Sum, nullptr, "sum")[0];
  double count = static_cast<double>(ratio * ratio);
  return {ew_unary(ctx, sum, [&](Expr v) { return v / ir::constant(ir::Scalar::of(t, count)); })};
}

// TfIdfVectorizer (ONNX 9) on integer sequences X [len] or [B, len]: per n-gram length n in
// [min_gram_length, max_gram_length], one reduce primitive counts, per row and pool n-gram,
// the starts and skips (0 to max_skip_count; unigrams once) at which X holds the n-gram —
// the elements at start + j · (skip + 1) — against the pool as a constant table; the counts
// of all lengths side by side [B, G] then become the output [B, max(ngram_indexes) + 1]
// through one matmul by a constant [G, out] matrix holding each n-gram's weight (1 without
// weights, and for TF) in its column: TF the counts, IDF the weight where a count is
// positive, TFIDF count times weight.
std::vector<ValueId> rule_TfIdfVectorizer(RuleContext& ctx) {
  Dims xs = ctx.shape(0);
  ORCHID_USER_CHECK(xs.size() == 1 || xs.size() == 2) << ctx.where() << "X " << ir::dims_str(xs) << " should be [len] or [B, len]";
  ORCHID_USER_CHECK(ctx.dtype(0) == DType::I32 || ctx.dtype(0) == DType::I64)
      << ctx.where() << "X has dtype " << ir::dtype_name(ctx.dtype(0)) << "; only int32 and int64 sequences are supported";
  if (!ctx.has_attr("pool_int64s")) ctx.unsupported("pool_strings (string n-grams)");
  std::string mode = ctx.attr_string("mode", "");
  ORCHID_USER_CHECK(mode == "TF" || mode == "IDF" || mode == "TFIDF") << ctx.where() << "unknown mode '" << mode << "'";
  int64_t min_n = ctx.attr_int("min_gram_length", 0), max_n = ctx.attr_int("max_gram_length", 0),
          max_skip = ctx.attr_int("max_skip_count", 0);
  std::vector<int64_t> counts = ctx.attr_ints("ngram_counts", {}), indexes = ctx.attr_ints("ngram_indexes", {}),
                       pool = ctx.attr_ints("pool_int64s", {});
  std::vector<double> weights = ctx.attr_floats("weights", {});
  ORCHID_USER_CHECK(min_n >= 1 && max_n >= min_n && max_skip >= 0 && static_cast<int64_t>(counts.size()) >= max_n)
      << ctx.where() << "min_gram_length " << min_n << ", max_gram_length " << max_n << ", max_skip_count " << max_skip
      << " and " << counts.size() << " ngram_counts do not fit";
  // The pool's n-grams by length: n-grams of length n from pool position counts[n-1] · ... on.
  struct Group {
    int64_t n, first, size, start;  // length, number of its first n-gram, n-grams, pool position
  };
  std::vector<Group> groups;
  int64_t grams = 0, at = counts.empty() ? 0 : counts[0];  // pool entries before counts[0]: no n-gram
  ORCHID_USER_CHECK(at >= 0 && at <= static_cast<int64_t>(pool.size()))
      << ctx.where() << "ngram_counts[0] = " << at << " is outside the pool of " << pool.size();
  for (int64_t n = 1; n <= static_cast<int64_t>(counts.size()); ++n) {
    int64_t next_start = n < static_cast<int64_t>(counts.size()) ? counts[static_cast<size_t>(n)] : -1;
    int64_t elements = (next_start >= 0 ? next_start : static_cast<int64_t>(pool.size())) - at;
    ORCHID_USER_CHECK(elements >= 0 && elements % n == 0) << ctx.where() << "ngram_counts do not split the pool into " << n << "-grams";
    groups.push_back({n, grams, elements / n, at});
    grams += elements / n;
    at += elements;
  }
  ORCHID_USER_CHECK(static_cast<int64_t>(indexes.size()) == grams && (weights.empty() || weights.size() == indexes.size()))
      << ctx.where() << indexes.size() << " ngram_indexes (and " << weights.size() << " weights) for " << grams << " n-grams";
  int64_t out = 0;
  for (int64_t i : indexes) {
    ORCHID_USER_CHECK(i >= 0) << ctx.where() << "ngram_indexes holds the negative index " << i;
    out = std::max(out, i + 1);
  }
  int64_t rows = xs.size() == 1 ? 1 : xs[0], len = xs.back();
  ValueId x = xs.size() == 1 ? view(ctx, ctx.input(0), {1, len}, "rows") : ctx.input(0);
  std::vector<ValueId> parts;
  std::vector<int64_t> part_first;
  for (const Group& grp : groups) {
    int64_t elements = grp.n * grp.size;
    bool counted = grp.n >= min_n && grp.n <= max_n && grp.size > 0;
    if (counted) {
      std::string name = "pool" + std::to_string(grp.n);
      auto from = pool.begin() + static_cast<std::ptrdiff_t>(grp.start);
      ValueId tv = view(ctx, int_vector_constant(ctx, {from, from + static_cast<std::ptrdiff_t>(elements)}, name),
                        {grp.size, grp.n}, name + "/table");
      int64_t skips = grp.n == 1 ? 1 : max_skip + 1;
      PrimBuilder b(ctx.graph());
      Expr start = ir::rvar(1), skip = ir::rvar(0);
      Expr valid = ir::binary(ExprOp::Lt, start + ir::rvar(0) * (grp.n - 1) + (grp.n - 1), ir::const_i64(len));
      Expr match;
      for (int64_t j = 0; j < grp.n; ++j) {
        Expr pos = j == 0 ? start : start + skip * j + j;
        Expr eq = ir::binary(ExprOp::Eq, ir::cast(DType::I64, b.load(x, {ir::dvar(0), pos})), b.load(tv, {ir::dvar(1), ir::const_i64(j)}));
        match = match.defined() ? ir::binary(ExprOp::And, match, eq) : eq;
      }
      Expr one = ir::const_f(DType::F32, 1), zero = ir::const_f(DType::F32, 0);
      Expr body = ir::select(valid, ir::select(match, one, zero), zero);
      ir::Primitive p = b.make(ir::PrimOp::Reduce);
      p.domain = {rows, grp.size};
      p.reduce_domain = {skips, len};
      p.reduce = ir::ReduceOp::Sum;
      p.bodies = {body};
      parts.push_back(ctx.emit1(std::move(p), {DType::F32, p.domain}, "count" + std::to_string(grp.n)));
      part_first.push_back(grp.first);
    }
  }
  // The output matrix: row g (of the counted n-grams, in pool order) holds g's weight in
  // column ngram_indexes[g].
  std::vector<ValueId> scored;
  std::vector<double> m;
  int64_t counted = 0;
  for (size_t k = 0; k < parts.size(); ++k) {
    int64_t size = ctx.graph().type(parts[k]).shape[1];
    for (int64_t g = 0; g < size; ++g) {
      std::vector<double> row(static_cast<size_t>(out), 0);
      auto id = static_cast<size_t>(part_first[k] + g);
      row[static_cast<size_t>(indexes[id])] = weights.empty() || mode == "TF" ? 1.0 : weights[id];
      m.insert(m.end(), row.begin(), row.end());
    }
    counted += size;
    scored.push_back(mode == "IDF" ? ew_unary(ctx, parts[k], [](Expr c) {
      return ir::select(ir::binary(ExprOp::Gt, c, ir::const_f(DType::F32, 0)), ir::const_f(DType::F32, 1), ir::const_f(DType::F32, 0));
    }, "present") : parts[k]);
  }
  ValueId y = counted == 0 ? broadcast_to(ctx, scalar_constant(ctx, DType::F32, 0, "zero"), {rows, out}, "zeros")
                           : matmul(ctx, concat(ctx, scored, 1, "counts"),
                                    constant_of(ctx, DType::F32, {counted, out}, m, "weights"), {},
                                    xs.size() == 1 ? "y" : "");
  if (xs.size() == 1) y = view(ctx, y, {out});
  return {y};
}

}  // namespace orchid::fission
