// The compile options the driver tests share: an ONNX file into an output directory, objects
// cached across runs (content-addressed, so sharing the cache is safe), two cores, no timing
// for the report.
#pragma once

#include <filesystem>
#include <string>

#include "driver/pipeline.h"

namespace orchid::driver {

inline CompileOptions test_compile_options(const std::string& model, const std::string& out) {
  CompileOptions o;
  o.model_path = model;
  o.out_dir = out;
  o.build.compiler.cache_dir = std::filesystem::temp_directory_path() / "orchid-driver-test-objects";
  o.build.cores = 2;
  o.measure_seconds = 0;
  return o;
}

}  // namespace orchid::driver
