#include "runtime/cuda/dnn_step.h"

#include <cudnn.h>

#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "support/error.h"
#include "support/shared_library.h"

namespace orchid::runtime::cuda {

// cuDNN's entry points Orchid uses, and one handle for the process. A call takes its stream
// from the handle, so setting the stream and calling are one step under `calling`.
struct DnnApi {
  SharedLibrary lib;
  std::string why;  // why it did not load
  cudnnHandle_t handle = nullptr;
  mutable std::mutex calling;
  decltype(&cudnnCreate) create = nullptr;
  decltype(&cudnnGetErrorString) error_string = nullptr;
  decltype(&cudnnSetStream) set_stream = nullptr;
  decltype(&cudnnCreateTensorDescriptor) tensor_create = nullptr;
  decltype(&cudnnSetTensorNdDescriptor) tensor_set = nullptr;
  decltype(&cudnnDestroyTensorDescriptor) tensor_destroy = nullptr;
  decltype(&cudnnCreateFilterDescriptor) filter_create = nullptr;
  decltype(&cudnnSetFilterNdDescriptor) filter_set = nullptr;
  decltype(&cudnnDestroyFilterDescriptor) filter_destroy = nullptr;
  decltype(&cudnnCreateConvolutionDescriptor) conv_create = nullptr;
  decltype(&cudnnSetConvolutionNdDescriptor) conv_set = nullptr;
  decltype(&cudnnSetConvolutionGroupCount) conv_groups = nullptr;
  decltype(&cudnnSetConvolutionMathType) conv_math = nullptr;
  decltype(&cudnnDestroyConvolutionDescriptor) conv_destroy = nullptr;
  decltype(&cudnnGetConvolutionForwardAlgorithm_v7) heuristic = nullptr;
  decltype(&cudnnConvolutionForward) forward = nullptr;

  void check(cudnnStatus_t s, const char* call, const std::string& where) const {
    ORCHID_USER_CHECK(s == CUDNN_STATUS_SUCCESS)
        << where << ": cuDNN: " << call << " failed: " << (error_string ? error_string(s) : "status " + std::to_string(s));
  }
};

namespace {

cudnnDataType_t data_type(ir::DType t) {
  if (t == ir::DType::F16) return CUDNN_DATA_HALF;
  if (t == ir::DType::BF16) return CUDNN_DATA_BFLOAT16;
  return CUDNN_DATA_FLOAT;
}

// Tensor cores for 16-bit data (accumulating in f32), and for f32 data where TF32 is allowed.
bool tensor_core_math(const DnnConv& c, const LibraryOptions& options) {
  return options.tf32 || c.dtype != ir::DType::F32;
}

bool bind_all(DnnApi& a) {
  const SharedLibrary& l = a.lib;
  std::string* w = &a.why;
  return l.bind("cudnnCreate", &a.create, w) && l.bind("cudnnGetErrorString", &a.error_string, w) &&
         l.bind("cudnnSetStream", &a.set_stream, w) && l.bind("cudnnCreateTensorDescriptor", &a.tensor_create, w) &&
         l.bind("cudnnSetTensorNdDescriptor", &a.tensor_set, w) &&
         l.bind("cudnnDestroyTensorDescriptor", &a.tensor_destroy, w) &&
         l.bind("cudnnCreateFilterDescriptor", &a.filter_create, w) &&
         l.bind("cudnnSetFilterNdDescriptor", &a.filter_set, w) &&
         l.bind("cudnnDestroyFilterDescriptor", &a.filter_destroy, w) &&
         l.bind("cudnnCreateConvolutionDescriptor", &a.conv_create, w) &&
         l.bind("cudnnSetConvolutionNdDescriptor", &a.conv_set, w) &&
         l.bind("cudnnSetConvolutionGroupCount", &a.conv_groups, w) &&
         l.bind("cudnnSetConvolutionMathType", &a.conv_math, w) &&
         l.bind("cudnnDestroyConvolutionDescriptor", &a.conv_destroy, w) &&
         l.bind("cudnnGetConvolutionForwardAlgorithm_v7", &a.heuristic, w) &&
         l.bind("cudnnConvolutionForward", &a.forward, w);
}

std::unique_ptr<DnnApi> load() {
  auto a = std::make_unique<DnnApi>();
  std::string major = std::to_string(CUDNN_MAJOR);
  a->lib = SharedLibrary::open({"libcudnn.so." + major}, &a->why);
  if (!a->lib.loaded()) {
    a->why = "cuDNN " + major + " did not load (" + a->why + ")";
    return a;
  }
  if (!bind_all(*a)) {
    a->lib = SharedLibrary();
    return a;
  }
  if (cudnnStatus_t s = a->create(&a->handle); s != CUDNN_STATUS_SUCCESS) {
    a->why = std::string("cudnnCreate failed: ") + a->error_string(s);
    a->lib = SharedLibrary();
  }
  return a;
}

const DnnApi& api() {
  static const std::unique_ptr<DnnApi> a = load();
  return *a;
}

std::vector<int> ints(const ir::Dims& d, const std::string& where) {
  std::vector<int> out;
  for (int64_t v : d) {
    ORCHID_USER_CHECK(v >= 0 && v <= INT32_MAX) << where << ": dim " << v << " is more than cuDNN takes";
    out.push_back(static_cast<int>(v));
  }
  return out;
}

std::vector<int> dense_strides(const std::vector<int>& dims) {
  std::vector<int> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

}  // namespace

bool cudnn_available(std::string* why) {
  const DnnApi& a = api();
  if (!a.lib.loaded() && why) *why = a.why;
  return a.lib.loaded();
}

DnnStep::DnnStep(const DnnConv& conv, const std::vector<uint64_t>& args, uint64_t workspace,
                 const LibraryOptions& options, const std::string& where)
    : api_(&api()), where_(where), workspace_(workspace) {
  try {
    set_up(conv, args, options);
  } catch (...) {
    release();
    throw;
  }
}

void DnnStep::set_up(const DnnConv& c, const std::vector<uint64_t>& args, const LibraryOptions& options) {
  const DnnApi& a = *api_;
  const bool tensor_ops = tensor_core_math(c, options);
  const cudnnDataType_t data = data_type(c.dtype);
  const std::string& where = where_;
  ORCHID_USER_CHECK(a.lib.loaded()) << where << ": " << a.why;
  auto arg = [&](int32_t i) {
    ORCHID_USER_CHECK(i >= 0 && static_cast<size_t>(i) < args.size()) << where << ": argument " << i << " is missing";
    return args[static_cast<size_t>(i)];
  };
  x_ = arg(c.x);
  w_ = arg(c.w);
  y_ = arg(c.y);
  auto tensor = [&](void*& slot, const ir::Dims& dims) {
    cudnnTensorDescriptor_t d = nullptr;
    a.check(a.tensor_create(&d), "cudnnCreateTensorDescriptor", where);
    slot = d;
    std::vector<int> n = ints(dims, where), s = dense_strides(n);
    a.check(a.tensor_set(d, data, static_cast<int>(n.size()), n.data(), s.data()),
            "cudnnSetTensorNdDescriptor", where);
  };
  tensor(x_desc_, c.x_dims);
  tensor(y_desc_, c.y_dims);
  cudnnFilterDescriptor_t f = nullptr;
  a.check(a.filter_create(&f), "cudnnCreateFilterDescriptor", where);
  w_desc_ = f;
  std::vector<int> wd = ints(c.w_dims, where);
  a.check(a.filter_set(f, data, CUDNN_TENSOR_NCHW, static_cast<int>(wd.size()), wd.data()),
          "cudnnSetFilterNdDescriptor", where);
  cudnnConvolutionDescriptor_t cd = nullptr;
  a.check(a.conv_create(&cd), "cudnnCreateConvolutionDescriptor", where);
  conv_desc_ = cd;
  std::vector<int> pads = ints(c.pads, where), strides = ints(c.strides, where), dil = ints(c.dilations, where);
  a.check(a.conv_set(cd, static_cast<int>(pads.size()), pads.data(), strides.data(), dil.data(), CUDNN_CROSS_CORRELATION,
                     CUDNN_DATA_FLOAT),
          "cudnnSetConvolutionNdDescriptor", where);
  a.check(a.conv_groups(cd, static_cast<int>(c.groups)), "cudnnSetConvolutionGroupCount", where);
  a.check(a.conv_math(cd, tensor_ops ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH), "cudnnSetConvolutionMathType", where);
  choose_algorithms(c, options);
}

// The heuristic's qualifying algorithms (f32 FMA, or tensor cores for 16-bit data and for TF32
// where allowed; within the
// workspace): the first, and the fastest of the first kDnnCandidates timed where asked.
void DnnStep::choose_algorithms(const DnnConv& c, const LibraryOptions& options) {
  const DnnApi& a = *api_;
  const std::string& where = where_;
  const bool tensor_ops = tensor_core_math(c, options);
  auto cd = static_cast<cudnnConvolutionDescriptor_t>(conv_desc_);
  constexpr int kAsk = CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
  cudnnConvolutionFwdAlgoPerf_t perf[kAsk];
  int found = 0;
  a.check(a.heuristic(a.handle, static_cast<cudnnTensorDescriptor_t>(x_desc_),
                      static_cast<cudnnFilterDescriptor_t>(w_desc_), cd, static_cast<cudnnTensorDescriptor_t>(y_desc_),
                      kAsk, &found, perf),
          "cudnnGetConvolutionForwardAlgorithm_v7", where);
  std::vector<Algorithm> candidates;
  for (int i = 0; i < found && candidates.size() < kDnnCandidates; ++i) {
    const cudnnConvolutionFwdAlgoPerf_t& p = perf[i];
    bool math = p.mathType == CUDNN_FMA_MATH ||
                (tensor_ops && (p.mathType == CUDNN_TENSOR_OP_MATH || p.mathType == CUDNN_DEFAULT_MATH));
    if (p.status == CUDNN_STATUS_SUCCESS && math && p.memory <= kLibraryWorkspaceBytes)
      candidates.push_back({static_cast<int>(p.algo), static_cast<int>(p.mathType), p.memory});
  }
  ORCHID_USER_CHECK(!candidates.empty()) << where << ": cuDNN has no " << (tensor_ops ? "FMA or tensor-core" : "f32 FMA")
                                         << " algorithm within " << kLibraryWorkspaceBytes
                                         << " bytes of workspace for " << describe(c);
  std::lock_guard<std::mutex> lock(a.calling);
  a.check(a.set_stream(a.handle, nullptr), "cudnnSetStream", where);
  std::optional<AlgorithmPair> pick =
      pick_algorithms(static_cast<int>(candidates.size()), options.time_algorithms,
                      [&](int i) { return call(candidates[static_cast<size_t>(i)]) == CUDNN_STATUS_SUCCESS; });
  ORCHID_USER_CHECK(pick) << where << ": cuDNN ran none of its " << candidates.size() << " algorithms for " << describe(c);
  algos_[0] = candidates[static_cast<size_t>(pick->heuristic)];
  algos_[1] = candidates[static_cast<size_t>(pick->timed)];
  differ_ = pick->heuristic != pick->timed;
}

DnnStep::~DnnStep() { release(); }

void DnnStep::release() {
  const DnnApi& a = *api_;
  if (x_desc_) a.tensor_destroy(static_cast<cudnnTensorDescriptor_t>(std::exchange(x_desc_, nullptr)));
  if (y_desc_) a.tensor_destroy(static_cast<cudnnTensorDescriptor_t>(std::exchange(y_desc_, nullptr)));
  if (w_desc_) a.filter_destroy(static_cast<cudnnFilterDescriptor_t>(std::exchange(w_desc_, nullptr)));
  if (conv_desc_) a.conv_destroy(static_cast<cudnnConvolutionDescriptor_t>(std::exchange(conv_desc_, nullptr)));
}

int DnnStep::call(const Algorithm& algo) const {
  const DnnApi& a = *api_;
  auto cd = static_cast<cudnnConvolutionDescriptor_t>(conv_desc_);
  if (cudnnStatus_t s = a.conv_math(cd, static_cast<cudnnMathType_t>(algo.math)); s != CUDNN_STATUS_SUCCESS) return s;
  const float one = 1, zero = 0;
  auto ptr = [](uint64_t p) { return reinterpret_cast<void*>(p); };
  return a.forward(a.handle, &one, static_cast<cudnnTensorDescriptor_t>(x_desc_), ptr(x_),
                   static_cast<cudnnFilterDescriptor_t>(w_desc_), ptr(w_),
                   cd, static_cast<cudnnConvolutionFwdAlgo_t>(algo.algo), ptr(workspace_), algo.workspace_bytes, &zero, static_cast<cudnnTensorDescriptor_t>(y_desc_), ptr(y_));
}

void DnnStep::enqueue(void* stream) const {
  const DnnApi& a = *api_;
  std::lock_guard<std::mutex> lock(a.calling);
  a.check(a.set_stream(a.handle, static_cast<cudaStream_t>(stream)), "cudnnSetStream", where_);
  a.check(static_cast<cudnnStatus_t>(call(algos_[slot()])), "cudnnConvolutionForward", where_);
}

}  // namespace orchid::runtime::cuda
