#include "verify/field.h"

#include <cmath>

#include "support/error.h"

namespace orchid::verify {

uint64_t add_mod(uint64_t a, uint64_t b, uint64_t m) {
  uint64_t s = a + b;  // a, b < m < 2^62: no overflow
  return s >= m ? s - m : s;
}

uint64_t sub_mod(uint64_t a, uint64_t b, uint64_t m) { return a >= b ? a - b : a + m - b; }

namespace {

// x mod m for m = 2^k − c (q and p are such primes: 2^61 − 5283 and 2^62 − 10565), without a
// 128-bit division: 2^k ≡ c folds the high bits down twice, then at most two subtractions.
uint64_t fold(unsigned __int128 x, int k, uint64_t c, uint64_t m) {
  const unsigned __int128 low = (static_cast<unsigned __int128>(1) << k) - 1;
  x = (x >> k) * c + (x & low);
  x = (x >> k) * c + (x & low);
  uint64_t r = static_cast<uint64_t>(x);
  while (r >= m) r -= m;
  return r;
}

constexpr int kQBits = 61;
constexpr uint64_t kQFold = (uint64_t{1} << kQBits) - kQ;
constexpr int kPBits = 62;
constexpr uint64_t kPFold = (uint64_t{1} << kPBits) - kP;
static_assert(kQFold == 5283 && kPFold == 10565);

}  // namespace

uint64_t mul_mod(uint64_t a, uint64_t b, uint64_t m) {
  unsigned __int128 x = static_cast<unsigned __int128>(a) * b;
  if (m == kQ && a < m && b < m) return fold(x, kQBits, kQFold, m);
  if (m == kP && a < m && b < m) return fold(x, kPBits, kPFold, m);
  return static_cast<uint64_t>(x % m);
}

uint64_t pow_mod(uint64_t a, uint64_t e, uint64_t m) {
  uint64_t r = 1 % m;
  a %= m;
  for (; e != 0; e >>= 1) {
    if (e & 1) r = mul_mod(r, a, m);
    a = mul_mod(a, a, m);
  }
  return r;
}

uint64_t inv_mod(uint64_t a, uint64_t m) {
  ORCHID_CHECK(a % m != 0) << "inverse of 0";
  return pow_mod(a, m - 2, m);
}

bool is_prime_u64(uint64_t n) {
  if (n < 2) return false;
  constexpr uint64_t kBases[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37};
  for (uint64_t b : kBases)
    if (n % b == 0) return n == b;
  uint64_t d = n - 1;
  int s = 0;
  for (; d % 2 == 0; d /= 2) ++s;
  for (uint64_t b : kBases) {  // these bases decide every n < 3.3e24
    uint64_t x = pow_mod(b, d, n);
    if (x == 1 || x == n - 1) continue;
    bool composite = true;
    for (int r = 1; r < s && composite; ++r) {
      x = mul_mod(x, x, n);
      composite = x != n - 1;
    }
    if (composite) return false;
  }
  return true;
}

namespace {

uint64_t q_op(uint64_t a, uint64_t b, uint64_t (*op)(uint64_t, uint64_t, uint64_t)) {
  return a == kNoQ || b == kNoQ ? kNoQ : op(a, b, kQ);
}

}  // namespace

FElem f_add(FElem a, FElem b) { return {add_mod(a.p, b.p, kP), q_op(a.q, b.q, add_mod)}; }
FElem f_sub(FElem a, FElem b) { return {sub_mod(a.p, b.p, kP), q_op(a.q, b.q, sub_mod)}; }
FElem f_mul(FElem a, FElem b) { return {mul_mod(a.p, b.p, kP), q_op(a.q, b.q, mul_mod)}; }
FElem f_neg(FElem a) { return f_sub(FElem{0, 0}, a); }

bool f_invertible(FElem b) { return b.p != 0 && b.q != 0; }

FElem f_div(FElem a, FElem b) {
  FElem r{mul_mod(a.p, inv_mod(b.p, kP), kP), kNoQ};
  if (a.has_q() && b.has_q()) r.q = mul_mod(a.q, inv_mod(b.q, kQ), kQ);
  return r;
}

FElem f_exp(FElem a, uint64_t omega) {
  ORCHID_CHECK(a.has_q()) << "exp of an element without its Z_q half";
  return {pow_mod(omega, a.q, kP), kNoQ};
}

FElem f_int(int64_t v) {
  auto in = [v](uint64_t m) {
    uint64_t mag = v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
    mag %= m;
    return v < 0 ? sub_mod(0, mag, m) : mag;
  };
  return {in(kP), in(kQ)};
}

FElem f_exact(double v) {
  ORCHID_CHECK(std::isfinite(v)) << "f_exact of a non-finite value";
  int e = 0;
  double frac = std::frexp(v, &e);  // v = frac · 2^e, |frac| in [0.5, 1)
  auto m = static_cast<int64_t>(std::ldexp(frac, 53));
  e -= 53;
  while (e < 0 && m % 2 == 0 && m != 0) {
    m /= 2;
    ++e;
  }
  FElem r = f_int(m);
  if (e == 0 || m == 0) return r;
  FElem two = f_int(2);
  FElem scale{pow_mod(two.p, static_cast<uint64_t>(std::abs(e)), kP),
              pow_mod(two.q, static_cast<uint64_t>(std::abs(e)), kQ)};
  return e > 0 ? f_mul(r, scale) : f_div(r, scale);
}

}  // namespace orchid::verify
