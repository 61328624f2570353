// An NVIDIA GPU through the CUDA driver API, loaded at run time (libcuda.so.1): a program
// that can use a GPU still starts where there is none, and `available` says why not.
// Memory, modules (CUBIN from codegen/cuda), kernel launches on one stream, and events.
// Errors of the driver are UserErrors naming the call and the driver's message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace orchid::runtime::cuda {

struct DriverApi;

// Device memory: freed when destroyed.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DriverApi* api, uint64_t ptr, size_t bytes) : api_(api), ptr_(ptr), bytes_(bytes) {}
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  uint64_t ptr() const { return ptr_; }  // a CUdeviceptr (0: none)
  size_t bytes() const { return bytes_; }

 private:
  const DriverApi* api_ = nullptr;
  uint64_t ptr_ = 0;
  size_t bytes_ = 0;
};

// A loaded module: its functions by name.
class Module {
 public:
  Module() = default;
  Module(const DriverApi* api, void* handle) : api_(api), handle_(handle) {}
  Module(Module&& o) noexcept;
  Module& operator=(Module&& o) noexcept;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  ~Module();

  void* function(const std::string& name) const;  // a CUfunction; UserError where missing
  // The bytes of __device__ variable `name` (UserError where the module has none).
  std::vector<char> global(const std::string& name) const;

 private:
  const DriverApi* api_ = nullptr;
  void* handle_ = nullptr;
};

// A stream: launches on it run in order. Destroyed with the object.
class Stream {
 public:
  Stream() = default;
  Stream(const DriverApi* api, void* handle) : api_(api), handle_(handle) {}
  Stream(Stream&& o) noexcept;
  Stream& operator=(Stream&& o) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream();
  void* handle() const { return handle_; }  // a CUstream

 private:
  const DriverApi* api_ = nullptr;
  void* handle_ = nullptr;
};

// The launches made on a stream between the start and end of a capture, as one executable
// CUDA graph: replayed by one launch.
class Graph {
 public:
  Graph() = default;
  Graph(const DriverApi* api, void* graph, void* exec) : api_(api), graph_(graph), exec_(exec) {}
  Graph(Graph&& o) noexcept;
  Graph& operator=(Graph&& o) noexcept;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph();
  void* exec() const { return exec_; }  // a CUgraphExec
  bool empty() const { return exec_ == nullptr; }

 private:
  const DriverApi* api_ = nullptr;
  void* graph_ = nullptr;
  void* exec_ = nullptr;
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
