// A CUDA plan step that calls a GPU library (cuBLASLt: lt_step.h; cuDNN: dnn_step.h) instead
// of launching a generated kernel. It is built once when a model loads, its descriptors,
// algorithm and device addresses fixed, so that enqueueing it is one call that a stream
// capture records into the model's CUDA graph.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ir/graph.h"
#include "runtime/cuda/dnn_conv.h"
#include "runtime/cuda/lt_matmul.h"
#include "runtime/plan.h"

namespace orchid::runtime::cuda {

// What a library step's graph asks for: one cuBLASLt matmul or one cuDNN convolution.
using LibrarySpec = std::variant<LtMatmul, DnnConv>;

// The call of a cublaslt or cudnn step's graph: UserError, `where` and the reason, when the
// library cannot run it (lt_matmul.h, dnn_conv.h).
LibrarySpec library_spec(StepImpl impl, const ir::Graph& g, const std::string& where);
std::string describe(const LibrarySpec& spec);

// Workspace bytes a model gives its library calls (one buffer: the steps run in order).
inline constexpr size_t kLibraryWorkspaceBytes = size_t{32} << 20;

// How library calls are set up at load.
struct LibraryOptions {
  bool tf32 = false;  // TF32 tensor cores allowed (plan precision tf32); else f32 throughout
  // Each call's algorithm is the fastest of the library's candidates timed on the GPU at
  // load; false: the first of the library's heuristic ranking that qualifies.
  bool time_algorithms = true;
};

// Milliseconds per call of each of `count` candidate algorithms of one library call, each run
// by `run(i)` on the default stream; none for a candidate the library refused at a call
// (run returned false). Each is run once to warm up, then timed kTimingRounds times,
// round-robin, as kTimedCalls calls back to back (CUDA events; the least per call counts).
inline constexpr int kTimingRounds = 3;
inline constexpr int kTimedCalls = 8;
std::vector<std::optional<double>> time_candidates(int count, const std::function<bool(int)>& run);

// The candidate to keep of times `ms` (none: it did not run): the fastest, except that the
// first (the library's own choice) stays unless another takes less than kFasterBy of its
// time; -1 where none ran.
inline constexpr double kFasterBy = 0.97;
int fastest_of(const std::vector<std::optional<double>>& ms);

// Which of a call's two algorithms it runs: the fastest timed at load, or the library's
// heuristic choice (the same where algorithms were not timed, or the heuristic's was fastest).
enum class AlgorithmChoice { Timed, Heuristic };

class LibraryCall {
 public:
  virtual ~LibraryCall() = default;
  // The call on `stream` (a CUstream).
  virtual void enqueue(void* stream) const = 0;
  // Whether the timed and the heuristic's algorithms differ, and which later calls run.
  virtual bool algorithms_differ() const = 0;
  virtual void choose(AlgorithmChoice c) = 0;
};

}  // namespace orchid::runtime::cuda
