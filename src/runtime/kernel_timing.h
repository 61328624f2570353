// Running a generated kernel's tasks over threads, as a session runs a step, and timing the
// kernels of one library on synthetic data: the schedule tuner compiles many variants of a
// kernel into one shared object and times them together in a helper process
// (`orchid time-kernels`).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "orchid/kernel_abi.h"
#include "runtime/kernel_library.h"

namespace orchid::runtime {

// Runs every task of k with `args`: on one thread where `threads` or the tasks are 1, else on
// min(threads, tasks) OpenMP threads taking chunks of about a quarter of a thread's share of
// consecutive tasks in turn (a thread the machine stops for a while then delays the kernel by
// its current chunk, not by its whole share). `scratch(thread)` is that thread's scratch.
void run_kernel_tasks(const orchid_kernel_desc& k, const orchid_args& args, int threads,
                      const std::function<void*(int)>& scratch);

struct KernelTimingOptions {
  int threads = 1;
  int rounds = 3;          // rounds over the kernels, each running every kernel in turn
  int runs_per_round = 3;  // timed runs of a kernel in one round
  int warmup_runs = 1;     // untimed runs of each kernel first
  bool flush_denormals = false;  // run as a plan compiled with --flush-denormals runs (denormals.h)
};

struct KernelTiming {
  std::vector<double> ms;    // every timed run, in milliseconds
  bool index_error = false;  // an index check failed (kernel_abi.h): the data made it read index 0
};

// Times every kernel of `lib`, each argument a buffer of the largest size any kernel gives
// that argument number (shared by the kernels: variants of one kernel read and write the
// same tensors), filled with floats in [0.5, 1) as 32-bit words; scratch per thread of the
// largest size. Runs alternate between the kernels round after round, so that a burst of
// load from other processes hits every kernel's runs alike.
std::vector<KernelTiming> time_kernels(const KernelLibrary& lib, const KernelTimingOptions& options);

}  // namespace orchid::runtime
