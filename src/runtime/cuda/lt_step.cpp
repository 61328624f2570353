#include "runtime/cuda/lt_step.h"

#include <cublasLt.h>

#include <cstring>
#include <memory>
#include <utility>

#include "support/error.h"
#include "support/shared_library.h"

namespace orchid::runtime::cuda {

static_assert(sizeof(cublasLtMatmulAlgo_t) == 64, "LtStep::algos_ hold cublasLtMatmulAlgo_t");

// cuBLASLt's entry points Orchid uses, and one handle for the process.
struct LtApi {
  SharedLibrary lib;
  std::string why;  // why it did not load
  cublasLtHandle_t handle = nullptr;
  decltype(&cublasLtCreate) create = nullptr;
  decltype(&cublasLtGetStatusString) status_string = nullptr;
  decltype(&cublasLtMatmulDescCreate) desc_create = nullptr;
  decltype(&cublasLtMatmulDescDestroy) desc_destroy = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) layout_create = nullptr;
  decltype(&cublasLtMatrixLayoutDestroy) layout_destroy = nullptr;
  decltype(&cublasLtMatrixLayoutSetAttribute) layout_set = nullptr;
  decltype(&cublasLtMatmulPreferenceCreate) pref_create = nullptr;
  decltype(&cublasLtMatmulPreferenceDestroy) pref_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) pref_set = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;
  decltype(&cublasLtMatmul) matmul = nullptr;

  void check(cublasStatus_t s, const char* call, const std::string& where) const {
    const char* text = s != CUBLAS_STATUS_SUCCESS && status_string ? status_string(s) : nullptr;
    ORCHID_USER_CHECK(s == CUBLAS_STATUS_SUCCESS)
        << where << ": cuBLASLt: " << call << " failed: " << (text ? text : "status " + std::to_string(s));
  }
};

namespace {

bool bind_all(LtApi& a) {
  const SharedLibrary& l = a.lib;
  std::string* w = &a.why;
  return l.bind("cublasLtCreate", &a.create, w) && l.bind("cublasLtMatmulDescCreate", &a.desc_create, w) &&
         l.bind("cublasLtMatmulDescDestroy", &a.desc_destroy, w) &&
         l.bind("cublasLtMatmulDescSetAttribute", &a.desc_set, w) &&
         l.bind("cublasLtMatrixLayoutCreate", &a.layout_create, w) &&
         l.bind("cublasLtMatrixLayoutDestroy", &a.layout_destroy, w) &&
         l.bind("cublasLtMatrixLayoutSetAttribute", &a.layout_set, w) &&
         l.bind("cublasLtMatmulPreferenceCreate", &a.pref_create, w) &&
         l.bind("cublasLtMatmulPreferenceDestroy", &a.pref_destroy, w) &&
         l.bind("cublasLtMatmulPreferenceSetAttribute", &a.pref_set, w) &&
         l.bind("cublasLtMatmulAlgoGetHeuristic", &a.heuristic, w) && l.bind("cublasLtMatmul", &a.matmul, w);
}

// The library of the major version Orchid was built against (its attribute numbering), with
// a handle; or why not.
std::unique_ptr<LtApi> load() {
  auto a = std::make_unique<LtApi>();
  std::string major = std::to_string(CUBLAS_VER_MAJOR);
  a->lib = SharedLibrary::open({"libcublasLt.so." + major}, &a->why);
  if (!a->lib.loaded()) {
    a->why = "cuBLASLt " + major + " did not load (" + a->why + ")";
    return a;
  }
  a->status_string = reinterpret_cast<decltype(a->status_string)>(a->lib.symbol("cublasLtGetStatusString"));
  if (!bind_all(*a)) {
    a->lib = SharedLibrary();
    return a;
  }
  if (cublasStatus_t s = a->create(&a->handle); s != CUBLAS_STATUS_SUCCESS) {
    a->why = "cublasLtCreate failed (status " + std::to_string(s) + ")";
    a->lib = SharedLibrary();
  }
  return a;
}

const LtApi& api() {
  static const std::unique_ptr<LtApi> a = load();
  return *a;
}

template <typename T>
void set_desc(const LtApi& a, void* desc, cublasLtMatmulDescAttributes_t attr, T value, const std::string& where) {
  a.check(a.desc_set(static_cast<cublasLtMatmulDesc_t>(desc), attr, &value, sizeof(value)),
          "cublasLtMatmulDescSetAttribute", where);
}

cudaDataType_t data_type(ir::DType t) {
  if (t == ir::DType::F16) return CUDA_R_16F;
  if (t == ir::DType::BF16) return CUDA_R_16BF;
  return CUDA_R_32F;
}

cublasLtMatrixLayout_t make_layout(const LtApi& a, const LtMatrix& m, ir::DType dtype, int64_t batch,
                                   const std::string& where) {
  cublasLtMatrixLayout_t l = nullptr;
  a.check(a.layout_create(&l, data_type(dtype), static_cast<uint64_t>(m.rows), static_cast<uint64_t>(m.cols), m.ld),
          "cublasLtMatrixLayoutCreate", where);
  if (batch > 1) {
    auto count = static_cast<int32_t>(batch);
    int64_t stride = m.batch_stride;
    a.check(a.layout_set(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)), "cublasLtMatrixLayoutSetAttribute",
            where);
    a.check(a.layout_set(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)),
            "cublasLtMatrixLayoutSetAttribute", where);
  }
  return l;
}

cublasLtEpilogue_t epilogue(const LtMatmul& mm) {
  if (mm.bias >= 0) return mm.relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
  return mm.relu ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_DEFAULT;
}

}  // namespace

bool cublaslt_available(std::string* why) {
  const LtApi& a = api();
  if (!a.lib.loaded() && why) *why = a.why;
  return a.lib.loaded();
}

LtStep::LtStep(const LtMatmul& mm, const std::vector<uint64_t>& args, uint64_t workspace,
               const LibraryOptions& options, const std::string& where)
    : api_(&api()), where_(where) {
  try {
    set_up(mm, args, workspace, options);
  } catch (...) {
    release();
    throw;
  }
}

void LtStep::set_up(const LtMatmul& mm, const std::vector<uint64_t>& args, uint64_t workspace,
                    const LibraryOptions& options) {
  const LtApi& a = *api_;
  const std::string& where = where_;
  ORCHID_USER_CHECK(a.lib.loaded()) << where << ": " << a.why;
  ORCHID_USER_CHECK(mm.batch <= INT32_MAX) << where << ": " << mm.batch << " batches is more than cuBLASLt takes";
  auto arg = [&](int32_t i) {
    ORCHID_USER_CHECK(i >= 0 && static_cast<size_t>(i) < args.size()) << where << ": argument " << i << " is missing";
    return args[static_cast<size_t>(i)];
  };
  a_ = arg(mm.a.arg);
  b_ = arg(mm.b.arg);
  d_ = arg(mm.d.arg);
  c_ = mm.c ? arg(mm.c->arg) : d_;
  alpha_ = mm.alpha;
  beta_ = mm.c ? 1.0f : 0.0f;
  workspace_ = workspace;
  cublasLtMatmulDesc_t desc = nullptr;
  // 16-bit operands accumulate in f32 (their products are exact in f32); f32 ones in TF32
  // where the plan allows it.
  bool tf32 = options.tf32 && mm.dtype == ir::DType::F32;
  a.check(a.desc_create(&desc, tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUDA_R_32F),
          "cublasLtMatmulDescCreate", where);
  desc_ = desc;
  set_desc(a, desc_, CUBLASLT_MATMUL_DESC_TRANSA, mm.a.trans ? CUBLAS_OP_T : CUBLAS_OP_N, where);
  set_desc(a, desc_, CUBLASLT_MATMUL_DESC_TRANSB, mm.b.trans ? CUBLAS_OP_T : CUBLAS_OP_N, where);
  set_desc(a, desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue(mm), where);
  if (mm.bias >= 0) {
    set_desc(a, desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, reinterpret_cast<const void*>(arg(mm.bias)), where);
    // The bias is stored as D is (the default where D is f32, f16 or bf16), said explicitly.
    set_desc(a, desc_, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, static_cast<int32_t>(data_type(mm.dtype)), where);
  }
  layouts_[0] = make_layout(a, mm.a, mm.dtype, mm.batch, where);
  layouts_[1] = make_layout(a, mm.b, mm.dtype, mm.batch, where);
  layouts_[2] = make_layout(a, mm.c ? *mm.c : mm.d, mm.dtype, mm.batch, where);
  layouts_[3] = make_layout(a, mm.d, mm.dtype, mm.batch, where);
  cublasLtMatmulPreference_t pref = nullptr;
  a.check(a.pref_create(&pref), "cublasLtMatmulPreferenceCreate", where);
  uint64_t bytes = kLibraryWorkspaceBytes;
  cublasStatus_t s = a.pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &bytes, sizeof(bytes));
  cublasLtMatmulHeuristicResult_t results[kLtCandidates] = {};
  int found = 0;
  if (s == CUBLAS_STATUS_SUCCESS)
    s = a.heuristic(a.handle, desc, static_cast<cublasLtMatrixLayout_t>(layouts_[0]),
                    static_cast<cublasLtMatrixLayout_t>(layouts_[1]), static_cast<cublasLtMatrixLayout_t>(layouts_[2]),
                    static_cast<cublasLtMatrixLayout_t>(layouts_[3]), pref, kLtCandidates, results, &found);
  a.pref_destroy(pref);
  a.check(s, "cublasLtMatmulAlgoGetHeuristic", where);
  ORCHID_USER_CHECK(found > 0) << where << ": cuBLASLt has no algorithm for " << describe(mm);
  std::optional<AlgorithmPair> pick = pick_algorithms(found, options.time_algorithms, [&](int i) {
    return call(&results[i].algo, nullptr) == CUBLAS_STATUS_SUCCESS;
  });
  ORCHID_USER_CHECK(pick) << where << ": cuBLASLt ran none of its " << found << " algorithms for " << describe(mm);
  std::memcpy(algos_[0], &results[pick->heuristic].algo, sizeof(algos_[0]));
  std::memcpy(algos_[1], &results[pick->timed].algo, sizeof(algos_[1]));
  differ_ = pick->heuristic != pick->timed;
}

int LtStep::call(const void* algo_bytes, void* stream) const {
  cublasLtMatmulAlgo_t algo;
  std::memcpy(&algo, algo_bytes, sizeof(algo));
  auto ptr = [](uint64_t p) { return reinterpret_cast<void*>(p); };
  return api_->matmul(api_->handle, static_cast<cublasLtMatmulDesc_t>(desc_), &alpha_, ptr(a_),
                      static_cast<cublasLtMatrixLayout_t>(layouts_[0]), ptr(b_),
                      static_cast<cublasLtMatrixLayout_t>(layouts_[1]), &beta_, ptr(c_),
                      static_cast<cublasLtMatrixLayout_t>(layouts_[2]), ptr(d_),
                      static_cast<cublasLtMatrixLayout_t>(layouts_[3]), &algo,
                      ptr(workspace_), kLibraryWorkspaceBytes, static_cast<cudaStream_t>(stream));
}

LtStep::~LtStep() { release(); }

void LtStep::release() {
  for (void*& l : layouts_)
    if (l) api_->layout_destroy(static_cast<cublasLtMatrixLayout_t>(std::exchange(l, nullptr)));
  if (desc_) api_->desc_destroy(static_cast<cublasLtMatmulDesc_t>(std::exchange(desc_, nullptr)));
}

void LtStep::enqueue(void* stream) const {
  api_->check(static_cast<cublasStatus_t>(call(algos_[slot()], stream)), "cublasLtMatmul", where_);
}

}  // namespace orchid::runtime::cuda
