// Options the μGraph driver tests share: builds into the driver tests' object cache on two
// cores, and LoRA's small search.
#pragma once

#include <filesystem>

#include "driver/plan_builder.h"
#include "superopt/generator.h"

namespace orchid::driver {

inline BuildOptions ugraph_build_options() {
  BuildOptions o;
  o.compiler.cache_dir = std::filesystem::temp_directory_path() / "orchid-driver-test-objects";
  o.cores = 2;
  return o;
}

// LoRA's search: one kernel operator of two block operators, a grid of 2, a loop of 2.
inline superopt::SearchOptions lora_search_options() {
  superopt::SearchOptions o;
  o.max_kernel_ops = 1;
  o.max_block_ops = 2;
  o.grids = {{2}};
  o.loops = {2};
  return o;
}

}  // namespace orchid::driver
