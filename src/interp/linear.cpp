// Float matmul and conv (docs/ir.md, "Kinds and operators"): the products are summed in f64 by
// gemm() in both precisions, and the output is rounded once to its dtype in Own precision.
// Conv goes through im2col: for each image and group, the receptive fields become the columns
// of a matrix that the group's weights multiply.
#include <algorithm>

#include "interp/gemm.h"
#include "interp/kernels.h"
#include "support/error.h"

namespace orchid::interp::detail {

using ir::Dims;

namespace {

// Offset of each operand's matrix for every batch index of the output (batch dims aligned
// right; a dim of 1 broadcasts).
std::vector<int64_t> batch_offsets(const Dims& operand, const Dims& out) {
  size_t batch = out.size() - 2, own = operand.size() - 2;
  Dims strides = ir::row_major_strides(operand);
  Dims out_batch(out.begin(), out.begin() + static_cast<int64_t>(batch));
  std::vector<int64_t> offsets(static_cast<size_t>(ir::numel(out_batch)), 0);
  Dims idx(batch, 0);
  for (int64_t& off : offsets) {
    for (size_t j = 0; j < batch; ++j) {
      int64_t ja = static_cast<int64_t>(j) - static_cast<int64_t>(batch - own);
      if (ja >= 0 && operand[static_cast<size_t>(ja)] != 1)
        off += idx[j] * strides[static_cast<size_t>(ja)];
    }
    for (size_t j = batch; j-- > 0;) {  // next batch index, row-major
      if (++idx[j] < out_batch[j]) break;
      idx[j] = 0;
    }
  }
  return offsets;
}

void round_output(Buffer& out, Precision p) {
  round_lanes(out.f.data(), out.numel(), rounding_dtype(out.type.dtype, p));
}

// Spatial geometry of a conv, per spatial dim d.
struct ConvShape {
  int64_t images, channels_per_group, out_per_group, groups;
  Dims in, kernel, out, stride, dilation, pad;
  int64_t rows() const { return channels_per_group * ir::numel(kernel); }
  int64_t points() const { return ir::numel(out); }
};

ConvShape conv_shape(const NodeEval& ne) {
  const auto& a = std::get<ir::ConvAttrs>(ne.prim().attrs);
  const Dims& x = ne.in[0]->type.shape;
  const Dims& w = ne.in[1]->type.shape;
  const Dims& o = ne.out[0].type.shape;
  ConvShape s{x[0], w[1], w[0] / a.groups, a.groups, Dims(x.begin() + 2, x.end()),
              Dims(w.begin() + 2, w.end()), Dims(o.begin() + 2, o.end()), a.strides, a.dilations,
              a.pads_begin};
  return s;
}

// One row (c, q..) of the im2col matrix over the output points [p0, p0 + np): the input
// element each point reads through kernel offset q, 0 outside X. Runs along the last spatial
// dim share the outer coordinates.
void im2col_row(const ConvShape& s, const double* xc, const Dims& q, int64_t p0, int64_t np,
                double* col) {
  size_t S = s.in.size(), last = S - 1;
  int64_t out_last = s.out[last];
  Dims in_strides = ir::row_major_strides(s.in);
  for (int64_t p = p0; p < p0 + np;) {
    int64_t o_last = p % out_last;
    int64_t run = std::min(out_last - o_last, p0 + np - p);
    int64_t outer = 0;  // offset of the outer coordinates, when inside X
    bool inside = true;
    for (int64_t rem = p / out_last, d = static_cast<int64_t>(last) - 1; d >= 0; --d) {
      auto k = static_cast<size_t>(d);
      int64_t pos = (rem % s.out[k]) * s.stride[k] + q[k] * s.dilation[k] - s.pad[k];
      rem /= s.out[k];
      inside = inside && pos >= 0 && pos < s.in[k];
      outer += pos * in_strides[k];
    }
    double* dst = col + (p - p0);
    if (!inside) {
      std::fill(dst, dst + run, 0.0);
    } else {
      int64_t first = o_last * s.stride[last] + q[last] * s.dilation[last] - s.pad[last];
      for (int64_t t = 0; t < run; ++t) {
        int64_t pos = first + t * s.stride[last];
        dst[t] = pos >= 0 && pos < s.in[last] ? xc[outer + pos] : 0.0;
      }
    }
    p += run;
  }
}

// Columns [p0, p0 + np) of the im2col matrix of image n, group g: row (c, q..) holds
// X[n, g*Cg + c, p*stride + q*dilation - pad] (0 outside X) for each output point p.
void im2col(const ConvShape& s, const double* x, int64_t n, int64_t g, int64_t p0, int64_t np,
            double* col) {
  size_t S = s.in.size();
  int64_t plane = ir::numel(s.in);
  Dims q(S, 0);  // kernel offsets of the current row
  for (int64_t c = 0; c < s.channels_per_group; ++c) {
    const double* xc = x + ((n * s.groups + g) * s.channels_per_group + c) * plane;
    for (int64_t k = 0; k < ir::numel(s.kernel); ++k, col += np) {
      im2col_row(s, xc, q, p0, np, col);
      for (size_t d = S; d-- > 0;) {
        if (++q[d] < s.kernel[d]) break;
        q[d] = 0;
      }
    }
  }
}

}  // namespace

void eval_matmul(NodeEval& ne) {
  const auto& attrs = std::get<ir::MatMulAttrs>(ne.prim().attrs);
  const Buffer& a = *ne.in[0];
  const Buffer& b = *ne.in[1];
  Buffer& out = ne.out[0];
  const Dims& oshape = out.type.shape;
  int64_t M = oshape[oshape.size() - 2], N = oshape[oshape.size() - 1];
  int64_t K = attrs.trans_a ? a.type.shape[a.type.shape.size() - 2] : a.type.shape.back();
  std::vector<int64_t> offa = batch_offsets(a.type.shape, oshape);
  std::vector<int64_t> offb = batch_offsets(b.type.shape, oshape);
  for (size_t k = 0; k < offa.size(); ++k) {
    const double* pa = a.f.data() + offa[k];
    const double* pb = b.f.data() + offb[k];
    MatRef ma = attrs.trans_a ? MatRef{pa, 1, M} : MatRef{pa, K, 1};
    MatRef mb = attrs.trans_b ? MatRef{pb, 1, K} : MatRef{pb, N, 1};
    gemm(M, N, K, ma, mb, out.f.data() + static_cast<int64_t>(k) * M * N, N);
  }
  round_output(out, ne.precision);
}

void eval_conv(NodeEval& ne) {
  ConvShape s = conv_shape(ne);
  const double* x = ne.in[0]->f.data();
  const double* w = ne.in[1]->f.data();
  double* out = ne.out[0].f.data();
  int64_t rows = s.rows(), points = s.points();
  // Column chunks of at most ~4M doubles (32 MB) of im2col matrix.
  int64_t chunk = std::max<int64_t>(64, (int64_t{1} << 22) / std::max<int64_t>(rows, 1));
  chunk = std::min(chunk, points);
  std::vector<double> col(static_cast<size_t>(rows * chunk));
  for (int64_t n = 0; n < s.images; ++n) {
    for (int64_t g = 0; g < s.groups; ++g) {
      const double* wg = w + g * s.out_per_group * rows;
      double* og = out + (n * s.groups + g) * s.out_per_group * points;
      for (int64_t p0 = 0; p0 < points; p0 += chunk) {
        int64_t np = std::min(chunk, points - p0);
        im2col(s, x, n, g, p0, np, col.data());
        gemm(s.out_per_group, np, rows, MatRef{wg, rows, 1}, MatRef{col.data(), np, 1}, og + p0,
             points);
      }
    }
  }
  round_output(ne.out[0], ne.precision);
}

}  // namespace orchid::interp::detail
