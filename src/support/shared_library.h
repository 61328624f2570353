// A shared library opened at run time (dlopen) by the first of several names that loads, so
// that a program that can use a library (the CUDA driver, NVRTC) still starts where it is
// missing, and says why when asked to use it.
#pragma once

#include <string>
#include <vector>

namespace orchid {

class SharedLibrary {
 public:
  SharedLibrary() = default;
  SharedLibrary(SharedLibrary&& o) noexcept;
  SharedLibrary& operator=(SharedLibrary&& o) noexcept;
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;
  ~SharedLibrary();

  // The first of `names` (bare names are searched as the dynamic loader does; paths are
  // taken as given) that opens; none: an empty library and, in *why, each name's error.
  static SharedLibrary open(const std::vector<std::string>& names, std::string* why);

  bool loaded() const { return handle_ != nullptr; }
  const std::string& name() const { return name_; }
  // The address of `symbol`, or null where the library lacks it.
  void* symbol(const char* symbol) const;
  // *f = `symbol` as a function pointer; false (and in *why, which symbol) where it lacks it.
  template <typename F>
  bool bind(const char* symbol_name, F* f, std::string* why) const {
    *f = reinterpret_cast<F>(symbol(symbol_name));
    if (!*f) *why = name_ + " lacks " + symbol_name;
    return *f != nullptr;
  }

 private:
  void* handle_ = nullptr;
  std::string name_;
};

}  // namespace orchid
