// The choice among a library call's timed algorithms (runtime/cuda/library_call.h,
// fastest_of), on every machine: the library's own first choice stays unless another takes
// less than kFasterBy of its time; algorithms that did not run are passed over; none ran, none
// chosen. CudaModel uses the same rule between the heuristic's and the timed algorithms of a
// whole model.
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "runtime/cuda/library_call.h"

namespace orchid::runtime::cuda {
namespace {

using Times = std::vector<std::optional<double>>;

TEST(LibraryChoice, TheFirstStaysUnlessAnotherIsClearlyFaster) {
  EXPECT_EQ(fastest_of({1.0, 0.99, 0.98}), 0);  // within 3 %: noise
  EXPECT_EQ(fastest_of({1.0, 0.96}), 1);
  EXPECT_EQ(fastest_of({1.0, 0.96, 0.95}), 2);  // after the first, the plain fastest
  EXPECT_EQ(fastest_of({1.0, 0.96, 0.959}), 2);
  EXPECT_EQ(fastest_of({1.0, 1.5, 0.5}), 2);
  EXPECT_EQ(fastest_of({2.0}), 0);
}

TEST(LibraryChoice, AlgorithmsThatDidNotRunArePassedOver) {
  EXPECT_EQ(fastest_of(Times{std::nullopt, 2.0, 1.0}), 2);
  EXPECT_EQ(fastest_of(Times{std::nullopt, 1.0, 0.99}), 2);  // no first: no margin for it
  EXPECT_EQ(fastest_of(Times{1.0, std::nullopt, 0.5}), 2);
  EXPECT_EQ(fastest_of(Times{1.0, std::nullopt}), 0);
  EXPECT_EQ(fastest_of(Times{std::nullopt, std::nullopt}), -1);
  EXPECT_EQ(fastest_of(Times{}), -1);
}

}  // namespace
}  // namespace orchid::runtime::cuda
