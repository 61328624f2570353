#include "verify/field.h"

#include <gtest/gtest.h>

namespace orchid::verify {
namespace {

TEST(Field, PrimesFitTheorem3) {
  EXPECT_TRUE(is_prime_u64(kQ));
  EXPECT_TRUE(is_prime_u64(kP));
  EXPECT_EQ((kP - 1) % kQ, 0u);
  EXPECT_LT(kP, uint64_t{1} << 62);
}

TEST(Field, MillerRabinKnowsCompositesAndPrimes) {
  for (uint64_t c : {uint64_t{1}, uint64_t{561}, uint64_t{1105}, uint64_t{3215031751},
                     uint64_t{4294967297}, (kQ - 2) * 3})
    EXPECT_FALSE(is_prime_u64(c)) << c;
  for (uint64_t p : {uint64_t{2}, uint64_t{3}, uint64_t{65537}, uint64_t{4294967291},
                     uint64_t{18446744073709551557ull}})
    EXPECT_TRUE(is_prime_u64(p)) << p;
}

TEST(Field, ExactEmbeddingOfDoubles) {
  EXPECT_EQ(f_mul(f_exact(0.5), f_int(2)), f_int(1));
  EXPECT_EQ(f_exact(-3.0), f_int(-3));
  EXPECT_EQ(f_exact(0.0), f_int(0));
  EXPECT_EQ(f_mul(f_exact(0.375), f_int(8)), f_int(3));
  EXPECT_EQ(f_exact(1024.0 * 1024.0 * 1024.0 * 1024.0), f_mul(f_int(1 << 20), f_int(1 << 20)));
  // 0.1 is not 1/10: it is the double nearest to it, so the embeddings differ.
  EXPECT_NE(f_exact(0.1), f_div(f_int(1), f_int(10)));
}

TEST(Field, DivisionInvertsMultiplication) {
  FElem a{123456789, 987654321};
  FElem b{kP - 5, kQ - 7};
  EXPECT_EQ(f_mul(f_div(a, b), b), a);
  EXPECT_FALSE(f_invertible(FElem{0, 3}));
  EXPECT_FALSE(f_invertible(FElem{3, 0}));
  EXPECT_TRUE(f_invertible(FElem{3, kNoQ}));
}

TEST(Field, ExpIsAHomomorphismFromZqToZp) {
  uint64_t g = 1234567;
  uint64_t omega = mul_mod(g, g, kP);  // a quadratic residue: a q-th root of unity
  EXPECT_EQ(pow_mod(omega, kQ, kP), 1u);
  FElem a{5, kQ - 3}, b{7, 11};
  EXPECT_EQ(f_exp(f_add(a, b), omega), f_mul(f_exp(a, omega), f_exp(b, omega)));
  EXPECT_EQ(f_exp(f_int(0), omega), (FElem{1, kNoQ}));
  EXPECT_FALSE(f_exp(a, omega).has_q());
}

}  // namespace
}  // namespace orchid::verify
