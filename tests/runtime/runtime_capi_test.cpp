// The C API (include/orchid/runtime.h) and the C embedding example (examples/embed/embed.c)
// on the hand-built sample artifact.
#include "orchid/runtime.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "testlib/subprocess.h"
#include "testlib/temp_dir.h"
#include "test_kernels.h"

namespace orchid::runtime {
namespace {

using namespace testutil;

struct ModelDeleter {
  void operator()(orchid_model* m) const { orchid_model_free(m); }
};
struct SessionDeleter {
  void operator()(orchid_session* s) const { orchid_session_free(s); }
};

TEST(RuntimeCApi, DescribesAndRunsAModel) {
  testlib::TempDir dir;
  write_sample_artifact(sample_plan(), dir.str(), compiled_kernels());
  char err[512] = "junk";
  orchid_model* raw = nullptr;
  ASSERT_EQ(orchid_model_load(dir.str().c_str(), &raw, err, sizeof err), 0) << err;
  EXPECT_STREQ(err, "");
  std::unique_ptr<orchid_model, ModelDeleter> model(raw);

  ASSERT_EQ(orchid_model_num_inputs(raw), 1u);
  ASSERT_EQ(orchid_model_num_outputs(raw), 5u);
  EXPECT_STREQ(orchid_model_input_name(raw, 0), "x");
  EXPECT_STREQ(orchid_model_input_dtype(raw, 0), "f32");
  EXPECT_STREQ(orchid_model_output_name(raw, 1), "t_view");
  EXPECT_EQ(orchid_model_output_rank(raw, 1), 2);
  int64_t dims[2] = {0, 0};
  EXPECT_EQ(orchid_model_output_dims(raw, 1, dims), 0);
  EXPECT_EQ(dims[0], 8);
  EXPECT_EQ(dims[1], 8);
  EXPECT_EQ(orchid_model_input_bytes(raw, 0), 256);
  EXPECT_EQ(orchid_model_output_bytes(raw, 4), 256);
  // Out of range.
  EXPECT_EQ(orchid_model_input_name(raw, 1), nullptr);
  EXPECT_EQ(orchid_model_output_dtype(raw, 5), nullptr);
  EXPECT_EQ(orchid_model_input_rank(raw, 3), -1);
  EXPECT_EQ(orchid_model_output_dims(raw, 9, dims), -1);
  EXPECT_EQ(orchid_model_output_bytes(raw, 9), -1);

  orchid_session* rs = nullptr;
  ASSERT_EQ(orchid_session_create_with_threads(raw, 2, &rs, err, sizeof err), 0) << err;
  std::unique_ptr<orchid_session, SessionDeleter> session(rs);
  model.reset();  // the session keeps what it needs
  std::vector<float> x = sample_x(), out(5 * 64);
  const void* inputs[] = {x.data()};
  void* outputs[] = {out.data(), out.data() + 64, out.data() + 128, out.data() + 192, out.data() + 256};
  ASSERT_EQ(orchid_session_run(rs, inputs, outputs, err, sizeof err), 0) << err;
  SampleResults want = sample_results(x);
  EXPECT_EQ(std::vector<float>(out.begin(), out.begin() + 64), want.y);
  EXPECT_EQ(std::vector<float>(out.begin() + 256, out.end()), want.z);
}

TEST(RuntimeCApi, ErrorsAreMessagesNotExceptions) {
  char err[64];
  orchid_model* model = reinterpret_cast<orchid_model*>(1);
  EXPECT_NE(orchid_model_load("/nonexistent/artifact", &model, err, sizeof err), 0);
  EXPECT_EQ(model, nullptr);
  EXPECT_EQ(std::strlen(err), sizeof err - 1);  // truncated, terminated
  EXPECT_EQ(std::string(err).rfind("/nonexistent/artifact/plan.json: cannot open", 0), 0u) << err;
  EXPECT_NE(orchid_model_load(nullptr, &model, nullptr, 0), 0);  // no message buffer: fine

  testlib::TempDir dir;
  write_sample_artifact(sample_plan(), dir.str(), compiled_kernels());
  char long_err[512];
  ASSERT_EQ(orchid_model_load(dir.str().c_str(), &model, long_err, sizeof long_err), 0);
  orchid_session* session = nullptr;
  ASSERT_EQ(orchid_session_create(model, &session, long_err, sizeof long_err), 0);
  EXPECT_NE(orchid_session_run(session, nullptr, nullptr, long_err, sizeof long_err), 0);
  EXPECT_STREQ(long_err, "orchid_session_run: null input or output array");
  std::vector<float> x(64), out(64 * 5);
  const void* inputs[] = {x.data()};
  void* outputs[] = {out.data(), out.data(), nullptr, out.data(), out.data()};
  EXPECT_NE(orchid_session_run(session, inputs, outputs, long_err, sizeof long_err), 0);
  EXPECT_STREQ(long_err, "output 2 ('x') is a null pointer");
  orchid_session_free(session);
  orchid_model_free(model);
  orchid_session_free(nullptr);
  orchid_model_free(nullptr);
}

std::string format_floats(const std::vector<float>& v, size_t n) {
  std::string s;
  char buf[64];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, " %g", static_cast<double>(v[i]));
    s += buf;
  }
  return s;
}

TEST(RuntimeCApi, EmbedExample) {
  testlib::TempDir dir;
  write_sample_artifact(sample_plan(), dir.str(), compiled_kernels());
  testlib::ProcessResult r = testlib::run_process({ORCHID_EMBED_EXAMPLE, dir.str()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The example's input pattern: 0.25 * (i % 7 - 3).
  std::vector<float> x(64);
  for (int i = 0; i < 64; ++i) x[static_cast<size_t>(i)] = static_cast<float>(0.25 * (i % 7 - 3));
  SampleResults want = sample_results(x);
  EXPECT_TRUE(contains(r.output, "output 0 'y': f32[64]:" + format_floats(want.y, 8) + " ...\n"));
  EXPECT_TRUE(contains(r.output, "output 1 't_view': f32[8,8]:" + format_floats(want.t, 8) + " ...\n"));
  EXPECT_TRUE(contains(r.output, "output 4 'z': f32[64]:" + format_floats(want.z, 8) + " ...\n"));

  testlib::ProcessResult bad = testlib::run_process({ORCHID_EMBED_EXAMPLE, dir.file("missing")});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_TRUE(contains(bad.output, "error: " + dir.file("missing") + "/plan.json: cannot open"));
}

}  // namespace
}  // namespace orchid::runtime
