// CUDA code generation: a kernel (a convex set of primitives and the values it writes) and a
// schedule become a CUDA C++ __global__ function computed as the same tile-graph as on the CPU
// (codegen/cpu/lower.h: the same tasks, regions, inlining and homes): one thread block per
// task; each computed primitive's region in the task is shared by the block's threads, element
// by element, consecutive threads on consecutive elements of the innermost dim; intermediates
// live in shared memory where the task's scratch fits in it (else in a global scratch area per
// block), with a barrier between primitives; tiles of kernel outputs computed in scratch are
// copied out by the block at the end. A reduction with few output elements in a task has a
// group of threads per element whose partial results merge by warp shuffles and shared memory
// (every combiner but argmax and argmin, which compute an element per thread). A transpose
// goes through a tile in shared memory: loaded along its input's rows, stored along its
// output's.
//
// Identifiers in the generated source are Orchid's own; nothing from the model is written
// into it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/cuda/schedule.h"
#include "ir/graph.h"
#include "tile/kernel.h"

namespace orchid::codegen::cuda {

// Bump when generated code changes meaning or speed: it is part of every cache key.
constexpr int kCudaCodegenVersion = 4;

// The shared memory every CUDA device gives a block without opting in to more: a task's
// scratch lives there where it fits beside what the kernel declares itself (group reductions'
// partial results, transposes' tiles), else in global memory.
constexpr int64_t kSharedBytes = 48 * 1024;

// A generated kernel and how to launch it: `blocks` blocks of `threads` threads, with
// `shared_bytes` of dynamic shared memory. Its parameters are the pointers to its inputs then
// its outputs (dense, row-major, in device memory), then `int64_t* error` (index checks, as
// kernel_abi.h's orchid_args::error; may be null), then `char* scratch`: global memory of
// `global_scratch_bytes` per block (null where that is 0).
struct CudaKernel {
  std::string symbol;
  std::string source;
  int64_t blocks = 0;
  int threads = 0;
  int64_t shared_bytes = 0;
  int64_t global_scratch_bytes = 0;
  std::vector<ir::ValueId> inputs;
  std::vector<ir::ValueId> outputs;
  std::vector<int64_t> arg_bytes;   // per pointer argument (inputs then outputs): its tensor's bytes
  std::vector<std::string> checks;  // what a failed index check k+1 is (names a primitive)
  Schedule schedule;
};

// The kernel must hold no opaque primitive; symbol must be a C identifier of Orchid's making.
CudaKernel generate_kernel(const ir::Graph& g, const tile::Kernel& k, const Schedule& s, const std::string& symbol);

// A module's whole source: the prelude, then the kernels (extern "C", so that their symbols
// are their names), then the module's descriptor (include/orchid/cuda_abi.h).
std::string module_source(const std::vector<CudaKernel>& kernels);

}  // namespace orchid::codegen::cuda
