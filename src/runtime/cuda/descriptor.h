// A CUDA module's kernel descriptor (include/orchid/cuda_abi.h) against a plan: every cuda
// step launches its kernel as the kernel was generated for, so that an edited plan.json cannot
// launch one on the wrong number of arguments, blocks or threads, with less shared memory or
// scratch than it uses, or on a buffer of another size than it reads or writes. Pure: the
// CUDA model passes the descriptor it read from the module.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/plan.h"

namespace orchid::runtime::cuda {

// UserError naming `source`, the step and what differs; or where the descriptor is malformed.
void check_cuda_steps(const std::vector<int64_t>& descriptor, const Plan& plan, const std::string& source);

}  // namespace orchid::runtime::cuda
