// CUDA C++ to CUBIN with NVRTC, loaded at run time (libnvrtc), so that nothing but a CUDA
// compile needs the CUDA toolkit. Needs no GPU: code for any architecture is built anywhere.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace orchid::codegen::cuda {

// The architectures generated code is built for: "sm_80" (A100), "sm_90a" (H100, H200).
const std::vector<std::string>& cuda_architectures();

class Nvrtc {
 public:
  // NVRTC from the dynamic loader's search path, else from the CUDA toolkit this build saw;
  // none: UserError saying where it looked.
  static const Nvrtc& get();
  // Whether NVRTC loads here (and, if not, why).
  static bool available(std::string* why = nullptr);

  // CUBIN of `source` for `arch` (cuda_architectures()). A source NVRTC rejects is an
  // InternalError carrying its log (generated code must compile).
  std::vector<char> compile(const std::string& source, const std::string& arch) const;
  // The same through a cache of CUBINs keyed by content (source, architecture, NVRTC and
  // codegen versions) in `cache_dir`: the path of the CUBIN, compiled only where missing
  // (written under a temporary name, then renamed).
  std::filesystem::path compile_cached(const std::string& source, const std::string& arch,
                                       const std::filesystem::path& cache_dir) const;
  // NVRTC's version, "13.0".
  std::string version() const;

  struct Api;
  explicit Nvrtc(const Api* api) : api_(api) {}

 private:
  const Api* api_;
};

}  // namespace orchid::codegen::cuda
