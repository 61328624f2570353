// Test harness for generated kernels: compiles a library of kernels, runs one kernel on given
// input tensors (its task range cut into random pieces, as several threads would take it), and
// builds the reference of a kernel from its subgraph.
#pragma once

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <filesystem>
#include <string>
#include <vector>

#include "codegen/cpu/codegen.h"
#include "codegen/cpu/compiler.h"
#include "interp/interp.h"
#include "ir/subgraph.h"
#include "orchid/kernel_abi.h"
#include "support/random.h"

namespace orchid::testlib {

struct KernelLibraryHandle {
  const orchid_kernel_desc* table = nullptr;
  int64_t count = 0;
};

inline KernelLibraryHandle load_kernel_library(const std::filesystem::path& so) {
  void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (h == nullptr) throw std::runtime_error(std::string("dlopen: ") + dlerror());
  auto fn = reinterpret_cast<orchid_kernel_table_fn>(dlsym(h, ORCHID_KERNEL_TABLE_SYMBOL));
  if (fn == nullptr) throw std::runtime_error("no kernel table in " + so.string());
  KernelLibraryHandle lib;
  lib.table = fn(&lib.count);
  return lib;
}

// Runs kernel `desc` on inputs; returns the outputs (of the given types) and the error word.
inline std::vector<ir::Tensor> run_generated(const orchid_kernel_desc& desc,
                                             const std::vector<const ir::Tensor*>& inputs,
                                             const std::vector<ir::TensorType>& out_types, uint64_t seed,
                                             int64_t* error = nullptr) {
  std::vector<ir::Tensor> outs;
  for (const ir::TensorType& t : out_types) outs.emplace_back(t);
  // Inputs and outputs in 64-byte aligned buffers, as the runtime hands every buffer to a
  // kernel (so that the tests take the streaming stores of aligned tiles); outputs filled
  // with 0xff bytes (NaN), so that an element no kernel writes shows.
  std::vector<std::unique_ptr<std::byte, decltype(&std::free)>> aligned;
  std::vector<void*> ptrs;
  auto buffer = [&](size_t bytes) {
    aligned.emplace_back(static_cast<std::byte*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64)), &std::free);
    ptrs.push_back(aligned.back().get());
    return aligned.back().get();
  };
  for (const ir::Tensor* t : inputs) {
    std::byte* b = buffer(t->bytes().size());
    if (!t->bytes().empty()) std::memcpy(b, t->data(), t->bytes().size());
  }
  for (ir::Tensor& t : outs) std::memset(buffer(t.bytes().size()), 0xff, t.bytes().size());
  int64_t err = 0;
  orchid_args args{ptrs.data(), static_cast<int64_t>(ptrs.size()), &err};
  size_t bytes = static_cast<size_t>((desc.scratch_bytes + 63) / 64 * 64 + 64);
  void* scratch = std::aligned_alloc(64, bytes);
  Rng rng(seed);
  for (int64_t t = 0; t < desc.task_count;) {
    int64_t n = 1 + static_cast<int64_t>(rng.next() % 3);
    int64_t end = std::min(desc.task_count, t + n);
    desc.fn(&args, t, end, scratch);
    t = end;
  }
  std::free(scratch);
  for (size_t o = 0; o < outs.size(); ++o)
    if (!outs[o].bytes().empty()) std::memcpy(outs[o].data(), ptrs[inputs.size() + o], outs[o].bytes().size());
  if (error != nullptr) *error = err;
  return outs;
}

}  // namespace orchid::testlib
