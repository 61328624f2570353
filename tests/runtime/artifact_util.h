// Artifacts built by hand for runtime tests: kernel libraries compiled from C++ sources that
// implement kernel_abi.h, a plan written as a value, and weights.bin. ORCHID_CXX and
// ORCHID_SOURCE_DIR come from tests/CMakeLists.txt.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include "ir/tensor.h"
#include "runtime/checksum.h"
#include "runtime/plan.h"
#include "runtime/weights.h"
#include "testlib/subprocess.h"

namespace orchid::runtime::testutil {

// EXPECT_TRUE(contains(message, part)) prints the message when it fails.
inline ::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << part << "' is not in:\n" << text;
}

// Compiles `source` into the shared object `so_path` as Orchid compiles generated kernels;
// fails the calling test (and returns false) when the compiler does.
inline bool compile_kernel_library(const std::string& source, const std::string& so_path) {
  std::string src = so_path + ".cpp";
  std::ofstream(src) << source;
  testlib::ProcessResult r =
      testlib::run_process({ORCHID_CXX, "-O3", "-march=native", "-fPIC", "-shared",
                            "-I" ORCHID_SOURCE_DIR "/include", src, "-o", so_path});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.exit_code == 0;
}

// Writes weights.bin from `constants` (setting the offsets of the constant buffers listed in
// `constant_ids`, one per tensor), fills in the checksums of the libraries already in `dir`,
// and writes plan.json.
inline void write_artifact(Plan& plan, const std::string& dir, std::span<const ir::Tensor> constants,
                           const std::vector<int32_t>& constant_ids) {
  WeightsLayout w = write_weights(dir + "/" + plan.weights.file, constants);
  for (size_t i = 0; i < constant_ids.size(); ++i)
    plan.buffers[static_cast<size_t>(constant_ids[i])].weights_offset = w.offsets[i];
  plan.weights.bytes = w.bytes;
  plan.weights.checksum = w.checksum;
  for (PlanLibrary& l : plan.libraries) l.checksum = checksum_file(dir + "/" + l.file);
  write_plan(plan, dir);
}

// Flips one bit of byte `offset` of a file.
inline void corrupt_file(const std::string& path, int64_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(offset);
  char c = 0;
  f.get(c);
  f.seekp(offset);
  f.put(static_cast<char>(c ^ 0x10));
}

inline PlanBuffer buffer(std::string name, ir::TensorType type, BufferKind kind, int32_t alias = -1) {
  PlanBuffer b;
  b.name = std::move(name);
  b.type = std::move(type);
  b.kind = kind;
  b.alias = alias;
  if (kind == BufferKind::Constant) b.weights_offset = 0;
  return b;
}

inline PlanStep generated_step(std::string name, std::vector<int32_t> args, int32_t num_inputs,
                               int32_t library, int32_t kernel, int64_t tasks,
                               int64_t scratch_bytes = 0) {
  PlanStep s;
  s.name = std::move(name);
  s.impl = StepImpl::Generated;
  s.args = std::move(args);
  s.num_inputs = num_inputs;
  s.library = library;
  s.kernel = kernel;
  s.tasks = tasks;
  s.scratch_bytes = scratch_bytes;
  return s;
}

inline PlanStep library_step(std::string name, StepImpl impl, std::vector<int32_t> args,
                             int32_t num_inputs, std::string ir_text) {
  PlanStep s;
  s.name = std::move(name);
  s.impl = impl;
  s.args = std::move(args);
  s.num_inputs = num_inputs;
  s.ir = std::move(ir_text);
  return s;
}

}  // namespace orchid::runtime::testutil
