#include "runtime/cuda/device.h"

#include <cuda.h>

#include <memory>
#include <utility>

#include "support/error.h"
#include "support/shared_library.h"

namespace orchid::runtime::cuda {

// The driver's entry points Orchid uses (versioned names, as cuda.h maps them).
struct DriverApi {
  SharedLibrary lib;
  std::string why;  // why there is no device
  CUcontext context = nullptr;
  CUdevice device = 0;
  decltype(&cuInit) init = nullptr;
  decltype(&cuGetErrorString) error_string = nullptr;
  decltype(&cuDeviceGetCount) device_count = nullptr;
  decltype(&cuDeviceGet) device_get = nullptr;
  decltype(&cuDeviceGetName) device_name = nullptr;
  decltype(&cuDeviceGetAttribute) device_attribute = nullptr;
  decltype(&cuDevicePrimaryCtxRetain) primary_context = nullptr;
  decltype(&cuCtxSetCurrent) set_current = nullptr;
  decltype(&cuCtxSynchronize) synchronize = nullptr;
  decltype(&cuMemAlloc) mem_alloc = nullptr;
  decltype(&cuMemFree) mem_free = nullptr;
  decltype(&cuMemsetD8) memset = nullptr;
  decltype(&cuMemcpyHtoD) htod = nullptr;
  decltype(&cuMemcpyDtoH) dtoh = nullptr;
  decltype(&cuMemcpyDtoD) dtod = nullptr;
  decltype(&cuModuleLoadData) module_load = nullptr;
  decltype(&cuModuleUnload) module_unload = nullptr;
  decltype(&cuModuleGetFunction) module_function = nullptr;
  decltype(&cuModuleGetGlobal) module_global = nullptr;
  decltype(&cuFuncSetAttribute) func_attribute = nullptr;
  decltype(&cuLaunchKernel) launch = nullptr;
  decltype(&cuEventCreate) event_create = nullptr;
  decltype(&cuEventRecord) event_record = nullptr;
  decltype(&cuEventSynchronize) event_synchronize = nullptr;
  decltype(&cuEventElapsedTime) event_elapsed = nullptr;
  decltype(&cuEventDestroy) event_destroy = nullptr;
  decltype(&cuStreamCreate) stream_create = nullptr;
  decltype(&cuStreamDestroy) stream_destroy = nullptr;
  decltype(&cuStreamBeginCapture) begin_capture = nullptr;
  decltype(&cuStreamEndCapture) end_capture = nullptr;
  decltype(&cuGraphInstantiateWithFlags) graph_instantiate = nullptr;
  decltype(&cuGraphLaunch) graph_launch = nullptr;
  decltype(&cuGraphExecDestroy) graph_exec_destroy = nullptr;
  decltype(&cuGraphDestroy) graph_destroy = nullptr;

  std::string message(CUresult r) const {
    const char* s = nullptr;
    if (error_string) error_string(r, &s);
    return s ? s : "CUDA error " + std::to_string(static_cast<int>(r));
  }
  void check(CUresult r, const char* call) const {
    ORCHID_USER_CHECK(r == CUDA_SUCCESS) << "CUDA driver: " << call << " failed: " << message(r);
  }
};

namespace {

bool bind_all(DriverApi& a) {
  const SharedLibrary& l = a.lib;
  std::string* w = &a.why;
  return l.bind("cuInit", &a.init, w) && l.bind("cuGetErrorString", &a.error_string, w) &&
         l.bind("cuDeviceGetCount", &a.device_count, w) && l.bind("cuDeviceGet", &a.device_get, w) &&
         l.bind("cuDeviceGetName", &a.device_name, w) && l.bind("cuDeviceGetAttribute", &a.device_attribute, w) &&
         l.bind("cuDevicePrimaryCtxRetain", &a.primary_context, w) && l.bind("cuCtxSetCurrent", &a.set_current, w) &&
         l.bind("cuCtxSynchronize", &a.synchronize, w) && l.bind("cuMemAlloc_v2", &a.mem_alloc, w) &&
         l.bind("cuMemFree_v2", &a.mem_free, w) && l.bind("cuMemsetD8_v2", &a.memset, w) &&
         l.bind("cuMemcpyHtoD_v2", &a.htod, w) && l.bind("cuMemcpyDtoH_v2", &a.dtoh, w) &&
         l.bind("cuMemcpyDtoD_v2", &a.dtod, w) &&
         l.bind("cuModuleLoadData", &a.module_load, w) && l.bind("cuModuleUnload", &a.module_unload, w) &&
         l.bind("cuModuleGetFunction", &a.module_function, w) &&
         l.bind("cuModuleGetGlobal_v2", &a.module_global, w) && l.bind("cuFuncSetAttribute", &a.func_attribute, w) &&
         l.bind("cuLaunchKernel", &a.launch, w) && l.bind("cuEventCreate", &a.event_create, w) &&
         l.bind("cuEventRecord", &a.event_record, w) && l.bind("cuEventSynchronize", &a.event_synchronize, w) &&
         (l.bind("cuEventElapsedTime_v2", &a.event_elapsed, w) || l.bind("cuEventElapsedTime", &a.event_elapsed, w)) &&
         l.bind("cuEventDestroy_v2", &a.event_destroy, w) &&
         l.bind("cuStreamCreate", &a.stream_create, w) && l.bind("cuStreamDestroy_v2", &a.stream_destroy, w) &&
         l.bind("cuStreamBeginCapture_v2", &a.begin_capture, w) && l.bind("cuStreamEndCapture", &a.end_capture, w) &&
         l.bind("cuGraphInstantiateWithFlags", &a.graph_instantiate, w) && l.bind("cuGraphLaunch", &a.graph_launch, w) &&
         l.bind("cuGraphExecDestroy", &a.graph_exec_destroy, w) && l.bind("cuGraphDestroy", &a.graph_destroy, w);
}

// The driver, initialized, with the first device's primary context; or why not.
std::unique_ptr<DriverApi> load() {
  auto a = std::make_unique<DriverApi>();
  a->lib = SharedLibrary::open({"libcuda.so.1", "libcuda.so"}, &a->why);
  if (!a->lib.loaded()) {
    a->why = "the CUDA driver did not load (" + a->why + ")";
    return a;
  }
  if (!bind_all(*a)) {
    a->lib = SharedLibrary();
    return a;
  }
  CUresult r = a->init(0);
  int count = 0;
  if (r == CUDA_SUCCESS) r = a->device_count(&count);
  if (r == CUDA_SUCCESS && count == 0) r = CUDA_ERROR_NO_DEVICE;
  if (r == CUDA_SUCCESS) r = a->device_get(&a->device, 0);
  if (r == CUDA_SUCCESS) r = a->primary_context(&a->context, a->device);
  if (r != CUDA_SUCCESS) {
    a->why = "no CUDA device: " + a->message(r);
    a->lib = SharedLibrary();
  }
  return a;
}

const DriverApi& api() {
  static const std::unique_ptr<DriverApi> a = load();
  return *a;
}

}  // namespace

std::vector<char> Module::global(const std::string& name) const {
  const DriverApi* a = module_.api();
  CUdeviceptr p = 0;
  size_t bytes = 0;
  a->check(a->module_global(&p, &bytes, static_cast<CUmodule>(module_.get()), name.c_str()), "cuModuleGetGlobal");
  std::vector<char> out(bytes);
  if (bytes) a->check(a->dtoh(out.data(), p, bytes), "cuMemcpyDtoH");
  return out;
}

void* Module::function(const std::string& name) const {
  const DriverApi* a = module_.api();
  CUfunction f = nullptr;
  a->check(a->module_function(&f, static_cast<CUmodule>(module_.get()), name.c_str()), "cuModuleGetFunction");
  return f;
}

bool Device::available(std::string* why) {
  if (!api().lib.loaded() && why) *why = api().why;
  return api().lib.loaded();
}

Device& Device::get() {
  std::string why;
  ORCHID_USER_CHECK(available(&why)) << "no GPU to run on: " << why;
  static Device d(&api());
  api().check(api().set_current(api().context), "cuCtxSetCurrent");
  return d;
}

Device::Device(const DriverApi* a) : api_(a) {
  char name[256] = {};
  a->check(a->set_current(a->context), "cuCtxSetCurrent");
  a->check(a->device_name(name, sizeof name, a->device), "cuDeviceGetName");
  name_ = name;
  a->check(a->device_attribute(&sms_, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, a->device), "cuDeviceGetAttribute");
  a->check(a->device_attribute(&major_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, a->device), "cuDeviceGetAttribute");
  a->check(a->device_attribute(&minor_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, a->device), "cuDeviceGetAttribute");
}

std::string Device::arch() const {
  if (major_ == 9 && minor_ == 0) return "sm_90a";
  if (major_ == 8) return "sm_80";
  return "";
}

DeviceBuffer Device::alloc(size_t bytes) const {
  CUdeviceptr p = 0;
  size_t n = bytes == 0 ? 1 : bytes;
  api_->check(api_->mem_alloc(&p, n), "cuMemAlloc");
  DeviceBuffer b(DriverHandle<uint64_t>(api_, p, [](const DriverApi* a, uint64_t m) { a->mem_free(static_cast<CUdeviceptr>(m)); }),
                 bytes);
  api_->check(api_->memset(p, 0, n), "cuMemsetD8");
  return b;
}

void Device::upload(const DeviceBuffer& to, const void* from, size_t bytes) const {
  ORCHID_CHECK(bytes <= to.bytes()) << "upload of " << bytes << " bytes into " << to.bytes();
  if (bytes) api_->check(api_->htod(static_cast<CUdeviceptr>(to.ptr()), from, bytes), "cuMemcpyHtoD");
}

void Device::download(void* to, const DeviceBuffer& from, size_t bytes) const {
  ORCHID_CHECK(bytes <= from.bytes()) << "download of " << bytes << " bytes from " << from.bytes();
  if (bytes) api_->check(api_->dtoh(to, static_cast<CUdeviceptr>(from.ptr()), bytes), "cuMemcpyDtoH");
}

void Device::download_from(void* to, uint64_t from, size_t bytes) const {
  if (bytes) api_->check(api_->dtoh(to, static_cast<CUdeviceptr>(from), bytes), "cuMemcpyDtoH");
}

void Device::copy(const DeviceBuffer& to, const DeviceBuffer& from, size_t bytes) const {
  ORCHID_CHECK(bytes <= to.bytes() && bytes <= from.bytes()) << "copy of " << bytes << " bytes";
  if (bytes)
    api_->check(api_->dtod(static_cast<CUdeviceptr>(to.ptr()), static_cast<CUdeviceptr>(from.ptr()), bytes),
                "cuMemcpyDtoD");
}

Module Device::load(const std::vector<char>& cubin) const {
  CUmodule m = nullptr;
  api_->check(api_->module_load(&m, cubin.data()), "cuModuleLoadData");
  return Module(DriverHandle<void*>(api_, m, [](const DriverApi* a, void* h) { a->module_unload(static_cast<CUmodule>(h)); }));
}

void Device::launch(void* function, int64_t blocks, int threads, int64_t shared, void** params, void* stream) const {
  if (blocks == 0) return;
  auto f = static_cast<CUfunction>(function);
  if (shared > 48 * 1024)
    api_->check(api_->func_attribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(shared)),
                "cuFuncSetAttribute");
  api_->check(api_->launch(f, static_cast<unsigned>(blocks), 1, 1, static_cast<unsigned>(threads), 1, 1,
                           static_cast<unsigned>(shared), static_cast<CUstream>(stream), params, nullptr),
              "cuLaunchKernel");
}

void Device::synchronize() const { api_->check(api_->synchronize(), "cuCtxSynchronize"); }

Stream Device::stream() const {
  CUstream s = nullptr;
  api_->check(api_->stream_create(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  return Stream(DriverHandle<void*>(api_, s, [](const DriverApi* a, void* h) { a->stream_destroy(static_cast<CUstream>(h)); }));
}

Graph Device::capture(const Stream& stream, const std::function<void()>& work) const {
  auto s = static_cast<CUstream>(stream.handle());
  api_->check(api_->begin_capture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture");
  CUgraph graph = nullptr;
  try {
    work();
  } catch (...) {
    if (api_->end_capture(s, &graph) == CUDA_SUCCESS && graph) api_->graph_destroy(graph);  // the capture ends either way
    throw;
  }
  api_->check(api_->end_capture(s, &graph), "cuStreamEndCapture");
  CUgraphExec exec = nullptr;
  CUresult r = api_->graph_instantiate(&exec, graph, 0);
  if (r != CUDA_SUCCESS) api_->graph_destroy(graph);
  api_->check(r, "cuGraphInstantiate");
  return Graph(DriverHandle<void*>(api_, graph, [](const DriverApi* a, void* h) { a->graph_destroy(static_cast<CUgraph>(h)); }),
               DriverHandle<void*>(api_, exec,
                                   [](const DriverApi* a, void* h) { a->graph_exec_destroy(static_cast<CUgraphExec>(h)); }));
}

void Device::launch(const Graph& graph, const Stream& stream) const {
  api_->check(api_->graph_launch(static_cast<CUgraphExec>(graph.exec()), static_cast<CUstream>(stream.handle())),
              "cuGraphLaunch");
}

double Device::time_ms(const std::function<void()>& work, void* stream) const {
  auto s = static_cast<CUstream>(stream);
  struct Events {  // destroyed however the timing ends, also when a creation fails
    const DriverApi* api;
    CUevent start = nullptr, stop = nullptr;
    ~Events() {
      if (start) api->event_destroy(start);
      if (stop) api->event_destroy(stop);
    }
  } ev{api_};
  api_->check(api_->event_create(&ev.start, CU_EVENT_DEFAULT), "cuEventCreate");
  api_->check(api_->event_create(&ev.stop, CU_EVENT_DEFAULT), "cuEventCreate");
  api_->check(api_->event_record(ev.start, s), "cuEventRecord");
  work();
  api_->check(api_->event_record(ev.stop, s), "cuEventRecord");
  api_->check(api_->event_synchronize(ev.stop), "cuEventSynchronize");
  float ms = 0;
  api_->check(api_->event_elapsed(&ms, ev.start, ev.stop), "cuEventElapsedTime");
  return ms;
}

}  // namespace orchid::runtime::cuda
