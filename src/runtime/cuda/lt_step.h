// A "cublaslt" step at run time (library_call.h): cuBLASLt loaded at run time
// (libcublasLt.so.<major>, like the driver: no link against it), and one matmul
// (lt_matmul.h) with its descriptors, its algorithm (cuBLASLt's heuristic, asked once at
// load) and its device addresses fixed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/cuda/library_call.h"
#include "runtime/cuda/lt_matmul.h"

namespace orchid::runtime::cuda {

struct LtApi;

// Whether cuBLASLt loads (and, if not, why).
bool cublaslt_available(std::string* why = nullptr);

class LtStep final : public LibraryCall {
 public:
  // args: the device address of each step argument (inputs, then the output). `tf32`: the
  // product may use TF32 tensor cores (else f32 throughout). `where` names the step in
  // messages. UserError where cuBLASLt does not load, rejects the descriptors or has no
  // algorithm for the product.
  LtStep(const LtMatmul& mm, const std::vector<uint64_t>& args, uint64_t workspace, bool tf32, const std::string& where);
  ~LtStep() override;
  LtStep(const LtStep&) = delete;
  LtStep& operator=(const LtStep&) = delete;

  void enqueue(void* stream) const override;

 private:
  void set_up(const LtMatmul& mm, const std::vector<uint64_t>& args, uint64_t workspace, bool tf32);
  void release();

  const LtApi* api_;
  std::string where_;
  void* desc_ = nullptr;
  void* layouts_[4] = {};  // A, B, C, D
  alignas(8) unsigned char algo_[64] = {};  // cublasLtMatmulAlgo_t
  uint64_t a_ = 0, b_ = 0, c_ = 0, d_ = 0, workspace_ = 0;
  float alpha_ = 1, beta_ = 0;
};

}  // namespace orchid::runtime::cuda
