// Arithmetic over Z_p × Z_q for the probabilistic equivalence check (Mirage §5, Table 3).
//
// p = 2q + 1 with both prime (q just below 2^61), so q | p − 1 and the q-th roots of unity in
// Z_p are the quadratic residues other than 1. An element is a pair (x_p, x_q): Z_p is used
// outside exponents, Z_q inside them; exp maps (x_p, x_q) to (ω^x_q mod p, —). An element
// whose Z_q half is unknown (it went through an exp) carries kNoQ there.
#pragma once

#include <cstdint>

namespace orchid::verify {

constexpr uint64_t kQ = 2305843009213688669ull;  // prime, just below 2^61
constexpr uint64_t kP = 2 * kQ + 1;               // prime, below 2^62
constexpr uint64_t kNoQ = ~uint64_t{0};

struct FElem {
  uint64_t p = 0;
  uint64_t q = 0;  // kNoQ: unknown
  bool has_q() const { return q != kNoQ; }
  bool operator==(const FElem&) const = default;
};

uint64_t add_mod(uint64_t a, uint64_t b, uint64_t m);
uint64_t sub_mod(uint64_t a, uint64_t b, uint64_t m);
uint64_t mul_mod(uint64_t a, uint64_t b, uint64_t m);
uint64_t pow_mod(uint64_t a, uint64_t e, uint64_t m);
uint64_t inv_mod(uint64_t a, uint64_t m);  // a != 0 (m prime: Fermat)
bool is_prime_u64(uint64_t n);              // deterministic Miller–Rabin

// Table 3, componentwise; the Z_q half is unknown in the result if it is in an operand.
FElem f_add(FElem a, FElem b);
FElem f_sub(FElem a, FElem b);
FElem f_mul(FElem a, FElem b);
FElem f_neg(FElem a);
// Whether b can divide: nonzero in Z_p and, where known, in Z_q.
bool f_invertible(FElem b);
FElem f_div(FElem a, FElem b);  // f_invertible(b)
// ω^(a_q) in Z_p; a.has_q().
FElem f_exp(FElem a, uint64_t omega);
// The integer v in both fields.
FElem f_int(int64_t v);
// A finite double, exactly: v = m · 2^e becomes m · (2^-1)^(-e) in both fields.
FElem f_exact(double v);

}  // namespace orchid::verify
