#include "codegen/cuda/nvrtc.h"

#include <nvrtc.h>
#include <unistd.h>

#include <fstream>
#include <memory>

#include "codegen/cuda/codegen.h"
#include "support/error.h"
#include "support/sha256.h"
#include "support/shared_library.h"

namespace orchid::codegen::cuda {

namespace fs = std::filesystem;

struct Nvrtc::Api {
  SharedLibrary lib;
  decltype(&nvrtcVersion) version = nullptr;
  decltype(&nvrtcGetErrorString) error_string = nullptr;
  decltype(&nvrtcCreateProgram) create = nullptr;
  decltype(&nvrtcDestroyProgram) destroy = nullptr;
  decltype(&nvrtcCompileProgram) compile = nullptr;
  decltype(&nvrtcGetProgramLogSize) log_size = nullptr;
  decltype(&nvrtcGetProgramLog) log = nullptr;
  decltype(&nvrtcGetCUBINSize) cubin_size = nullptr;
  decltype(&nvrtcGetCUBIN) cubin = nullptr;
  std::string why;  // why it did not load
};

namespace {

std::unique_ptr<Nvrtc::Api> load() {
  auto api = std::make_unique<Nvrtc::Api>();
  std::vector<std::string> names = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
#ifdef ORCHID_CUDA_LIBDIR
  names.push_back(std::string(ORCHID_CUDA_LIBDIR) + "/libnvrtc.so");
#endif
  api->lib = SharedLibrary::open(names, &api->why);
  if (!api->lib.loaded()) return api;
  const SharedLibrary& l = api->lib;
  std::string* w = &api->why;
  bool ok = l.bind("nvrtcVersion", &api->version, w) && l.bind("nvrtcGetErrorString", &api->error_string, w) &&
            l.bind("nvrtcCreateProgram", &api->create, w) && l.bind("nvrtcDestroyProgram", &api->destroy, w) &&
            l.bind("nvrtcCompileProgram", &api->compile, w) && l.bind("nvrtcGetProgramLogSize", &api->log_size, w) &&
            l.bind("nvrtcGetProgramLog", &api->log, w) && l.bind("nvrtcGetCUBINSize", &api->cubin_size, w) &&
            l.bind("nvrtcGetCUBIN", &api->cubin, w);
  if (!ok) api->lib = SharedLibrary();
  return api;
}

const Nvrtc::Api& api() {
  static const std::unique_ptr<Nvrtc::Api> a = load();
  return *a;
}

}  // namespace

const std::vector<std::string>& cuda_architectures() {
  static const std::vector<std::string> archs = {"sm_80", "sm_90a"};
  return archs;
}

bool Nvrtc::available(std::string* why) {
  if (!api().lib.loaded() && why) *why = "NVRTC did not load: " + api().why;
  return api().lib.loaded();
}

const Nvrtc& Nvrtc::get() {
  std::string why;
  ORCHID_USER_CHECK(available(&why)) << why << " (install the CUDA toolkit, or put its lib directory on LD_LIBRARY_PATH)";
  static const Nvrtc n(&api());
  return n;
}

std::string Nvrtc::version() const {
  int major = 0, minor = 0;
  api_->version(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

fs::path Nvrtc::compile_cached(const std::string& source, const std::string& arch, const fs::path& cache_dir) const {
  std::string key = sha256_hex(source + "\n" + arch + "\nnvrtc " + version() + "\ncodegen " +
                               std::to_string(kCudaCodegenVersion));
  std::error_code ec;
  fs::create_directories(cache_dir, ec);
  ORCHID_USER_CHECK(!ec) << "cannot create the CUBIN cache " << cache_dir.string() << ": " << ec.message();
  fs::path path = cache_dir / ("cuda-" + key.substr(0, 32) + "." + arch + ".cubin");
  if (fs::exists(path)) return path;
  std::vector<char> cubin = compile(source, arch);
  fs::path tmp = path;
  tmp += ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(cubin.data(), static_cast<std::streamsize>(cubin.size()));
    out.close();  // flushed, and checked, before the file can enter the cache
    ORCHID_USER_CHECK(out) << tmp.string() << ": cannot write";
  }
  fs::rename(tmp, path, ec);  // atomic: other processes see no file or a whole one
  ORCHID_USER_CHECK(!ec) << "cannot store " << path.string() << " in the CUBIN cache: " << ec.message();
  return path;
}

std::vector<char> Nvrtc::compile(const std::string& source, const std::string& arch) const {
  nvrtcProgram prog = nullptr;
  nvrtcResult r = api_->create(&prog, source.c_str(), "orchid.cu", 0, nullptr, nullptr);
  ORCHID_CHECK(r == NVRTC_SUCCESS) << "nvrtcCreateProgram: " << api_->error_string(r);
  std::string arch_opt = "--gpu-architecture=" + arch;
  // -w: the prelude's helpers that a module does not call are not worth a warning each.
  const char* opts[] = {arch_opt.c_str(), "-std=c++17", "-w"};
  r = api_->compile(prog, 3, opts);
  size_t log_size = 0;
  api_->log_size(prog, &log_size);
  std::string log(log_size, '\0');
  if (log_size > 0) api_->log(prog, log.data());
  std::vector<char> cubin;
  if (r == NVRTC_SUCCESS) {
    size_t size = 0;
    api_->cubin_size(prog, &size);
    cubin.resize(size);
    api_->cubin(prog, cubin.data());
  }
  api_->destroy(&prog);
  ORCHID_CHECK(r == NVRTC_SUCCESS) << "NVRTC rejected generated CUDA code for " << arch << " ("
                                   << api_->error_string(r) << "):\n" << log;
  return cubin;
}

}  // namespace orchid::codegen::cuda
