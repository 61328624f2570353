// Human-readable summaries of tensors for the CLI: type, statistics and leading elements.
#pragma once

#include <string>

#include "ir/tensor.h"

namespace orchid::cli {

// "f32[2,3]  min -0.5  max 1.25  mean 0.1  [0.1, 0.2, ...]" (NaN/inf counted when present).
std::string summarize(const ir::Tensor& t);

// A file name for a value name: characters outside [A-Za-z0-9_.-] become '_', and a name
// that would be hidden or empty is prefixed. Model names never reach the filesystem as is.
std::string safe_file_stem(const std::string& name);

}  // namespace orchid::cli
