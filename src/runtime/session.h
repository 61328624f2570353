// A session runs a loaded Model (model.h) on one thread at a time: it owns what a run writes
// — the arena of intermediates (memory_plan.h) and each thread's scratch — so that several
// sessions of one model may run concurrently, one per calling thread.
//
// Threads. Generated steps run on ONE OpenMP pool, the one oneDNN uses too: a step of T tasks
// runs `#pragma omp parallel num_threads(min(threads, T))`, whose threads take chunks of
// consecutive tasks in turn (about four per thread) and call the kernel on each with their own
// scratch; a step of one task runs on the calling thread, with no parallel region. Library steps run on the
// calling thread (oneDNN parallelises inside, with the session's thread count). Results do
// not depend on the thread count: kernels compute each task alike wherever it runs.
//
// Caller memory. Inputs and outputs are dense row-major tensors of the plan's types, passed in
// plan order. Outputs must not overlap each other or the inputs. Aligned (ORCHID_ALIGN)
// pointers let the session bind them directly — inputs are read in place, an output written
// by one step is written straight into the caller's buffer; other pointers cost a copy.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ir/tensor.h"
#include "runtime/aligned_buffer.h"
#include "runtime/memory_plan.h"
#include "runtime/model.h"

namespace orchid::runtime {

struct SessionOptions {
  int threads = 0;  // OpenMP threads for kernels; <= 0: omp_get_max_threads()
};

// When a step ran, in std::chrono::steady_clock nanoseconds.
struct StepSpan {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
};

class Session {
 public:
  explicit Session(std::shared_ptr<const Model> model, const SessionOptions& options = {});
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  Session(Session&&) = default;
  Session& operator=(Session&&) = default;

  const Model& model() const { return *model_; }
  int threads() const { return threads_; }
  // Size of the arena for the last run (or, before any, for aligned caller pointers).
  int64_t arena_bytes() const { return memory_.arena_bytes; }

  // One pointer per plan input and per plan output, in plan order. Wrong counts and null
  // pointers are UserErrors, and so is a step that fails a run-time check (an index read
  // from an input out of bounds: orchid_args::error), naming the step; the outputs are then
  // undefined. With `spans`, it receives one entry per step. A plan compiled with
  // --flush-denormals runs with subnormal floats read and written as zero (denormals.h).
  void run(std::span<const void* const> inputs, std::span<void* const> outputs,
           std::vector<StepSpan>* spans = nullptr);
  // Writes `bytes` of a buffer of the session's own on each of its threads, so that the next
  // run finds little of the last one's data in the cores' private caches: a step then reads
  // its inputs from where a whole run leaves them (timing steps alone, `--flush-bytes`).
  void evict_caches(int64_t bytes);
  // Inputs by name (each of exactly its plan type; UserErrors name a missing, unknown or
  // mistyped input); the outputs in plan order.
  std::vector<ir::Tensor> run(const std::map<std::string, ir::Tensor, std::less<>>& inputs);

 private:
  void check_pointers(std::span<const void* const> inputs, std::span<void* const> outputs) const;
  void prepare_memory(std::span<const void* const> inputs, std::span<void* const> outputs);
  void bind(std::span<const void* const> inputs, std::span<void* const> outputs);
  void run_step(size_t step);
  void run_generated(const orchid_kernel_desc& k, void* const* args, int64_t count);
  void copy_outputs(std::span<const void* const> inputs, std::span<void* const> outputs);
  void* scratch(int thread);

  std::shared_ptr<const Model> model_;
  int threads_ = 1;
  CallerAlignment alignment_;
  MemoryPlan memory_;
  AlignedBuffer arena_;
  AlignedBuffer scratch_;
  AlignedBuffer eviction_;           // evict_caches: per thread, back to back
  int64_t scratch_stride_ = 0;
  std::vector<void*> ptrs_;          // per buffer, for the current run
  std::vector<void*> args_;          // every step's argument pointers, back to back
  std::vector<size_t> args_begin_;   // per step: where its pointers start in args_
  int64_t kernel_error_[2] = {0, 0};  // orchid_args::error of the running generated step
};

}  // namespace orchid::runtime
