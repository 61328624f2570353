// The buffers and steps of a plan as a builder makes them from a primitive graph, for every
// device: each value a step reads or writes gets a buffer (constants join the weights), and
// each kernel a step reading its inputs and writing its outputs.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/plan.h"
#include "tile/kernel.h"

namespace orchid::driver {

class PlanBuffers {
 public:
  // The graph's inputs become the plan's input buffers, in order.
  PlanBuffers(const ir::Graph& g, runtime::Plan& plan, std::vector<ir::Tensor>& weights,
              std::vector<int32_t>& weight_buffers);

  // The buffer of a value read by a step (or listed as an output): constants join the weights.
  int32_t read(ir::ValueId v);
  // The buffer a step writes (alias: a view of another buffer).
  int32_t write(ir::ValueId v, int32_t alias = -1);
  // A buffer of no value of the graph (inside a μGraph kernel), intermediate.
  int32_t internal(const std::string& name, const ir::TensorType& type, int32_t alias = -1);

 private:
  int32_t add(ir::ValueId v, runtime::BufferKind kind);

  const ir::Graph& g_;
  runtime::Plan& plan_;
  std::vector<ir::Tensor>& weights_;
  std::vector<int32_t>& weight_buffers_;
  std::set<ir::ValueId> outputs_;
  std::map<ir::ValueId, int32_t> ids_;
};

// The step of kernel k (reading `inputs`, writing k's outputs), named "k<index>", with the
// source ops, FLOPs and bytes reports show; its implementation is for the caller to fill in.
// The names of the model's ops the kernel's primitives come from, each once, in order.
std::vector<std::string> kernel_source_ops(const ir::Graph& g, const tile::Kernel& k);

// Adds the kernel's FLOPs and the bytes of `inputs` and its outputs to the step's.
void add_kernel_work(const ir::Graph& g, const tile::Kernel& k, const std::vector<ir::ValueId>& inputs,
                     runtime::PlanStep& step);

runtime::PlanStep base_step(const ir::Graph& g, const tile::Kernel& k, const std::vector<ir::ValueId>& inputs,
                            PlanBuffers& buffers, size_t index);

}  // namespace orchid::driver
