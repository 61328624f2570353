// How each kernel of a plan runs: generated code, oneDNN, the reference interpreter (opaque
// routines), or no step at all (a lone view is a zero-copy alias of its input's buffer).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/plan.h"
#include "tile/kernel.h"

namespace orchid::driver {

// OneDnnWinograd: a oneDNN convolution by Winograd's algorithm (runtime/onednn_step.h), chosen
// only by measuring it against the direct one (measure.h). UGraph: a μGraph of the
// superoptimizer computing the kernel (superopt_kernels.h), chosen only by measuring it
// against the kernels it replaces; it becomes several plan steps.
enum class StepKind { Generated, OneDnn, Reference, Alias, CublasLt, Cudnn, OneDnnWinograd, UGraph };
std::string_view step_kind_name(StepKind k);

struct UGraphStep;  // superopt_kernels.h

struct StepChoice {
  tile::Kernel kernel;
  StepKind kind = StepKind::Generated;
  std::vector<ir::ValueId> inputs;  // tile::kernel_inputs, in increasing id order
  std::shared_ptr<const UGraphStep> ugraph;  // UGraph steps: the μGraph and how it reads the graph
};

// Linear kernels go to oneDNN where it can run them (one matmul or conv and the post-ops it
// supports, f32); a kernel of one product that oneDNN cannot run whole is split into the linear
// primitive with the post-ops oneDNN takes (oneDNN) and the rest (generated) when that works;
// a kernel of several products (orchestrate/chains.h) is generated whole; kernels
// with an opaque primitive go to the interpreter; a lone view whose output has the input's
// bytes to an alias; all others to generated code. A view a generated kernel would compute as
// an output (of a value it computes, read by nothing else in it) becomes an alias step after
// it instead. One kernel may give several steps.
// For an NVIDIA GPU (device Cuda) a matmul kernel that cuBLASLt can run whole
// (runtime/cuda/lt_matmul.h: the product with a scale, a bias, a residual and a relu) and
// that has at least kLtMinMultiplyAdds multiply-adds is a cublaslt step; a lone convolution
// that cuDNN can run (runtime/cuda/dnn_conv.h) with a kernel of at least kDnnMinKernelVolume
// taps and no groups is a cudnn step; a larger kernel that begins with either is split as on
// the CPU; every other kernel is generated CUDA code (linear ones too), a lone view an alias,
// views a kernel would compute as outputs alias steps after it. With `gpu_libraries` false,
// no library steps. A kernel with an opaque primitive has no implementation on a GPU
// (UnsupportedError naming the primitive and its source node).
std::vector<StepChoice> implement(const ir::Graph& g, const std::vector<tile::Kernel>& kernels,
                                  runtime::PlanDevice device = runtime::PlanDevice::Cpu, bool gpu_libraries = true);
// The same steps, those of each kernel apart, and joined again in order.
std::vector<StepChoice> joined(const std::vector<std::vector<StepChoice>>& each);
std::vector<std::vector<StepChoice>> implement_each(const ir::Graph& g, const std::vector<tile::Kernel>& kernels,
                                                    runtime::PlanDevice device = runtime::PlanDevice::Cpu,
                                                    bool gpu_libraries = true);

// Whether a step of this kind calls a library (oneDNN, direct or Winograd; cuBLASLt; cuDNN).
bool is_library(StepKind k);

// The kernel as generated code alone, with no library step: one generated step (an
// interpreter step where it has an opaque primitive, an alias for a lone view), then alias
// steps for the views it would compute as outputs, as implement() makes them.
std::vector<StepChoice> implement_generated(const ir::Graph& g, const tile::Kernel& k);

// Below this size a product stays generated on a GPU: a small product is a reduction there,
// fused with what reads it, and cuBLASLt's call would not pay for the split. Measured on an
// H100 (bench/results/2026-11-26-gpu-cublaslt.md): models whose products of a million
// multiply-adds or more were generated, thin ones (attention at decode: a few rows per head)
// included, ran up to 6.8x slower than with cuBLASLt; one model (4 M multiply-adds over 16
// rows, fused with its bias) ran 1.2x faster generated.
inline constexpr int64_t kLtMinMultiplyAdds = int64_t{1} << 20;

// Why a kernel graph is not a cublaslt step (empty when it is): cuBLASLt cannot run it, or
// it is below the size above.
std::string cublaslt_refusal(const ir::Graph& kernel_graph);

// Convolutions with smaller kernels (1×1, depthwise and grouped ones too) stay generated:
// fused with their epilogue, they ran well there (bench/results/2026-11-26-gpu-kernels.md),
// where a 9×9 3-channel convolution took 1.1 ms and a 16×16 patch embedding 0.22 ms.
inline constexpr int64_t kDnnMinKernelVolume = 9;

// Why a kernel graph is not a cudnn step (empty when it is).
std::string cudnn_refusal(const ir::Graph& kernel_graph);

// The kernel as a graph of its own (its inputs, then its outputs), for library steps.
ir::Graph kernel_graph(const ir::Graph& g, const StepChoice& s);

}  // namespace orchid::driver
