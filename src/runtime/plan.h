// The execution plan of an artifact (DESIGN.md, "Kernels, runtime, determinism"): the buffers
// of a model, the steps that compute them in order, the kernel libraries and the weights
// file. Stored as plan.json in an artifact directory next to the kernel libraries and
// weights.bin; a value type that the driver writes and the runtime reads.
//
// Buffers. Every tensor the plan touches is a buffer, named by its index. Its `kind` says
// where its bytes come from:
//   input         the caller's memory (listed once in `inputs`, in the order callers pass them)
//   constant      weights.bin at `weights_offset` (64-byte aligned); shared, never written
//   intermediate  computed by the steps, not a graph output
//   output        computed by the steps and listed in `outputs`
// A buffer's `layout` (layout.h) says how its bytes are ordered: plain (dense row-major, the
// default); nChw8c, nChw16c or nhwc, which only intermediates may have and only onednn or
// onednn_winograd steps read or write; or
// panels16 or panels16t, which only constants may have and only generated steps read. Neither is a view, is
// viewed, or is listed in `outputs`. A buffer with an `alias` is a view: it reinterprets the bytes of the buffer it names (of the
// same byte size, in another shape or dtype) and has no storage of its own; its kind is
// intermediate or output. Graph outputs are listed in `outputs`, by buffer id: an entry may
// also be an input, a constant or a view, and one buffer may be listed more than once.
//
// Steps run in order. Each reads its first `num_inputs` args and writes the others. A
// "generated" step calls kernel `kernel` of library `library` (kernel_abi.h) over `tasks`
// tasks with `scratch_bytes` of scratch per thread — both must agree with the kernel's
// descriptor. An "onednn", "onednn_winograd" or "reference" step runs `ir`, the .oir text of a small graph with
// one input per step input and one output per step output (library_step.h).
// `source_ops`, `flops` and `bytes` are for reports and profiles; execution ignores them.
//
// Devices. A plan runs on the host CPU (`device` cpu, the default: steps generated, onednn or
// reference) or on an NVIDIA GPU (`device` cuda: every step a "cuda", "cublaslt" or "cudnn"
// step, every buffer plain). A "cublaslt" step runs its `ir` (a matmul step graph,
// runtime/cuda/lt_matmul.h) as one cuBLASLt call, a "cudnn" step (a convolution,
// runtime/cuda/dnn_conv.h) as one cuDNN call.
// A CUDA plan's `libraries` are one CUBIN of the same module per architecture (`arch`, e.g.
// sm_80, sm_90a; the runtime loads the one for its GPU); a cuda step launches function
// `orc_cuda_<kernel>` of it (include/orchid/cuda_abi.h) with `tasks` blocks of `threads` threads,
// `shared_bytes` of dynamic shared memory and `scratch_bytes` of global scratch per block.
//
// Checksums are FNV-1a 64 (support/hash.h) of a file's bytes, written as 16 hex digits. They
// detect corruption (a truncated copy, a flipped bit); they are no defence against tampering.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/dtype.h"
#include "ir/graph.h"
#include "orchid/kernel_abi.h"
#include "runtime/layout.h"

namespace orchid::runtime {

inline constexpr const char* kPlanFormat = "orchid-plan";
inline constexpr int kPlanVersion = 1;
inline constexpr const char* kPlanFileName = "plan.json";
// Alignment of every buffer the kernels see (kernel_abi.h), and of constants in weights.bin.
inline constexpr int64_t kBufferAlign = ORCHID_ALIGN;

enum class BufferKind : uint8_t { Input, Output, Constant, Intermediate };
std::string_view buffer_kind_name(BufferKind k);
std::optional<BufferKind> parse_buffer_kind(std::string_view text);

enum class StepImpl : uint8_t { Generated, OneDnn, Reference, Cuda, CublasLt, Cudnn, OneDnnWinograd };
bool is_onednn_step(StepImpl i);  // onednn, onednn_winograd
std::string_view step_impl_name(StepImpl i);
std::optional<StepImpl> parse_step_impl(std::string_view text);
bool is_gpu_step(StepImpl i);  // cuda, cublaslt, cudnn

struct PlanBuffer {
  std::string name;  // the model's value name; only ever data (messages, by-name lookup)
  ir::TensorType type;
  BufferKind kind = BufferKind::Intermediate;
  int64_t weights_offset = -1;  // constants: byte offset into weights.bin; else -1
  int32_t alias = -1;           // a view of this buffer id; -1 when the buffer owns its bytes
  BufferLayout layout = BufferLayout::Plain;  // layout.h; written only when not plain

  bool operator==(const PlanBuffer&) const = default;
};

enum class PlanDevice : uint8_t { Cpu, Cuda };
std::string_view plan_device_name(PlanDevice d);
std::optional<PlanDevice> parse_plan_device(std::string_view text);

// A cuda plan's precision (`orchid compile --precision`): fp32, the default; tf32, where
// library steps may compute f32 products on tensor cores with 10-bit mantissas; fp16 and bf16,
// where the f32 values the model computes are stored in that dtype (rewrite/store_precision.h)
// and products run on tensor cores with f32 accumulation. Generated kernels compute in f32
// throughout.
enum class PlanPrecision : uint8_t { Fp32, Tf32, Fp16, Bf16 };
inline constexpr PlanPrecision kPlanPrecisions[] = {PlanPrecision::Fp32, PlanPrecision::Tf32, PlanPrecision::Fp16,
                                                    PlanPrecision::Bf16};
std::string_view plan_precision_name(PlanPrecision p);
std::optional<PlanPrecision> parse_plan_precision(std::string_view text);
// "fp32, tf32, fp16 or bf16": the names, for messages.
std::string plan_precision_names();
// The 16-bit dtype a precision stores the model's f32 values in (fp16: f16, bf16: bf16), if any.
std::optional<ir::DType> storage_dtype(PlanPrecision p);
// The relative L2 error of each f32 output a plan of this precision is verified to, unless
// asked otherwise (`orchid compile --tolerance`).
constexpr double default_tolerance(PlanPrecision p) {
  switch (p) {
    case PlanPrecision::Fp32: return 1e-4;
    case PlanPrecision::Tf32: return 1e-2;
    case PlanPrecision::Fp16: return 1e-2;
    case PlanPrecision::Bf16: return 5e-2;
  }
  return 1e-4;
}

struct PlanLibrary {
  std::string file;  // inside the artifact directory; [A-Za-z0-9_.-] only
  uint64_t checksum = 0;
  std::string arch;  // cuda plans: the architecture of this CUBIN ("sm_90a"); cpu plans: empty

  bool operator==(const PlanLibrary&) const = default;
};

struct PlanStep {
  std::string name;
  StepImpl impl = StepImpl::Generated;
  std::vector<int32_t> args;  // buffer ids: inputs, then outputs
  int32_t num_inputs = 0;
  // impl == Generated: a kernel of a library; impl == Cuda: a function of the module
  int32_t library = -1;  // Generated: index into Plan::libraries
  int32_t kernel = -1;   // Generated: index into that library's kernel table; Cuda: orc_cuda_<kernel>
  int64_t tasks = 0;     // Cuda: thread blocks
  int64_t scratch_bytes = 0;  // Cuda: global scratch per block
  int32_t threads = 0;        // Cuda: threads per block
  int64_t shared_bytes = 0;   // Cuda: dynamic shared memory per block
  // impl == OneDnn, Reference, CublasLt or Cudnn: the step's graph as .oir text
  std::string ir;
  // impl == Generated or Cuda: what each run-time index check of the kernel is (check k + 1 is
  // checks[k]), for the message when one fails; names come from the model
  std::vector<std::string> checks;
  // report-only
  std::vector<std::string> source_ops;
  int64_t flops = 0;
  int64_t bytes = 0;

  int32_t num_outputs() const { return static_cast<int32_t>(args.size()) - num_inputs; }
  bool operator==(const PlanStep&) const = default;
};

struct PlanWeights {
  std::string file = "weights.bin";
  int64_t bytes = 0;
  uint64_t checksum = 0;

  bool operator==(const PlanWeights&) const = default;
};

struct Plan {
  PlanDevice device = PlanDevice::Cpu;
  PlanPrecision precision = PlanPrecision::Fp32;  // "precision", written when not fp32
  std::vector<std::string> isa;  // ISA flags the kernels need, as target::host_isa() names them
  std::string target;            // free-form fingerprint of the target the plan was built for
  std::string graph_name;
  // "flush_denormals": CPU plans run with subnormal floats read and written as zero (x86 MXCSR
  // FTZ and DAZ on every thread of a run, restored after it), as compiled with
  // --flush-denormals: products of subnormals take microcode assists that can make a step
  // many times slower (masked attention probabilities of 1e-44).
  bool flush_denormals = false;
  std::vector<PlanBuffer> buffers;
  std::vector<int32_t> inputs;   // buffer ids, in the order callers pass inputs
  std::vector<int32_t> outputs;  // buffer ids, in the order callers receive outputs
  std::vector<PlanLibrary> libraries;
  std::vector<PlanStep> steps;
  PlanWeights weights;

  bool operator==(const Plan&) const = default;
};

// The buffer whose bytes `b` uses: b itself, or the end of its alias chain.
int32_t alias_root(const Plan& plan, int32_t b);

// Checks every invariant stated above (ids in range, argument counts, kinds, aliases of equal
// byte size and without cycles, constants inside the weights and aligned, unique input names,
// safe file names, every buffer written before it is read, no step writing an input or a
// constant). `source` names the plan in messages; a violation is a UserError naming the field.
void validate_plan(const Plan& plan, const std::string& source = kPlanFileName);

// UserError unless g, the `ir` of step s, has one input per step input and one output per
// step output, of the buffers' types; `where` names the step.
void check_step_graph(const Plan& plan, const PlanStep& s, const ir::Graph& g, const std::string& where);

// UserError unless every argument of step s has the bytes `want` says (a kernel's descriptor:
// kernel_abi.h, cuda_abi.h), so that no kernel reads or writes past a buffer; `where` names
// the step and kernel.
void check_arg_bytes(const Plan& plan, const PlanStep& s, const int64_t* want, const std::string& where);

// The name of CUDA step `kernel`'s function in the module.
std::string cuda_function_name(int32_t kernel);

// The message for a failed run-time index check of step `step`: `code` is 1 + the check's
// number (orchid_args::error[0]), `index` the index found out of range where the kernel says.
std::string index_check_failure(const Plan& plan, size_t step, int64_t code, std::optional<int64_t> index);

// JSON text of a plan (deterministic: fixed key order, two-space indent) and back.
// plan_from_json validates; a malformed document is a UserError naming `source` and the field.
std::string plan_to_json(const Plan& plan);
Plan plan_from_json(std::string_view text, const std::string& source = kPlanFileName);

// plan.json inside an artifact directory.
void write_plan(const Plan& plan, const std::string& dir);
Plan read_plan(const std::string& dir);

// A file name that may be joined to the artifact directory: [A-Za-z0-9_.-]+, not "." or "..".
bool is_safe_file_name(std::string_view name);

}  // namespace orchid::runtime
