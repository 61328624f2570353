// Random matmul and convolution shapes for the differential tests of library steps (oneDNN
// on the CPU, cuBLASLt and cuDNN on a GPU). Matmuls: rank 2 to 4, batch dims numpy-broadcast
// (dropped or 1 on either side), either operand transposed. Convolutions: see random_conv.
#pragma once

#include <algorithm>
#include <string>

#include "ir/graph.h"
#include "support/random.h"

namespace orchid::testlib {

using ir::Dims;

struct MatMulCase {
  Dims a, b;
  bool ta = false, tb = false;
  int64_t k = 0;
};

inline MatMulCase random_matmul(Rng& rng) {
  size_t rank = rng.range(2, 5);
  Dims batch;
  for (size_t j = 0; j + 2 < rank; ++j) batch.push_back(rng.range(1, 4));
  auto operand = [&](int64_t rows, int64_t cols, bool trans) {
    size_t keep = rng.range(0, static_cast<int64_t>(batch.size()) + 1);  // batch dims kept (from the right)
    Dims s;
    for (size_t j = batch.size() - keep; j < batch.size(); ++j) s.push_back(rng.coin(0.3) ? 1 : batch[j]);
    s.push_back(trans ? cols : rows);
    s.push_back(trans ? rows : cols);
    return s;
  };
  MatMulCase mc;
  int64_t m = rng.range(1, 40), n = rng.range(1, 40);
  mc.k = rng.range(1, 70);
  mc.ta = rng.coin(), mc.tb = rng.coin();
  mc.a = operand(m, mc.k, mc.ta);
  mc.b = operand(mc.k, n, mc.tb);
  return mc;
}

inline std::string matmul_rhs(bool ta, bool tb) {
  return std::string("matmul(%a, %b) {trans_a=") + (ta ? "true" : "false") + ", trans_b=" + (tb ? "true" : "false") + "}";
}

struct ConvCase {
  Dims x, w;
  ir::ConvAttrs attrs;
  int64_t reduction = 0;  // terms per output element: C/groups · kernel volume
};

// 1-D to 3-D, strides 1..3, dilations 1..2, asymmetric pads 0..2, groups 1..3, depthwise.
inline ConvCase random_conv(Rng& rng) {
  size_t spatial = rng.range(1, 4);
  int64_t groups = rng.range(1, 4), per_group = rng.range(1, 5);
  bool depthwise = rng.coin(0.25);
  if (depthwise) per_group = 1;
  int64_t kout = groups * (depthwise ? 1 : rng.range(1, 4));
  ConvCase cc;
  cc.x = {rng.range(1, 3), groups * per_group};
  cc.w = {kout, per_group};
  cc.attrs.groups = groups;
  cc.reduction = per_group;
  int64_t max_extent = spatial == 3 ? 7 : spatial == 2 ? 12 : 20;
  for (size_t d = 0; d < spatial; ++d) {
    int64_t k = rng.range(1, 4), dl = rng.range(1, 3), p0 = rng.range(0, 3), p1 = rng.range(0, 3);
    int64_t span = (k - 1) * dl + 1;
    cc.x.push_back(std::max<int64_t>(span - p0 - p1, 1) + rng.range(0, max_extent));
    cc.w.push_back(k);
    cc.attrs.strides.push_back(rng.range(1, 4));
    cc.attrs.dilations.push_back(dl);
    cc.attrs.pads_begin.push_back(p0);
    cc.attrs.pads_end.push_back(p1);
    cc.reduction *= k;
  }
  return cc;
}

inline std::string conv_rhs(const ir::ConvAttrs& a) {
  return "conv(%a, %b) {strides=" + ir::dims_str(a.strides) + ", dilations=" + ir::dims_str(a.dilations) +
         ", pads_begin=" + ir::dims_str(a.pads_begin) + ", pads_end=" + ir::dims_str(a.pads_end) +
         ", groups=" + std::to_string(a.groups) + "}";
}

}  // namespace orchid::testlib
