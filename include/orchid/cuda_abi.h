/* The binary interface between Orchid's CUDA runtime and the modules it generates
 * (codegen/cuda/codegen.h). A module is CUDA C++ compiled to one CUBIN per architecture. Its
 * kernel k is the extern "C" __global__ function ORCHID_CUDA_FUNCTION_PREFIX<k>, taking a
 * pointer per argument (inputs, then outputs), then `int64_t* error`, then `char* scratch`.
 * The module's __device__ array ORCHID_CUDA_MODULE_DESCRIPTOR (long long) holds the number of
 * kernels, then per kernel ORCHID_CUDA_DESCRIPTOR_FIELDS values: its number of pointer
 * arguments, blocks, threads, dynamic shared bytes and global scratch bytes per block — the
 * launch it was generated for — and then, kernel after kernel, the byte size of each pointer
 * argument's tensor. A plan's steps must agree with all of it (runtime/cuda/descriptor.h). */
#ifndef ORCHID_CUDA_ABI_H
#define ORCHID_CUDA_ABI_H

#define ORCHID_CUDA_FUNCTION_PREFIX "orc_cuda_"
#define ORCHID_CUDA_MODULE_DESCRIPTOR "orc_cuda_module"
#define ORCHID_CUDA_DESCRIPTOR_FIELDS 5

#endif /* ORCHID_CUDA_ABI_H */
