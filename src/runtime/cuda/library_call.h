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
  bool tf32 = false;  // f32 steps may use TF32 tensor cores (plan precision tf32); 16-bit steps use tensor cores anyway
  // Each call's algorithm is the fastest of the library's candidates timed on the GPU at
  // load; false: the first of the library's heuristic ranking that qualifies.
  bool time_algorithms = true;
};

// The candidate to keep of times `ms` (none: it did not run): the fastest, except that the
// first (the library's own choice) stays unless another takes less than kFasterBy of its
// time; -1 where none ran.
inline constexpr double kFasterBy = 0.97;
int fastest_of(const std::vector<std::optional<double>>& ms);

// The two algorithms a call keeps, as indexes among its `count` candidates (the library's
// ranking), each run by `run(i)` on the default stream (false: the library refused it at the
// call): the library's own choice (its first, or the fastest where the first did not run) and
// the fastest by fastest_of. Each candidate is run once to warm up, then timed kTimingRounds
// times, round-robin, as kTimedCalls calls back to back (CUDA events; the least per call
// counts). Both 0 where candidates are not timed (`time` false) or there is one; none where
// no candidate ran.
inline constexpr int kTimingRounds = 3;
inline constexpr int kTimedCalls = 8;
struct AlgorithmPair {
  int heuristic = 0, timed = 0;
};
std::optional<AlgorithmPair> pick_algorithms(int count, bool time, const std::function<bool(int)>& run);

// Which of a call's two algorithms it runs: the fastest timed at load, or the library's
// heuristic choice (the same where algorithms were not timed, or the heuristic's was fastest).
enum class AlgorithmChoice { Timed, Heuristic };

class LibraryCall {
 public:
  virtual ~LibraryCall() = default;
  // The call on `stream` (a CUstream).
  virtual void enqueue(void* stream) const = 0;
  // Whether the timed and the heuristic's algorithms differ, and which later calls run.
  bool algorithms_differ() const { return differ_; }
  void choose(AlgorithmChoice c) { choice_ = c; }

 protected:
  // Which of the two algorithms a call keeps enqueue runs: 0 the heuristic's, 1 the timed
  // one (set `differ_` where they differ).
  int slot() const { return differ_ && choice_ == AlgorithmChoice::Timed ? 1 : 0; }
  bool differ_ = false;

 private:
  AlgorithmChoice choice_ = AlgorithmChoice::Timed;
};

}  // namespace orchid::runtime::cuda
