#include "support/shared_library.h"

#include <dlfcn.h>

#include <utility>

namespace orchid {

SharedLibrary::SharedLibrary(SharedLibrary&& o) noexcept
    : handle_(std::exchange(o.handle_, nullptr)), name_(std::move(o.name_)) {}

SharedLibrary& SharedLibrary::operator=(SharedLibrary&& o) noexcept {
  std::swap(handle_, o.handle_);
  std::swap(name_, o.name_);
  return *this;
}

// Libraries stay loaded for the life of the process: the CUDA driver and NVRTC keep threads
// and state that must not outlive their code.
SharedLibrary::~SharedLibrary() = default;

SharedLibrary SharedLibrary::open(const std::vector<std::string>& names, std::string* why) {
  SharedLibrary lib;
  std::string errors;
  for (const std::string& n : names) {
    lib.handle_ = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (lib.handle_) {
      lib.name_ = n;
      return lib;
    }
    const char* e = dlerror();
    errors += (errors.empty() ? "" : "; ") + std::string(e ? e : n + ": not found");
  }
  if (why) *why = errors;
  return lib;
}

void* SharedLibrary::symbol(const char* symbol) const { return handle_ ? dlsym(handle_, symbol) : nullptr; }

}  // namespace orchid
