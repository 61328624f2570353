// DriverHandle (runtime/cuda/device.h): the one owner of a driver object releases it exactly
// once, whatever moves happen; nothing here needs a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "runtime/cuda/device.h"

namespace orchid::runtime::cuda {
namespace {

std::vector<void*> released;

void record(const DriverApi*, void* h) { released.push_back(h); }

void* handle(intptr_t v) { return reinterpret_cast<void*>(v); }

TEST(DriverHandle, ReleasesOnceAcrossMoves) {
  released.clear();
  {
    DriverHandle<void*> a(nullptr, handle(1), record);
    DriverHandle<void*> b(std::move(a));
    EXPECT_EQ(a.get(), nullptr);
    EXPECT_EQ(b.get(), handle(1));
    DriverHandle<void*> c(nullptr, handle(2), record);
    c = std::move(b);  // c's old object goes to b, released when b is destroyed
    EXPECT_EQ(c.get(), handle(1));
    EXPECT_TRUE(released.empty());
  }
  std::vector<void*> want = {handle(1), handle(2)};
  std::sort(released.begin(), released.end());
  EXPECT_EQ(released, want);
}

TEST(DriverHandle, AnEmptyHandleReleasesNothing) {
  released.clear();
  { DriverHandle<void*> none; }
  { Stream s; }
  EXPECT_TRUE(released.empty());
}

}  // namespace
}  // namespace orchid::runtime::cuda
