// Signal processing (ONNX opset 17). Windows and the mel filter bank depend only on their
// (constant) scalar inputs and become constants, computed as ONNX's reference computes them.
// DFT and STFT are sums over the transformed axis against constant tables of cos and sin
// (one reduce primitive with two bodies, the real and imaginary parts), then the two parts
// stacked into the trailing dim of 2:
//   forward  re[k] = Σ xr[n] cos(2πkn/L) + xi[n] sin(2πkn/L),  im[k] = Σ xi[n] cos − xr[n] sin
//   inverse  the same with sin negated, and both divided by L
// where L is dft_length (or the frame length): a shorter input is zero-padded, a longer one
// cut. onesided keeps the L / 2 + 1 bins of non-negative frequency.
#include <cmath>
#include <numbers>

#include "fission/builders.h"
#include "fission/rules.h"
#include "frontend/tensor_proto.h"
#include "support/error.h"

namespace orchid::fission {

namespace {

using ir::DType;
using ir::Dims;

int64_t const_scalar(const RuleContext& ctx, size_t k, const char* what) {
  std::vector<int64_t> v = ctx.const_ints(k);
  ORCHID_USER_CHECK(v.size() == 1) << ctx.where() << what << " must be a scalar";
  return v[0];
}

DType output_dtype(const RuleContext& ctx) {
  auto code = static_cast<int32_t>(ctx.attr_int("output_datatype", 1));
  std::optional<DType> t = frontend::dtype_from_onnx(code);
  ORCHID_USER_CHECK(t.has_value()) << ctx.where() << "output_datatype " << code << " is not a tensor element type";
  return *t;
}

// Σ_j a_j cos(2π j n / N) over the window's terms, N = size (periodic) or size − 1.
std::vector<ValueId> window(RuleContext& ctx, const std::vector<double>& a) {
  int64_t size = const_scalar(ctx, 0, "size");
  ORCHID_USER_CHECK(size >= 0) << ctx.where() << "size " << size << " is negative";
  bool periodic = ctx.attr_int("periodic", 1) != 0;
  double n_den = static_cast<double>(periodic ? size : size - 1);
  std::vector<double> w;
  for (int64_t n = 0; n < size; ++n) {
    double v = 0;
    for (size_t j = 0; j < a.size(); ++j)
      v += a[j] * std::cos(2 * std::numbers::pi * static_cast<double>(j) * static_cast<double>(n) / n_den);
    w.push_back(v);
  }
  return {constant_of(ctx, output_dtype(ctx), {size}, w)};
}

}  // namespace

std::vector<ValueId> rule_HannWindow(RuleContext& ctx) { return window(ctx, {0.5, -0.5}); }
std::vector<ValueId> rule_HammingWindow(RuleContext& ctx) { return window(ctx, {25.0 / 46, -21.0 / 46}); }
std::vector<ValueId> rule_BlackmanWindow(RuleContext& ctx) { return window(ctx, {0.42, -0.5, 0.08}); }

// Triangular filters between num_mel_bins + 2 points spaced evenly on the mel scale from
// lower_edge_hertz to upper_edge_hertz, as bins of a dft_length DFT at sample_rate:
// [dft_length / 2 + 1, num_mel_bins].
std::vector<ValueId> rule_MelWeightMatrix(RuleContext& ctx) {
  int64_t bins = const_scalar(ctx, 0, "num_mel_bins"), dft = const_scalar(ctx, 1, "dft_length"),
          rate = const_scalar(ctx, 2, "sample_rate");
  std::vector<double> lo = ctx.const_floats(3), hi = ctx.const_floats(4);
  ORCHID_USER_CHECK(bins > 0 && dft > 0 && rate > 0 && lo.size() == 1 && hi.size() == 1)
      << ctx.where() << "needs positive scalars num_mel_bins, dft_length and sample_rate, and scalar edges";
  int64_t spectrum = dft / 2 + 1;
  auto mel = [](double hz) { return 2595 * std::log10(1 + hz / 700); };
  double low = mel(lo[0]), high = mel(hi[0]), step = (high - low) / static_cast<double>(bins + 2);
  std::vector<int64_t> points;
  for (int64_t p = 0; p < bins + 2; ++p) {
    double hz = 700 * (std::pow(10.0, (static_cast<double>(p) * step + low) / 2595) - 1);
    points.push_back(static_cast<int64_t>(std::floor(static_cast<double>(dft + 1) * hz / static_cast<double>(rate))));
  }
  std::vector<double> w(static_cast<size_t>(spectrum * bins), 0);
  auto at = [&](int64_t j, int64_t i) -> double& {
    ORCHID_USER_CHECK(j >= 0 && j < spectrum)
        << ctx.where() << "a filter edge falls on bin " << j << ", outside the " << spectrum << " bins of the DFT";
    return w[static_cast<size_t>(j * bins + i)];
  };
  for (int64_t i = 0; i < bins; ++i) {
    int64_t left = points[static_cast<size_t>(i)], center = points[static_cast<size_t>(i + 1)],
            right = points[static_cast<size_t>(i + 2)];
    if (center == left) at(center, i) = 1;
    for (int64_t j = left; center > left && j <= center; ++j)
      at(j, i) = static_cast<double>(j - left) / static_cast<double>(center - left);
    for (int64_t j = center; right > center && j < right; ++j)
      at(j, i) = static_cast<double>(right - j) / static_cast<double>(right - center);
  }
  return {constant_of(ctx, output_dtype(ctx), {spectrum, bins}, w)};
}

namespace {

// The cos and sin tables [n, K] of an L-point transform (sin negated and both scaled by
// 1 / L for the inverse), in dtype t.
std::pair<ValueId, ValueId> dft_tables(RuleContext& ctx, DType t, int64_t n, int64_t k, int64_t l, bool inverse) {
  std::vector<double> c, s;
  double scale = inverse ? 1.0 / static_cast<double>(l) : 1.0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < k; ++j) {
      double angle = 2 * std::numbers::pi * static_cast<double>((i * j) % l) / static_cast<double>(l);
      c.push_back(std::cos(angle) * scale);
      s.push_back(std::sin(angle) * scale * (inverse ? -1 : 1));
    }
  return {constant_of(ctx, t, {n, k}, c, "cos"), constant_of(ctx, t, {n, k}, s, "sin")};
}

// The transform's sum: re = Σ xr C + xi S, im = Σ xi C − xr S over the reduce variable n,
// xr and xi the loads `x(part)` (part 0, 1; the imaginary part absent for real input), times
// an optional window load.
ValueId transform(RuleContext& ctx, PrimBuilder& b, const Dims& domain, int64_t terms, DType t, bool complex_in,
                  const std::function<Expr(int64_t)>& x, ValueId c, ValueId s, std::optional<Expr> weight, size_t k_dim) {
  std::vector<Expr> ck = {ir::rvar(0), ir::dvar(static_cast<int32_t>(k_dim))};
  Expr cos_t = b.load(c, ck), sin_t = b.load(s, ck);
  Expr xr = x(0), re = xr * cos_t, im = ir::unary(ir::ExprOp::Neg, xr * sin_t);
  if (complex_in) {
    Expr xi = x(1);
    re = re + xi * sin_t;
    im = xi * cos_t - xr * sin_t;
  }
  if (weight) {
    re = *weight * re;
    im = *weight * im;
  }
  ir::Primitive p = b.make(ir::PrimOp::Reduce);
  p.domain = domain;
  p.reduce_domain = {terms};
  p.reduce = ir::ReduceOp::Sum;
  p.bodies = {re, im};
  std::vector<ValueId> parts = ctx.emit(std::move(p), {{t, domain}, {t, domain}}, "parts");
  return stack(ctx, {parts[0], parts[1]}, domain.size(), "complex");  // re, im along a new trailing dim
}

}  // namespace

std::vector<ValueId> rule_DFT(RuleContext& ctx) {
  Dims xs = ctx.shape(0);
  DType t = ctx.dtype(0);
  ORCHID_USER_CHECK(xs.size() >= 3 && (xs.back() == 1 || xs.back() == 2))
      << ctx.where() << "input " << ir::dims_str(xs) << " should be [batch, signal dims.., 1 or 2]";
  int64_t axis = ctx.attr_int("axis", 1);
  ORCHID_USER_CHECK(axis >= 1 && axis < static_cast<int64_t>(xs.size()) - 1)
      << ctx.where() << "axis " << axis << " is not a signal dim of " << ir::dims_str(xs);
  auto a = static_cast<size_t>(axis);
  int64_t n = xs[a], l = ctx.has_input(1) ? const_scalar(ctx, 1, "dft_length") : n;
  ORCHID_USER_CHECK(l >= 1) << ctx.where() << "dft_length " << l << " must be positive";
  bool inverse = ctx.attr_int("inverse", 0) != 0, onesided = ctx.attr_int("onesided", 0) != 0;
  int64_t k = onesided ? l / 2 + 1 : l, terms = std::min(n, l);
  Dims domain(xs.begin(), xs.end() - 1);
  domain[a] = k;
  auto [c, s] = dft_tables(ctx, t, terms, k, l, inverse);
  PrimBuilder b(ctx.graph());
  auto x = [&](int64_t part) {
    std::vector<Expr> idx = domain_vars(domain.size());
    idx[a] = ir::rvar(0);
    idx.push_back(ir::const_i64(part));
    return b.load(ctx.input(0), idx);
  };
  return {transform(ctx, b, domain, terms, t, xs.back() == 2, x, c, s, std::nullopt, a)};
}

// Frames of frame_length samples every frame_step, each windowed and transformed:
// [batch, frames, bins, 2].
std::vector<ValueId> rule_STFT(RuleContext& ctx) {
  Dims xs = ctx.shape(0);
  DType t = ctx.dtype(0);
  ORCHID_USER_CHECK(xs.size() == 3 && (xs[2] == 1 || xs[2] == 2))
      << ctx.where() << "signal " << ir::dims_str(xs) << " should be [batch, length, 1 or 2]";
  int64_t step = const_scalar(ctx, 1, "frame_step");
  int64_t l = ctx.has_input(3) ? const_scalar(ctx, 3, "frame_length") : ctx.has_input(2) ? ctx.shape(2)[0] : 0;
  ORCHID_USER_CHECK(l >= 1 && step >= 1 && l <= xs[1])
      << ctx.where() << "frame_length " << l << " and frame_step " << step << " do not fit a signal of " << xs[1];
  if (ctx.has_input(2)) {
    require_same_dtype(ctx, 0, 2);
    ORCHID_USER_CHECK(ctx.shape(2) == Dims{l}) << ctx.where() << "window " << ir::dims_str(ctx.shape(2))
                                                << " should have frame_length " << l << " entries";
  }
  bool onesided = ctx.attr_int("onesided", 1) != 0;
  int64_t frames = (xs[1] - l) / step + 1, k = onesided ? l / 2 + 1 : l;
  Dims domain = {xs[0], frames, k};
  auto [c, s] = dft_tables(ctx, t, l, k, l, false);
  PrimBuilder b(ctx.graph());
  auto x = [&](int64_t part) {
    return b.load(ctx.input(0), {ir::dvar(0), ir::dvar(1) * step + ir::rvar(0), ir::const_i64(part)});
  };
  std::optional<Expr> w;
  if (ctx.has_input(2)) w = b.load(ctx.input(2), {ir::rvar(0)});
  return {transform(ctx, b, domain, l, t, xs[2] == 2, x, c, s, w, 2)};
}

}  // namespace orchid::fission
