#include "runtime/kernel_library.h"

#include <dlfcn.h>

#include <utility>

#include "support/error.h"

namespace orchid::runtime {

namespace {

void check_desc(const orchid_kernel_desc& d, int64_t i, const std::string& path) {
  ORCHID_USER_CHECK(d.abi_version == ORCHID_KERNEL_ABI_VERSION)
      << path << ": kernel " << i << " was built for kernel ABI version " << d.abi_version
      << ", this runtime implements version " << ORCHID_KERNEL_ABI_VERSION;
  ORCHID_USER_CHECK(d.fn != nullptr) << path << ": kernel " << i << " has no function";
  ORCHID_USER_CHECK(d.arg_bytes != nullptr) << path << ": kernel " << i << " has no argument sizes";
  ORCHID_USER_CHECK(d.num_args >= 1 && d.task_count >= 0 && d.scratch_bytes >= 0)
      << path << ": kernel " << i << " has a malformed descriptor (num_args " << d.num_args
      << ", task_count " << d.task_count << ", scratch_bytes " << d.scratch_bytes << ")";
}

}  // namespace

KernelLibrary KernelLibrary::open(const std::string& path) {
  KernelLibrary lib;
  lib.path_ = path;
  // A name without '/' would be searched for on the library path: always name the file.
  std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  lib.handle_ = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (lib.handle_ == nullptr) {
    const char* why = dlerror();
    ORCHID_USER_ERROR() << path << ": cannot load the kernel library (" << (why ? why : "?")
                        << ")";
  }
  dlerror();
  void* sym = dlsym(lib.handle_, ORCHID_KERNEL_TABLE_SYMBOL);
  ORCHID_USER_CHECK(sym != nullptr)
      << path << ": not an Orchid kernel library (no symbol " << ORCHID_KERNEL_TABLE_SYMBOL << ")";
  auto table_fn = reinterpret_cast<orchid_kernel_table_fn>(sym);
  int64_t count = -1;
  lib.table_ = table_fn(&count);
  ORCHID_USER_CHECK(count >= 0 && (count == 0 || lib.table_ != nullptr))
      << path << ": the kernel table is malformed (count " << count << ")";
  lib.count_ = count;
  for (int64_t i = 0; i < count; ++i) check_desc(lib.table_[i], i, path);
  return lib;
}

KernelLibrary::KernelLibrary(KernelLibrary&& other) noexcept
    : path_(std::move(other.path_)),
      handle_(std::exchange(other.handle_, nullptr)),
      table_(std::exchange(other.table_, nullptr)),
      count_(std::exchange(other.count_, 0)) {}

KernelLibrary& KernelLibrary::operator=(KernelLibrary&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) dlclose(handle_);
    path_ = std::move(other.path_);
    handle_ = std::exchange(other.handle_, nullptr);
    table_ = std::exchange(other.table_, nullptr);
    count_ = std::exchange(other.count_, 0);
  }
  return *this;
}

// With RTLD_NODELETE this only drops the reference; the code stays mapped.
KernelLibrary::~KernelLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

const orchid_kernel_desc& KernelLibrary::kernel(int64_t index) const {
  ORCHID_CHECK(index >= 0 && index < count_) << path_ << ": kernel " << index;
  return table_[index];
}

const orchid_kernel_desc& kernel_for_step(const KernelLibrary& lib, const Plan& plan, const PlanStep& step,
                                          size_t step_index, const std::string& source) {
  std::string where = source + ": steps[" + std::to_string(step_index) + "] ('" + step.name +
                      "'): " + lib.path() + ": kernel " + std::to_string(step.kernel);
  ORCHID_USER_CHECK(step.kernel >= 0 && step.kernel < lib.size())
      << where << " is not in the library (it has " << lib.size() << " kernels)";
  const orchid_kernel_desc& d = lib.kernel(step.kernel);
  ORCHID_USER_CHECK(d.num_args == static_cast<int64_t>(step.args.size()))
      << where << " takes " << d.num_args << " args, the plan passes " << step.args.size();
  ORCHID_USER_CHECK(d.task_count == step.tasks)
      << where << " has " << d.task_count << " tasks, the plan says " << step.tasks;
  ORCHID_USER_CHECK(d.scratch_bytes == step.scratch_bytes)
      << where << " needs " << d.scratch_bytes << " scratch bytes, the plan says "
      << step.scratch_bytes;
  check_arg_bytes(plan, step, d.arg_bytes, where);
  return d;
}

}  // namespace orchid::runtime
