// Editing a primitive graph by rules: a copy of the graph to which primitives and constants
// are appended, readers of values redirected to others, and then the result put back in a
// topological order without what nothing reads any more.
//
// Appended primitives read any value of the graph. A value replaced by an appended one gives
// it its name (the rewritten graph keeps the names of the values it still computes); a graph
// output replaced by a value that keeps a name of its own is that value through a view of
// the output's name (outputs keep their names). The order of the result: among the primitives ready to be placed, the one with
// the lowest key goes first; a kept primitive's key is its position, an appended one's comes
// right after the latest primitive it reads. Deterministic.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace orchid::rewrite {

class Edit {
 public:
  explicit Edit(const ir::Graph& g);

  const ir::Graph& graph() const { return g_; }
  const ir::TensorType& type(ir::ValueId v) const { return g_.type(v); }

  // Primitives appended from now on without a name of their own get `name` as provenance.
  void set_provenance(std::string name) { provenance_ = std::move(name); }
  // Appends p (inputs: values of the graph, old or appended), one output of type `type`
  // named `name` (made unique).
  ir::ValueId add(ir::Primitive p, const ir::TensorType& type, const std::string& name);
  // The same for a primitive of several outputs.
  std::vector<ir::ValueId> add(ir::Primitive p, const std::vector<ir::TensorType>& types,
                               const std::vector<std::string>& names);
  ir::ValueId add_constant(const std::string& name, ir::Tensor data);
  // Every reader of `old`, and the graph outputs, read `now` instead; `now` takes old's name
  // when it was appended here.
  void replace(ir::ValueId old, ir::ValueId now);

  // Whether the edited graph has no cycle (replacements can make one: a value replaced by
  // one computed from it).
  bool acyclic() const;

  // The edited graph: topologically ordered, dead primitives and constants dropped, verified
  // (an InternalError naming `what` when the edit broke it).
  ir::Graph finish(std::string_view what) const;

 private:
  ir::Graph g_;
  int32_t original_nodes_ = 0;
  int32_t original_values_ = 0;
  std::string provenance_;
  std::vector<std::pair<ir::ValueId, ir::ValueId>> replaced_;
};

}  // namespace orchid::rewrite
