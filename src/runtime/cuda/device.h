// An NVIDIA GPU through the CUDA driver API, loaded at run time (libcuda.so.1): a program
// that can use a GPU still starts where there is none, and `available` says why not.
// Memory, modules (CUBIN from codegen/cuda), kernel launches on one stream, and events.
// Errors of the driver are UserErrors naming the call and the driver's message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace orchid::runtime::cuda {

struct DriverApi;

// One driver object owned: released by `release` when destroyed, move-only (a moved-from
// handle holds `none` and releases nothing). H is the driver's handle type.
template <typename H>
class DriverHandle {
 public:
  using Release = void (*)(const DriverApi*, H);
  DriverHandle() = default;
  DriverHandle(const DriverApi* api, H h, Release release) : api_(api), h_(h), release_(release) {}
  DriverHandle(DriverHandle&& o) noexcept : api_(o.api_), h_(std::exchange(o.h_, H{})), release_(o.release_) {}
  DriverHandle& operator=(DriverHandle&& o) noexcept {
    std::swap(api_, o.api_);
    std::swap(h_, o.h_);
    std::swap(release_, o.release_);
    return *this;
  }
  DriverHandle(const DriverHandle&) = delete;
  DriverHandle& operator=(const DriverHandle&) = delete;
  ~DriverHandle() {
    if (h_ != H{}) release_(api_, h_);
  }
  H get() const { return h_; }
  const DriverApi* api() const { return api_; }

 private:
  const DriverApi* api_ = nullptr;
  H h_{};
  Release release_ = nullptr;
};

// Device memory: freed when destroyed.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(DriverHandle<uint64_t> mem, size_t bytes) : mem_(std::move(mem)), bytes_(bytes) {}
  uint64_t ptr() const { return mem_.get(); }  // a CUdeviceptr (0: none)
  size_t bytes() const { return bytes_; }

 private:
  DriverHandle<uint64_t> mem_;
  size_t bytes_ = 0;
};

// A loaded module: its functions by name.
class Module {
 public:
  Module() = default;
  explicit Module(DriverHandle<void*> module) : module_(std::move(module)) {}
  void* function(const std::string& name) const;  // a CUfunction; UserError where missing
  // The bytes of __device__ variable `name` (UserError where the module has none).
  std::vector<char> global(const std::string& name) const;

 private:
  DriverHandle<void*> module_;
};

// A stream: launches on it run in order. Destroyed with the object.
class Stream {
 public:
  Stream() = default;
  explicit Stream(DriverHandle<void*> stream) : stream_(std::move(stream)) {}
  void* handle() const { return stream_.get(); }  // a CUstream

 private:
  DriverHandle<void*> stream_;
};

// The launches made on a stream between the start and end of a capture, as one executable
// CUDA graph: replayed by one launch.
class Graph {
 public:
  Graph() = default;
  Graph(DriverHandle<void*> graph, DriverHandle<void*> exec) : graph_(std::move(graph)), exec_(std::move(exec)) {}
  void* exec() const { return exec_.get(); }  // a CUgraphExec

 private:
  DriverHandle<void*> graph_;  // declared first: destroyed after the executable made from it
  DriverHandle<void*> exec_;
};

class Device {
 public:
  // Whether the driver loads and has a device (and, if not, why).
  static bool available(std::string* why = nullptr);
  // The first device, its primary context current on the calling thread; UserError where
  // there is none.
  static Device& get();

  const std::string& name() const { return name_; }
  int multiprocessors() const { return sms_; }
  int major() const { return major_; }
  int minor() const { return minor_; }
  // The architecture to build code for (codegen/cuda/nvrtc.h): "sm_90a" on compute
  // capability 9.0, "sm_80" on 8.x; empty where Orchid builds none that runs here.
  std::string arch() const;

  DeviceBuffer alloc(size_t bytes) const;  // zeroed
  void upload(const DeviceBuffer& to, const void* from, size_t bytes) const;
  void download(void* to, const DeviceBuffer& from, size_t bytes) const;
  void copy(const DeviceBuffer& to, const DeviceBuffer& from, size_t bytes) const;  // device to device
  void download_from(void* to, uint64_t from, size_t bytes) const;  // from any device address
  Module load(const std::vector<char>& cubin) const;
  // Launches `function` with `blocks` x `threads`, `shared` bytes of dynamic shared memory
  // and the kernel's parameters (each a pointer to its value), on `stream` (null: the default
  // stream).
  void launch(void* function, int64_t blocks, int threads, int64_t shared, void** params,
              void* stream = nullptr) const;
  void synchronize() const;  // waits, and reports a failed kernel as a UserError
  Stream stream() const;
  // The launches `work` makes on `stream`, captured into a graph (nothing runs).
  Graph capture(const Stream& stream, const std::function<void()>& work) const;
  void launch(const Graph& graph, const Stream& stream) const;
  // Milliseconds `work` (launches on `stream`; null: the default stream) took on the GPU,
  // measured with events.
  double time_ms(const std::function<void()>& work, void* stream = nullptr) const;

  explicit Device(const DriverApi* api);

 private:
  const DriverApi* api_;
  std::string name_;
  int sms_ = 0, major_ = 0, minor_ = 0;
};

}  // namespace orchid::runtime::cuda
