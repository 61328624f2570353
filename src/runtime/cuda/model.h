// A CUDA artifact (plan.h, device cuda) loaded onto the GPU: the module's CUBIN for the GPU's
// architecture, the weights uploaded once, one arena for the intermediates (memory_plan.h:
// liveness and best fit), device buffers for the inputs and outputs, and the steps (generated
// kernels and library calls: cuBLASLt, cuDNN) launched in order on one stream — captured into
// a CUDA graph, so that a run is one launch.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/tensor.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/library_call.h"
#include "runtime/memory_plan.h"
#include "runtime/plan.h"

namespace orchid::runtime::cuda {

struct CudaLoadOptions {
  // Each library step's algorithm is the fastest of the library's candidates, timed at load
  // on the step's own buffers (library_call.h, LibraryOptions), unless the model as a whole
  // runs faster with the libraries' heuristic choices (both timed at load); false: the
  // heuristic choices, nothing run at load.
  bool time_library_algorithms = true;
};

// Rounds of timing the model with each library algorithm choice at load.
inline constexpr int kChoiceRounds = 2;

class CudaModel {
 public:
  // UserError where the directory holds no valid CUDA artifact, a file's checksum differs,
  // there is no GPU, or the artifact has no CUBIN for its architecture.
  static std::unique_ptr<CudaModel> load(const std::string& dir, const CudaLoadOptions& options = {});

  const Plan& plan() const { return plan_; }
  // Runs the model on inputs in plan().inputs order (types as the plan says); returns the
  // outputs in plan().outputs order. A kernel's failed index check is a UserError naming the
  // step.
  std::vector<ir::Tensor> run(const std::vector<ir::Tensor>& inputs);
  // Milliseconds per run of the steps alone (the graph's launch; inputs as last uploaded):
  // the median of `repeats` after `warmup` runs.
  double time_ms(int warmup, int repeats);
  // Milliseconds of each step launched alone (the median of `repeats`), in plan order: where a
  // run's time goes. The steps read whatever their input buffers hold then.
  std::vector<double> step_times_ms(int repeats);
  // The algorithms the library steps run (CudaLoadOptions): Timed where they were timed at
  // load and the model ran faster with them, or where none differs from the heuristic's.
  AlgorithmChoice library_algorithms() const { return algorithms_; }

 private:
  CudaModel() = default;
  void load_module(const std::vector<std::vector<char>>& cubins, const std::string& source);
  void check_steps(const std::string& source) const;
  void allocate();
  uint64_t address(const BufferHome& home) const;  // on the device
  void make_library_calls(const std::string& source, bool time_algorithms);
  void capture();
  void choose_algorithms(AlgorithmChoice c);
  void keep_faster_algorithms();
  double graph_ms(const Graph& graph, int warmup, int repeats) const;
  void launch_step(size_t i) const;  // step i on the model's stream
  // The median of `repeats` timings (CUDA events on the model's stream) of `launches`; 0 for none.
  double median_ms(int repeats, const std::function<void()>& launches) const;

  std::string dir_;
  Plan plan_;
  MemoryPlan memory_;
  Module module_;
  std::vector<void*> functions_;                  // per cuda step; null for the others
  std::vector<std::unique_ptr<LibraryCall>> calls_;  // per library step; null for the others
  DeviceBuffer weights_, arena_, errors_, scratch_, workspace_;
  std::vector<DeviceBuffer> inputs_, outputs_;
  std::vector<std::vector<uint64_t>> params_;  // per step: argument pointers, error word, scratch
  std::vector<std::vector<void*>> param_ptrs_;
  Stream stream_;
  Graph graph_;
  AlgorithmChoice algorithms_ = AlgorithmChoice::Timed;
};

}  // namespace orchid::runtime::cuda
