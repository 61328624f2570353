#include "ir/npy.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "support/error.h"
#include "testlib/errors.h"

namespace orchid::ir {
namespace {

// Fixtures written by numpy 1.24 (tests/data/npy).
std::string fixture(const std::string& name) { return "tests/data/npy/" + name; }

std::string file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(Npy, ReadsNumpyFloat32) {
  Tensor t = read_npy(fixture("f32_2x3.npy"));
  EXPECT_EQ(type_str(t.type()), "f32[2,3]");
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t.get_f64(i), i / 4.0);
}

TEST(Npy, ReadsScalarBoolHalfAndEmpty) {
  Tensor s = read_npy(fixture("i64_scalar.npy"));
  EXPECT_EQ(type_str(s.type()), "i64[]");
  EXPECT_EQ(s.get_i64(0), -7);
  Tensor b = read_npy(fixture("bool_4.npy"));
  EXPECT_EQ(type_str(b.type()), "bool[4]");
  EXPECT_EQ(b.get_i64(0), 1);
  EXPECT_EQ(b.get_i64(1), 0);
  Tensor h = read_npy(fixture("f16_3.npy"));
  EXPECT_EQ(h.get_f64(0), 1.5);
  EXPECT_EQ(h.get_f64(1), -0.0009765625);
  EXPECT_EQ(h.get_f64(2), 65504.0);
  Tensor e = read_npy(fixture("i32_empty.npy"));
  EXPECT_EQ(type_str(e.type()), "i32[0,3]");
}

TEST(Npy, SwapsBigEndian) {
  Tensor t = read_npy(fixture("u16_big_endian.npy"));
  EXPECT_EQ(type_str(t.type()), "u16[3]");
  EXPECT_EQ(t.get_i64(2), 255);
}

TEST(Npy, WritesExactlyWhatNumpyWrites) {
  for (const char* name : {"f32_2x3.npy", "i64_scalar.npy", "bool_4.npy", "f16_3.npy"}) {
    std::string bytes = file_bytes(fixture(name));
    EXPECT_EQ(serialize_npy(parse_npy(bytes, name)), bytes) << name;
  }
}

TEST(Npy, RoundTripsEveryDtype) {
  for (int d = 0; d < kNumDTypes; ++d) {
    auto dtype = static_cast<DType>(d);
    Tensor t(TensorType{dtype, {3, 1, 2}});
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (is_float(dtype)) t.set_f64(i, 0.25 * double(i) - 0.5);
      else t.set_i64(i, is_bool(dtype) ? i % 2 : i * 3 - 2);
    }
    Tensor back = parse_npy(serialize_npy(t), "mem");
    if (dtype == DType::BF16) {  // widened to f32
      ASSERT_EQ(back.dtype(), DType::F32);
      for (int64_t i = 0; i < t.numel(); ++i) EXPECT_EQ(back.get_f64(i), t.get_f64(i));
    } else {
      EXPECT_EQ(back, t) << dtype_name(dtype);
    }
  }
}


TEST(Npy, ErrorsNameThePathAndTheProblem) {
  EXPECT_EQ(testlib::error_of([] { read_npy("/nonexistent/x.npy"); }), "/nonexistent/x.npy: cannot open");
  EXPECT_EQ(testlib::error_of([] { parse_npy("hello world, not numpy", "a.npy"); }),
            "a.npy: not a .npy file (bad magic)");
  EXPECT_EQ(testlib::error_of([] { read_npy(fixture("f64_fortran.npy")); }),
            fixture("f64_fortran.npy") + ": Fortran-order npy arrays are not supported");
  std::string bytes = file_bytes(fixture("f32_2x3.npy"));
  EXPECT_EQ(testlib::error_of([&] { parse_npy(bytes.substr(0, bytes.size() - 3), "t.npy"); }),
            "t.npy: npy data has 21 bytes, f32[2,3] needs 24");
  std::string odd = bytes;
  odd.replace(odd.find("<f4"), 3, "<c8");
  EXPECT_NE(testlib::error_of([&] { parse_npy(odd, "c.npy"); }).find("c.npy: unsupported npy dtype '<c8'"),
            std::string::npos);
  std::string huge = bytes;  // each dim allowed, their product overflows; padding kept
  std::string dims = "(549755813888, 549755813888)";
  huge.replace(huge.find("(2, 3)"), 6, dims);
  huge.erase(huge.find("\n") - (dims.size() - 6), dims.size() - 6);
  EXPECT_EQ(testlib::error_of([&] { parse_npy(huge, "b.npy"); }),
            "b.npy: npy shape [549755813888,549755813888] is too large");
  EXPECT_EQ(testlib::error_of([&] { parse_npy(bytes.substr(0, 40), "h.npy"); }),
            "h.npy: truncated npy header");
}

}  // namespace
}  // namespace orchid::ir
