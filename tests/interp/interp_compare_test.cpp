// compare_tensors, the check every stage is held to against the interpreter: tolerances,
// NaN and infinities.
#include <cmath>
#include <limits>
#include <string>

#include "interp/compare.h"
#include "interp_test_util.h"

namespace orchid::interp::test {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string cmp(double got, double want, double rtol = 1e-5, double atol = 1e-6) {
  return compare_tensors(tensor_f(DType::F32, {1}, {got}), tensor_f(DType::F32, {1}, {want}), rtol, atol);
}

TEST(Compare, FloatsMatchWithinTolerance) {
  EXPECT_EQ(cmp(1.0, 1.0), "");
  EXPECT_EQ(cmp(1.000001, 1.0), "");
  EXPECT_EQ(cmp(0.0, 1e-7), "");
  EXPECT_NE(cmp(1.1, 1.0), "");
  EXPECT_EQ(cmp(1.1, 1.0, 0.2, 0), "");
}

TEST(Compare, NaNMatchesOnlyNaN) {
  EXPECT_EQ(cmp(kNaN, kNaN), "");
  EXPECT_NE(cmp(kNaN, 1.0), "");
  EXPECT_NE(cmp(1.0, kNaN), "");
}

TEST(Compare, InfinitiesMatchOnlyTheSameInfinity) {
  EXPECT_EQ(cmp(kInf, kInf), "");
  EXPECT_EQ(cmp(-kInf, -kInf), "");
  EXPECT_EQ(cmp(-kInf, kInf), "element 0 is -inf, expected inf");
  EXPECT_EQ(cmp(kInf, -kInf), "element 0 is inf, expected -inf");
  EXPECT_NE(cmp(3.0, kInf), "");
  EXPECT_NE(cmp(3.0, -kInf), "");
  EXPECT_NE(cmp(kInf, 3.0), "");
  EXPECT_NE(cmp(kNaN, kInf), "");
  // Even with tolerances that are themselves infinite.
  EXPECT_NE(cmp(3.0, kInf, kInf, kInf), "");
  EXPECT_NE(cmp(-kInf, kInf, 0, kInf), "");
}

TEST(Compare, IntegersMatchExactly) {
  EXPECT_EQ(compare_tensors(tensor_i(DType::I32, {2}, {1, 2}), tensor_i(DType::I32, {2}, {1, 2}), 1, 1), "");
  EXPECT_EQ(compare_tensors(tensor_i(DType::I32, {2}, {1, 3}), tensor_i(DType::I32, {2}, {1, 2}), 1, 1),
            "element 1 is 3, expected 2");
}

TEST(Compare, TypesMustBeEqual) {
  EXPECT_EQ(compare_tensors(tensor_f(DType::F32, {1}, {1}), tensor_f(DType::F64, {1}, {1}), 0, 0),
            "type f32[1], expected f64[1]");
}

TEST(Compare, RelativeL2OfFloatsIntegersAndNonFiniteValues) {
  ir::Tensor a({ir::DType::F32, {3}}), b({ir::DType::F32, {3}});
  for (int i = 0; i < 3; ++i) a.set_f64(i, i + 1), b.set_f64(i, i + 1);
  EXPECT_EQ(relative_l2(a, b, nullptr), 0);
  b.set_f64(2, 3.5);
  EXPECT_NEAR(relative_l2(a, b, nullptr), 0.5 / std::sqrt(1 + 4 + 12.25), 1e-12);
  a.set_f64(1, NAN), b.set_f64(1, NAN), b.set_f64(2, 3);
  EXPECT_EQ(relative_l2(a, b, nullptr), 0);  // NaN where NaN is expected
  std::string why;
  b.set_f64(1, 2);
  EXPECT_EQ(relative_l2(a, b, &why), INFINITY);
  EXPECT_NE(why.find("element 1"), std::string::npos) << why;
  ir::Tensor i32({ir::DType::I32, {3}}), other({ir::DType::I32, {3}});
  EXPECT_EQ(relative_l2(i32, other, nullptr), 0);
  other.set_i64(0, 1);
  EXPECT_EQ(relative_l2(i32, other, &why), 1);
  EXPECT_EQ(relative_l2(a, i32, &why), INFINITY);
  EXPECT_NE(why.find("type f32[3], expected i32[3]"), std::string::npos) << why;
}

}  // namespace
}  // namespace orchid::interp::test
