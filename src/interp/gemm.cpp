// A Goto-style blocked GEMM: B is packed in panels of NR columns (kc x nc, cache-sized), A in
// panels of MR rows (mc x kc), and an MR x NR register-blocked micro-kernel adds the kc
// products of each entry to C in k order. Written with GCC vector extensions, so it compiles
// to AVX-512, AVX2 or SSE alike. This file is built with -ffp-contract=off: a * b + c is
// never fused, which keeps results independent of the ISA (gemm.h).
#include "interp/gemm.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace orchid::interp::detail {

namespace {

#if defined(__AVX512F__)
constexpr int kVec = 8;   // doubles per vector register
constexpr int kMR = 8;    // rows of the micro-kernel
constexpr int kNV = 3;    // vectors per row of the micro-kernel (24 accumulators of 32)
#else
constexpr int kVec = 4;
constexpr int kMR = 6;
constexpr int kNV = 2;    // 12 accumulators of 16 registers
#endif
constexpr int kNR = kVec * kNV;    // columns of the micro-kernel
constexpr int64_t kKC = 256;       // depth of a packed block
constexpr int64_t kMC = kMR * 16;  // rows of a packed A block
constexpr int64_t kNC = kNR * 64;  // columns of a packed B block

typedef double Vec __attribute__((vector_size(kVec * sizeof(double))));

inline Vec load_vec(const double* p) {
  Vec v;
  std::memcpy(&v, p, sizeof(Vec));
  return v;
}
inline void store_vec(double* p, Vec v) { std::memcpy(p, &v, sizeof(Vec)); }

// c[MR x NR] (row stride ldc) = (zero ? 0 : c) + sum_k a[k][r] * b[k][c], k in order.
void micro_kernel(int64_t kc, const double* a, const double* b, double* c, int64_t ldc,
                  bool zero) {
  Vec acc[kMR][kNV];
  for (int r = 0; r < kMR; ++r)
    for (int v = 0; v < kNV; ++v) acc[r][v] = zero ? Vec{} : load_vec(c + r * ldc + v * kVec);
  for (int64_t k = 0; k < kc; ++k) {
    Vec bv[kNV];
    for (int v = 0; v < kNV; ++v) bv[v] = load_vec(b + k * kNR + v * kVec);
    for (int r = 0; r < kMR; ++r) {
      Vec av = Vec{} + a[k * kMR + r];
      for (int v = 0; v < kNV; ++v) acc[r][v] += av * bv[v];
    }
  }
  for (int r = 0; r < kMR; ++r)
    for (int v = 0; v < kNV; ++v) store_vec(c + r * ldc + v * kVec, acc[r][v]);
}

// A partial tile (mr < MR or nr < NR) through a full-size scratch tile.
void edge_kernel(int64_t kc, const double* a, const double* b, double* c, int64_t ldc, int64_t mr,
                 int64_t nr, bool zero) {
  double tile[kMR * kNR] = {};
  if (!zero)
    for (int64_t r = 0; r < mr; ++r) std::copy(c + r * ldc, c + r * ldc + nr, tile + r * kNR);
  micro_kernel(kc, a, b, tile, kNR, zero);
  for (int64_t r = 0; r < mr; ++r) std::copy(tile + r * kNR, tile + r * kNR + nr, c + r * ldc);
}

// Packs A[i0 .. i0+mc, k0 .. k0+kc] into panels of MR rows, k-major, zero-padded.
void pack_a(MatRef A, int64_t i0, int64_t mc, int64_t k0, int64_t kc, double* out) {
  for (int64_t ir = 0; ir < mc; ir += kMR) {
    int64_t mr = std::min<int64_t>(kMR, mc - ir);
    for (int64_t k = 0; k < kc; ++k) {
      const double* src = A.p + (i0 + ir) * A.rs + (k0 + k) * A.cs;
      for (int64_t r = 0; r < kMR; ++r) out[k * kMR + r] = r < mr ? src[r * A.rs] : 0.0;
    }
    out += kc * kMR;
  }
}

// Packs B[k0 .. k0+kc, j0 .. j0+nc] into panels of NR columns, k-major, zero-padded.
void pack_b(MatRef B, int64_t k0, int64_t kc, int64_t j0, int64_t nc, double* out) {
  for (int64_t jr = 0; jr < nc; jr += kNR) {
    int64_t nr = std::min<int64_t>(kNR, nc - jr);
    for (int64_t k = 0; k < kc; ++k) {
      const double* src = B.p + (k0 + k) * B.rs + (j0 + jr) * B.cs;
      for (int64_t c = 0; c < kNR; ++c) out[k * kNR + c] = c < nr ? src[c * B.cs] : 0.0;
    }
    out += kc * kNR;
  }
}

// C[ic.., jc..] += packed A block · packed B block, tile by tile.
void block_product(int64_t mc, int64_t nc, int64_t kc, const double* ap, const double* bp,
                   double* c, int64_t ldc, bool zero) {
  for (int64_t jr = 0; jr < nc; jr += kNR) {
    int64_t nr = std::min<int64_t>(kNR, nc - jr);
    const double* b = bp + (jr / kNR) * kc * kNR;
    for (int64_t ir = 0; ir < mc; ir += kMR) {
      int64_t mr = std::min<int64_t>(kMR, mc - ir);
      const double* a = ap + (ir / kMR) * kc * kMR;
      double* t = c + ir * ldc + jr;
      if (mr == kMR && nr == kNR) {
        micro_kernel(kc, a, b, t, ldc, zero);
      } else {
        edge_kernel(kc, a, b, t, ldc, mr, nr, zero);
      }
    }
  }
}

}  // namespace

void gemm(int64_t M, int64_t N, int64_t K, MatRef A, MatRef B, double* C, int64_t ldc) {
  if (M == 0 || N == 0) return;
  if (K == 0) {
    for (int64_t i = 0; i < M; ++i) std::fill(C + i * ldc, C + i * ldc + N, 0.0);
    return;
  }
  std::vector<double> bpack(static_cast<size_t>(std::min(kKC, K) * (std::min(kNC, N) + kNR)));
  std::vector<double> apack(static_cast<size_t>(std::min(kKC, K) * (std::min(kMC, M) + kMR)));
  for (int64_t jc = 0; jc < N; jc += kNC) {
    int64_t nc = std::min(kNC, N - jc);
    for (int64_t pc = 0; pc < K; pc += kKC) {
      int64_t kc = std::min(kKC, K - pc);
      pack_b(B, pc, kc, jc, nc, bpack.data());
      for (int64_t ic = 0; ic < M; ic += kMC) {
        int64_t mc = std::min(kMC, M - ic);
        pack_a(A, ic, mc, pc, kc, apack.data());
        block_product(mc, nc, kc, apack.data(), bpack.data(), C + ic * ldc + jc, ldc, pc == 0);
      }
    }
  }
}

}  // namespace orchid::interp::detail
