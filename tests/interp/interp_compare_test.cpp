// compare_tensors, the check every stage is held to against the interpreter: tolerances,
// NaN and infinities.
#include <limits>

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

}  // namespace
}  // namespace orchid::interp::test
