/* The binary interface between Orchid's runtime and the kernels it generates (DESIGN.md,
 * "Kernels, runtime, determinism"). Plain C, so that generated sources include nothing else.
 *
 * A kernel computes a grid of `task_count` independent tasks. The runtime calls
 *     fn(args, task_begin, task_end, scratch)
 * for disjoint ranges [task_begin, task_end) covering [0, task_count), possibly from several
 * threads at once; the kernel has no threading of its own. `args->ptrs` holds one pointer per
 * argument: the kernel's inputs, then its outputs, in the order the plan lists them; every
 * pointer is aligned to ORCHID_ALIGN bytes and points to a dense row-major tensor. `scratch`
 * is ORCHID_ALIGN-aligned private memory of `scratch_bytes` bytes for the calling thread,
 * reused across the tasks of the range (nothing survives from one call to the next).
 * Index checks report through `args->error` (below).
 *
 * A kernel library (one shared object) exports
 *     const orchid_kernel_desc* orchid_kernel_table(int64_t* count);
 * returning its kernels in a fixed order; the plan names a kernel by library and index. */
#ifndef ORCHID_KERNEL_ABI_H
#define ORCHID_KERNEL_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ORCHID_KERNEL_ABI_VERSION 3
#define ORCHID_ALIGN 64

typedef struct orchid_args {
  void* const* ptrs;
  int64_t count;
  /* Two int64_t, zero at the call: a kernel that finds a run-time index out of bounds (an
   * indirect load, as Gather's indices) stores 1 + the number of the failing check in
   * error[0] and the index in error[1] (the first failure only: error[0] is set by a
   * compare-and-swap from 0), uses index 0 instead and goes on; the runtime reports the step
   * as failed, naming the check and the index. May be null. */
  int64_t* error;
} orchid_args;

typedef void (*orchid_kernel_fn)(const orchid_args* args, int64_t task_begin, int64_t task_end,
                                 void* scratch);

typedef struct orchid_kernel_desc {
  int32_t abi_version;   /* ORCHID_KERNEL_ABI_VERSION of the generator */
  int32_t num_args;      /* inputs + outputs */
  int64_t task_count;
  int64_t scratch_bytes; /* per calling thread */
  orchid_kernel_fn fn;
  /* num_args byte sizes: of each argument's tensor as the kernel reads or writes it (since
   * ABI version 3). The runtime refuses a plan whose buffers differ, so that an edited
   * plan.json cannot make a kernel read or write past a buffer. */
  const int64_t* arg_bytes;
} orchid_kernel_desc;

typedef const orchid_kernel_desc* (*orchid_kernel_table_fn)(int64_t* count);
#define ORCHID_KERNEL_TABLE_SYMBOL "orchid_kernel_table"

#ifdef __cplusplus
}
#endif

#endif /* ORCHID_KERNEL_ABI_H */
