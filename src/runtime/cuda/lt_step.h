// A "cublaslt" step at run time (library_call.h): cuBLASLt loaded at run time
// (libcublasLt.so.<major>, like the driver: no link against it), and one matmul
// (lt_matmul.h) with its descriptors, its algorithm and its device addresses fixed at load.
// It holds two algorithms: the heuristic's first, and the fastest of the heuristic's first
// kLtCandidates timed on the GPU at load (library_call.h, pick_algorithms; the heuristic's
// order is a model's guess, not a measurement), or the heuristic's alone where algorithms are
// not timed (LibraryOptions). Which one runs is chosen per model (CudaModel: the faster
// model).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/cuda/library_call.h"
#include "runtime/cuda/lt_matmul.h"

namespace orchid::runtime::cuda {

struct LtApi;

// Algorithms asked of cuBLASLt's heuristic and timed at load (pick_algorithms).
constexpr int kLtCandidates = 8;

// Whether cuBLASLt loads (and, if not, why).
bool cublaslt_available(std::string* why = nullptr);

class LtStep final : public LibraryCall {
 public:
  // args: the device address of each step argument (inputs, then the output). `where` names
  // the step in messages. UserError where cuBLASLt does not load, rejects the descriptors or
  // has no algorithm for the product.
  LtStep(const LtMatmul& mm, const std::vector<uint64_t>& args, uint64_t workspace, const LibraryOptions& options,
         const std::string& where);
  ~LtStep() override;
  LtStep(const LtStep&) = delete;
  LtStep& operator=(const LtStep&) = delete;

  void enqueue(void* stream) const override;

 private:
  void set_up(const LtMatmul& mm, const std::vector<uint64_t>& args, uint64_t workspace, const LibraryOptions& options);
  void release();
  // cublasLtMatmul with algorithm `algo_bytes` (the bytes of a cublasLtMatmulAlgo_t) on
  // `stream`: its status.
  int call(const void* algo_bytes, void* stream) const;

  const LtApi* api_;
  std::string where_;
  void* desc_ = nullptr;
  void* layouts_[4] = {};  // A, B, C, D
  // The heuristic's algorithm and the one timed fastest at load (the bytes of a
  // cublasLtMatmulAlgo_t each; LibraryCall::slot picks one).
  alignas(8) unsigned char algos_[2][64] = {};
  uint64_t a_ = 0, b_ = 0, c_ = 0, d_ = 0, workspace_ = 0;
  float alpha_ = 1, beta_ = 0;
};

}  // namespace orchid::runtime::cuda
