// Model::load refuses broken artifacts with a message naming the file and what is wrong:
// corrupted files, a missing ISA, kernel libraries that are not what the plan says, library
// steps whose graph does not fit.
#include <gtest/gtest.h>

#include <functional>

#include "runtime/checksum.h"
#include "runtime/kernel_library.h"
#include "runtime/model.h"
#include "testlib/errors.h"
#include "testlib/temp_dir.h"
#include "test_kernels.h"

namespace orchid::runtime {
namespace {

using testlib::error_of;
using namespace testutil;

std::string load_error(const testlib::TempDir& dir, Plan plan) {
  write_sample_artifact(std::move(plan), dir.str(), compiled_kernels());
  return error_of([&] { Model::load(dir.str()); });
}

TEST(RuntimeModelLoad, LoadsTheSample) {
  testlib::TempDir dir;
  EXPECT_EQ(load_error(dir, sample_plan()), "(no error)");
  auto model = Model::load(dir.str());
  EXPECT_EQ(model->plan().graph_name, "sample");
  EXPECT_NE(model->kernel(0), nullptr);
  EXPECT_EQ(model->library_step(0), nullptr);
  EXPECT_EQ(model->kernel(2), nullptr);
  EXPECT_NE(model->library_step(2), nullptr);
  EXPECT_EQ(model->max_scratch_bytes(), 32);
}

TEST(RuntimeModelLoad, CorruptedWeights) {
  testlib::TempDir dir;
  write_sample_artifact(sample_plan(), dir.str(), compiled_kernels());
  corrupt_file(dir.file("weights.bin"), 17);
  std::string msg = error_of([&] { Model::load(dir.str()); });
  EXPECT_TRUE(contains(msg, "/weights.bin: checksum ")) << msg;
  EXPECT_TRUE(contains(msg, ": the file is corrupted"));
}

TEST(RuntimeModelLoad, CorruptedKernelLibrary) {
  testlib::TempDir dir;
  write_sample_artifact(sample_plan(), dir.str(), compiled_kernels());
  corrupt_file(dir.file("kernels.so"), 1000);
  std::string msg = error_of([&] { Model::load(dir.str()); });
  EXPECT_TRUE(contains(msg, "/kernels.so: checksum "));
  EXPECT_TRUE(contains(msg, ": the file is corrupted"));
}

// Each file of the artifact cut short: refused with a message naming it.
TEST(RuntimeModelLoad, TruncatedFiles) {
  for (std::string file : {"plan.json", "weights.bin", "kernels.so"}) {
    testlib::TempDir dir;
    write_sample_artifact(sample_plan(), dir.str(), compiled_kernels());
    std::filesystem::resize_file(dir.file(file), std::filesystem::file_size(dir.file(file)) / 2);
    std::string msg = error_of([&] { Model::load(dir.str()); });
    EXPECT_TRUE(contains(msg, dir.file(file) + ": ")) << file << ": " << msg;
    EXPECT_FALSE(contains(msg, "(no error)")) << file;
  }
}

TEST(RuntimeModelLoad, MissingFiles) {
  testlib::TempDir dir;
  EXPECT_TRUE(contains(error_of([&] { Model::load(dir.str()); }), "/plan.json: cannot open"));
  write_sample_artifact(sample_plan(), dir.str(), compiled_kernels());
  std::filesystem::remove(dir.file("weights.bin"));
  EXPECT_TRUE(contains(error_of([&] { Model::load(dir.str()); }), "/weights.bin: cannot open"));
}

TEST(RuntimeModelLoad, MissingIsaIsNamed) {
  testlib::TempDir dir;
  Plan p = sample_plan();
  p.isa = {"avx9000", "sse2", "neon2000"};
  p.target = "imaginary-cpu";
  EXPECT_TRUE(contains(load_error(dir, p),
                       "/plan.json: this machine lacks ISA flags the kernels need: avx9000, "
                       "neon2000 (the artifact was built for target 'imaginary-cpu')"));
}

TEST(RuntimeModelLoad, MissingIsaList) {
  EXPECT_EQ(missing_isa({"avx2", "fma", "x"}, {"avx", "avx2", "fma"}), std::vector<std::string>{"x"});
  EXPECT_TRUE(missing_isa({}, {}).empty());
}

// Each case in a fresh directory: a loaded library stays mapped (RTLD_NODELETE), so its
// file is never rewritten.
TEST(RuntimeModelLoad, KernelDescriptorMustMatchThePlan) {
  auto check = [](const std::function<void(Plan&)>& edit, const std::string& want) {
    testlib::TempDir dir;
    Plan p = sample_plan();
    edit(p);
    EXPECT_TRUE(contains(load_error(dir, p), "/plan.json: steps[1] ('reverse8'): " + dir.str() +
                                                 "/kernels.so: " + want));
  };
  check([](Plan& p) { p.steps[1].tasks = 17; }, "kernel 1 has 8 tasks, the plan says 17");
  check([](Plan& p) { p.steps[1].scratch_bytes = 64; }, "kernel 1 needs 32 scratch bytes, the plan says 64");
  check([](Plan& p) { p.steps[1].kernel = 7; }, "kernel 7 is not in the library (it has 3 kernels)");
  check([](Plan& p) { p.steps[1].kernel = 0; }, "kernel 0 takes 3 args, the plan passes 2");
  // A buffer smaller than the kernel writes: refused, not written past.
  check([](Plan& p) { p.buffers[static_cast<size_t>(p.steps[1].args[1])].type.shape = {32}; },
        "kernel 1 takes 256 bytes as argument 1, buffer ");
}

TEST(RuntimeModelLoad, NotAKernelLibrary) {
  testlib::TempDir dir;
  ASSERT_TRUE(compile_kernel_library("extern \"C\" int something = 1;\n", dir.file("plain.so")));
  EXPECT_TRUE(contains(error_of([&] { KernelLibrary::open(dir.file("plain.so")); }),
                       "/plain.so: not an Orchid kernel library (no symbol orchid_kernel_table)"));
  EXPECT_TRUE(contains(error_of([&] { KernelLibrary::open(dir.file("none.so")); }),
                       "/none.so: cannot load the kernel library ("));
  std::string text = dir.file("text.so", "not an ELF file");
  EXPECT_TRUE(contains(error_of([&] { KernelLibrary::open(text); }), "cannot load the kernel library"));
}

TEST(RuntimeModelLoad, KernelAbiVersionIsChecked) {
  testlib::TempDir dir;
  ASSERT_TRUE(compile_kernel_library(R"(
#include "orchid/kernel_abi.h"
static void k(const orchid_args*, int64_t, int64_t, void*) {}
static const orchid_kernel_desc kTable[] = {{ORCHID_KERNEL_ABI_VERSION + 1, 1, 1, 0, k}};
extern "C" const orchid_kernel_desc* orchid_kernel_table(int64_t* count) { *count = 1; return kTable; }
)",
                                     dir.file("future.so")));
  EXPECT_TRUE(contains(error_of([&] { KernelLibrary::open(dir.file("future.so")); }),
                       "/future.so: kernel 0 was built for kernel ABI version 4, this runtime "
                       "implements version 3"));
}

TEST(RuntimeModelLoad, LibraryStepGraphMustFitItsBuffers) {
  auto check = [](const std::function<void(Plan&)>& edit, const std::string& want) {
    testlib::TempDir dir;
    Plan p = sample_plan();
    edit(p);
    EXPECT_TRUE(contains(load_error(dir, p), "/plan.json: steps[2] ('cumsum')" + want));
  };
  check(
      [](Plan& p) {
        std::string ir = kCumsumIr;
        ir.replace(ir.find("f32[64]"), 7, "f32[63]");
        p.steps[2].ir = ir.replace(ir.find("%z : f32[64]"), 12, "%z : f32[63]");
      },
      ": ir input 0 is f32[63], buffer 3 ('y') is f32[64]");
  check([](Plan& p) { p.steps[2].ir = "graph @g { nonsense }"; }, ".ir:");
  check([](Plan& p) { p.steps[2].impl = StepImpl::OneDnn; }, ": ");  // oneDNN has no cumsum
}

}  // namespace
}  // namespace orchid::runtime
