// A kernel library: one shared object of generated kernels (kernel_abi.h), opened with dlopen.
//
// Libraries are opened RTLD_NOW (a missing symbol fails at load, not mid-run), RTLD_LOCAL
// (kernels of two libraries never bind to each other) and RTLD_NODELETE: a library built with
// -fopenmp must stay mapped while libgomp's threads live (TOOLCHAIN.md), so closing one only
// drops a reference and never unmaps code.
#pragma once

#include <cstdint>
#include <string>

#include "orchid/kernel_abi.h"
#include "runtime/plan.h"

namespace orchid::runtime {

class KernelLibrary {
 public:
  // Opens `path`, finds ORCHID_KERNEL_TABLE_SYMBOL and checks every descriptor (ABI version,
  // a function, non-negative counts). Errors are UserErrors naming the file.
  static KernelLibrary open(const std::string& path);

  KernelLibrary(KernelLibrary&& other) noexcept;
  KernelLibrary& operator=(KernelLibrary&& other) noexcept;
  KernelLibrary(const KernelLibrary&) = delete;
  KernelLibrary& operator=(const KernelLibrary&) = delete;
  ~KernelLibrary();

  const std::string& path() const { return path_; }
  int64_t size() const { return count_; }
  const orchid_kernel_desc& kernel(int64_t index) const;  // 0 <= index < size()

 private:
  KernelLibrary() = default;

  std::string path_;
  void* handle_ = nullptr;
  const orchid_kernel_desc* table_ = nullptr;
  int64_t count_ = 0;
};

// The descriptor a generated step calls, after checking that the plan agrees with it: the
// kernel index is in the table, and the argument count, task count, scratch size and the
// byte size of every argument's buffer match. `step_index` and `source` name the step in
// messages, along with the library's file.
const orchid_kernel_desc& kernel_for_step(const KernelLibrary& lib, const Plan& plan, const PlanStep& step,
                                          size_t step_index, const std::string& source);

}  // namespace orchid::runtime
