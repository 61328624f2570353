// weights.bin: aligned layout, round trip, and the errors of a wrong or corrupted file.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "ir/tensor.h"
#include "runtime/checksum.h"
#include "runtime/weights.h"
#include "support/random.h"
#include "testlib/errors.h"
#include "testlib/temp_dir.h"
#include "testlib/tensors.h"
#include "artifact_util.h"

namespace orchid::runtime {
namespace {

using testlib::error_of;
using testutil::contains;

std::vector<ir::Tensor> some_tensors() {
  Rng rng(7);
  return {testlib::random_tensor({ir::DType::F32, {3, 5}}, rng),
          testlib::random_tensor({ir::DType::I64, {}}, rng, -100, 100),
          testlib::random_tensor({ir::DType::Bool, {0}}, rng),
          testlib::random_tensor({ir::DType::U8, {129}}, rng, 0, 255),
          testlib::random_tensor({ir::DType::F16, {2, 2}}, rng)};
}

TEST(RuntimeWeights, LayoutIsAlignedAndPacked) {
  std::vector<ir::Tensor> t = some_tensors();
  WeightsLayout l = layout_weights(t);
  EXPECT_EQ(l.offsets, (std::vector<int64_t>{0, 64, 128, 128, 320}));
  EXPECT_EQ(l.bytes, 328);
  EXPECT_EQ(layout_weights({}).bytes, 0);
}

TEST(RuntimeWeights, RoundTrip) {
  testlib::TempDir dir;
  std::vector<ir::Tensor> t = some_tensors();
  std::string path = dir.file("weights.bin");
  WeightsLayout l = write_weights(path, t);
  EXPECT_EQ(static_cast<int64_t>(std::filesystem::file_size(path)), l.bytes);
  EXPECT_EQ(checksum_file(path), l.checksum);
  AlignedBuffer b = read_weights(path, l.bytes, l.checksum);
  ASSERT_EQ(b.size(), l.bytes);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % 64, 0u);
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i].bytes().empty()) continue;
    EXPECT_EQ(std::memcmp(b.data() + l.offsets[i], t[i].data(), t[i].bytes().size()), 0) << i;
  }
  // The padding is zero.
  for (int64_t k = 60; k < 64; ++k) EXPECT_EQ(b.data()[k], std::byte{0});
}

TEST(RuntimeWeights, EmptyFile) {
  testlib::TempDir dir;
  WeightsLayout l = write_weights(dir.file("w.bin"), {});
  AlignedBuffer b = read_weights(dir.file("w.bin"), 0, l.checksum);
  EXPECT_EQ(b.size(), 0);
  EXPECT_NE(b.data(), nullptr);
}

TEST(RuntimeWeights, WrongSizeIsNamed) {
  testlib::TempDir dir;
  WeightsLayout l = write_weights(dir.file("weights.bin"), some_tensors());
  EXPECT_TRUE(contains(error_of([&] { read_weights(dir.file("weights.bin"), 400, l.checksum); }),
                       "weights.bin: 328 bytes, but the plan says 400"));
}

TEST(RuntimeWeights, CorruptionIsDetected) {
  testlib::TempDir dir;
  WeightsLayout l = write_weights(dir.file("weights.bin"), some_tensors());
  testutil::corrupt_file(dir.file("weights.bin"), 100);
  std::string msg = error_of([&] { read_weights(dir.file("weights.bin"), l.bytes, l.checksum); });
  EXPECT_TRUE(contains(msg, "weights.bin: checksum "));
  EXPECT_TRUE(contains(msg, "does not match the plan's " + checksum_hex(l.checksum) +
                                ": the file is corrupted"));
}

TEST(RuntimeWeights, MissingFile) {
  EXPECT_TRUE(contains(error_of([] { read_weights("/nonexistent/weights.bin", 0, 0); }),
                       "/nonexistent/weights.bin: cannot open"));
}

}  // namespace
}  // namespace orchid::runtime
